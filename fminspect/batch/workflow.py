"""What ``fminspect eval`` does, as functions of plain arguments.

1. :func:`find_datasets` — the datasets in a folder, or in PySODEvalToolkit's two configs,
   and those asked for (:class:`SelectionError` when an argument names something that is
   not there, :class:`NoDatasetError` when nothing is found);
2. :func:`worker_pool` — local worker processes started before the measures are imported
   (``fminspect eval --jobs N`` starts them first, so that both import at once);
3. :func:`evaluate_to_folder` — evaluate (cached, resumable) and write every output file,
   the plots drawn meanwhile by a second process (:class:`EvalRun`).

The command only prints what these return; :func:`fminspect.api.evaluate_dataset` chains
them for notebooks and scripts. Importing this module imports nothing heavy (no measure, no
NumPy): the measures are imported by the calls that need them. No Qt.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fminspect.batch.pool import LocalPool

if TYPE_CHECKING:
    from fminspect.batch.evaluation import EvalReport
    from fminspect.batch.plots import PlotProcess
    from fminspect.io.discovery import Dataset
    from fminspect.io.validation import Problem
    from fminspect.pipeline.config import EvalConfig

__all__ = [
    "EvalRun",
    "NoDatasetError",
    "SelectionError",
    "check_methods",
    "evaluate_to_folder",
    "find_datasets",
    "unused_beta2",
    "worker_pool",
]

#: Receives the messages of a run as they arise (e.g. ``print`` to stderr).
OnMessage = Callable[[str], None]


class SelectionError(ValueError):
    """The arguments name a dataset or method that is not there, or combine in a way that
    cannot work; the message says which (and, for a method, what was found instead)."""


class NoDatasetError(LookupError):
    """No dataset was found: :attr:`problems` says why (a folder that is not a dataset, a
    config that points nowhere…)."""

    def __init__(self, message: str, problems: Sequence[Problem]) -> None:
        super().__init__(message)
        self.problems = list(problems)


def _ignore(message: str) -> None:
    pass


def find_datasets(
    root: Path | str | None = None,
    *,
    dataset_config: Path | str | None = None,
    method_config: Path | str | None = None,
    datasets: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    grouped: bool = False,
) -> tuple[list[Dataset], list[Problem]]:
    """The datasets found in ``root`` (or in PySODEvalToolkit's ``dataset_config`` and
    ``method_config``, given together), only those named in ``datasets`` if given, and what
    could not be used. ``grouped``: the maps lie in one sub-folder per group
    (:func:`~fminspect.io.discovery.discover`).

    Raises
    ------
    SelectionError
        Neither a folder nor both configs; a folder that is not there (or a file); only
        one config; a name in ``datasets`` that is not found; a name in ``methods`` that no
        dataset has.
    NoDatasetError
        Nothing found (its ``problems`` say why).

    Examples
    --------
    >>> datasets, problems = find_datasets("data/COD10K", methods=["SINet"])  # doctest: +SKIP
    """
    from fminspect.io.discovery import discover, folder_problem, from_toolkit_configs

    if dataset_config or method_config:
        if not (dataset_config and method_config):
            raise SelectionError("--dataset-config and --method-config go together")
        found, problems = from_toolkit_configs(dataset_config, method_config)
        where = f"{dataset_config} and {method_config}"
    elif root is None:
        raise SelectionError("give a dataset folder, or --dataset-config and --method-config")
    else:
        wrong = folder_problem(root)
        if wrong:
            raise SelectionError(wrong)
        found, problems = discover(root, grouped=grouped)
        where = str(root)
    if datasets:
        unknown = sorted(set(datasets) - {d.name for d in found})
        if unknown:
            raise SelectionError(
                f"no dataset named {', '.join(unknown)} (found: "
                f"{', '.join(d.name for d in found) or 'none'})"
            )
        found = [d for d in found if d.name in datasets]
    if not found:
        raise NoDatasetError(f"no dataset found in {where}", problems)
    check_methods(found, methods)
    return found, problems


def check_methods(datasets: Sequence[Dataset], methods: Sequence[str] | None) -> None:
    """Raise :class:`SelectionError` naming the ``methods`` no dataset has (and why, when a
    folder of that name holds no maps)."""
    known = {m for d in datasets for m in d.method_names}
    unknown = [m for m in methods or [] if m not in known]
    if not unknown:
        return
    # a folder of that name with no maps in it says more than "no method"
    why = [f"{p.path}: {p.message}" for d in datasets for p in d.problems if p.method in unknown]
    raise SelectionError(
        f"no method named {', '.join(unknown)} (found: {', '.join(sorted(known)) or 'none'})"
        + "".join(f"\n  {w}" for w in why)
    )


def unused_beta2(config: EvalConfig) -> tuple[str, ...]:
    """The measures β² changes, when the configuration changes β² but asks for none of them
    (so the change has no effect); otherwise ``()``."""
    from fminspect.metrics import Params, measure_keys
    from fminspect.metrics.suite import FIELD_PARAMS, MEASURES

    beta2_keys = tuple(m.key for m in MEASURES if "beta2" in FIELD_PARAMS.get(m.field, ()))
    if config.params.beta2 == Params().beta2 or not config.keys:
        return ()
    asked = set(measure_keys(config.keys))  # family names, 'default' and 'all' expanded
    return () if set(beta2_keys) & asked else beta2_keys


@contextlib.contextmanager
def worker_pool(
    jobs: int,
    scheduler: Any = None,
    *,
    on_message: OnMessage | None = None,
    memory: int | None = None,
) -> Iterator[LocalPool | None]:
    """``jobs`` local workers for a run (None with ``jobs`` ≤ 1 or a Dask ``scheduler``),
    started now, so that they import the measures while this process does; stopped on
    exit. If they had to be started another way than asked, ``on_message`` is told why
    (``"note: …"``) when the run ends. ``memory``: bytes the workers may fill at once
    (default: a share of what is available, :mod:`fminspect.batch.memory`)."""
    if jobs <= 1 or scheduler:
        yield None
        return
    pool = LocalPool(jobs, preload=True, memory="auto" if memory is None else memory)
    try:
        yield pool
    finally:
        if pool.fallback:
            (on_message or _ignore)(f"note: {pool.fallback}")
        pool.close()


@dataclass(slots=True)
class EvalRun:
    """What :func:`evaluate_to_folder` did: the report, where its files are, and what
    became of the plots."""

    report: EvalReport
    out: Path
    #: why not every plot was written ("" when they all were, or none was asked for)
    plot_error: str = ""
    #: what the plotting process printed (Matplotlib's warnings)
    plot_messages: list[str] = field(default_factory=list)


def evaluate_to_folder(
    datasets: Sequence[Dataset],
    config: EvalConfig,
    out: Path | str,
    *,
    cache: Path | str | None = None,
    methods: Sequence[str] | None = None,
    jobs: int = 1,
    scheduler: Any = None,
    pool: LocalPool | None = None,
    plots: bool = True,
    progress: bool | None = None,
    register: bool = True,
    on_message: OnMessage | None = None,
    significance: Any = None,
    selection: Any = None,
) -> EvalRun:
    """Evaluate ``datasets`` (:func:`~fminspect.batch.runner.evaluate_datasets`) and write
    every output file into ``out`` (:func:`~fminspect.batch.outputs.write_all`).

    The results are cached in ``cache`` (default ``OUT/cache.sqlite``), so a second run
    computes only what changed; with ``register`` the window opening these datasets finds
    them. The plots are drawn by a second process that imports Matplotlib while the images
    are scored (in this process if none can be started: ``on_message`` says so). A plot that
    cannot be written does not stop the run: every other file is written, and
    :attr:`EvalRun.plot_error` says why. With ``significance`` (a
    :class:`~fminspect.batch.significance.Setup`) bootstrap intervals and paired tests are
    written too (statistics.json, significance.csv). ``selection`` (a
    :class:`~fminspect.batch.subsets.Selection`) adds subsets and leaves out empty GTs.

    Examples
    --------
    >>> from fminspect.pipeline.config import EvalConfig                  # doctest: +SKIP
    >>> datasets, _ = find_datasets("data/COD10K")                        # doctest: +SKIP
    >>> run = evaluate_to_folder(datasets, EvalConfig(), "results")       # doctest: +SKIP
    >>> run.report.summary()["COD10K"]["SINet"]["Sm"]                     # doctest: +SKIP
    0.776...
    """
    from fminspect.batch.outputs import write_all
    from fminspect.batch.plots import PlotError, PlotProcess
    from fminspect.batch.runner import evaluate_datasets

    out = Path(out)
    # a second process imports Matplotlib while the images are scored, then draws the plots
    plotting: contextlib.AbstractContextManager[PlotProcess | None] = contextlib.nullcontext()
    if plots:
        try:
            plotting = PlotProcess()
        except OSError as exc:  # no child process possible: the plots are drawn here
            (on_message or _ignore)(f"plots drawn in this process ({exc})")
    with plotting as plotter:
        report = evaluate_datasets(
            datasets,
            config,
            cache_path=cache or out / "cache.sqlite",
            methods=methods,
            jobs=jobs,
            scheduler=scheduler,
            pool=pool,
            progress=progress,
            register=register,
            significance=significance,
            selection=selection,
        )
        run = EvalRun(report, out)
        try:
            write_all(report, out, plots=plots, plotter=plotter)
        except PlotError as exc:  # every other output file is written by then
            run.plot_error = str(exc)
    run.plot_messages = list(plotter.messages) if plotter is not None else []
    return run
