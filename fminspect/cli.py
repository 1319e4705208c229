"""The ``fminspect`` command.

Subcommands that need no display import no Qt; the GUI is imported only by the GUI
subcommands.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from fminspect import __version__


def _add_param_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("measure parameters (defaults: the papers' and pysodmetrics')")
    g.add_argument("--beta2", type=float, default=0.3, help="β² of the F-measure family (0.3)")
    g.add_argument("--alpha", type=float, default=0.5, help="α of the S-measure (0.5)")
    g.add_argument(
        "--gt-inclusive",
        action="store_true",
        help="binarise the GT with >= 128 (original Context-measure) instead of > 128",
    )
    g.add_argument(
        "--no-stretch",
        action="store_true",
        help="do not min–max stretch predictions (pysodmetrics stretches)",
    )
    g.add_argument(
        "--interpolation",
        default="bilinear",
        choices=["bilinear", "bicubic", "nearest", "area", "lanczos"],
        help="how a prediction of another size is resized to its GT (bilinear)",
    )


def _params(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from fminspect.metrics import Params

    return Params(
        beta2=args.beta2,
        alpha=args.alpha,
        gt_inclusive=args.gt_inclusive,
        stretch=not args.no_stretch,
    )


def _cmd_score(args: argparse.Namespace) -> int:
    from fminspect.io.loading import fit_to, load_image, load_map
    from fminspect.io.validation import LoadError
    from fminspect.metrics import MEASURES, compute_suite

    try:
        gt = load_map(args.gt)
        pred = load_map(args.pred)
        img = load_image(args.img) if getattr(args, "img", None) else None
    except LoadError as exc:
        print(f"fminspect: {exc}", file=sys.stderr)
        return 2
    if img is not None and img.shape[:2] != gt.array.shape[:2]:
        print(
            f"fminspect: {args.img}: image size {img.shape[1]}×{img.shape[0]} differs from "
            f"the GT's {gt.array.shape[1]}×{gt.array.shape[0]}",
            file=sys.stderr,
        )
        return 2
    notes = [f"GT: {n}" for n in gt.notes] + [f"prediction: {n}" for n in pred.notes]
    array, note = fit_to(pred.array, gt.array.shape[:2], args.interpolation)
    if note:
        notes.append(f"prediction: {note}")
    params = _params(args)
    suite = compute_suite(array, gt.array, params, img=img)
    scores = suite.scores()
    notes += list(suite.warnings)
    if args.json:
        print(
            json.dumps(
                {
                    "fminspect": __version__,
                    "prediction": str(args.pred),
                    "gt": str(args.gt),
                    "params": params.as_dict(),
                    "normalization": params.norm.label,
                    "scores": scores,
                    "labels": {m.key: m.label(params) for m in MEASURES},
                    "notes": notes,
                },
                indent=2,
            )
        )
        return 0
    print(
        f"prediction: {args.pred}\nGT:         {args.gt}\n"
        f"normalisation: {params.norm.label}   (fminspect {__version__})\n"
    )
    shown = [m for m in MEASURES if m.key in scores]
    width = max(len(m.label(params)) for m in shown)
    for m in shown:
        arrow = "↑" if m.higher_is_better else "↓"
        print(f"  {m.label(params):<{width}}  {scores[m.key]:.6f} {arrow}")
    for n in notes:
        print(f"note: {n}")
    return 0


def _print_coverage(datasets) -> None:  # type: ignore[no-untyped-def]
    for ds in datasets:
        print(
            f"dataset {ds.name} ({ds.layout}): {len(ds.samples)} GT maps, "
            f"images: {'yes' if ds.image else 'no'}",
            file=sys.stderr,
        )
        for m in ds.method_names:
            cov = ds.coverage[m]
            flag = "" if cov.complete else f"  ⚠ {len(cov.missing)} missing"
            extra = f", {len(cov.extra)} without GT" if cov.extra else ""
            print(
                f"  {m:<24} {len(cov.matched):>6}/{len(ds.samples)} matched{extra}{flag}",
                file=sys.stderr,
            )


def _cmd_eval(args: argparse.Namespace) -> int:
    from fminspect.batch import EvalConfig, evaluate_datasets
    from fminspect.batch.outputs import write_all
    from fminspect.io.discovery import discover, from_toolkit_configs

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
    _print_coverage(datasets)
    try:
        config = EvalConfig(
            _params(args), tuple(args.measures) if args.measures else None, args.interpolation
        )
    except ValueError as exc:
        print(f"fminspect eval: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    report = evaluate_datasets(
        datasets,
        config,
        cache_path=args.cache or out / "cache.sqlite",
        methods=args.methods,
        jobs=args.jobs,
        scheduler=args.scheduler,
        progress=None if not args.quiet else False,
    )
    write_all(report, out, plots=not args.no_plots)
    for p in report.problems:
        print(p, file=sys.stderr)
    print(
        f"{report.evaluated} (image, method) pairs evaluated: {report.computed} computed "
        f"in {report.seconds:.2f} s, {report.reused} from the cache; "
        f"{sum(p.severity == 'error' for p in report.problems)} "
        f"errors, {sum(p.severity == 'warning' for p in report.problems)} warnings",
        file=sys.stderr,
    )
    if not args.quiet:
        print((out / "summary.md").read_text(encoding="utf-8"))
    print(f"results written to {out}", file=sys.stderr)
    return 0 if report.evaluated else 1


def _cmd_screenshots(args: argparse.Namespace) -> int:
    from fminspect.gui.screenshots import take_screenshots

    for path in take_screenshots(args.outdir, args.only):
        print(path)
    return 0


def _cmd_gui(args: argparse.Namespace) -> int:
    if args.gt is None and (args.pred or args.image):
        print("fminspect: --pred and --image need --gt", file=sys.stderr)
        return 2
    if args.gt is not None and not args.pred:
        print("fminspect: --gt needs at least one --pred", file=sys.stderr)
        return 2
    from fminspect.gui.app import run_inspector

    return run_inspector(
        str(args.root) if args.root else None,
        gt=str(args.gt) if args.gt else None,
        preds=[str(p) for p in args.pred or []],
        image=str(args.image) if args.image else None,
        theme=args.theme,
    )


def build_gui_parser() -> argparse.ArgumentParser:
    """``fminspect [ROOT] [--gt G --pred A --pred B --image I]``: open the inspector."""
    parser = argparse.ArgumentParser(
        prog="fminspect",
        description="Open the inspector: on the bundled demo dataset (no argument), on a "
        "dataset folder (ROOT), or on one sample (--gt with --pred …). Subcommands: "
        + ", ".join(SUBCOMMANDS)
        + " (fminspect SUBCOMMAND --help).",
    )
    parser.add_argument("--version", action="version", version=f"fminspect {__version__}")
    parser.add_argument("root", type=Path, nargs="?", help="dataset folder")
    parser.add_argument("--gt", type=Path, help="ground-truth mask of one sample")
    parser.add_argument("--pred", type=Path, action="append", help="a model's map (repeat)")
    parser.add_argument("--image", type=Path, help="the sample's image")
    parser.add_argument("--theme", choices=["system", "light", "dark"], help="colour theme")
    parser.set_defaults(func=_cmd_gui)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for the documentation and the tests)."""
    parser = argparse.ArgumentParser(
        prog="fminspect",
        description="Inspect, explain and rank foreground maps. Without a subcommand, "
        "fminspect opens the inspector window (fminspect --help-gui).",
    )
    parser.add_argument("--version", action="version", version=f"fminspect {__version__}")
    sub = parser.add_subparsers(dest="command")
    score = sub.add_parser(
        "score", help="score one prediction against its GT and print every measure"
    )
    score.add_argument("pred", type=Path, help="prediction map (PNG/JPEG/…, 8 or 16 bit)")
    score.add_argument("gt", type=Path, help="ground-truth mask")
    score.add_argument(
        "--img", type=Path, help="the RGB image, for the camouflage Context-measure (CCm)"
    )
    score.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _add_param_options(score)
    score.set_defaults(func=_cmd_score)
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
    ev.add_argument("--quiet", action="store_true", help="no progress bar, no table")
    _add_param_options(ev)
    ev.set_defaults(func=_cmd_eval)
    shots = sub.add_parser("screenshots", help="render the real window on the demo data to PNGs")
    shots.add_argument("outdir", type=Path)
    shots.add_argument("--only", nargs="+", help="only these screenshots (by name)")
    shots.set_defaults(func=_cmd_screenshots)
    return parser


SUBCOMMANDS = ("score", "eval", "screenshots")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fminspect`` command.

    ``fminspect SUBCOMMAND …`` runs a subcommand; anything else opens the inspector window.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help")):
        args = build_parser().parse_args(argv)
    elif argv and argv[0] == "--help-gui":
        build_gui_parser().print_help()
        return 0
    else:
        args = build_gui_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
