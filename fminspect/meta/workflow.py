"""What ``fminspect meta`` does, as functions of plain arguments.

1. :func:`meta_config` — the protocol from the command's options (which meta-measures run
   by default, and which an application or human-ranked folders add);
2. :func:`find_datasets` — the datasets of a folder, those asked for, and a check of the
   methods asked for;
3. :func:`meta_to_folder` — run the meta-measures and write every output file.

The command only prints what these return; :func:`fminspect.api.run_meta` chains them. No Qt.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fminspect.batch.workflow import NoDatasetError, SelectionError, check_methods

if TYPE_CHECKING:
    from fminspect.io.discovery import Dataset
    from fminspect.io.validation import Problem
    from fminspect.meta.protocol import MetaConfig
    from fminspect.meta.runner import MetaReport
    from fminspect.metrics import Params

__all__ = ["find_datasets", "meta_config", "meta_to_folder"]


def meta_config(
    *,
    protocol: str = "default",
    params: Params | None = None,
    measures: Sequence[str] | None = None,
    metas: Sequence[str] | None = None,
    application: str | None = None,
    ranked: bool = False,
    good_key: str | None = None,
    good_min: float | None = None,
    good_top: float | None = None,
    **knobs: Any,
) -> MetaConfig:
    """The protocol of a run: the preset ``protocol`` (see :mod:`fminspect.meta.protocols`)
    with any of its knobs changed. ``metas`` defaults to the preset's meta-measures that need
    neither an application nor rankings; ``'application'`` is added when an ``application``
    is given and ``'human'`` when human-ranked folders are (``ranked``); ``measures``
    (default: all). The GT switch's good maps: ``good_key`` (a measure key, or 'self' for the
    measure under test) with ``good_min`` (a threshold) or ``good_top`` (a share of the
    dataset's maps). ``knobs``: any other field of
    :class:`~fminspect.meta.protocol.MetaConfig` (``seed``, ``switches``, ``inject_of``…).

    Raises
    ------
    ValueError
        An unknown protocol, meta-measure or measure, a meta-measure the protocol does not
        have, an application that cannot be loaded, a bad value.
    """
    from fminspect.meta.protocol import MetaConfig
    from fminspect.meta.protocols import PROTOCOLS, Selection
    from fminspect.metrics import Params

    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; valid: {', '.join(PROTOCOLS)}")
    preset = PROTOCOLS[protocol]
    if metas:
        chosen = list(metas)
    else:
        chosen = [m for m in preset.metas if m not in ("application", "human")]
    if application and "application" not in chosen:
        chosen.append("application")
    if ranked and "human" not in chosen:
        chosen.append("human")
    settings = {**preset.settings, **knobs}
    if good_key is not None or good_min is not None or good_top is not None:
        if good_min is not None and good_top is not None:
            raise ValueError("give a good-map threshold or a top share, not both")
        base = settings.get("switch_select") or Selection("adpDice", "min", 0.6)
        by = base.by if good_key is None else None if good_key == "self" else good_key
        if good_top is not None:
            settings["switch_select"] = Selection(by, "top", good_top)
        elif good_min is not None:
            settings["switch_select"] = Selection(by, "min", good_min)
        else:
            settings["switch_select"] = Selection(by, base.rule, base.value)
    return MetaConfig(
        params=params or Params(),
        keys=tuple(measures) if measures else None,
        metas=tuple(chosen),
        application=application,
        protocol=protocol,
        **settings,
    )


def find_datasets(
    root: Path | str | None = None,
    *,
    datasets: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    ranked: Sequence[Path | str] = (),
) -> tuple[list[Dataset], list[Problem]]:
    """The datasets found in ``root`` (only those named in ``datasets``, if given) and what
    could not be used; none is needed when human-ranked folders (``ranked``) are given.

    Raises
    ------
    NoDatasetError
        No dataset and no ``ranked`` folder (its ``problems`` say why).
    SelectionError
        ``root`` is not a folder; a name in ``methods`` that no dataset has.
    """
    from fminspect.io.discovery import discover, folder_problem

    wrong = folder_problem(root) if root else ""
    if wrong:
        raise SelectionError(wrong)
    found, problems = discover(root) if root else ([], [])
    if datasets:
        found = [d for d in found if d.name in datasets]
    if not found and not ranked:
        raise NoDatasetError(
            "no dataset found (give a dataset folder and/or --ranked DIR)", problems
        )
    check_methods(found, methods)
    return found, problems


def meta_to_folder(
    datasets: Sequence[Dataset],
    config: MetaConfig,
    out: Path | str,
    *,
    problems: Sequence[Problem] = (),
    cache: Path | str | None = None,
    methods: Sequence[str] | None = None,
    jobs: int = 1,
    scheduler: Any = None,
    ranked: Sequence[Path | str] = (),
    progress: bool | None = None,
    plots: bool = True,
) -> MetaReport:
    """Run the meta-measures (:func:`~fminspect.meta.runner.run_meta`) and write every output
    file into ``out`` (:func:`~fminspect.meta.outputs.write_meta`): cases.csv,
    summary.{csv,md,tex}, protocol.json and, with ``plots``, meta.{png,pdf}.

    The models' own scores are cached in ``cache`` (default ``OUT/cache.sqlite``; give
    ``fminspect eval``'s to reuse its results). ``problems`` (what finding the datasets
    reported) head the report's problems.

    Examples
    --------
    >>> datasets, problems = find_datasets("data/COD10K")                  # doctest: +SKIP
    >>> report = meta_to_folder(datasets, meta_config(seed=1), "meta")    # doctest: +SKIP
    >>> report.value("COD10K", "generic", "error rate (circle)", "Sm")    # doctest: +SKIP
    0.0
    """
    from fminspect.meta.outputs import write_meta
    from fminspect.meta.runner import run_meta

    out = Path(out)
    report = run_meta(
        datasets,
        config,
        cache_path=cache or out / "cache.sqlite",
        methods=methods,
        jobs=jobs,
        scheduler=scheduler,
        ranked=[Path(r) for r in ranked],
        progress=progress,
    )
    report.problems = list(problems) + report.problems
    write_meta(report, out, plot=plots)
    return report
