"""``fminspect eval ROOT``: methods × datasets in batch (parallel, cached)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fminspect.cli._common import (
    add_param_options,
    params,
    print_coverage,
    print_problems,
    unknown_methods,
)

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    ev = sub.add_parser("eval", help="evaluate methods × datasets in batch (parallel, cached)")
    ev.add_argument("root", type=Path, nargs="?", help="dataset folder (see README for layouts)")
    ev.add_argument("--methods", nargs="+", help="only these methods")
    ev.add_argument("--datasets", nargs="+", help="only these datasets")
    ev.add_argument(
        "--measures",
        nargs="+",
        metavar="KEY",
        help="only these measure keys (default: all; CCm when images exist)",
    )
    ev.add_argument("--out", default="fminspect-results", help="output folder")
    ev.add_argument("--jobs", type=int, default=1, help="local worker processes (1)")
    ev.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786")
    ev.add_argument("--cache", type=Path, help="result cache (default OUT/cache.sqlite)")
    ev.add_argument("--dataset-config", type=Path, help="PySODEvalToolkit dataset JSON")
    ev.add_argument("--method-config", type=Path, help="PySODEvalToolkit method JSON")
    ev.add_argument("--no-plots", action="store_true", help="skip the PNG/PDF curve plots")
    ev.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar, no table; coverage only of methods with missing or extra maps",
    )
    add_param_options(ev)
    ev.set_defaults(func=cmd_eval)


def cmd_eval(args: argparse.Namespace) -> int:
    if args.jobs <= 1 or args.scheduler:
        return _run_eval(args, None)
    from fminspect.batch.pool import LocalPool

    # the workers import the measures while this process does
    pool = LocalPool(args.jobs, preload=True)
    try:
        return _run_eval(args, pool)
    finally:
        if pool.fallback:
            print(f"fminspect eval: note: {pool.fallback}", file=sys.stderr)
        pool.close()


def _run_eval(args: argparse.Namespace, pool: Any) -> int:
    from fminspect.batch import EvalConfig, evaluate_datasets
    from fminspect.batch.outputs import write_all
    from fminspect.batch.plots import PlotError, PlotProcess
    from fminspect.io.discovery import discover, from_toolkit_configs
    from fminspect.metrics import Params

    try:  # a wrong measure or parameter is reported before the folders are read
        config = EvalConfig(
            params(args), tuple(args.measures) if args.measures else None, args.interpolation
        )
    except ValueError as exc:
        print(f"fminspect eval: {exc}", file=sys.stderr)
        return 2
    from fminspect.metrics.suite import FIELD_PARAMS, MEASURES

    beta2_keys = [m.key for m in MEASURES if "beta2" in FIELD_PARAMS.get(m.field, ())]
    if args.beta2 != Params().beta2 and args.measures and not set(beta2_keys) & set(args.measures):
        print(
            f"fminspect eval: note: --beta2 {args.beta2:g} changes only {', '.join(beta2_keys)}, "
            "none of which is asked for (wFm keeps β² = 1 and relaxFm β² = 0.3)",
            file=sys.stderr,
        )
    if args.dataset_config or args.method_config:
        if not (args.dataset_config and args.method_config):
            print(
                "fminspect eval: --dataset-config and --method-config go together", file=sys.stderr
            )
            return 2
        datasets, problems = from_toolkit_configs(args.dataset_config, args.method_config)
    elif args.root is None:
        print(
            "fminspect eval: give a dataset folder, or --dataset-config and --method-config",
            file=sys.stderr,
        )
        return 2
    else:
        datasets, problems = discover(args.root)
    if args.datasets:
        unknown = sorted(set(args.datasets) - {d.name for d in datasets})
        if unknown:
            print(
                f"fminspect eval: no dataset named {', '.join(unknown)} (found: "
                f"{', '.join(d.name for d in datasets) or 'none'})",
                file=sys.stderr,
            )
            return 2
        datasets = [d for d in datasets if d.name in args.datasets]
    if not datasets:
        for p in problems:
            print(p, file=sys.stderr)
        return 1
    message = unknown_methods(datasets, args.methods)
    if message:
        print(f"fminspect eval: {message}", file=sys.stderr)
        return 2
    print_coverage(datasets, args.methods, quiet=args.quiet)
    out = Path(args.out)
    # a second process imports Matplotlib while the images are scored, then draws the plots
    plotting: Any = contextlib.nullcontext()
    if not args.no_plots:
        try:
            plotting = PlotProcess()
        except OSError as exc:  # no child process possible: the plots are drawn here
            print(f"fminspect eval: plots drawn in this process ({exc})", file=sys.stderr)
    plot_error = ""
    with plotting as plotter:
        report = evaluate_datasets(
            datasets,
            config,
            cache_path=args.cache or out / "cache.sqlite",
            methods=args.methods,
            jobs=args.jobs,
            scheduler=args.scheduler,
            pool=pool,
            progress=None if not args.quiet else False,
            register=True,  # the window opening these datasets finds these results
        )
        try:
            write_all(report, out, plots=not args.no_plots, plotter=plotter)
        except PlotError as exc:  # every other output file is written by then
            plot_error = str(exc)
    for message in getattr(plotter, "messages", ()):
        print(f"plots: {message}", file=sys.stderr)
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
    if plot_error:
        print(f"fminspect eval: not every plot was written: {plot_error}", file=sys.stderr)
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
    if not args.quiet:
        print((out / "summary.md").read_text(encoding="utf-8"))
    print(f"results written to {out}", file=sys.stderr)
    return 0 if report.evaluated else 1
