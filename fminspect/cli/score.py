"""``fminspect score PRED GT``: one prediction against its GT, every measure
(:func:`fminspect.pipeline.pair.score_pair`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect.cli._common import add_limit_options, add_param_options, params

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
    add_limit_options(score)
    score.set_defaults(func=cmd_score)


def cmd_score(args: argparse.Namespace) -> int:
    from fminspect.io.validation import LoadError
    from fminspect.pipeline.pair import score_pair

    try:
        pair = score_pair(
            args.pred,
            args.gt,
            image=args.img,
            params=params(args),
            interpolation=args.interpolation,
            max_pixels=args.max_pixels,
        )
    except LoadError as exc:
        print(f"fminspect: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(pair.as_json(), indent=2) if args.json else pair.table())
    return 0
