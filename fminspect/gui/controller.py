"""The inspector's controller: what is shown, with which parameters, and the results.

It owns the selection (dataset, sample, threshold) and the parameters, loads samples,
sends scoring jobs to the thread pool and receives their results. Every request bumps a
generation number; results of an older generation are cached but never shown. Results are
cached by (sample, model, parameters), and each sample's prepared GT (with its distance
transform, kernel and camouflage degree) is reused across models and parameter changes
that keep the GT rule.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6 import QtCore

from fminspect.gui.workers import submit
from fminspect.io.discovery import Dataset, Sample
from fminspect.io.sample import LoadedSample, load_sample
from fminspect.io.validation import Problem
from fminspect.metrics import (
    DEFAULT_PARAMS,
    GroundTruth,
    Params,
    SuiteResult,
    compute_suite,
    prepare_gt,
    update_suite,
)

RESULT_CACHE_SIZE = 80
GT_CACHE_SIZE = 16


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that changes the numbers: measure parameters and the resize rule."""

    params: Params = DEFAULT_PARAMS
    interpolation: str = "bilinear"

    def key(self) -> tuple[Any, ...]:
        """Hashable identity (part of the result-cache key)."""
        return (tuple(sorted(self.params.as_dict().items())), self.interpolation)


class InspectorController(QtCore.QObject):
    """Selection, parameters and background scoring of the inspector window.

    Signals
    -------
    sample_loaded(object)
        A :class:`LoadedSample` is now current (panels redraw the maps).
    result_ready(str)
        The result of one model for the current sample and settings arrived.
    results_complete()
        Every model of the current sample has its result for the current settings.
    request_started()
        Scoring of the current sample under the current settings begins; ``result_ready``
        and ``results_complete`` of this request follow.
    busy_changed(str)
        What the background is doing ('' when idle).
    problems(object)
        A list of :class:`Problem` s to show the user.
    threshold_changed(int)
        The curve point (0–255) shown in overlays and curve markers.
    settings_changed(object)
        New :class:`Settings`.
    """

    sample_loaded = QtCore.Signal(object)
    result_ready = QtCore.Signal(str)
    results_complete = QtCore.Signal()
    busy_changed = QtCore.Signal(str)
    request_started = QtCore.Signal()
    problems = QtCore.Signal(object)
    threshold_changed = QtCore.Signal(int)
    settings_changed = QtCore.Signal(object)

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.datasets: list[Dataset] = []
        self.dataset: Dataset | None = None
        self.sample: LoadedSample | None = None
        self.settings = Settings()
        self.threshold = 128
        self.results: dict[str, SuiteResult] = {}
        self.generation = 0
        self._pending: set[str] = set()
        self._cache: OrderedDict[tuple[Any, ...], SuiteResult] = OrderedDict()
        self._gts: OrderedDict[tuple[str, str], GroundTruth] = OrderedDict()
        self._degrees: set[tuple[str, str]] = set()  # samples whose camouflage degree exists
        self._debounce = QtCore.QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(30)
        self._debounce.timeout.connect(self.recompute)

    # ------------------------------------------------------------------ sources
    def open_datasets(self, datasets: list[Dataset]) -> None:
        """Show these datasets; the first sample of the first one becomes current."""
        self.datasets = datasets
        self.dataset = datasets[0] if datasets else None
        if self.dataset and self.dataset.samples:
            self.select_sample(0)

    def select_dataset(self, name: str) -> None:
        """Make the dataset ``name`` current."""
        for ds in self.datasets:
            if ds.name == name:
                self.dataset = ds
                if ds.samples:
                    self.select_sample(0)
                return
        raise KeyError(name)

    @property
    def sample_names(self) -> list[str]:
        """Names of the current dataset's samples, in order."""
        return [s.name for s in self.dataset.samples] if self.dataset else []

    @property
    def sample_index(self) -> int:
        """Index of the current sample in the current dataset (−1 if none)."""
        if self.sample is None or self.dataset is None:
            return -1
        return self.sample_names.index(self.sample.name)

    def select_sample(self, index: int) -> None:
        """Load sample ``index`` of the current dataset (wraps around) and score it."""
        if self.dataset is None or not self.dataset.samples:
            return
        index %= len(self.dataset.samples)
        self.load(self.dataset.samples[index])

    def step(self, delta: int) -> None:
        """Next (+1) or previous (−1) sample."""
        if self.sample is not None:
            self.select_sample(self.sample_index + delta)

    def load(self, sample: Sample) -> None:
        """Read a sample from disk (fast) and start scoring it."""
        loaded = load_sample(sample, self.settings.interpolation)
        self.sample = loaded
        self.results = {}
        if loaded.problems:
            self.problems.emit(loaded.problems)
        self.sample_loaded.emit(loaded)
        self.recompute()

    # ------------------------------------------------------------------ parameters
    def set_settings(self, settings: Settings) -> None:
        """Change parameters. A change of the normalisation or the resize rule (a check box, a
        list: one discrete step, and everything is recomputed) starts scoring at once; a
        change of β² or α only (spin boxes, typed digit by digit or held down) starts it after
        a short debounce."""
        if settings == self.settings:
            return
        reload = settings.interpolation != self.settings.interpolation
        at_once = reload or settings.params.norm != self.settings.params.norm
        self.settings = settings
        self.settings_changed.emit(settings)
        if reload and self.sample is not None and self.dataset is not None:
            sample = next(s for s in self.dataset.samples if s.name == self.sample.name)
            self.sample = load_sample(sample, settings.interpolation)
            self.sample_loaded.emit(self.sample)
        if at_once:
            self.recompute()
        else:
            self._debounce.start()

    def set_threshold(self, index: int) -> None:
        """Show curve point ``index`` (0–255) in overlays and curves; nothing is recomputed."""
        index = max(0, min(255, int(index)))
        if index != self.threshold:
            self.threshold = index
            self.threshold_changed.emit(index)

    # ------------------------------------------------------------------ scoring
    def gt(self) -> GroundTruth | None:
        """The current sample's prepared GT under the current GT rule (reused)."""
        if self.sample is None or self.sample.gt is None:
            return None
        norm = self.settings.params.norm
        key = (self.sample.key, norm.gt_rule)
        if key not in self._gts:
            self._gts[key] = prepare_gt(self.sample.gt, norm)
            while len(self._gts) > GT_CACHE_SIZE:
                self._gts.popitem(last=False)
        self._gts.move_to_end(key)
        return self._gts[key]

    def recompute(self) -> None:
        """Score every model of the current sample with the current settings."""
        self._debounce.stop()
        self.generation += 1
        gen = self.generation
        sample, gt = self.sample, self.gt()
        self.results = {}
        self._pending = set()
        self.request_started.emit()
        if sample is None or gt is None:
            self.busy_changed.emit("")
            return
        settings = self.settings
        for model, pred in sample.preds.items():
            key = (sample.key, model, settings.key())
            if key in self._cache:
                self._cache.move_to_end(key)
                self.results[model] = self._cache[key]
                continue
            self._pending.add(model)
            submit(
                self._job(sample.key, model, pred, gt, sample.image, settings),
                lambda result, gen=gen, model=model, key=key: self._on_result(
                    gen, model, key, result
                ),
                lambda message, model=model: self._on_failed(gen, model, message),
            )
        for model in self.results:
            self.result_ready.emit(model)
        if self._pending:
            first_camo = (
                sample.image is not None and (sample.key, gt.norm.gt_rule) not in self._degrees
            )
            self.busy_changed.emit(
                "computing the camouflage degree…" if first_camo else self.busy_changed_text()
            )
        else:
            self.busy_changed.emit("")
            self.results_complete.emit()

    def _job(
        self, sample_key: str, model: str, pred: Any, gt: GroundTruth, img: Any, settings: Settings
    ) -> Any:
        """The work for one model: an update of a cached result under the same normalisation
        (only the measures the change affects), or a full scoring."""
        base = self._reusable(sample_key, model, settings)
        if base is not None:
            return lambda: update_suite(base, settings.params, img=img)
        return lambda: compute_suite(pred, gt, settings.params, img=img)

    def _reusable(self, sample_key: str, model: str, settings: Settings) -> SuiteResult | None:
        """A cached result of this model under the same normalisation and resize rule."""
        for (s, m, (_, interpolation)), result in reversed(self._cache.items()):
            if (s, m, interpolation) == (sample_key, model, settings.interpolation) and (
                result.params.norm == settings.params.norm
            ):
                return result
        return None

    def busy_changed_text(self) -> str:
        """Status text while models are being scored."""
        n = len(self._pending)
        return f"scoring {n} model{'s' if n != 1 else ''}…"

    def _on_result(self, gen: int, model: str, key: tuple[Any, ...], result: SuiteResult) -> None:
        self._cache[key] = result
        while len(self._cache) > RESULT_CACHE_SIZE:
            self._cache.popitem(last=False)
        if result.camouflage_context is not None:
            self._degrees.add((key[0], result.pair.gt.norm.gt_rule))
        if gen != self.generation:
            return  # a newer request superseded this one
        self.results[model] = result
        self._pending.discard(model)
        self.result_ready.emit(model)
        if not self._pending:
            self.busy_changed.emit("")
            self.results_complete.emit()
        else:
            self.busy_changed.emit(self.busy_changed_text())

    def _on_failed(self, gen: int, model: str, message: str) -> None:
        if gen != self.generation or self.sample is None:
            return
        self._pending.discard(model)
        self.problems.emit(
            [
                Problem(
                    Path(self.sample.name),
                    f"scoring failed: {message}",
                    "error",
                    self.sample.dataset,
                    model,
                    self.sample.name,
                )
            ]
        )
        if not self._pending:
            self.busy_changed.emit("")
            self.results_complete.emit()

    def wait(self, timeout_ms: int = 30000) -> bool:
        """Block until the current request is complete (for tests and screenshots)."""
        timer = QtCore.QElapsedTimer()
        timer.start()
        app = QtCore.QCoreApplication.instance()
        while (self._pending or self._debounce.isActive()) and timer.elapsed() < timeout_ms:
            app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 20)
            QtCore.QThread.msleep(2)
        app.processEvents()
        return not self._pending and not self._debounce.isActive()
