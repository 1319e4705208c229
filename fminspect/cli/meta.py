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
    interpolation,
    params,
    print_all,
    print_coverage,
)

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    from fminspect.meta import META_MEASURES
    from fminspect.meta.protocols import PROTOCOLS

    m = sub.add_parser(
        "meta",
        help="meta-measures: evaluate the measures themselves, as the papers do",
        description="Run the meta-measures of the S-measure, E-measure, weighted-F and "
        "Context-measure papers on any dataset, as one paper's protocol or each as the paper "
        "that introduced it. Writes cases.csv (every comparison), summary.{csv,md,tex}, "
        "protocol.json (every step with its citation) and meta.{png,pdf}.",
        epilog=protocols_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    m.add_argument(
        "root", type=Path, nargs="?", help="dataset folder (the layouts fminspect eval reads)"
    )
    m.add_argument(
        "--metas",
        nargs="+",
        choices=META_MEASURES,
        metavar="META",
        help=f"which meta-measures ({', '.join(META_MEASURES)}); default: the protocol's, "
        "application and human when --application and --ranked are given",
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
    p = m.add_argument_group(
        "protocol (each option changes one knob of the --protocol preset; unset: the preset's)"
    )
    p.add_argument(
        "--protocol",
        choices=list(PROTOCOLS),
        default="default",
        help="whose meta-measure protocol (default: each meta-measure as the paper that "
        "introduced it); the presets and their cited steps are listed below",
    )
    p.add_argument("--circle-radius", type=float, help="generic circle radius × min(h, w) (0.25)")
    p.add_argument("--gaussian-sigma", type=float, help="generic Gaussian σ × min(h, w) (0.25)")
    p.add_argument("--noise-mean", type=float, help="noise map mean (0.5)")
    p.add_argument("--noise-std", type=float, help="noise map σ (0.25)")
    p.add_argument(
        "--good-key",
        help="GT switch: the 'good map' measure, a key or 'self' (the measure under test)",
    )
    p.add_argument("--good-min", type=float, help="GT switch: good when at least this")
    p.add_argument(
        "--good-top", type=float, help="GT switch: good when among this share of the best maps"
    )
    p.add_argument(
        "--switches",
        type=int,
        help="GT switch: other GTs per image; 1 = one derangement (each costs a scoring of "
        "every map)",
    )
    p.add_argument(
        "--inject-fraction", type=float, help="noise injection: share of the pixels (0.01)"
    )
    p.add_argument(
        "--inject-of",
        choices=["image", "region"],
        help="noise injection: the share is of the whole image (the paper) or of the region",
    )
    p.add_argument("--inject-std", type=float, help="noise injection: σ (0.2)")
    p.add_argument(
        "--inject-threshold",
        type=float,
        help="noise injection: predicted foreground is map > this (0: the map's support)",
    )
    p.add_argument("--morph-size", type=int, help="annotation errors: kernel size (3)")
    p.add_argument("--morph-iterations", type=int, help="annotation errors: iterations (1)")
    add_param_options(m)
    add_limit_options(m)
    m.set_defaults(func=cmd_meta)


#: MetaConfig field → command-line option (argparse's attribute name), when given
KNOBS = {
    "circle_radius": "circle_radius",
    "gaussian_sigma": "gaussian_sigma",
    "noise_mean": "noise_mean",
    "noise_std": "noise_std",
    "switches": "switches",
    "inject_fraction": "inject_fraction",
    "inject_of": "inject_of",
    "inject_std": "inject_std",
    "inject_fg_threshold": "inject_threshold",
    "morph_size": "morph_size",
    "morph_iterations": "morph_iterations",
}


def protocols_help() -> str:
    """Every preset, its meta-measures and each step with the section it follows."""
    import textwrap

    from fminspect.meta.protocols import PROTOCOLS

    lines = ["protocols (--protocol; every step is also written to protocol.json):"]
    for p in PROTOCOLS.values():
        lines.append(f"  {p.name}: {p.title}")
        for meta, steps in p.steps.items():
            lines.append(f"    {meta}:")
            for st in steps:
                where = "" if st.cite in ("—", "ours") else f" [{st.cite}]"
                lines += textwrap.wrap(
                    st.text + where, 96, initial_indent="      - ", subsequent_indent="        "
                )
        lines += [
            textwrap.fill(n, 96, initial_indent="    ", subsequent_indent="    ") for n in p.notes
        ]
    return "\n".join(lines)


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
        knobs = {
            name: getattr(args, option)
            for name, option in KNOBS.items()
            if getattr(args, option) is not None
        }
        config = meta_config(
            protocol=args.protocol,
            params=params(args),
            measures=args.measures,
            metas=args.metas,
            application=args.application,
            ranked=bool(args.ranked),
            seed=args.seed,
            interpolation=interpolation(args),
            max_pixels=args.max_pixels,
            good_key=args.good_key,
            good_min=args.good_min,
            good_top=args.good_top,
            **knobs,
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
