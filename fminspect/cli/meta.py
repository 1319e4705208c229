"""``fminspect meta ROOT``: the meta-measures, evaluating the measures themselves, through
:mod:`fminspect.meta.workflow`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect.cli._common import (
    add_cluster_options,
    add_limit_options,
    add_param_options,
    batch_options_problem,
    connect_cluster,
    fail,
    params,
    print_all,
    print_coverage,
)

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    from fminspect.meta import META_MEASURES

    m = sub.add_parser(
        "meta",
        help="meta-measures: evaluate the measures themselves, as the papers do",
        description="Run the meta-measures of the S-measure, E-measure, weighted-F and "
        "Context-measure papers on any dataset. Writes cases.csv (every comparison), "
        "summary.{csv,md,tex}, protocol.json and meta.{png,pdf}.",
    )
    m.add_argument(
        "root", type=Path, nargs="?", help="dataset folder (the layouts fminspect eval reads)"
    )
    m.add_argument(
        "--metas",
        nargs="+",
        choices=META_MEASURES,
        metavar="META",
        help=f"which meta-measures ({', '.join(META_MEASURES)}); default: the first five",
    )
    m.add_argument(
        "--measures",
        nargs="+",
        metavar="KEY",
        help="measure keys, family names or 'all' (default: the default measures)",
    )
    m.add_argument("--methods", nargs="+", help="only these models")
    m.add_argument("--datasets", nargs="+", help="only these datasets")
    m.add_argument(
        "--ranked", type=Path, nargs="+", help="human-ranked dataset folders (adds 'human')"
    )
    m.add_argument(
        "--application", help="application ranking: 'grabcut' or package.module:function"
    )
    m.add_argument("--out", default="fminspect-meta", help="output folder (fminspect-meta)")
    m.add_argument("--jobs", type=int, default=1, help="local worker processes (1)")
    m.add_argument(
        "--cache", type=Path, help="result cache (default OUT/cache.sqlite; share fminspect eval's)"
    )
    m.add_argument("--seed", type=int, default=0, help="seed of every random choice (0)")
    add_cluster_options(m)
    m.add_argument("--no-plots", action="store_true")
    m.add_argument("--quiet", action="store_true")
    p = m.add_argument_group("protocol (defaults as in the papers where they state them)")
    p.add_argument(
        "--circle-radius", type=float, default=0.25, help="generic circle radius × min(h, w) (0.25)"
    )
    p.add_argument(
        "--gaussian-sigma", type=float, default=0.25, help="generic Gaussian σ × min(h, w) (0.25)"
    )
    p.add_argument("--noise-mean", type=float, default=0.5, help="noise map mean (0.5)")
    p.add_argument("--noise-std", type=float, default=0.25, help="noise map σ (0.25)")
    p.add_argument(
        "--good-key", default="adpDice", help="GT switch: 'good map' measure (adpDice = F1)"
    )
    p.add_argument("--good-min", type=float, default=0.6, help="GT switch: good when ≥ this (0.6)")
    p.add_argument(
        "--inject-fraction",
        type=float,
        default=0.01,
        help="noise injection: share of the region's pixels (0.01)",
    )
    p.add_argument("--inject-std", type=float, default=0.2, help="noise injection: σ (0.2)")
    p.add_argument(
        "--inject-threshold",
        type=float,
        default=0.5,
        help="noise injection: predicted foreground is map ≥ this (0.5)",
    )
    p.add_argument("--morph-size", type=int, default=3, help="annotation errors: kernel size (3)")
    p.add_argument(
        "--morph-iterations", type=int, default=1, help="annotation errors: iterations (1)"
    )
    add_param_options(m)
    add_limit_options(m)
    m.set_defaults(func=cmd_meta)


def cmd_meta(args: argparse.Namespace) -> int:
    problem = batch_options_problem(args)
    if problem:
        return fail(problem, command="meta")
    if args.scheduler:  # reached and checked before the folders are read
        with connect_cluster(args, "meta") as cluster:
            return _run_meta(args, cluster)
    return _run_meta(args, None)


def _run_meta(args: argparse.Namespace, cluster: object) -> int:
    from fminspect.batch.workflow import NoDatasetError, SelectionError
    from fminspect.meta.outputs import protocol_caption
    from fminspect.meta.workflow import find_datasets, meta_config, meta_to_folder

    try:
        config = meta_config(
            params=params(args),
            measures=args.measures,
            metas=args.metas,
            application=args.application,
            ranked=bool(args.ranked),
            seed=args.seed,
            interpolation=args.interpolation,
            max_pixels=args.max_pixels,
            circle_radius=args.circle_radius,
            gaussian_sigma=args.gaussian_sigma,
            noise_mean=args.noise_mean,
            noise_std=args.noise_std,
            good_key=args.good_key,
            good_min=args.good_min,
            inject_fraction=args.inject_fraction,
            inject_std=args.inject_std,
            inject_fg_threshold=args.inject_threshold,
            morph_size=args.morph_size,
            morph_iterations=args.morph_iterations,
        )
    except ValueError as exc:
        return fail(str(exc), command="meta")
    try:
        datasets, problems = find_datasets(
            args.root, datasets=args.datasets, methods=args.methods, ranked=args.ranked or ()
        )
    except NoDatasetError as exc:
        print_all(exc.problems)
        return fail(str(exc), 1, command="meta")
    except SelectionError as exc:
        return fail(str(exc), command="meta")
    print_coverage(datasets, args.methods, quiet=args.quiet)
    out = Path(args.out)
    report = meta_to_folder(
        datasets,
        config,
        out,
        problems=problems,
        cache=args.cache,
        methods=args.methods,
        jobs=args.jobs,
        scheduler=cluster,
        ranked=args.ranked or (),
        progress=None if not args.quiet else False,
        plots=not args.no_plots,
    )
    print_all(report.problems)
    if not args.quiet:
        print((out / "summary.md").read_text(encoding="utf-8"))
    else:
        print(protocol_caption(report))
    print(f"{len(report.cases)} cases; results written to {out}", file=sys.stderr)
    # 1 when some input could not be used (each named above and in the outputs)
    errors = any(p.severity == "error" for p in report.problems)
    return 0 if report.summary and not errors else 1
