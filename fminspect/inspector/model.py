"""The inspector model: everything the window shows, as plain Python.

One sample's way from files to the screen: :meth:`InspectorModel.open_folder` reads the
folder on a thread of its own (``io.discovery``); the first dataset's models are chosen
(:class:`~fminspect.inspector.selection.ModelSelection`, remembered per folder) and its
first sample is read on the pool (``pipeline.sample.load_sample``), its GT prepared once and
each shown model scored by a job of its own (``pipeline.sample.score_model``), the results
cached and announced one by one (``result_ready``), while the scoring service scores the
whole dataset for the browser and the dataset view
(:class:`~fminspect.inspector.dataset_scores.DatasetScores`). The window's panels listen to
the events and draw; they never compute a number.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from fminspect._runtime import quiet_collector
from fminspect.batch.scores import score_matrix
from fminspect.batch.service import in_pieces
from fminspect.batch.shares import gt_shares
from fminspect.inspector.cases import Cases
from fminspect.inspector.dataset_scores import DatasetScores
from fminspect.inspector.events import Event
from fminspect.inspector.preferences import MemoryPreferences, Preferences
from fminspect.inspector.runtime import Runtime
from fminspect.inspector.samples import SampleScoring
from fminspect.inspector.scoring import ScoringService
from fminspect.inspector.selection import ModelSelection
from fminspect.inspector.settings import Settings
from fminspect.io.discovery import (
    Dataset,
    ToolkitConfigs,
    read_source,
    sample_name,
    single_sample,
)
from fminspect.io.validation import Problem
from fminspect.metrics import MEASURES_BY_KEY, default_keys
from fminspect.pipeline.config import EvalConfig

#: The browser's scores are made again once the parameters have been still this long.
RESCORE_AFTER_MS = 1500


class InspectorModel(SampleScoring):
    """The inspector's datasets, shown sample, settings, models and scores (no Qt).

    Notes
    -----
    Its events besides :class:`~fminspect.inspector.samples.SampleScoring`'s (each an
    :class:`~fminspect.inspector.events.Event`, with the arguments its callbacks get):

    reading(Path)
        A folder is being read in the background.
    folder_read(Path or ToolkitConfigs, list[Dataset], list[Problem], bool)
        A folder was read (its datasets may be none: the problems say why); True: in the
        background (:meth:`open_folder`).
    folder_failed(Path, str)
        A folder could not be read.
    datasets_shown(list[Dataset])
        These datasets are about to be shown (their models, first sample and scores follow).
    datasets_opened(list[Dataset], bool)
        These datasets are now shown (True: opened in the background).
    dataset_chosen(str)
        Another dataset of the folder is now the current one (:meth:`choose_dataset`).
    models_listed()
        A dataset's models were listed and chosen (a new dataset, or another of the folder).
    models_changed()
        The shown models, their order, the reference or an alias changed.
    measures_changed(tuple[str, ...])
        The measures computed and shown (empty: the default ones).
    message(str, int)
        A line for the status bar and how long to show it (ms).
    facts_changed()
        What a filter knows beyond the scores changed (the objects' shares were read, the
        scatter's selection, the samples with problems): the walk's filter applies again.
    """

    def __init__(
        self,
        runtime: Runtime,
        preferences: Preferences | None = None,
        service: ScoringService | None = None,
    ) -> None:
        super().__init__(runtime)
        self.preferences: Preferences = preferences or MemoryPreferences()
        self.selection = ModelSelection(self.preferences)
        self.service = service or ScoringService(runtime)
        self.reading = Event("reading")
        self.folder_read = Event("folder_read")
        self.folder_failed = Event("folder_failed")
        self.datasets_shown = Event("datasets_shown")
        self.datasets_opened = Event("datasets_opened")
        self.dataset_chosen = Event("dataset_chosen")
        self.models_listed = Event("models_listed")
        self.models_changed = Event("models_changed")
        self.measures_changed = Event("measures_changed")
        self.message = Event("message")
        #: what a filter knows beyond the scores changed (the walk's shares, selection or
        #: problems): the list is filtered again
        self.facts_changed = Event("facts_changed")
        self._shares_for: str | None = None  # the dataset whose shares are being read
        #: the measures chosen (View → Measures…; empty: the default ones)
        self.measure_choice = self._stored_measures()
        if self.measure_choice:
            self.settings = dataclasses.replace(self.settings, keys=self.measure_choice)
        self.scores = DatasetScores(self, self.service)
        #: the opened folder's tags and notes
        self.cases = Cases()
        self._opening = 0  # the latest opening of a folder (one read later is dropped)
        self._readings = 0  # folders being read in the background, not handled yet
        self._rescore = runtime.timer(RESCORE_AFTER_MS, self.scores.score_current)
        self.selection.changed.connect(self._on_models_changed)
        self.problems.connect(self._note_problems)
        self.scores.problems.connect(self._note_problems)

    # ------------------------------------------------------------------ opening
    @property
    def folder_reading(self) -> bool:
        """A folder is being read in the background (see :meth:`open_folder`)."""
        return self._readings > 0

    def open_path(self, path: Path | str | ToolkitConfigs) -> bool:
        """Open a dataset folder (or PySODEvalToolkit's configs) now, read on this thread,
        its first sample asked for at once (for scripts and tests; the window's own actions
        use :meth:`open_folder`); problems are announced, never raised. False if it holds no
        dataset."""
        self.stop_opening()
        path = _source(path)
        datasets, problems = read_source(path)
        self.folder_read.emit(path, datasets, problems, False)
        if not datasets:
            return False
        self._open_cases(path)
        self.show_datasets(datasets)
        self.datasets_opened.emit(datasets, False)
        return True

    def open_folder(
        self, path: Path | str | ToolkitConfigs, then: Callable[[], object] | None = None
    ) -> None:
        """Open a dataset folder (or PySODEvalToolkit's configs) without holding the caller:
        read on a thread of its own (20,000 files took 0.2–0.25 s), its samples listed when
        read; then ``then()`` runs (in the next turn) if it held a dataset. A newer opening
        replaces one being read."""
        self._opening += 1
        generation, path = self._opening, _source(path)
        self.reading.emit(path)
        self._readings += 1
        config = self.settings.eval_config()
        self.runtime.submit(
            lambda: _read_folder(path, config),
            lambda found: self._on_folder(generation, path, found, then),
            lambda why: self._on_folder(generation, path, why, then),
            own_thread=True,
        )

    def stop_opening(self) -> None:
        """Forget a folder still being read in the background (its result is dropped)."""
        self._opening += 1

    def _on_folder(
        self,
        generation: int,
        path: Path | ToolkitConfigs,
        found: Any,
        then: Callable[[], object] | None,
    ) -> None:
        self._readings -= 1
        if generation != self._opening:
            return  # a newer opening, or the window was closed
        if isinstance(found, str):
            self.folder_failed.emit(path, found)
            return
        datasets, problems, pieces = found
        self.folder_read.emit(path, datasets, problems, True)
        if not datasets:
            return
        self._open_cases(path)
        if pieces is not None:
            self.scores.pieces = (datasets[0], *pieces)
        if then is not None:
            self.runtime.call_later(0, then)
        self.show_datasets(datasets, defer_first=True)
        self.datasets_opened.emit(datasets, True)

    def open_files(self, gt: Path, preds: list[Path], image: Path | None = None) -> None:
        """Open one sample from explicit files (no dataset to score)."""
        sample = single_sample(Path(gt), [Path(p) for p in preds], Path(image) if image else None)
        ds = Dataset("files", None, None, {}, [sample])  # type: ignore[arg-type]
        self.show_datasets([ds], score=False)

    def show_datasets(
        self, datasets: list[Dataset], score: bool = True, defer_first: bool = False
    ) -> None:
        """Show ``datasets``: the first one's models and first sample (read in the next turn
        with ``defer_first``), and its scores (``score``) as the background evaluation
        makes them."""
        self.datasets_shown.emit(datasets)
        self.scores.forget()
        if datasets:
            self._list_models(datasets[0])
        self.open_datasets(datasets, defer_first)
        if score:
            self.scores.score_current()
        else:
            self.scores.stop()

    def choose_dataset(self, name: str) -> None:
        """Make the dataset ``name`` of the folder current, with its models and scores."""
        if self.dataset is not None and name == self.dataset.name:
            return
        ds = next(d for d in self.datasets if d.name == name)
        self._list_models(ds)
        self.select_dataset(name)
        self.scores.show_dataset(ds)
        self.dataset_chosen.emit(name)

    def go_to(self, sample: str, dataset: str | None = None) -> bool:
        """Show ``sample`` (its name or its file's name) of ``dataset``; False, with a
        message, when there is none."""
        if dataset and any(d.name == dataset for d in self.datasets):
            self.choose_dataset(dataset)
        names = self.sample_names
        if sample not in names:
            sample = sample_name(sample)  # given as its file's name (Crab-10.png)
        if sample not in names:
            self.message.emit(f"no sample {sample!r} in this dataset", 8000)
            return False
        self.select_sample(names.index(sample))
        return True

    # ------------------------------------------------------------------ models
    def _list_models(self, ds: Dataset) -> None:
        """The models of ``ds`` and what was chosen for it before; the shown ones are read
        and scored (set before a sample is read: no second reading)."""
        key = str(ds.gt.path) if ds.gt is not None else ""
        with self.selection.changed.blocked():
            self.selection.set_models(ds.method_names, key)
        self.models = self.selection.shown if ds.gt is not None else None
        self.models_listed.emit()

    def _on_models_changed(self) -> None:
        ds = self.dataset
        if ds is None or ds.gt is None:
            return
        self.models_changed.emit()
        self.set_models(self.selection.shown)

    # ------------------------------------------------------------------ settings
    def set_settings(self, settings: Settings) -> None:
        """Change parameters (the measures stay the chosen ones); the browser's scores are
        made again once they have been still for :data:`RESCORE_AFTER_MS`. Another GT rule
        makes the objects' shares unknown again (read anew when asked for)."""
        if settings.params.norm.gt_rule != self.settings.params.norm.gt_rule:
            known, self.walk.shares, self._shares_for = self.walk.shares, None, None
            if known is not None:
                self.facts_changed.emit()
        super().set_settings(dataclasses.replace(settings, keys=self.measure_choice))
        if self.dataset is not None and self.dataset.name != "files":
            self._rescore.start()

    def _stored_measures(self) -> tuple[str, ...]:
        """The measures chosen before (the default ones at first), without any that no
        longer exists."""
        stored: Any = self.preferences.value("measures", None)
        if not stored:
            return ()
        words = [stored] if isinstance(stored, str) else [str(k) for k in stored]
        return tuple(k for k in words if k in MEASURES_BY_KEY)

    def set_measures(self, keys: Sequence[str]) -> None:
        """Compute and show ``keys`` (empty: the default measures), remembered."""
        chosen = tuple(keys) if set(keys) != set(default_keys()) else ()
        self.measure_choice = chosen
        self.preferences.set_value("measures", list(chosen))
        self.measures_changed.emit(chosen)
        self.set_settings(self.settings)

    # ------------------------------------------------------------------ cases
    def toggle_tag(self, slot: int) -> bool | None:
        """Tag the sample last asked for with ``slot`` (1–9), or untag it; written to disk
        before the change is announced. True/False: tagged now or not; None: no sample, or
        no folder to keep tags for."""
        sample = self.requested
        if sample is None:
            return None
        now = self.cases.toggle(sample.dataset, sample.name, slot)
        if now is not None:
            name = self.cases.names[slot]
            self.message.emit(f"{sample.name}: {'tagged' if now else 'untagged'} {name!r}", 4000)
        return now

    def next_untagged(self) -> bool:
        """Open the next sample in the walk's order that carries no tag; False if there is
        none (every sample tagged)."""
        sample = self.requested
        if sample is None or self.dataset is None:
            return False
        current = sample
        for _ in range(len(self.dataset.samples) - 1):
            current = self._after(current, 1)
            if not self.cases.tags(current.dataset, current.name):
                self._direction = 1
                self.load(current)
                return True
        self.message.emit("every sample of the dataset carries a tag", 4000)
        return False

    # ------------------------------------------------------------------ what filters know
    def request_shares(self) -> bool:
        """Read the object's share of every sample of the dataset in the background (once
        per dataset: for the scatter view and the filters ``share`` and ``empty gt``); True
        if they are known already."""
        ds = self.dataset
        if ds is None or self.walk.shares is not None:
            return self.walk.shares is not None
        if self._shares_for == ds.name:
            return False
        self._shares_for = ds.name
        norm = self.settings.params.norm
        samples = list(ds.samples)
        self.message.emit(
            f"reading the {len(samples):,} GTs of {ds.name} for their objects' shares…", 4000
        )

        def done(shares: dict[str, float]) -> None:
            if self._shares_for == ds.name:  # (not a later dataset's reading)
                self._shares_for = None
            if self.dataset is ds and norm.gt_rule == self.settings.params.norm.gt_rule:
                self.walk.shares = shares
                self.facts_changed.emit()

        def failed(why: str) -> None:
            if self._shares_for == ds.name:
                self._shares_for = None
            self.message.emit(f"the objects' shares could not be read: {why}", 8000)

        self.runtime.submit(lambda: gt_shares(samples, norm), done, failed, own_thread=True)
        return False

    def _open_cases(self, path: Path | ToolkitConfigs) -> None:
        """Open the folder's tags and notes; a damaged store set aside is said in the status
        bar too (a trial found it said only in the Cases tab, behind the list)."""
        self.cases.open(_folder_of(path))
        store = self.cases.store
        if store is not None and store.recovered:
            self.message.emit(f"tags and notes: {store.recovered}", 15000)

    def select_samples(self, names: frozenset[str] | set[str]) -> None:
        """The scatter view's selection: the filter's ``selected``."""
        self.walk.chosen = frozenset(names)
        self.facts_changed.emit()

    def _note_problems(self, problems: list[Problem]) -> None:
        ds = self.dataset
        names = {p.name for p in problems if p.name and (ds is None or p.dataset in ("", ds.name))}
        if names - self.walk.problems:
            self.walk.problems |= names
            self.facts_changed.emit()

    # ------------------------------------------------------------------ ending
    def close(self) -> None:
        """Stop every background work of the model (the window is closing)."""
        self.cases.close()
        self.stop_opening()
        self._rescore.stop()
        self.service.close()


def _source(path: Path | str | ToolkitConfigs) -> Path | ToolkitConfigs:
    return path if isinstance(path, ToolkitConfigs) else Path(path)


def _folder_of(source: Path | ToolkitConfigs) -> Path:
    """The folder whose tags a source's samples get: the folder opened, or the folder of
    the toolkit's dataset config."""
    return source.dataset_json.parent if isinstance(source, ToolkitConfigs) else source


def _read_folder(path: Path | ToolkitConfigs, config: EvalConfig) -> Any:
    """On a thread: the datasets and problems of ``path``, and the first dataset pickled
    for the scoring service with its empty score matrix, made here while the window waits
    anyway (made later, they competed with the first sample's display; NumPy fills the
    matrix without holding the interpreter lock). No collection while it reads: the window
    would wait for it (one took 60–90 ms)."""
    with quiet_collector():
        datasets, problems = read_source(path)
        pieces = None
        if datasets and datasets[0].gt:
            pieces = (in_pieces(datasets[0]), score_matrix(datasets[0], config))
        return datasets, problems, pieces
