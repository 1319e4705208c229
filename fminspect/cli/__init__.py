"""The ``fminspect`` command: one thin module per subcommand.

Each subcommand module (:mod:`~fminspect.cli.score`, :mod:`~fminspect.cli.eval`,
:mod:`~fminspect.cli.meta`, :mod:`~fminspect.cli.rank`, :mod:`~fminspect.cli.gui`) parses its
arguments and calls the library; :mod:`fminspect.api` offers the same calls to notebooks and
scripts. Building the parser imports no measure, and subcommands that need no display import
no Qt: the GUI is imported only by the GUI subcommands.
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
from collections.abc import Sequence

from fminspect import __version__
from fminspect.batch.cluster import ClusterError
from fminspect.batch.stopped import RunStopped
from fminspect.cli import (
    compare,
    figure,
    gallery,
    measures,
    meta,
    qualitative,
    rank,
    score,
    table,
    worker,
)
from fminspect.cli import eval as eval_cmd
from fminspect.cli._common import SUBCOMMANDS, Parser
from fminspect.cli.gui import add_screenshots_parser, build_gui_parser
from fminspect.cli.status import ExitStatus

__all__ = ["SUBCOMMANDS", "build_gui_parser", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for the documentation and the tests)."""
    parser = Parser(
        prog="fminspect",
        description="Inspect, explain and rank foreground maps. Without a subcommand, "
        "fminspect opens the inspector window (fminspect --help-gui).",
    )
    parser.add_argument("--version", action="version", version=f"fminspect {__version__}")
    parser.add_argument(  # answered by main() before this parser runs; listed for --help
        "--help-gui",
        action="store_true",
        help="show the options of the inspector window (fminspect without a subcommand)",
    )
    sub = parser.add_subparsers(dest="command")
    score.add_parser(sub)
    eval_cmd.add_parser(sub)
    table.add_parser(sub)
    figure.add_parser(sub)
    qualitative.add_parser(sub)
    gallery.add_parser(sub)
    compare.add_parser(sub)
    measures.add_parser(sub)
    meta.add_parser(sub)
    rank.add_parser(sub)
    add_screenshots_parser(sub)
    worker.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fminspect`` command.

    ``fminspect SUBCOMMAND …`` runs a subcommand; anything else opens the inspector window.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help")):
        args = build_parser().parse_args(argv)
    elif argv and argv[0] == "--help-gui":
        build_gui_parser().print_help()
        return ExitStatus.DONE
    else:
        typo = _typed_command(argv)
        if typo:
            print(f"fminspect: {typo}", file=sys.stderr)
            return ExitStatus.USAGE
        args = build_gui_parser().parse_args(argv)
    try:
        if getattr(args, "rank_command", None):
            from fminspect.ranking.store import StudyError

            try:
                return int(args.func(args))
            except StudyError as exc:  # a wrong study/pack/results file: say which and why
                print(f"fminspect rank: {exc}", file=sys.stderr)
                return ExitStatus.UNUSABLE
        command = getattr(args, "command", None)
        if command in ("eval", "meta"):  # `kill` stops them as Ctrl-C does
            signal.signal(signal.SIGTERM, _interrupt)
        return int(args.func(args))
    except RunStopped as exc:  # interrupted, or the cluster lost: what is kept, and where
        print(f"fminspect {args.command}: {exc}", file=sys.stderr)
        return ExitStatus.STOPPED
    except ClusterError as exc:  # unreachable, no worker, a refused worker: one line
        print(f"fminspect {args.command}: {exc}", file=sys.stderr)
        return ExitStatus.UNUSABLE
    except BrokenPipeError:  # `fminspect score … | head`: the reader has gone, stop quietly
        if not _stdout_closed():
            raise  # another pipe (a worker's): a real error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that flushing at exit cannot fail
        return ExitStatus.READER_GONE
    except OSError as exc:  # a file that could not be written or read: named, no traceback
        if not getattr(exc, "filename", None):
            raise
        name = getattr(args, "command", None)
        print(
            f"fminspect{' ' + name if name else ''}: {exc.filename}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return ExitStatus.UNUSABLE
    except sqlite3.Error as exc:  # a cache or study SQLite could not use (locked, full): one line
        name = getattr(args, "command", None)
        where = getattr(args, "cache", None) or getattr(args, "study", None) or "its database"
        print(
            f"fminspect{' ' + name if name else ''}: {where}: {exc} (if another program is "
            "writing it, try again when it is done)",
            file=sys.stderr,
        )
        return ExitStatus.UNUSABLE
    except KeyboardInterrupt:
        name = getattr(args, "command", None)
        print(f"fminspect{' ' + name if name else ''}: interrupted", file=sys.stderr)
        return ExitStatus.STOPPED


def _typed_command(argv: Sequence[str]) -> str:
    """The "did you mean …" message when the first word is no path but close to a
    subcommand ("" otherwise)."""
    import difflib
    from pathlib import Path

    if not argv or argv[0].startswith("-") or Path(argv[0]).exists() or "/" in argv[0]:
        return ""
    near = difflib.get_close_matches(argv[0], SUBCOMMANDS, n=1, cutoff=0.6)
    if not near:
        return ""
    return f"{argv[0]!r} is not a command: did you mean `fminspect {near[0]}`?"


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _stdout_closed() -> bool:
    """Whether nobody reads our standard output any more (a pipe whose reader has gone)."""
    try:
        import select

        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poll.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll() (Windows), no descriptor
        return True
