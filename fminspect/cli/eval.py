"""``fminspect eval ROOT``: methods × datasets in batch (parallel, cached), through
:mod:`fminspect.batch.workflow`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fminspect.cli._common import (
    add_cluster_options,
    add_limit_options,
    add_param_options,
    add_significance_options,
    batch_options_problem,
    connect_cluster,
    fail,
    find_datasets_or_fail,
    interpolation,
    measure_words,
    params,
    print_all,
    print_coverage,
    print_problems,
    say,
    significance_setup,
)

if TYPE_CHECKING:
    from fminspect.batch.cluster import Cluster
    from fminspect.batch.pool import LocalPool
    from fminspect.cli._common import Subparsers
    from fminspect.io.discovery import Dataset


def add_parser(sub: Subparsers) -> None:
    ev = sub.add_parser(
        "eval",
        help="evaluate methods × datasets in batch (parallel, cached)",
        epilog="exit status: 0 done (warnings such as 16-bit or missing maps included); 1 a "
        "file could not be used (an error, each named, in problems.csv too: the rest is "
        "evaluated and written all the same), or nothing could be evaluated; 2 wrong options "
        "or paths; 130 stopped (Ctrl-C, kill), the results so far kept: the same command "
        "resumes.",
    )
    ev.add_argument("root", type=Path, nargs="?", help="dataset folder (see README for layouts)")
    ev.add_argument("--methods", nargs="+", help="only these methods")
    ev.add_argument("--datasets", nargs="+", help="only these datasets")
    ev.add_argument(
        "--measures",
        nargs="+",
        metavar="KEY",
        help="measure keys, family names or 'all' (default: the default measures, CCm when "
        "images exist); `fminspect measures` lists them",
    )
    ev.add_argument(
        "--out", default="fminspect-results", help="output folder (default: fminspect-results)"
    )
    ev.add_argument("--jobs", type=int, default=1, help="local worker processes (1)")
    add_cluster_options(ev)
    ev.add_argument("--cache", type=Path, help="result cache (default OUT/cache.sqlite)")
    ev.add_argument("--dataset-config", type=Path, help="PySODEvalToolkit dataset JSON")
    ev.add_argument("--method-config", type=Path, help="PySODEvalToolkit method JSON")
    ev.add_argument("--no-plots", action="store_true", help="skip the PNG/PDF curve plots")
    pp = ev.add_argument_group(
        "paper",
        "tables in every format and curve figures in OUT/paper (docs/evaluation.md: 'One command')",
    )
    pp.add_argument(
        "--paper",
        action="store_true",
        help="also write OUT/paper: table.{tex,md,html,csv,xlsx}, figures/{pr,fm,em}.{pdf,png}",
    )
    pp.add_argument("--highlight", nargs="+", default=[], help="methods to highlight (ours)")
    pp.add_argument("--aliases", type=Path, help="short method and dataset names (JSON or YAML)")
    pp.add_argument("--style", type=Path, help="Matplotlib rcParams as YAML, for the figures")
    sel = ev.add_argument_group(
        "subsets",
        "which images make the dataset values (docs/evaluation.md: 'Subsets'); the number of "
        "images with an empty GT is always reported",
    )
    sel.add_argument(
        "--images",
        type=Path,
        metavar="FILE",
        help="only the images named in FILE (one per line; DATASET/name for one dataset; or "
        "the case list the window exports)",
    )
    sel.add_argument(
        "--exclude-images",
        type=Path,
        metavar="FILE",
        help="leave out the images named in FILE (as --images reads it): GT errors found in "
        "the window, say",
    )
    sel.add_argument(
        "--subsets",
        metavar="RULE",
        help="also evaluate subsets as datasets DATASET[subset]: cod10k (super-classes from "
        "COD10K names), cod10k-sub (sub-classes), or an attribute CSV (image, attribute, …)",
    )
    sel.add_argument(
        "--groups",
        metavar="RULE",
        help="grouped evaluation (co-SOD groups, video sequences): each value per group, then "
        "the mean over the groups; folders (GT/<group>/x.png with Pred/<method>/<group>/x.png, "
        "as CoCA and eval-co-sod lay them out), prefix (the name before its last number: "
        "bear_00012 → bear) or a CSV of image,group",
    )
    sel.add_argument(
        "--exclude-empty-gt",
        action="store_true",
        help="leave images whose GT has no foreground pixel out of the dataset values",
    )
    ev.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar, no table; coverage only of methods with missing or extra maps",
    )
    add_significance_options(
        ev,
        "uncertainty (docs/evaluation.md: 'Significance'; written to statistics.json and "
        "significance.csv)",
        "percentile-bootstrap confidence intervals of every dataset value (images resampled), "
        "paired tests between methods with Holm's correction, and groups of methods not "
        "significantly different",
    )
    add_param_options(ev)
    add_limit_options(ev)
    ev.add_argument(
        "--max-memory",
        type=float,
        metavar="GB",
        help="memory the --jobs workers may fill at once: huge images are scored fewer at a "
        "time to stay within it (default: 80%% of the memory available at the start; "
        "docs/reliability.md: 'Limits')",
    )
    ev.set_defaults(func=cmd_eval)


def cmd_eval(args: argparse.Namespace) -> int:
    from fminspect.batch.workflow import worker_pool

    problem = batch_options_problem(args)
    if problem:
        return fail(problem, command="eval")
    if args.scheduler:  # reached and checked before the folders are read
        with connect_cluster(args, "eval") as cluster:
            return _run_eval(args, None, cluster)
    # started first: the workers import the measures while this process does
    memory = None if args.max_memory is None else int(args.max_memory * 2**30)
    with worker_pool(args.jobs, None, on_message=say("fminspect eval: "), memory=memory) as pool:
        return _run_eval(args, pool, None)


def _paper_options(args: argparse.Namespace) -> dict[str, Any]:
    """The aliases, highlighted methods and style of ``--paper`` (read before the run, so
    that a wrong file is said before the work)."""
    from fminspect.batch.figures import read_style
    from fminspect.io.aliases import read_aliases

    return {
        "aliases": read_aliases(args.aliases) if args.aliases else {},
        "dataset_aliases": read_aliases(args.aliases, section="dataset") if args.aliases else {},
        "highlight": tuple(args.highlight),
        "style": read_style(args.style) if args.style else {},
    }


def _terminal_table(out: Path) -> str:
    """The run's values as ``fminspect table OUT --format text`` shows them, as wide as the
    terminal ("" when there are none), without the empty GTs' notes (said just before)."""
    import dataclasses
    import shutil

    from fminspect.batch import table_formats, tables

    try:
        table = tables.build(tables.load([out]), tables.TableSpec())
    except tables.TableError:
        return ""
    table = dataclasses.replace(table, empty_gt={})
    return table_formats.render(table, "text", width=shutil.get_terminal_size((100, 24)).columns)


def _write_paper(options: dict[str, Any], out: Path, subsets: list[str]) -> str:
    """Write OUT/paper with ``options`` (:func:`_paper_options`); returns an error message
    ('' when done)."""
    from fminspect.batch.figures import FigureError
    from fminspect.batch.paper import write_paper
    from fminspect.batch.tables import TableError

    try:
        written, notes = write_paper(out, subsets=subsets, **options)
    except (TableError, FigureError) as exc:
        return f"the paper's files could not be written: {exc}"
    for note in notes:
        print(f"fminspect eval: paper: {note}", file=sys.stderr)
    print(f"fminspect eval: {len(written)} files for the paper in {out / 'paper'}", file=sys.stderr)
    return ""


def _selection(
    args: argparse.Namespace, datasets: list[Dataset], exclude_empty_gt: bool
) -> tuple[list[Dataset], Any]:
    """The datasets restricted to ``--images`` and ``--exclude-images`` and the
    :class:`Selection` of the other options (what each did printed)."""
    from fminspect.batch.subsets import select

    datasets, selection, lines = select(
        datasets,
        images=args.images,
        exclude_images=args.exclude_images,
        subsets=args.subsets,
        groups=args.groups,
        exclude_empty_gt=exclude_empty_gt,
    )
    for line in lines:
        print(f"fminspect eval: {line}", file=sys.stderr)
    return datasets, selection


def _run_eval(args: argparse.Namespace, pool: LocalPool | None, cluster: Cluster | None) -> int:
    from fminspect.batch.figures import FigureError
    from fminspect.batch.subsets import SubsetError
    from fminspect.batch.tables import empty_gt_words
    from fminspect.batch.workflow import (
        evaluate_to_folder,
        unused_beta2,
    )
    from fminspect.io.aliases import AliasError
    from fminspect.pipeline.config import EvalConfig

    try:  # a wrong measure or parameter is reported before the folders are read
        config = EvalConfig(
            params(args),
            measure_words(args),
            interpolation(args),
            args.max_pixels,
        )
        setup = significance_setup(args)
    except ValueError as exc:
        return fail(str(exc), command="eval")
    beta2_keys = unused_beta2(config)
    if beta2_keys:
        print(
            f"fminspect eval: note: --beta2 {args.beta2:g} changes only {', '.join(beta2_keys)}, "
            "none of which is asked for (wFm keeps β² = 1 and relaxFm β² = 0.3)",
            file=sys.stderr,
        )
    found = find_datasets_or_fail(args, "eval")
    if isinstance(found, int):
        return found
    datasets = found
    exclude_empty_gt = args.exclude_empty_gt
    if args.convention == "matlab" and not exclude_empty_gt:
        exclude_empty_gt = True  # what the toolbox's numbers are made of
        print(
            "fminspect eval: --convention matlab leaves out the images whose GT is empty: the "
            "MATLAB toolbox's main.m cannot score them (original_WFb.m stops at Et(0))",
            file=sys.stderr,
        )
    try:
        datasets, selection = _selection(args, datasets, exclude_empty_gt)
        paper_options = _paper_options(args) if args.paper else {}
    except (SubsetError, FigureError, AliasError) as exc:
        return fail(str(exc), command="eval")
    print_coverage(datasets, args.methods, quiet=args.quiet)
    run = evaluate_to_folder(
        datasets,
        config,
        args.out,
        cache=args.cache,
        methods=args.methods,
        jobs=args.jobs,
        scheduler=cluster,
        pool=pool,
        plots=not args.no_plots,
        progress=None if not args.quiet else False,
        register=True,  # the window opening these datasets finds these results
        on_message=say("fminspect eval: "),
        significance=setup,
        selection=selection,
    )
    report = run.report
    print_all(f"plots: {message}" for message in run.plot_messages)
    print_problems(report.problems)
    for r in report.results:  # what was found may not all have been readable
        if r.coverage.failed:
            c = r.coverage
            print(
                f"  {r.dataset}/{r.method}: evaluated on {c.label} "
                f"({len(c.failed)} could not be evaluated, see the problems above"
                + (f", {len(c.missing)} missing" if c.missing else "")
                + ")",
                file=sys.stderr,
            )
    if run.plot_error:
        print(f"fminspect eval: not every plot was written: {run.plot_error}", file=sys.stderr)
    errors = sum(p.severity == "error" for p in report.problems)
    warnings = sum(p.severity == "warning" for p in report.problems)
    part = (
        f" ({report.partial} of them only for the measures not yet in the cache)"
        if report.partial
        else ""
    )
    print(
        f"{report.evaluated} (image, method) pairs evaluated: {report.computed} computed in "
        f"{report.seconds:.2f} s{part}, {report.reused} wholly from the cache; "
        f"{errors} error{'s' if errors != 1 else ''}, "
        f"{warnings} warning{'s' if warnings != 1 else ''}",
        file=sys.stderr,
    )
    for ds, names in report.empty_gt.items():
        if names:
            words = empty_gt_words(
                ds,
                len(names),
                excluded=bool(report.selection.get("exclude_empty_gt")),
                wfm_empty=report.config.params.wfm_empty,
            )
            print(f"fminspect eval: {words}", file=sys.stderr)
    valued = {r.dataset for r in report.results}
    for ds in report.datasets:
        if ds not in valued and ds not in report.subsets:
            print(
                f"fminspect eval: {ds} has no dataset value: "
                + (
                    "every image has an empty GT and --exclude-empty-gt left them all out"
                    if exclude_empty_gt and report.empty_gt.get(ds)
                    else "no image could be evaluated (see the problems above)"
                ),
                file=sys.stderr,
            )
    if args.paper and report.results:
        paper_error = _write_paper(paper_options, run.out, list(report.subsets))
        if paper_error:
            return fail(paper_error, command="eval")
    if not args.quiet:
        print(_terminal_table(run.out), end="")
    print(f"results written to {run.out}", file=sys.stderr)
    # 1 when some input could not be used (each named above and in problems.csv)
    return 0 if report.evaluated and not errors else 1
