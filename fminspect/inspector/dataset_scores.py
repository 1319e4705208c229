"""The scores of whole datasets: the browser's per-image scores, the dataset view's values
and its jobs (intervals and tests, ``compare``), as the background evaluation makes them.

The current dataset is scored first (what ``fminspect eval`` stored is read, the rest is
computed by the scoring service); then every other dataset of the folder, one at a time,
so that the dataset view shows them side by side. The scores are labelled with the
settings that made them: other settings score every dataset again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fminspect.batch import stream
from fminspect.batch.evaluation import MethodResult
from fminspect.batch.progress import clock
from fminspect.batch.scores import ScoreMatrix
from fminspect.batch.service import DatasetPieces
from fminspect.inspector.events import Event
from fminspect.inspector.settings import Settings
from fminspect.io.discovery import Dataset
from fminspect.pipeline.store import store_for

if TYPE_CHECKING:
    from fminspect.inspector.scoring import ScoringService


class _Shown(Protocol):
    """What the dataset scores need to know of the model: the datasets and the settings."""

    datasets: list[Dataset]
    dataset: Dataset | None
    settings: Settings


class DatasetScores:
    """Every dataset's scores under :attr:`scored_with`, and the dataset view's jobs.

    Notes
    -----
    Its events (each an :class:`~fminspect.inspector.events.Event`, with the arguments
    its callbacks get):

    matrix_started(str, ScoreMatrix)
        The current dataset's scores are read or computed into this matrix (the browser
        shows its samples now, its scores as they land), or were already.
    scores_arrived(frozenset[int])
        Scores of these samples of the current dataset landed in its matrix.
    status(str), progress(int, int), progress_ended()
        The browser's line and its progress bar (done of total; 0 of 0: busy).
    results_changed(dict[str, tuple[MethodResult, ...]], str)
        The dataset values of every dataset scored so far, in the folder's order, and a note
        on those still being scored.
    note(str)
        A line for the dataset view.
    problems(list[Problem])
        Files that cannot be read anywhere in the dataset.
    task_started(str), task_progress(str), task_ended(str)
        A job of the dataset view began, reported progress, ended (with a line to show).
    statistics_ready(dict)
        The intervals and tests of the latest job.
    compare_ready(object)
        The comparison of the latest job.
    """

    def __init__(self, model: _Shown, service: ScoringService) -> None:
        self.model = model
        self.service = service
        self.matrix_started = Event("matrix_started")
        self.scores_arrived = Event("scores_arrived")
        self.status = Event("status")
        self.progress = Event("progress")
        self.progress_ended = Event("progress_ended")
        self.results_changed = Event("results_changed")
        self.note = Event("note")
        self.problems = Event("problems")
        self.task_started = Event("task_started")
        self.task_progress = Event("task_progress")
        self.task_ended = Event("task_ended")
        self.statistics_ready = Event("statistics_ready")
        self.compare_ready = Event("compare_ready")
        #: every method's dataset values, per dataset, once its evaluation is done
        self.results: dict[str, tuple[MethodResult, ...]] = {}
        #: per-image scores of each dataset scored (the browser shows the current one's)
        self.matrices: dict[str, ScoreMatrix] = {}
        self.scoring = ""  # the dataset the background evaluation is working on
        #: datasets whose evaluation ended without dataset values (failed or stopped): not
        #: started again by themselves (a new folder or new settings do)
        self.gave_up: set[str] = set()
        self.scored_with = model.settings  # what the scores were made with
        #: the first dataset pickled and its empty matrix, made where the folder was read
        self.pieces: tuple[Dataset, DatasetPieces, ScoreMatrix] | None = None
        self.task_kind = ""  # the dataset view's job under way (statistics, compare)
        self.task_id: int | None = None  # its number (None: no job whose result is wanted)
        service.news.connect(self._on_news)
        service.failed.connect(self._on_failed)
        service.finished.connect(self._on_finished)
        service.task_progress.connect(self._on_task_progress)
        service.task_done.connect(self._on_task_done)
        service.task_failed.connect(self._on_task_failed)

    # ------------------------------------------------------------------ queries
    @property
    def running(self) -> bool:
        """A dataset of the folder is being scored in the background."""
        return bool(self.scoring) or self.service.running

    @property
    def task_running(self) -> bool:
        """A job of the dataset view (intervals and tests, or a comparison) is under way."""
        return self.task_id is not None

    def matrix_of(self, dataset: str) -> ScoreMatrix | None:
        """The per-image scores of ``dataset`` (None if it has not been scored)."""
        return self.matrices.get(dataset)

    def values(self, key: str) -> dict[str, float] | None:
        """Each method's dataset value of ``key`` on the current dataset (None until scored)."""
        ds = self.model.dataset
        results = self.results.get(ds.name) if ds is not None else None
        if not results:
            return None
        return {r.method: r.values[key] for r in results if key in r.values}

    def scored_datasets(self) -> list[Dataset]:
        """The datasets of the folder with dataset values, in its order."""
        return [d for d in self.model.datasets if d.name in self.results]

    # ------------------------------------------------------------------ scoring
    def forget(self) -> None:
        """Other datasets are shown: every score and job of the old ones is dropped."""
        self.results.clear()
        self.matrices.clear()
        self.gave_up.clear()
        self.results_changed.emit({}, "")
        self.forget_statistics()

    def stop(self) -> None:
        """Nothing is to be scored (a sample opened from files)."""
        self.service.cancel()  # the dataset shown before is no longer wanted
        self.scoring = ""

    def score_current(self) -> None:
        """Score the current dataset (what the store has is read, the rest computed): its
        samples are listed now, its scores as they land."""
        ds = self.model.dataset
        if ds is None:
            return
        settings = self.model.settings  # the scores are labelled with what made them
        if settings != self.scored_with:  # other numbers: every dataset is scored again
            self.forget()
        self.scored_with = settings
        self.results.pop(ds.name, None)
        self._start(ds)
        self.matrix_started.emit(ds.name, self.matrices[ds.name])
        self.status.emit(f"reading {len(ds.samples)} samples × {len(ds.method_names)} models…")
        self.progress.emit(0, 0)

    def show_dataset(self, ds: Dataset) -> None:
        """``ds`` became the current dataset: its scores as they are if it was scored under
        the current settings, else scored now."""
        matrix = self.matrices.get(ds.name)
        if matrix is not None and ds.name in self.results:
            self.matrix_started.emit(ds.name, matrix)
            self.progress_ended.emit()
            self.status.emit(f"{len(ds.samples)} samples, {len(ds.method_names)} models")
        else:
            self.score_current()

    def _start(self, ds: Dataset) -> None:
        config = self.scored_with.eval_config()
        self.scoring = ds.name
        made = self.pieces if self.pieces and self.pieces[0] is ds else None
        self.pieces = None  # used once: scoring it again (new parameters) pickles it anew
        assert ds.gt is not None
        matrix = self.service.start(
            ds,
            config,
            store_for(ds.gt.path),
            made[1] if made else None,
            made[2] if made else None,
        )
        self.matrices[ds.name] = matrix

    def _score_next(self) -> bool:
        """Score the first other dataset of the folder without dataset values (so that the
        dataset view shows them side by side); False when every one has them."""
        for ds in self.model.datasets:
            if (
                ds.name not in self.results
                and ds.name not in self.gave_up
                and ds.samples
                and ds.gt is not None
            ):
                self._start(ds)
                self.note.emit(f"scoring {ds.name} in the background…")
                return True
        return False

    def _on_news(self, event: Any) -> None:
        ds = self.model.dataset
        current = ds is not None and self.scoring == ds.name
        if isinstance(event, stream.Results):
            self.results[event.dataset] = event.results
            order = [d.name for d in self.model.datasets if d.name in self.results]
            others = len(self.model.datasets) - len(order)
            self.results_changed.emit(
                {d: self.results[d] for d in order},
                f"{others} more dataset{'s' if others != 1 else ''} being scored" if others else "",
            )
        if not current or ds is None:
            return  # another dataset of the folder, scored for the dataset view
        if isinstance(event, stream.Scores):
            self.scores_arrived.emit(event.samples)
        elif isinstance(event, stream.Planned):
            # files that cannot be read anywhere in the dataset, not only in the samples visited
            self.problems.emit([p for p in event.problems if p.severity == "error"])
            todo = event.pairs - event.stored
            self.status.emit(
                f"{event.pairs} pairs: {event.stored} from the store"
                + (f", scoring the other {todo} ({event.units} images)…" if event.units else "")
            )
            if event.units:
                self.progress.emit(0, event.units)
        elif isinstance(event, stream.Noted):  # conversions an earlier eval stored
            self.problems.emit(list(event.problems))
        elif isinstance(event, stream.Progress):
            self.problems.emit(list(event.problems))
            self.progress.emit(event.done, event.total)
            self.status.emit(
                f"scoring: {event.done}/{event.total} images, {event.rate:.1f}/s, "
                f"ETA {clock(event.eta)}"
            )
            self.note.emit(
                f"{ds.name}: {event.done}/{event.total} images scored, ETA {clock(event.eta)}"
            )
        elif isinstance(event, stream.Results):
            p = self.scored_with.params
            self.status.emit(
                f"{len(ds.samples)} samples, {len(ds.method_names)} models · {p.norm.label} · "
                f"F β²={p.beta2:g}, S α={p.alpha:g}"
            )

    def _on_failed(self, message: str) -> None:
        self.status.emit(f"scoring failed: {message}")
        self.note.emit(f"scoring {self.scoring} failed: {message}")

    def _on_finished(self) -> None:
        ds = self.model.dataset
        if ds is not None and self.scoring == ds.name:
            self.progress_ended.emit()
        if self.scoring and self.scoring not in self.results:
            self.gave_up.add(self.scoring)  # failed or stopped: not retried in a loop
        self.scoring = ""
        self._score_next()

    # ------------------------------------------------------------------ jobs
    def ask_statistics(self, setup: Any) -> bool:
        """Bootstrap intervals and paired tests of every dataset with values, in the
        scoring service (as ``fminspect eval --ci``); False if none has values yet."""
        datasets = self.scored_datasets()
        if not datasets:
            return False
        config = self.scored_with.eval_config()
        self.task_kind = "statistics"
        self.task_id = self.service.run_task(
            "statistics",
            [(d, store_for(d.gt.path)) for d in datasets if d.gt is not None],
            config,
            setup,
        )
        self.task_started.emit(
            f"making intervals and tests ({setup.resamples} resamples of the images)…"
        )
        return True

    def ask_compare(self, reference: Path, significance: Any = None) -> bool:
        """Compare the dataset values with the table at ``reference`` under every
        convention, in the scoring service (as ``fminspect compare``); False if there are
        no values yet."""
        datasets = self.scored_datasets()
        ds = self.model.dataset
        if not datasets or ds is None or ds.gt is None:
            return False
        settings: Settings = self.scored_with
        self.task_kind = "compare"
        self.task_id = self.service.run_task(
            "compare",
            datasets,
            reference,
            settings.params,
            settings.interpolation,
            store_for(ds.gt.path),
            significance=significance,
        )
        self.task_started.emit(f"comparing with {reference.name}…")
        return True

    def stop_task(self) -> None:
        """Stop the job under way (it ends as "stopped")."""
        self.service.stop_task()

    def forget_statistics(self) -> None:
        """The values the statistics were made for are gone: so are they, and what the job
        under way would give is dropped (another folder may have the same names)."""
        self.statistics_ready.emit({})
        if self.task_id is not None:
            self.task_id = None
            self.service.stop_task()
            self.task_ended.emit("")

    def _on_task_progress(self, task: int, text: str) -> None:
        if task == self.task_id:
            self.task_progress.emit(text)

    def _on_task_done(self, task: int, value: Any) -> None:
        if task != self.task_id:
            return  # a job for values no longer shown (other parameters, another folder)
        self.task_id = None
        if self.task_kind == "statistics":
            self.statistics_ready.emit(value)
            return
        counts = value.counts()
        self.task_ended.emit(
            f"compared: {counts.get('agrees', 0)} agree, {counts.get('explained', 0)} "
            f"explained, {counts.get('unexplained', 0)} unexplained"
        )
        self.compare_ready.emit(value)

    def _on_task_failed(self, task: int, why: str) -> None:
        if task != self.task_id:
            return
        self.task_id = None
        what = "intervals and tests" if self.task_kind == "statistics" else "compare"
        self.task_ended.emit(f"{what}: {why}")
