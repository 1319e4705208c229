"""Dataset-wide jobs the window asks for beside its scoring: statistics and ``compare``.

The window's scoring service (:mod:`fminspect.batch.service`) runs them on a thread of
its own, so that they neither freeze the window nor stop the scoring under way; each is
the library call the command line makes, with the same result:

* ``statistics`` — :meth:`~fminspect.batch.evaluation.Evaluation.statistics` of every
  dataset given, from the store the window scored into (``fminspect eval --ci``);
* ``compare`` — :func:`~fminspect.batch.compare.run_compare` of the datasets against a
  table from elsewhere (``fminspect compare``), into the current dataset's store, so that
  the baseline of the datasets scored into it is what the window already has.

``report(text)`` receives progress lines; ``stop`` ends a job at its next step — a
method's resampling, or ``compare``'s next way of computing — (:class:`TaskStopped`); the
step under way finishes first (its scores are stored). No Qt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from threading import Event
from typing import Any

from fminspect.io.discovery import Dataset
from fminspect.pipeline.config import EvalConfig

__all__ = ["TASKS", "TaskStopped", "compare_task", "run_task", "statistics_task"]

Report = Callable[[str], None]


class TaskStopped(RuntimeError):
    """The job was stopped before its end (nothing is returned)."""


def _check(stop: Event | None) -> None:
    if stop is not None and stop.is_set():
        raise TaskStopped("stopped")


def statistics_task(
    datasets: Sequence[tuple[Dataset, Path | str]],
    config: EvalConfig,
    setup: Any,
    *,
    report: Report | None = None,
    stop: Event | None = None,
) -> dict[str, dict[str, Any]]:
    """Bootstrap intervals, paired tests and groups of every dataset (``{dataset: {"setup",
    "keys"}}``, as ``statistics.json``), from what the store each is paired with holds."""
    from fminspect.batch.evaluation import Evaluation
    from fminspect.pipeline.store import ResultStore

    by_store: dict[str, list[Dataset]] = {}
    for ds, store_path in datasets:
        by_store.setdefault(str(store_path), []).append(ds)
    total = sum(len(ds.method_names) for ds, _ in datasets)
    done = 0

    def on_method() -> None:
        nonlocal done
        _check(stop)
        done += 1
        if report is not None:
            report(f"resampling: {done}/{total} method results ({setup.resamples} resamples)")

    out: dict[str, dict[str, Any]] = {}
    for store_path, group in by_store.items():
        _check(stop)
        with ResultStore(store_path) as store:
            ev = Evaluation(group, config, store, digest_threads=2)
            out.update(ev.statistics(setup, on_method=on_method))
    return {ds.name: out[ds.name] for ds, _ in datasets if ds.name in out}


def compare_task(
    datasets: Sequence[Dataset],
    reference_path: Path | str,
    params: Any,
    interpolation: str,
    store_path: Path | str,
    *,
    jobs: int = 1,
    pool: Any = None,
    significance: Any = None,
    report: Report | None = None,
    stop: Event | None = None,
) -> Any:
    """:func:`~fminspect.batch.compare.run_compare` of ``datasets`` against the table at
    ``reference_path`` (a :class:`~fminspect.batch.compare.Comparison`; a
    :class:`~fminspect.batch.compare.CompareError` names what is wrong with the table).
    ``pool``: local worker processes to score on (the scoring service's own);
    ``significance``: a :class:`~fminspect.batch.significance.Setup` for intervals and
    the tests of the table's orders of methods."""
    from fminspect.batch.compare import CompareError, read_reference, run_compare

    reference = read_reference(reference_path, [d.name for d in datasets])
    if not reference.values:
        raise CompareError(f"{reference_path} has no value for these datasets")

    def on_message(text: str) -> None:
        _check(stop)
        if report is not None:
            report(text)

    comparison = run_compare(
        datasets,
        reference,
        params,
        interpolation,
        store_path,
        jobs=jobs,
        pool=pool,
        on_message=on_message,
        significance=significance,
    )
    _check(stop)  # stopped during the last step: nothing is shown
    return comparison


#: The jobs by name.
TASKS: dict[str, Callable[..., Any]] = {"statistics": statistics_task, "compare": compare_task}


def run_task(
    kind: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    report: Report | None = None,
    stop: Event | None = None,
) -> Any:
    """Run the job ``kind`` (a key of :data:`TASKS`)."""
    return TASKS[kind](*args, **kwargs, report=report, stop=stop)
