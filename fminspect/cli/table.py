"""``fminspect table RESULTS…``: a publication table from one or more ``eval`` results
folders, through :mod:`fminspect.batch.tables`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect.cli._common import fail

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    t = sub.add_parser(
        "table",
        help="a table for a paper from eval results: LaTeX, Markdown, CSV, XLSX, HTML, text",
        description="Build a table from `fminspect eval` results folders (several merge: "
        "evaluate new methods alone, then `fminspect table old/ new/`). Datasets are column "
        "groups; best bold, second underlined among the methods evaluated on every image; "
        "with `eval --ci` results, ± confidence half-widths (--ci) and letters of the groups "
        "of methods not significantly different (--groups). The caption names every "
        "variant, the normalisation and, with statistics, the method, n and B.",
    )
    t.add_argument("results", nargs="+", type=Path, help="results folders of `fminspect eval`")
    from fminspect.batch.table_formats import FORMATS

    t.add_argument(
        "--format",
        choices=tuple(FORMATS),
        default="text",
        help=", ".join(f"{f.name} ({f.help})" for f in FORMATS.values()) + "; default text",
    )
    t.add_argument("--out", type=Path, help="write here (default: standard output)")
    t.add_argument(
        "--measures",
        nargs="+",
        metavar="KEY",
        help="measure keys, in this order (default: Sm wFm MAE adpEm meanEm maxEm adpFm meanFm "
        "maxFm where present)",
    )
    t.add_argument(
        "--methods", nargs="+", help="methods, in this order (default: all, natural order)"
    )
    t.add_argument("--datasets", nargs="+", help="datasets, in this order (default: all)")
    t.add_argument("--decimals", type=int, default=3, help="decimals (3)")
    t.add_argument("--no-arrows", action="store_true", help="no ↑/↓ after the measure names")
    t.add_argument("--no-marks", action="store_true", help="no bold best / underlined second")
    t.add_argument("--keys", action="store_true", help="measure keys as headers, not symbols")
    t.add_argument("--transpose", action="store_true", help="methods as columns, measures as rows")
    t.add_argument("--ci", action="store_true", help="± half-width of each value's interval")
    t.add_argument(
        "--groups", action="store_true", help="letters: methods not significantly different"
    )
    t.add_argument(
        "--aliases",
        type=Path,
        help="short method names: a JSON or YAML file (PySODEvalToolkit's alias file too)",
    )
    t.add_argument("--highlight", nargs="+", default=[], help="methods to highlight (ours)")
    t.add_argument("--width", type=int, default=100, help="terminal width of --format text (100)")
    t.set_defaults(func=cmd_table)


def cmd_table(args: argparse.Namespace) -> int:
    from fminspect.batch import tables
    from fminspect.batch.table_formats import FORMATS
    from fminspect.io.aliases import AliasError, read_aliases

    fmt = FORMATS[args.format]
    if not 0 <= args.decimals <= 8:
        return fail(f"--decimals must be 0 to 8, got {args.decimals}", command="table")
    if fmt.render is None and args.out is None:
        return fail(f"--format {fmt.name} needs --out FILE{fmt.suffix}", command="table")
    try:
        aliases = read_aliases(args.aliases) if args.aliases else {}
        spec = tables.TableSpec(
            measures=tuple(args.measures or ()),
            methods=tuple(args.methods or ()),
            datasets=tuple(args.datasets or ()),
            decimals=args.decimals,
            arrows=not args.no_arrows,
            marks=not args.no_marks,
            transpose=args.transpose,
            ci=args.ci,
            groups=args.groups,
            aliases=aliases,
            highlight=tuple(args.highlight),
            symbols=not args.keys,
        )
        table = tables.build(tables.load(args.results), spec)
        if args.out is not None:
            fmt.write(table, args.out, width=args.width)
            print(f"table written to {args.out}", file=sys.stderr)
        else:
            assert fmt.render is not None
            sys.stdout.write(fmt.render(table, args.width))
    except (tables.TableError, AliasError) as exc:
        return fail(str(exc), command="table")
    return 0
