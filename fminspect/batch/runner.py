"""Dataset-wide evaluation: run the work units, and :func:`evaluate_datasets`.

:mod:`fminspect.batch.evaluation` plans an evaluation against the result store and collects
its dataset values; this module runs its work units. A unit (:func:`evaluate_unit`) reads
the GT (and the image when C^ω_β is wanted) once, prepares the GT once — so the distance
transform, the S-measure centroid, the Context-measure kernel and the camouflage degree are
computed once — then loads, resizes and scores each pending method through the per-sample
pipeline (:mod:`fminspect.pipeline.sample`). Units run serially, in local processes
(:mod:`fminspect.batch.pool`) or on a Dask cluster (:func:`run_units`).

``fminspect eval``, the window's dataset browser and dataset view, ``fminspect meta`` and
``fminspect rank create --auto`` all evaluate through these two modules. No Qt.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from threading import Event
from typing import Any

from fminspect.batch.evaluation import EvalReport, Evaluation, MethodResult, Unit, UnitResult
from fminspect.batch.memory import memory_budget, unit_memory
from fminspect.batch.pool import LocalPool, configure_worker, interrupts_deferred
from fminspect.batch.progress import Progress
from fminspect.batch.stopped import RunStopped
from fminspect.io.discovery import Dataset
from fminspect.io.validation import Problem
from fminspect.pipeline.config import EvalConfig, families
from fminspect.pipeline.sample import LoadedSample, load_sample, score_sample
from fminspect.pipeline.store import ResultStore, is_damaged, register_store, set_aside

__all__ = [
    "EvalConfig",
    "EvalReport",
    "Evaluation",
    "MethodResult",
    "Unit",
    "UnitResult",
    "evaluate_datasets",
    "evaluate_unit",
    "families",
    "run_units",
]


def evaluate_unit(unit: Unit) -> UnitResult:
    """Score every pending method of one image (runs in a worker)."""
    configure_worker()
    return _score_unit(unit, _load_unit(unit))


def _load_unit(unit: Unit) -> LoadedSample:
    """Read and decode the unit's GT, image (when a measure needs it) and pending maps."""
    return load_sample(
        unit.sample,
        unit.config.interpolation,
        models=[method for method, _ in unit.todo],
        image=unit.needs_image,
        max_pixels=unit.config.max_pixels,
    )


def _score_unit(unit: Unit, loaded: LoadedSample) -> UnitResult:
    todo = dict(unit.todo)
    # warnings reach the outputs through the notes stored with every record, so that a rerun
    # from the store reports them too; errors (unreadable files) are reported from here
    out = UnitResult(unit.sample.dataset, unit.sample.name, [], [])
    for p in loaded.problems:
        if p.severity != "error":
            continue
        if loaded.gt is None:
            n = len(todo)
            p = Problem(
                p.path,
                f"{p.message} ({n} prediction{'s' if n != 1 else ''} not evaluated)",
                "error",
                p.dataset,
                p.method,
                p.name,
            )
        out.problems.append(p)
    for method, recs in score_sample(loaded, unit.config.params, todo).items():
        out.records += [(method, fam, rec) for fam, rec in recs.items()]
    return out


# ---------------------------------------------------------------------------- executors
def _run_serial(
    units: Sequence[Any], fn: Callable[[Any], Any], stop: Event | None
) -> Iterator[Any]:
    if fn is evaluate_unit:
        yield from _run_serial_read_ahead(units, stop)
        return
    for u in units:
        if stop is not None and stop.is_set():
            return
        yield fn(u)


def _run_serial_read_ahead(units: Sequence[Unit], stop: Event | None) -> Iterator[UnitResult]:
    """:func:`evaluate_unit` for every unit in this process, the next unit's files read and
    decoded by a thread while this one is scored (issue #50): OpenCV's decoders release the
    GIL, so on a machine with a second core the decoding is mostly hidden behind the
    scoring. A unit is read ahead only while both units' estimated peaks fit in the memory
    budget (:mod:`fminspect.batch.memory`): huge images are read one at a time."""
    if not units:
        return
    configure_worker()
    budget = memory_budget()
    with ThreadPoolExecutor(1, thread_name_prefix="fminspect-read-ahead") as reader:
        ahead: Future[LoadedSample] | None = None
        need = unit_memory(units[0]) if budget is not None else 0
        try:
            for i, unit in enumerate(units):
                if stop is not None and stop.is_set():
                    return
                loaded = ahead.result() if ahead is not None else _load_unit(unit)
                ahead = None
                if i + 1 < len(units):
                    following = units[i + 1]
                    need_next = unit_memory(following) if budget is not None else 0
                    if budget is None or need + need_next <= budget:
                        ahead = reader.submit(_load_unit, following)
                    need = need_next
                yield _score_unit(unit, loaded)
        finally:
            if ahead is not None:
                ahead.cancel()


def _run_local(
    units: Sequence[Any], pool: LocalPool, fn: Callable[[Any], Any], stop: Event | None
) -> Iterator[Any]:
    """Results in completion order; at most a few units per worker are queued at a time, so
    that stopping (``stop`` set, or the consumer closing the generator) leaves little to
    cancel and the queued units' data stays small. Units are handed out while the estimated
    peak memory of those in flight fits in the pool's budget (:mod:`fminspect.batch.memory`):
    huge images are scored fewer at a time — one at a time if need be — instead of the
    workers together running out of memory."""
    pool.ready()
    pending = iter(units)
    running: dict[Future[Any], int] = {}  # future → the unit's estimated peak bytes
    limit = max(2, 4 * pool.jobs)
    budget = pool.memory
    waiting: Any = None  # a unit that did not fit yet
    try:
        while True:
            # Ctrl-C is acted on between the pool's calls, never inside one (which could
            # leave one of its locks held: see interrupts_deferred)
            with interrupts_deferred():
                if stop is not None and stop.is_set():
                    for fut in running:
                        fut.cancel()  # those not started; the others finish and are yielded
                else:
                    while len(running) < limit:
                        unit = waiting if waiting is not None else next(pending, None)
                        if unit is None:
                            break
                        need = unit_memory(unit) if budget is not None else 0
                        if running and budget is not None and sum(running.values()) + need > budget:
                            waiting = unit  # handed out when enough of those in flight end
                            break
                        waiting = None
                        running[pool.executor.submit(fn, unit)] = need
                if not running:
                    return
                done, _ = wait(running, timeout=0.25, return_when=FIRST_COMPLETED)
                outcomes: list[tuple[Any, BaseException | None]] = []
                for fut in done:
                    del running[fut]
                    if not fut.cancelled():
                        error = fut.exception()
                        outcomes.append((None if error else fut.result(), error))
            for result, error in outcomes:
                if error is not None:
                    raise error
                yield result
    finally:
        with interrupts_deferred():
            for fut in running:
                fut.cancel()


def _run_dask(
    units: Sequence[Any], scheduler: Any, fn: Callable[[Any], Any], stop: Event | None
) -> Iterator[Any]:
    """On a Dask cluster (:mod:`fminspect.batch.cluster`): connected and checked here unless
    ``scheduler`` is a :class:`~fminspect.batch.cluster.Cluster` already."""
    from fminspect.batch.cluster import Cluster, connect

    own = not isinstance(scheduler, Cluster)
    cluster = connect(scheduler)
    try:
        yield from cluster.run(units, fn, stop)
    finally:
        if own:
            cluster.close()


def run_units(
    units: Sequence[Any],
    fn: Callable[[Any], Any] = evaluate_unit,
    *,
    jobs: int = 1,
    scheduler: Any = None,
    pool: LocalPool | None = None,
    stop: Event | None = None,
) -> Iterator[Any]:
    """``fn(unit)`` for every unit, serially, on local processes (``pool``, or a pool of
    ``jobs`` started here) or on a Dask scheduler; results arrive in completion order
    (callers sort them). Setting ``stop`` ends the stream after the units under way."""
    if scheduler is not None:
        return _run_dask(units, scheduler, fn, stop)
    if pool is not None and units:
        return _run_local(units, pool, fn, stop)
    if jobs > 1 and len(units) > 1:
        return _run_owned_pool(units, jobs, fn, stop)
    return _run_serial(units, fn, stop)


def _run_owned_pool(
    units: Sequence[Any], jobs: int, fn: Callable[[Any], Any], stop: Event | None
) -> Iterator[Any]:
    pool = LocalPool(jobs)
    try:
        yield from _run_local(units, pool, fn, stop)
    finally:
        pool.close()


def evaluate_datasets(
    datasets: Iterable[Dataset],
    config: EvalConfig | None = None,
    *,
    cache_path: Path | str,
    methods: Sequence[str] | None = None,
    jobs: int = 1,
    scheduler: Any = None,
    pool: LocalPool | None = None,
    progress: bool | None = None,
    register: bool = False,
    significance: Any = None,
    selection: Any = None,
) -> EvalReport:
    """Evaluate every (dataset, method, image); see the module notes.

    Parameters
    ----------
    datasets : Dataset
        From :func:`fminspect.io.discovery.discover`.
    config : EvalConfig, optional
        Parameters, measures, resize rule (default: every measure, the papers' parameters).
    cache_path : path
        The SQLite result store (created if needed; shared between runs to resume).
    methods : list of str, optional
        Restrict to these methods.
    jobs : int
        Local worker processes (1: in this process).
    scheduler : str, dask Client or Cluster, optional
        A Dask scheduler address (``'tcp://host:8786'``), a client, or a
        :class:`~fminspect.batch.cluster.Cluster` already checked; overrides ``jobs``. Raises
        :class:`~fminspect.batch.cluster.ClusterError` (its text is the whole message).
    pool : LocalPool, optional
        Local workers started earlier (the CLI starts them before importing the measures);
        by default a pool of ``jobs`` workers is started here when ``jobs > 1``.
    progress : bool, optional
        Show progress: a bar on a terminal, periodic plain lines otherwise (default: both
        on stderr; ``False`` for none).
    register : bool
        Record the store in the user's index, so that the window opening these datasets
        reads these results (:func:`fminspect.pipeline.store.store_for`).
    significance : fminspect.batch.significance.Setup, optional
        Also compute bootstrap intervals and paired tests over images
        (:attr:`EvalReport.statistics`).
    selection : fminspect.batch.subsets.Selection, optional
        Subsets evaluated as datasets of their own, and whether images with an empty GT are
        left out of the dataset values (their number is reported in any case).

    Examples
    --------
    >>> from fminspect.io.discovery import discover                      # doctest: +SKIP
    >>> datasets, problems = discover("data/COD10K")                      # doctest: +SKIP
    >>> report = evaluate_datasets(datasets, cache_path="cache.sqlite")   # doctest: +SKIP
    >>> report.summary()["COD10K"]["SINet"]["Sm"]                         # doctest: +SKIP
    0.776...
    """
    datasets = list(datasets)

    def run() -> EvalReport:
        return _evaluate_datasets(
            datasets,
            config,
            cache_path=cache_path,
            methods=methods,
            jobs=jobs,
            scheduler=scheduler,
            pool=pool,
            progress=progress,
            register=register,
            significance=significance,
            selection=selection,
        )

    try:
        return run()
    except sqlite3.DatabaseError as exc:
        if not is_damaged(exc):
            raise
        # damage found by a read after the store opened (SQLite checks pages as it reads
        # them): the store is a cache, so it is moved aside and the evaluation starts again
        message = set_aside(Path(cache_path), exc)
    report = run()
    report.problems.append(Problem(Path(cache_path), message, "warning"))
    return report


def _evaluate_datasets(
    datasets: Iterable[Dataset],
    config: EvalConfig | None,
    *,
    cache_path: Path | str,
    methods: Sequence[str] | None,
    jobs: int,
    scheduler: Any,
    pool: LocalPool | None,
    progress: bool | None,
    register: bool,
    significance: Any = None,
    selection: Any = None,
) -> EvalReport:
    config = config or EvalConfig()
    own_pool = pool is None and scheduler is None and jobs > 1
    if own_pool:  # started now, so that its start-up overlaps the planning
        pool = LocalPool(jobs)
    cluster = None
    stack = contextlib.ExitStack()
    if scheduler is not None:  # reached and checked before any file is hashed
        from fminspect.batch.cluster import Cluster, connect

        cluster = connect(scheduler)
        if not isinstance(scheduler, Cluster):
            stack.callback(cluster.close)
    try:
        with ResultStore(cache_path) as store:
            threads = max(jobs, 1) if scheduler is None else 1
            evaluation = Evaluation(
                datasets,
                config,
                store,
                methods=methods,
                digest_threads=threads,
                selection=selection,
            )
            if register:  # with how many scores it was asked of each folder
                asked: dict[str, int] = {}
                for plan in evaluation.plans:
                    if not plan.subset_of:
                        folder = str(plan.dataset.gt.path)
                        asked[folder] = asked.get(folder, 0) + len(plan.pairs) * len(plan.keys)
                register_store({d.gt.path for d in datasets}, cache_path, asked)
            units = evaluation.units
            if pool is not None and units:
                pool.ready()  # so that report.seconds times the work, not the start-up
            started = time.perf_counter()
            with Progress(len(units), "evaluating", enabled=progress) as bar:
                if cluster is not None:
                    cluster.say = bar.note
                images = sum(len(p.dataset.samples) for p in evaluation.plans if not p.subset_of)
                if units and images > len(units) and bar.enabled:  # a rerun resuming: its count
                    bar.note(
                        f"{images - len(units)} of {images} images have every result stored "
                        f"already; evaluating the other {len(units)}"
                    )
                try:
                    for res in run_units(units, scheduler=cluster, pool=pool if units else None):
                        evaluation.add(res)
                        bar.advance()
                except RunStopped as exc:  # the cluster went away: say what is kept where
                    store.commit()
                    exc.kept, exc.cache = bar.done, str(cache_path)
                    raise
                except KeyboardInterrupt:  # Ctrl-C (or SIGTERM, see fminspect.cli)
                    store.commit()
                    stopped = RunStopped("interrupted", bar.done, len(units))
                    stopped.cache = str(cache_path)
                    raise stopped from None
            seconds = time.perf_counter() - started
            report = evaluation.report()
            report.seconds = seconds
            if significance is not None and report.results:
                total = sum(len(p.methods) for p in evaluation.plans)  # with the subsets
                with Progress(total, "bootstrap", enabled=progress) as bar:
                    report.statistics = evaluation.statistics(significance, on_method=bar.advance)
            if cluster is not None:
                report.cluster = cluster.describe()
            return report
    finally:
        stack.close()
        if own_pool and pool is not None:
            pool.close()
