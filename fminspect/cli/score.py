"""``fminspect score PRED GT``: one prediction against its GT, every measure."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect import __version__
from fminspect.cli._common import add_param_options, params

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    score = sub.add_parser(
        "score", help="score one prediction against its GT and print every measure"
    )
    score.add_argument("pred", type=Path, help="prediction map (PNG/JPEG/…, 8 or 16 bit)")
    score.add_argument("gt", type=Path, help="ground-truth mask")
    score.add_argument(
        "--img", type=Path, help="the RGB image, for the camouflage Context-measure (CCm)"
    )
    score.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_param_options(score)
    score.set_defaults(func=cmd_score)


def cmd_score(args: argparse.Namespace) -> int:
    from fminspect.io.validation import LoadError
    from fminspect.metrics import MEASURES
    from fminspect.pipeline.sample import score_files

    p = params(args)
    try:
        scored = score_files(
            args.pred,
            args.gt,
            image=getattr(args, "img", None),
            params=p,
            interpolation=args.interpolation,
        )
    except LoadError as exc:
        print(f"fminspect: {exc}", file=sys.stderr)
        return 2
    scores = scored.scores()
    notes = [str(n) for n in scored.notes]
    if args.json:
        print(
            json.dumps(
                {
                    "fminspect": __version__,
                    "prediction": str(args.pred),
                    "gt": str(args.gt),
                    "params": {**p.as_dict(), "interpolation": args.interpolation},
                    "normalization": p.norm.label,
                    "scores": scores,
                    "labels": {m.key: m.label(p) for m in MEASURES if m.key in scores},
                    "notes": notes,
                },
                indent=2,
            )
        )
        return 0
    print(
        f"prediction: {args.pred}\nGT:         {args.gt}\n"
        f"normalisation: {p.norm.label}   (fminspect {__version__})\n"
    )
    shown = [m for m in MEASURES if m.key in scores]
    width = max(len(m.label(p)) for m in shown)
    for m in shown:
        arrow = "↑" if m.higher_is_better else "↓"
        print(f"  {m.label(p):<{width}}  {scores[m.key]:.6f} {arrow}")
    for n in notes:
        print(f"note: {n}")
    return 0
