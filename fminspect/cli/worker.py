"""``fminspect worker ADDRESS``: start Dask workers that can run fminspect's work units
(:func:`fminspect.batch.cluster.worker_command`), after checking the data folders."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect.cli._common import fail

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    w = sub.add_parser(
        "worker",
        help="start Dask workers for `eval/meta --scheduler` (docs/evaluation.md: 'On a cluster')",
        description="Start Dask worker processes with this Python and this fminspect, one "
        "thread each, after checking that the data folders can be read here.",
    )
    w.add_argument("address", help="the scheduler's address, e.g. tcp://host:8786")
    w.add_argument(
        "--nworkers", type=int, default=1, help="worker processes (1; one per core is usual)"
    )
    w.add_argument("--name", help="a name for the worker (as the scheduler shows it)")
    w.add_argument(
        "--data",
        type=Path,
        nargs="+",
        default=[],
        metavar="FOLDER",
        help="dataset folders that must be readable here, at the same path as on the client",
    )
    w.add_argument("--dry-run", action="store_true", help="print the command, start nothing")
    w.add_argument(
        "--dask",
        default="",
        metavar="ARGS",
        help="more options for `dask worker`, quoted as one: --dask '--memory-limit 4GB'",
    )
    w.set_defaults(func=cmd_worker)


def cmd_worker(args: argparse.Namespace) -> int:
    from fminspect.batch.cluster import (
        process_versions,
        reachable,
        unreadable_folders,
        worker_command,
    )

    problems = unreadable_folders(args.data)
    if problems:
        return fail(
            f"{problems[0]}: the data must be at the same path here as on the machine "
            "running `fminspect eval`",
            1,
            command="worker",
        )
    if not args.dry_run:
        why = reachable(args.address)
        if why:  # Dask's worker would wait 30 s, then fail with a long traceback
            return fail(why, 1, command="worker")
    extra = shlex.split(args.dask)
    cmd = worker_command(args.address, nworkers=args.nworkers, name=args.name, extra=extra)
    v = process_versions()
    checked = ", ".join(str(p.resolve()) for p in args.data)
    print(
        f"fminspect worker: fminspect {v['fminspect']} (measure definitions "
        f"{v['measure_definitions']}), Python {v['python']}, NumPy {v['numpy']}, SciPy "
        f"{v['scipy']}, OpenCV {v['cv2']}, scikit-image {v['skimage']}"
        + (f"; data checked: {checked}" if checked else ""),
        file=sys.stderr,
    )
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    sys.stderr.flush()
    try:
        import distributed  # noqa: F401  (only to say so clearly if it is missing)
    except ImportError:
        return fail(
            "Dask distributed is not installed: pip install 'fminspect[cluster]'",
            1,
            command="worker",
        )
    os.execv(cmd[0], cmd)  # the worker replaces this process: stopping it stops the worker
    return 0  # pragma: no cover - execv does not return
