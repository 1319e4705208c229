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
from fminspect.cli._common import SUBCOMMANDS, Parser, no_display, output_folder_problem

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def cmd_screenshots(args: argparse.Namespace) -> int:
    problem = output_folder_problem(args.outdir, "OUTDIR")
    if problem:  # before Qt starts
        print(f"fminspect screenshots: {problem}", file=sys.stderr)
        return 2
    problem = _configs_problem(args, args.dataset)
    if problem:
        print(f"fminspect screenshots: {problem}", file=sys.stderr)
        return 2
    source = configs(args) or args.dataset
    if source is None and (args.sample or args.prefix):
        print("fminspect screenshots: --sample and --prefix need --dataset", file=sys.stderr)
        return 2
    if source is not None and args.only:
        print("fminspect screenshots: --only is for the demo set, not --dataset", file=sys.stderr)
        return 2
    if source is None:
        from fminspect.gui.screenshots import take_screenshots

        try:
            for path in take_screenshots(args.outdir, args.only, args.theme):
                print(path)
        except OSError as exc:  # a file that cannot be written: said, not a traceback
            print(f"fminspect screenshots: {exc}", file=sys.stderr)
            return 1
        return 0
    from fminspect.gui.screenshots import NoModels, take_dataset_screenshots

    try:
        paths = take_dataset_screenshots(
            args.outdir,
            source,
            args.sample,
            prefix=args.prefix or "",
            timeout_s=args.timeout,
            log=lambda text: print(text, file=sys.stderr),
        )
    except NoModels as exc:  # nothing to show: a wrong path or layout, as a wrong option
        print(f"fminspect screenshots: {exc}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as exc:
        print(f"fminspect screenshots: {exc}", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    return 0


def add_screenshots_parser(sub: Subparsers) -> None:
    shots = sub.add_parser(
        "screenshots",
        help="render the real window to PNGs: the demo set, or your own dataset (--dataset)",
        description="Render the real window (offscreen when there is no display). Without "
        "--dataset: the standard set on the bundled demo data (README's pictures). With "
        "--dataset PATH: the sample view and the dataset view of your own data, in the light "
        "and dark themes (sample.png, sample_dark.png, dataset.png, dataset_dark.png), and "
        "the dataset view with its intervals and tests (dataset_statistics.png); scores an "
        "earlier `fminspect eval` stored are read, the rest computed first.",
    )
    shots.add_argument("outdir", type=Path)
    shots.add_argument("--only", nargs="+", help="only these screenshots of the demo set (by name)")
    shots.add_argument(
        "--theme",
        choices=["light", "dark"],
        default="light",
        help="the demo set's theme (default light; --dataset renders both)",
    )
    shots.add_argument(
        "--dataset", type=Path, help="a dataset folder of yours (as for fminspect ROOT)"
    )
    shots.add_argument(
        "--dataset-config", type=Path, help="PySODEvalToolkit dataset JSON (instead of --dataset)"
    )
    shots.add_argument(
        "--method-config", type=Path, help="PySODEvalToolkit method JSON (with --dataset-config)"
    )
    shots.add_argument("--sample", help="with --dataset: the sample to show (default: the first)")
    shots.add_argument("--prefix", help="with --dataset: a prefix for the file names")
    shots.add_argument(
        "--timeout",
        type=float,
        default=1800.0,
        help="with --dataset: seconds to wait for the scores (default 1800)",
    )
    shots.set_defaults(func=cmd_screenshots)


def _not_found(args: argparse.Namespace) -> str:
    """What is wrong with the paths given (a missing folder or file), or ""."""
    root = args.root
    if root is not None and not root.exists():
        return f"{root}: no such dataset folder (fminspect --help-gui)"
    if root is not None and not root.is_dir():
        return f"{root}: not a folder; for one sample give --gt GT --pred MAP …"
    named = [("--gt", args.gt), ("--image", args.image), *(("--pred", p) for p in args.pred or [])]
    for flag, path in named:
        if path is not None and not path.is_file():
            why = "no such file" if not path.exists() else "not a file"
            return f"{flag} {path}: {why}"
    return ""


def configs(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """``--dataset-config``/``--method-config`` as one source (None without them)."""
    if args.dataset_config is None and args.method_config is None:
        return None
    from fminspect.io.discovery import ToolkitConfigs

    return ToolkitConfigs(args.dataset_config, args.method_config)


def _configs_problem(args: argparse.Namespace, folder: Path | None) -> str:
    """What is wrong with ``--dataset-config``/``--method-config`` (given with ``folder``,
    the dataset folder of the command), or ""."""
    given = [
        (flag, path)
        for flag, path in (
            ("--dataset-config", args.dataset_config),
            ("--method-config", args.method_config),
        )
        if path is not None
    ]
    if not given:
        return ""
    if len(given) == 1:
        return "--dataset-config and --method-config go together"
    if folder is not None:
        return "give a dataset folder or the toolkit's configs, not both"
    for flag, path in given:
        if not path.is_file():
            return f"{flag} {path}: {'no such file' if not path.exists() else 'not a file'}"
    return ""


def cmd_gui(args: argparse.Namespace) -> int:
    problem = _not_found(args) or _configs_problem(args, args.root)
    if problem:  # said before any window opens
        print(f"fminspect: {problem}", file=sys.stderr)
        return 2
    if args.gt is None and (args.pred or args.image):
        print("fminspect: --pred and --image need --gt", file=sys.stderr)
        return 2
    if args.gt is not None and not args.pred:
        print("fminspect: --gt needs at least one --pred", file=sys.stderr)
        return 2
    if no_display(""):
        return 2
    from fminspect.gui.launch import run_inspector

    source = configs(args)
    return run_inspector(
        source if source is not None else (str(args.root) if args.root else None),
        gt=str(args.gt) if args.gt else None,
        preds=[str(p) for p in args.pred or []],
        image=str(args.image) if args.image else None,
        theme=args.theme,
        dataset=args.dataset,
        sample=args.sample,
    )


def build_gui_parser() -> argparse.ArgumentParser:
    """``fminspect [ROOT] [--gt G --pred A --pred B --image I]``: open the inspector."""
    parser = Parser(
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
        "--dataset-config", type=Path, help="PySODEvalToolkit dataset JSON (instead of ROOT)"
    )
    parser.add_argument(
        "--method-config", type=Path, help="PySODEvalToolkit method JSON (with --dataset-config)"
    )
    parser.add_argument(
        "--sample", help="with ROOT: start on this sample (e.g. from a meta-measure case)"
    )
    parser.set_defaults(func=cmd_gui)
    return parser
