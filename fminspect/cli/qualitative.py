"""``fminspect qualitative ROOT``: the paper's qualitative figure (Image | GT | methods over
chosen samples), through :mod:`fminspect.batch.qualitative`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fminspect.cli._common import fail, find_datasets_or_fail, positive_float

#: ``--inset-corner``'s words: :data:`fminspect.batch.qualitative.INSET_CORNERS` (tested).
INSET_CORNERS = ("lower-right", "lower-left", "upper-right", "upper-left")

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers

#: The named widths (:data:`fminspect.batch.qualitative.WIDTHS`, written out so that building
#: the parser imports nothing heavy; a test checks they are the same).
WIDTH_NAMES = {"column": 3.5, "page": 7.0}


def add_parser(sub: Subparsers) -> None:
    q = sub.add_parser(
        "qualitative",
        help="the paper's qualitative figure: Image | GT | methods over chosen samples",
        description="Draw the grid every SOD/COD paper prints: one row per sample (the "
        "order given), columns Image, GT and the methods in the order given, method names on "
        "top; PDF with vector text, SVG or PNG, exactly one column (3.5 in) or the page (7 in) "
        "wide, and a LaTeX snippet that includes it. The same inputs give the same bytes. A "
        "missing or unreadable map is a marked empty cell and a warning.",
    )
    q.add_argument("root", type=Path, nargs="?", help="the dataset folder (as for eval)")
    q.add_argument(
        "--samples",
        nargs="+",
        default=[],
        metavar="NAME",
        help="the samples, one row each, in this order (NAME or DATASET/NAME)",
    )
    q.add_argument(
        "--samples-from",
        type=Path,
        metavar="FILE",
        help="a case list the window exported (CSV), or one name a line",
    )
    q.add_argument(
        "--methods", nargs="+", help="methods, one column each, in this order (default: all)"
    )
    q.add_argument("--datasets", nargs="+", help="only these datasets")
    q.add_argument("--dataset-config", type=Path, help="PySODEvalToolkit dataset JSON")
    q.add_argument("--method-config", type=Path, help="PySODEvalToolkit method JSON")
    q.add_argument(
        "--out",
        type=Path,
        required=True,
        help="the figure: fig.pdf, fig.svg or fig.png (the LaTeX snippet beside it as fig.tex)",
    )
    q.add_argument(
        "--format",
        nargs="+",
        choices=("pdf", "svg", "png"),
        dest="formats",
        help="write these formats with --out's name (default: --out's suffix)",
    )
    q.add_argument(
        "--width", default="page", help="column (3.5 in), page (7 in, the default) or inches"
    )
    q.add_argument(
        "--dpi",
        type=int,
        default=300,
        help="resolution of the pictures (and of a PNG), 300 by default",
    )
    q.add_argument(
        "--transpose", action="store_true", help="one column per sample, one row per method"
    )
    q.add_argument("--no-image", action="store_true", help="leave the image column out")
    q.add_argument("--no-gt", action="store_true", help="leave the GT column out")
    q.add_argument("--sample-names", action="store_true", help="print each sample's name")
    q.add_argument(
        "--inset",
        action="append",
        default=[],
        metavar="NAME=X,Y,W,H",
        help="a zoomed inset of this region (pixels of the image) in every cell of "
        "the sample's row; repeat for more samples",
    )
    q.add_argument(
        "--inset-corner",
        choices=INSET_CORNERS,  # batch.qualitative's, which the parser does not import
        default=INSET_CORNERS[0],
        help="the corner of each cell the enlarged region goes in (lower-right by default; "
        "keep it off the object)",
    )
    q.add_argument(
        "--inset-size",
        type=float,
        metavar="SHARE",
        help="the enlarged region's width as a share of its cell's, 0.2–0.8 (0.45 by default)",
    )
    q.add_argument(
        "--aliases",
        type=Path,
        help="short method names: JSON or YAML (PySODEvalToolkit's alias file too)",
    )
    q.add_argument("--highlight", nargs="+", default=[], help="methods whose name is bold (ours)")
    q.add_argument(
        "--style", type=Path, help="Matplotlib rcParams as YAML (a font, say: font.family: serif)"
    )
    q.add_argument("--no-latex", action="store_true", help="do not write the LaTeX snippet")
    q.set_defaults(func=cmd_qualitative)


def _width(text: str) -> float:
    if text in WIDTH_NAMES:
        return WIDTH_NAMES[text]
    return positive_float(text.removesuffix("in").strip())


def cmd_qualitative(args: argparse.Namespace) -> int:
    from fminspect.batch import figures
    from fminspect.batch import qualitative as qual
    from fminspect.batch.subsets import SubsetError, read_image_list
    from fminspect.io.aliases import AliasError, read_aliases

    command = "qualitative"
    suffix = args.out.suffix.lower().lstrip(".")
    formats = tuple(dict.fromkeys(args.formats or ([suffix] if suffix else [])))
    if not formats or any(f not in qual.FORMATS for f in formats):
        return fail(
            f"--out {args.out} needs the suffix .pdf, .svg or .png, or give --format",
            command=command,
        )
    try:
        width = _width(args.width)
    except argparse.ArgumentTypeError:
        return fail(
            f"--width {args.width!r} is not column, page or a number of inches", command=command
        )
    if args.dpi <= 0:
        return fail("--dpi must be more than 0", command=command)
    wanted = list(args.samples)
    try:
        if args.samples_from is not None:
            listed = read_image_list(args.samples_from)
            wanted += [f"{d}/{n}" if d else n for d, n in listed.order]
        regions = _regions(args.inset)
        datasets = find_datasets_or_fail(args, command)
        if isinstance(datasets, int):
            return datasets
        samples = qual.find_samples(datasets, wanted)
        insets = qual.find_insets(datasets, samples, regions)
        methods = qual.find_methods(datasets, args.methods or ())
        labels = read_aliases(args.aliases) if args.aliases else {}
        if labels and not set(labels) & set(methods):
            print(f"warning: {args.aliases} names none of the methods shown", file=sys.stderr)
        highlight = _highlighted(args.highlight, methods, labels)
        spec = qual.QualitativeSpec(
            methods=methods,
            labels=labels,
            highlight=tuple(highlight),
            show_image=not args.no_image,
            show_gt=not args.no_gt,
            transpose=args.transpose,
            width=width,
            dpi=args.dpi,
            insets=insets,
            inset_corner=args.inset_corner.replace("-", " "),
            inset_share=qual.INSET_SHARE if args.inset_size is None else args.inset_size,
            sample_labels=args.sample_names,
            style=figures.read_style(args.style) if args.style else {},
        )
        made = qual.make(samples, spec, args.out, formats, latex=not args.no_latex)
    except (SubsetError, AliasError, figures.FigureError) as exc:
        return fail(str(exc), command=command)
    for note in made.notes:
        print(f"warning: {note}", file=sys.stderr)
    print(
        f"{made.samples} sample{'s' if made.samples != 1 else ''} × {made.pictures} "
        f"picture{'s' if made.pictures != 1 else ''}, "
        f"a {'column' if made.transposed else 'row'} per sample: "
        + ", ".join(str(p) for p in made.written),
        file=sys.stderr,
    )
    return 0


def _regions(texts: list[str]) -> dict[str, Any]:
    """``--inset NAME=X,Y,W,H`` options as {name: region}.

    Raises
    ------
    FigureError
        An option not of that form.
    """
    from fminspect.batch import qualitative as qual
    from fminspect.batch.figures import FigureError

    regions = {}
    for text in texts:
        name, eq, region = text.rpartition("=")
        if not eq or not name:
            raise FigureError(f"--inset {text!r} is not NAME=X,Y,W,H")
        if name.strip() in regions:
            raise FigureError(f"--inset names {name.strip()} twice: a sample has one inset")
        regions[name.strip()] = qual.Region.parse(region)
    return regions


def _highlighted(names: list[str], methods: tuple[str, ...], labels: dict[str, str]) -> list[str]:
    """``--highlight`` names (a method's or its alias) as the methods' names.

    Raises
    ------
    FigureError
        A name of no method shown.
    """
    from fminspect.batch.figures import FigureError

    by_label = {labels.get(m, m): m for m in methods}
    chosen = []
    for name in names:
        if name not in methods and name not in by_label:
            raise FigureError(
                f"--highlight {name} is not one of the methods shown ({', '.join(methods)})"
            )
        chosen.append(name if name in methods else by_label[name])
    return chosen
