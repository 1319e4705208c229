"""``fminspect score PRED GT``: one prediction against its GT, every measure
(:func:`fminspect.pipeline.pair.score_pair`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect.cli._common import add_limit_options, add_param_options, interpolation, params
from fminspect.cli.status import ExitStatus

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
    score.add_argument(
        "--measures",
        nargs="+",
        metavar="KEY",
        help="measure keys, family names or 'all' (default: the default measures); "
        "`fminspect measures` lists them",
    )
    add_param_options(score)
    add_limit_options(score)
    score.set_defaults(func=cmd_score)


def cmd_score(args: argparse.Namespace) -> int:
    from fminspect.io.validation import LoadError
    from fminspect.pipeline.pair import score_pair

    roles = {"prediction": args.pred, "GT": args.gt, "image (--img)": args.img}
    missing = [
        f"fminspect score: the {role} {path}: {'is a folder' if path.is_dir() else 'not found'}"
        for role, path in roles.items()
        if path is not None and not path.is_file()
    ]
    if missing:  # every input that is not there, each by its role, before any is read
        print("\n".join(missing), file=sys.stderr)
        return ExitStatus.USAGE
    try:  # a wrong parameter or measure is said before any file is read
        measure_params = params(args)
        if args.measures:
            from fminspect.metrics import measure_keys

            measure_keys(args.measures)
    except ValueError as exc:
        print(f"fminspect score: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    image, status = args.img, ExitStatus.DONE
    while True:
        try:
            pair = score_pair(
                args.pred,
                args.gt,
                image=image,
                params=measure_params,
                interpolation=interpolation(args),
                max_pixels=args.max_pixels,
                keys=args.measures,
            )
            break
        except LoadError as exc:
            role = next((r for r, p in roles.items() if p is not None and p == exc.path), "file")
            print(f"fminspect score: the {role} {exc}", file=sys.stderr)
            if image is None or exc.path != image:
                return ExitStatus.UNUSABLE  # there, but not usable (a wrong path: USAGE above)
            # only CCm needs the image: the other measures are scored and printed (exit 1)
            image, status = None, ExitStatus.UNUSABLE
    print(json.dumps(pair.as_json(), indent=2) if args.json else pair.table())
    return status
