"""The window commands: ``fminspect [ROOT]`` (the inspector) and ``fminspect screenshots``.

Only the command functions import :mod:`fminspect.gui` (and with it Qt), after checking that
a window can be opened.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect import __version__
from fminspect.cli._common import SUBCOMMANDS, no_display

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def cmd_screenshots(args: argparse.Namespace) -> int:
    from fminspect.gui.screenshots import take_screenshots

    for path in take_screenshots(args.outdir, args.only):
        print(path)
    return 0


def add_screenshots_parser(sub: Subparsers) -> None:
    shots = sub.add_parser("screenshots", help="render the real window on the demo data to PNGs")
    shots.add_argument("outdir", type=Path)
    shots.add_argument("--only", nargs="+", help="only these screenshots (by name)")
    shots.set_defaults(func=cmd_screenshots)


def cmd_gui(args: argparse.Namespace) -> int:
    if args.gt is None and (args.pred or args.image):
        print("fminspect: --pred and --image need --gt", file=sys.stderr)
        return 2
    if args.gt is not None and not args.pred:
        print("fminspect: --gt needs at least one --pred", file=sys.stderr)
        return 2
    if no_display(""):
        return 2
    from fminspect.gui.launch import run_inspector

    return run_inspector(
        str(args.root) if args.root else None,
        gt=str(args.gt) if args.gt else None,
        preds=[str(p) for p in args.pred or []],
        image=str(args.image) if args.image else None,
        theme=args.theme,
        dataset=args.dataset,
        sample=args.sample,
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
    parser.add_argument("--dataset", help="with ROOT: start on this dataset")
    parser.add_argument(
        "--sample", help="with ROOT: start on this sample (e.g. from a meta-measure case)"
    )
    parser.set_defaults(func=cmd_gui)
    return parser
