"""Reading, scoring and caching the shown sample: the heart of the inspector model.

:class:`SampleScoring` owns the selection (dataset, sample, threshold) and the parameters,
reads samples and sends scoring jobs to the runtime's pool, and receives their results.
Every request (a sample asked for, new parameters) bumps a generation number; results of an
older generation are cached but never shown. Results are cached by (sample, model,
parameters), bounded in count and in bytes, and each sample's prepared GT (with its
distance transform, kernel and camouflage degree) is reused across models and parameter
changes that keep the GT rule; opening datasets empties every cache. When a sample's results
are in, the next sample in the stepping direction is read and scored in the background at
low priority (dropped as soon as anything else is asked for), so that stepping shows it at
once.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from pathlib import Path
from typing import Any

from fminspect._runtime import release_free_memory
from fminspect.inspector.events import Event
from fminspect.inspector.memory import sized
from fminspect.inspector.read_ahead import ReadAhead
from fminspect.inspector.result_cache import ResultCache
from fminspect.inspector.runtime import Runtime
from fminspect.inspector.settings import Settings
from fminspect.inspector.walk import Walk
from fminspect.io.discovery import Dataset, Sample
from fminspect.io.validation import Problem
from fminspect.metrics import GroundTruth, SuiteResult, update_suite
from fminspect.pipeline.notes import Note
from fminspect.pipeline.sample import LoadedSample, load_sample, prepare, score_model

GT_CACHE_SIZE = 16
LOADED_CACHE_SIZE = 4  # samples read from disk (the current one and its neighbours)
#: After a sample's results are in, the next one is read and scored once the window says it
#: has drawn them (:meth:`SampleScoring.results_drawn`: the read-ahead's threads would slow
#: the drawing down) or, if it does not, after this long.
PREFETCH_DELAY_MS = 250
#: A change of β² or α (spin boxes, typed digit by digit or held down) is scored this long
#: after the last one.
DEBOUNCE_MS = 30
#: Samples shown between two hand-backs of the free memory the allocator keeps
#: (:func:`~fminspect._runtime.release_free_memory`), on a worker thread.
TRIM_EVERY = 10


class SampleScoring:
    """The shown sample: its selection, the parameters, and its background scoring.

    Notes
    -----
    Its events (each an :class:`~fminspect.inspector.events.Event`, with the arguments
    its callbacks get):

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

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.sample_loaded = Event("sample_loaded")
        self.result_ready = Event("result_ready")
        self.results_complete = Event("results_complete")
        self.busy_changed = Event("busy_changed")
        self.request_started = Event("request_started")
        self.problems = Event("problems")
        self.threshold_changed = Event("threshold_changed")
        self.settings_changed = Event("settings_changed")
        self.datasets: list[Dataset] = []
        self.dataset: Dataset | None = None
        self.sample: LoadedSample | None = None
        self.settings = Settings()
        self.threshold = 128
        self.results: dict[str, SuiteResult] = {}
        #: the models read and scored (the window's shown ones); None: every model
        self.models: list[str] | None = None
        self.generation = 0
        self._pending: set[str] = set()
        self._request_jobs: list[Any] = []  # scoring jobs of the current request
        self._cache = ResultCache()
        # a sample's GT prepared under a GT rule, and the notes on it
        self._gts: OrderedDict[tuple[str, str], tuple[GroundTruth | None, tuple[Note, ...]]] = (
            OrderedDict()
        )
        self._debounce = runtime.timer(DEBOUNCE_MS, self.recompute)
        # samples are read from disk on the thread pool; the latest request wins
        self._requested: Sample | None = None
        self._load_generation = 0
        self._loading = False
        self._read_with = ""  # the resize rule the current sample's maps were read with
        self._epoch = 0  # bumped by open_datasets: callbacks of an older epoch are dropped
        self._loaded: OrderedDict[tuple[str, str, str], LoadedSample] = OrderedDict()
        # after a sample is scored, the next one in the stepping direction is read and scored
        # in the background at low priority, so that A/D shows it at once
        self._direction = 1
        # the order the browser lists the samples in, which stepping walks
        self.walk = Walk()
        self._completed = 0  # requests whose every result is in (see TRIM_EVERY)
        self._prefetch_timer = runtime.timer(PREFETCH_DELAY_MS, self._prefetch_next)
        # the reading and scoring ahead: ("read", *loaded key) or a result-cache key
        self._ahead = ReadAhead(runtime)

    # ------------------------------------------------------------------ sources
    def open_datasets(self, datasets: list[Dataset], defer_first: bool = False) -> None:
        """Show these datasets; the first sample of the first one becomes current — read
        from the next event-loop turn with ``defer_first`` (unless another one is asked for
        meanwhile), so that its reading does not compete with what the caller does in this
        one. What was read or scored before is forgotten: another folder may hold a dataset
        of the same name, or the same folder other maps."""
        self._epoch += 1
        self._load_generation += 1  # a read under way is for the old datasets
        self._loading = False
        self._cancel_prefetch()
        self._ahead.forget()  # what runs still is of the old datasets: never adopted
        self._loaded.clear()
        self._cache.clear()
        self._gts.clear()
        self.datasets = datasets
        self.dataset = datasets[0] if datasets else None
        self._requested = None
        if self.dataset and self.dataset.samples:
            if defer_first:
                self._loading = True  # busy, for wait() and the window's busy label
                self.busy_changed.emit(f"reading {self.dataset.samples[0].name}…")
                self.runtime.call_later(0, functools.partial(self._load_first, self._epoch))
            else:
                self.select_sample(0)

    def _load_first(self, epoch: int) -> None:
        if epoch == self._epoch and self._requested is None:
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
        """Next (+1) or previous (−1) sample in the browser's order (:attr:`walk`), from the
        one last asked for, so that quick presses advance even while a sample is being
        read."""
        current = self._requested
        if current is None or self.dataset is None or current not in self.dataset.samples:
            return
        self._direction = 1 if delta >= 0 else -1
        self.load(self._after(current, delta))

    @property
    def requested(self) -> Sample | None:
        """The sample last asked for (shown, or being read)."""
        return self._requested

    def open_sample(self, name: str, direction: int = 1) -> None:
        """Show the sample ``name`` of the current dataset, reading ahead in ``direction``
        (the browser's row moved up or down)."""
        if self.dataset is None:
            return
        self._direction = 1 if direction >= 0 else -1
        self.load(self.dataset.sample(name))

    def _after(self, sample: Sample, delta: int) -> Sample:
        """The sample ``delta`` steps after ``sample``: in the walk's order when it lists
        this dataset, else in the natural order (wrapping around)."""
        assert self.dataset is not None
        samples = self.dataset.samples
        if len(self.walk.samples) == len(samples):
            name = self.walk.neighbour(sample.name, delta)
            if name is not None:
                found = samples[self.walk.matrix.sample_index[name]]  # the same natural order
                return found if found.name == name else self.dataset.sample(name)
        return samples[(samples.index(sample) + delta) % len(samples)]

    def _loaded_key(self, sample: Sample) -> tuple[str, str, str]:
        return (sample.dataset, sample.name, self.settings.interpolation)

    def _wanted(self, sample: Sample) -> list[str] | None:
        """The models of ``sample`` to read (None: all of them)."""
        if self.models is None:
            return None
        return [m for m in self.models if m in sample.preds]

    def _has_models(self, loaded: LoadedSample) -> bool:
        """``loaded`` holds (or failed to read) every wanted model of its sample (a sample
        whose GT could not be read holds no map, and reading it again would not help)."""
        if loaded.gt is None:
            return True
        wanted = self._wanted(loaded.sample)
        if wanted is None:
            wanted = list(loaded.sample.preds)
        return all(m in loaded.preds or m in loaded.unreadable for m in wanted)

    def scored_models(self, sample: LoadedSample) -> list[str]:
        """The models of a read sample that are scored: the wanted ones it could read."""
        if self.models is None:
            return list(sample.preds)
        return [m for m in self.models if m in sample.preds]

    def set_models(self, models: list[str] | None) -> None:
        """Read and score only these models from now on (None: every model); the current
        sample is read again if it lacks one of them, else only rescored (from the cache)."""
        if models == self.models:
            return
        self.models = None if models is None else list(models)
        if self._requested is None:
            return
        loaded = self._loaded.get(self._loaded_key(self._requested))
        if loaded is None or not self._has_models(loaded):
            self._loaded.pop(self._loaded_key(self._requested), None)
            self.load(self._requested)
        elif self.sample is loaded and not self._loading:
            self._show(loaded, self._read_with)

    def load(self, sample: Sample) -> None:
        """Show ``sample`` and score it: at once if it has been read already (the previous
        ones and the prefetched neighbour), otherwise once it has been read on the thread
        pool — the window stays live meanwhile."""
        self._requested = sample
        self._cancel_prefetch()
        self._load_generation += 1
        gen = self._load_generation
        key = self._loaded_key(sample)
        if key in self._loaded and self._has_models(self._loaded[key]):
            self._loaded.move_to_end(key)
            self._loading = False
            self._show(self._loaded[key], key[2])
            return
        self._loading = True
        # the request under way was for the sample shown: none of its results may be shown now
        self._cancel_request()
        self.generation += 1
        self._pending = set()
        self.results = {}
        self.busy_changed.emit(f"reading {sample.name}…")
        interpolation, epoch = self.settings.interpolation, self._epoch
        models = self._wanted(sample)

        def loaded(loaded: LoadedSample) -> None:
            if epoch == self._epoch:
                self._on_loaded(gen, key, loaded)

        def failed(message: str) -> None:
            if epoch == self._epoch:
                self._on_load_failed(gen, sample, message)

        if self._ahead.adopt(("read", *key), loaded, failed):  # being read ahead: wait
            return
        self.runtime.submit(
            lambda: load_sample(sample, interpolation, models=models, without_gt=True),
            loaded,
            failed,
        )

    def _remember_loaded(self, key: tuple[str, str, str], loaded: LoadedSample) -> None:
        self._loaded[key] = loaded
        self._loaded.move_to_end(key)
        while len(self._loaded) > LOADED_CACHE_SIZE:
            self._loaded.popitem(last=False)

    def _on_loaded(self, gen: int, key: tuple[str, str, str], loaded: LoadedSample) -> None:
        self._remember_loaded(key, loaded)
        if gen != self._load_generation:
            return  # another sample was asked for meanwhile
        self._loading = False
        if not self._has_models(loaded):  # models were chosen while it was being read
            self._loaded.pop(key, None)
            self.load(loaded.sample)
            return
        self._show(loaded, key[2])

    def _on_load_failed(self, gen: int, sample: Sample, message: str) -> None:
        if gen != self._load_generation:
            return
        self._loading = False
        self.busy_changed.emit("")
        self.problems.emit(
            [
                Problem(
                    sample.gt,
                    f"could not be read: {message}",
                    "error",
                    sample.dataset,
                    "",
                    sample.name,
                )
            ]
        )

    def _show(self, loaded: LoadedSample, interpolation: str) -> None:
        self.sample = loaded
        self._read_with = interpolation
        self.results = {}
        problems = list(loaded.problems)
        problems += [
            Problem(loaded.sample.gt, n.message, "warning", loaded.dataset, "", loaded.name)
            for n in self.gt_notes()
            if n.kind == "empty-gt"
        ]
        if problems:
            self.problems.emit(problems)
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
        if reload and self._requested is not None:
            self._debounce.stop()
            self.load(self._requested)  # read again with the new resize rule, then scored
            return
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
        return None if self.sample is None else self._gt_of(self.sample)[0]

    def gt_notes(self) -> tuple[Note, ...]:
        """The notes on the current sample's GT under the current GT rule (conversions, no
        foreground)."""
        return () if self.sample is None else self._gt_of(self.sample)[1]

    def _gt_of(self, sample: LoadedSample) -> tuple[GroundTruth | None, tuple[Note, ...]]:
        norm = self.settings.params.norm
        key = (sample.key, norm.gt_rule)
        if key not in self._gts:
            self._gts[key] = prepare(sample, norm)
            while len(self._gts) > GT_CACHE_SIZE:
                self._gts.popitem(last=False)
        self._gts.move_to_end(key)
        return self._gts[key]

    def _cancel_request(self) -> None:
        """Take the scoring jobs of the request under way that have not started off the
        queue (quick successive changes would otherwise each score every model)."""
        jobs, self._request_jobs = self._request_jobs, []
        for job in jobs:
            self.runtime.cancel(job)

    def recompute(self) -> None:
        """Score every model of the current sample with the current settings."""
        self._debounce.stop()
        self._cancel_prefetch()
        self._cancel_request()
        if self._loading:
            return  # the sample being read is scored when it arrives
        self.generation += 1
        if self.sample is not None and self._read_with != self.settings.interpolation:
            # its maps were resized by another rule (reading them again failed): scoring
            # them would cache results under a key that says otherwise
            self.results, self._pending = {}, set()
            self.request_started.emit()
            self.problems.emit(
                [
                    Problem(
                        Path(self.sample.name),
                        f"not scored: its maps were read with resize '{self._read_with}' and "
                        f"reading them with '{self.settings.interpolation}' failed; choose "
                        f"'{self._read_with}' again or reopen the dataset",
                        "error",
                        self.sample.dataset,
                        "",
                        self.sample.name,
                    )
                ]
            )
            self._complete()
            return
        gen = self.generation
        sample, gt = self.sample, self.gt()
        self.results = {}
        self._pending = set()
        self.request_started.emit()
        if sample is None or gt is None:
            self.busy_changed.emit("")
            return
        settings, epoch = self.settings, self._epoch  # other datasets: drop what comes back
        for model in self.scored_models(sample):
            key = (sample.key, model, settings.key())
            cached = self._cache.take(key)
            if cached is not None:
                self.results[model] = cached
                continue
            self._pending.add(model)

            def done(
                sized: tuple[SuiteResult, int], model: str = model, key: tuple[Any, ...] = key
            ) -> None:
                if epoch == self._epoch:
                    self._on_result(gen, model, key, *sized)

            def failed(message: str, model: str = model) -> None:
                if epoch == self._epoch:
                    self._on_failed(gen, model, message)

            if self._ahead.adopt(key, done, failed):  # being scored ahead: wait for it
                continue
            job = self.runtime.submit(self._job(sample, model, gt, settings), done, failed)
            self._request_jobs.append(job)
        for model in self.results:
            self.result_ready.emit(model)
        if self._pending:
            first_camo = sample.image is not None and not self._cache.has_degree(
                sample.key, gt.norm.gt_rule
            )
            self.busy_changed.emit(
                "computing the camouflage degree…" if first_camo else self.busy_changed_text()
            )
        else:
            self._complete()

    def _complete(self) -> None:
        self.busy_changed.emit("")
        self.results_complete.emit()
        # once the window has drawn the results, read and score the next sample
        self._prefetch_timer.start()
        self._completed += 1
        if self._completed % TRIM_EVERY == 0:
            # before the prefetch: at a lower priority, it waited behind it while stepping on
            self.runtime.submit(release_free_memory, lambda _: None)

    def results_drawn(self) -> None:
        """The window has put the shown sample's results on screen: the next sample is read
        and scored now rather than after :data:`PREFETCH_DELAY_MS` (a reader who steps on
        150 ms after a sample is drawn found the next one only partly read ahead)."""
        if self._prefetch_timer.is_active():
            self._prefetch_timer.stop()
            self._prefetch_next()

    def _job(self, sample: LoadedSample, model: str, gt: GroundTruth, settings: Settings) -> Any:
        """The work for one model: an update of a cached result under the same normalisation
        (only the measures the change affects), or a full scoring; with its size (see
        :func:`~fminspect.inspector.memory.sized`)."""
        base = self._reusable(sample.key, model, settings)
        families = settings.families()
        if base is not None:
            return sized(
                lambda: update_suite(base, settings.params, img=sample.image, families=families)
            )
        return sized(lambda: score_model(sample, model, gt, settings.params, families=families))

    def _reusable(self, sample_key: str, model: str, settings: Settings) -> SuiteResult | None:
        """A cached result of this model under the same normalisation and resize rule."""
        return self._cache.reusable(sample_key, model, settings.interpolation, settings.params.norm)

    def busy_changed_text(self) -> str:
        """Status text while models are being scored."""
        n = len(self._pending)
        return f"scoring {n} model{'s' if n != 1 else ''}…"

    def _store(self, key: tuple[Any, ...], result: SuiteResult, nbytes: int) -> None:
        self._cache.store(key, result, nbytes)

    @property
    def cache_bytes(self) -> int:
        """Bytes of the arrays held by the result cache (:attr:`ResultCache.nbytes`)."""
        return self._cache.nbytes

    def _on_result(
        self, gen: int, model: str, key: tuple[Any, ...], result: SuiteResult, nbytes: int
    ) -> None:
        self._store(key, result, nbytes)
        if gen != self.generation:
            return  # a newer request superseded this one
        self.results[model] = result
        self._pending.discard(model)
        self.result_ready.emit(model)
        if not self._pending:
            self._complete()
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
            self._complete()

    # ------------------------------------------------------------------ prefetch
    def _next_sample(self) -> Sample | None:
        """The sample after the one asked for, in the stepping direction (None if none)."""
        if self.dataset is None or self._requested is None:
            return None
        samples = self.dataset.samples
        if len(samples) < 2 or self._requested not in samples:
            return None
        return self._after(self._requested, self._direction)

    def _prefetch_next(self) -> None:
        """Read the next sample in the stepping direction and score its models, at low
        priority; queued work is dropped as soon as anything else is asked for."""
        sample = self._next_sample()
        if sample is None or self._loading or self._pending:
            return
        key = self._loaded_key(sample)
        if key in self._loaded and self._has_models(self._loaded[key]):
            self._prefetch_scores(self._loaded[key])
            return
        models = self._wanted(sample)
        self._ahead.run(
            ("read", *key),
            lambda: load_sample(sample, key[2], models=models, without_gt=True),
            lambda loaded: self._on_prefetch_loaded(sample, key, loaded),
        )

    def _on_prefetch_loaded(
        self, sample: Sample, key: tuple[str, str, str], loaded: LoadedSample
    ) -> None:
        self._remember_loaded(key, loaded)
        # score it only if it is still the next sample, under the current resize rule
        if (
            self._next_sample() is sample
            and key == self._loaded_key(sample)
            and not (self._pending or self._loading)
        ):
            self._prefetch_scores(loaded)

    def _prefetch_scores(self, sample: LoadedSample) -> None:
        gt = self._gt_of(sample)[0]
        if gt is None:
            return
        settings = self.settings
        for model in self.scored_models(sample):
            key = (sample.key, model, settings.key())
            if key in self._cache:
                continue
            self._ahead.run(
                key,
                self._job(sample, model, gt, settings),
                functools.partial(self._store_sized, key),
            )

    def _store_sized(self, key: tuple[Any, ...], sized: tuple[SuiteResult, int]) -> None:
        self._store(key, *sized)

    def _cancel_prefetch(self) -> None:
        """Drop the prefetch work still queued (running jobs finish, and are cached)."""
        self._prefetch_timer.stop()
        self._ahead.cancel()

    def cached_models(self, sample: str) -> set[str]:
        """Models of ``sample`` (its key, 'dataset/name') with a cached result under the
        current settings."""
        return self._cache.models(sample, self.settings.key())

    @property
    def loading(self) -> bool:
        """Whether the sample asked for is still being read from disk."""
        return self._loading

    @property
    def prefetching(self) -> bool:
        """Whether the next sample is still being read or scored in the background."""
        return self._ahead.busy

    @property
    def busy(self) -> bool:
        """The sample asked for is being read, its scores computed, or a change of the
        parameters is about to be (the debounce)."""
        return bool(self._pending or self._loading or self._debounce.is_active())

    def wait(self, timeout_ms: int = 30000) -> bool:
        """Run what the current request needs until it is complete (for tests, scripts and
        screenshots); False if it is not after ``timeout_ms``."""
        return self.runtime.wait_until(lambda: not self.busy, timeout_ms)
