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


def _default_example(args: argparse.Namespace) -> int:
    from fminspect.io.resources import resource

    args.pred = resource("example", "horse_pred.png")
    args.gt = resource("example", "horse_gt.png")
    return _cmd_score(args)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for the documentation and the tests)."""
    parser = argparse.ArgumentParser(
        prog="fminspect",
        description="Inspect, explain and rank foreground maps. With no subcommand: score the "
        "bundled example pair and print every measure.",
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
    parser.set_defaults(func=_default_example, json=False)
    _add_param_options(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fminspect`` command."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
