"""``fminspect figure RESULTS…``: curve figures for a paper from one or more ``eval``
results folders, through :mod:`fminspect.batch.figures`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect.cli._common import fail

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


#: The curves (:data:`fminspect.batch.plots.CURVE_PLOTS`' tags, written out here so that
#: building the parser imports nothing heavy; a test checks they are the same).
CURVE_TAGS = ("pr", "roc", "fm", "em", "iou", "dice")


def add_parser(sub: Subparsers) -> None:
    tags = CURVE_TAGS
    f = sub.add_parser(
        "figure",
        help="curve figures for a paper from eval results: PR, ROC, F/E/IoU/Dice-threshold",
        description="Draw the mean curves of `fminspect eval` results folders (several "
        "merge, as for `fminspect table`): one file per kind of curve, one panel per dataset, "
        "one legend. Colour, line style and marker tell up to 40 methods apart, in greyscale "
        "too; highlighted methods are thick and red. A PySODEvalToolkit alias file and style "
        "file can be used as they are.",
    )
    f.add_argument("results", nargs="+", type=Path, help="results folders of `fminspect eval`")
    f.add_argument("--out", type=Path, required=True, help="folder to write the figures into")
    f.add_argument(
        "--curves",
        nargs="+",
        metavar="CURVE",
        help=f"which curves, one file each ({', '.join(tags)}; default: pr fm em, those the "
        "results have)",
    )
    f.add_argument(
        "--format",
        nargs="+",
        choices=("pdf", "svg", "png"),
        dest="formats",
        help="file formats (default: the style file's savefig.format, else pdf png)",
    )
    f.add_argument(
        "--dpi", type=int, default=0, help="PNG resolution (default: the style's, else 200)"
    )
    f.add_argument("--methods", nargs="+", help="methods, in this order (default: all)")
    f.add_argument(
        "--datasets",
        nargs="+",
        help="datasets (panels), in this order (default: the alias file's, else all)",
    )
    f.add_argument(
        "--aliases",
        type=Path,
        help="short method and dataset names: JSON or YAML (PySODEvalToolkit's alias file too)",
    )
    f.add_argument("--highlight", nargs="+", default=[], help="methods to highlight (ours)")
    f.add_argument(
        "--style", type=Path, help="Matplotlib rcParams as YAML (PySODEvalToolkit's style files)"
    )
    f.add_argument("--columns", type=int, default=0, help="panels per row (default: up to 4)")
    f.add_argument(
        "--legend",
        choices=("bottom", "right", "separate", "none"),
        default="bottom",
        help="one legend below the panels (default), beside them, in its own file, or none",
    )
    f.add_argument("--legend-columns", type=int, default=0, help="legend columns (default: fit)")
    f.add_argument("--sharey", action="store_true", help="one y range for every panel")
    f.add_argument("--xlim", nargs=2, type=float, metavar=("LO", "HI"), help="x range")
    f.add_argument("--ylim", nargs=2, type=float, metavar=("LO", "HI"), help="y range")
    f.add_argument("--prefix", default="", help="file name prefix (e.g. cod_ gives cod_pr.pdf)")
    f.set_defaults(func=cmd_figure)


def cmd_figure(args: argparse.Namespace) -> int:
    from fminspect.batch import figures
    from fminspect.io.aliases import AliasError, read_aliases

    for name in ("columns", "legend_columns", "dpi"):
        if getattr(args, name) < 0:
            return fail(f"--{name.replace('_', '-')} must be 0 or more", command="figure")
    for name in ("xlim", "ylim"):
        lim = getattr(args, name)
        if lim is not None and not lim[0] < lim[1]:
            return fail(f"--{name} needs LO < HI, got {lim[0]:g} {lim[1]:g}", command="figure")
    unknown = [c for c in args.curves or () if c not in CURVE_TAGS]
    if unknown:
        return fail(
            f"unknown curve {', '.join(unknown)} (choose from {', '.join(CURVE_TAGS)})",
            command="figure",
        )
    try:
        spec = figures.FigureSpec(
            curves=tuple(dict.fromkeys(args.curves or figures.DEFAULT_CURVES)),
            strict=args.curves is not None,
            methods=tuple(args.methods or ()),
            datasets=tuple(args.datasets or ()),
            aliases=read_aliases(args.aliases) if args.aliases else {},
            dataset_aliases=(read_aliases(args.aliases, section="dataset") if args.aliases else {}),
            highlight=tuple(args.highlight),
            columns=args.columns,
            legend=args.legend,
            legend_columns=args.legend_columns,
            sharey=args.sharey,
            xlim=tuple(args.xlim) if args.xlim else None,
            ylim=tuple(args.ylim) if args.ylim else None,
            formats=tuple(dict.fromkeys(args.formats or ())),
            dpi=args.dpi,
            style=figures.read_style(args.style) if args.style else {},
        )
        planned = figures.plan(figures.load(args.results), spec)
        written = figures.draw(planned, spec, args.out, stem=args.prefix)
    except (figures.FigureError, AliasError) as exc:
        return fail(str(exc), command="figure")
    for note in planned.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"{len(written)} files written to {args.out}", file=sys.stderr)
    return 0
