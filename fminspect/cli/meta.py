"""``fminspect meta ROOT``: the meta-measures, evaluating the measures themselves."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect.cli._common import add_param_options, params, print_coverage, unknown_methods

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers
    from fminspect.meta import MetaConfig


def _meta_config(args: argparse.Namespace) -> MetaConfig:
    from fminspect.meta import MetaConfig

    metas = list(
        args.metas or ["generic", "noise_map", "gt_switch", "noise_injection", "annotation"]
    )
    if args.application and "application" not in metas:
        metas.append("application")
    if args.ranked and "human" not in metas:
        metas.append("human")
    return MetaConfig(
        params=params(args),
        keys=tuple(args.measures) if args.measures else None,
        metas=tuple(metas),
        seed=args.seed,
        interpolation=args.interpolation,
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
        application=args.application,
    )


def cmd_meta(args: argparse.Namespace) -> int:
    from fminspect.io.discovery import discover
    from fminspect.meta import run_meta
    from fminspect.meta.outputs import protocol_caption, write_meta

    try:
        config = _meta_config(args)
    except ValueError as exc:
        print(f"fminspect meta: {exc}", file=sys.stderr)
        return 2
    datasets, problems = discover(args.root) if args.root else ([], [])
    if args.datasets:
        datasets = [d for d in datasets if d.name in args.datasets]
    if not datasets and not args.ranked:
        for p in problems:
            print(p, file=sys.stderr)
        print(
            "fminspect meta: no dataset found (give a dataset folder and/or --ranked DIR)",
            file=sys.stderr,
        )
        return 1
    message = unknown_methods(datasets, args.methods)
    if message:
        print(f"fminspect meta: {message}", file=sys.stderr)
        return 2
    print_coverage(datasets, args.methods, quiet=args.quiet)
    out = Path(args.out)
    report = run_meta(
        datasets,
        config,
        cache_path=args.cache or out / "cache.sqlite",
        methods=args.methods,
        jobs=args.jobs,
        scheduler=args.scheduler,
        ranked=args.ranked or (),
        progress=None if not args.quiet else False,
    )
    report.problems = problems + report.problems
    write_meta(report, out, plot=not args.no_plots)
    for p in report.problems:
        print(p, file=sys.stderr)
    if not args.quiet:
        print((out / "summary.md").read_text(encoding="utf-8"))
    else:
        print(protocol_caption(report))
    print(f"{len(report.cases)} cases; results written to {out}", file=sys.stderr)
    return 0 if report.summary else 1


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
        "--measures", nargs="+", metavar="KEY", help="only these measures (default: all)"
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
    m.add_argument("--scheduler", help="Dask scheduler address")
    m.add_argument(
        "--cache", type=Path, help="result cache (default OUT/cache.sqlite; share fminspect eval's)"
    )
    m.add_argument("--seed", type=int, default=0, help="seed of every random choice (0)")
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
    m.set_defaults(func=cmd_meta)
