"""``fminspect gallery ROOT --out DIR``: a static HTML site of the worst, tagged or filtered
cases, through :mod:`fminspect.batch.gallery`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect.cli._common import (
    add_limit_options,
    add_param_options,
    count,
    fail,
    find_datasets_or_fail,
    interpolation,
    measure_words,
    params,
    say,
)

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    g = sub.add_parser(
        "gallery",
        help="a static HTML site of the worst, tagged or filtered cases, to share",
        description="Write a static HTML site (it opens from file:// with no server) of a "
        "dataset's worst cases — or those a filter keeps, or a case list's — with a sortable, "
        "filterable table of thumbnails and a page per case: image, GT, every chosen map and "
        "its scores. Scores an earlier `fminspect eval` stored are read, not recomputed.",
    )
    g.add_argument("root", type=Path, nargs="?", help="the dataset folder (as for eval)")
    g.add_argument("--out", type=Path, required=True, help="the folder to write the site into")
    g.add_argument("--methods", nargs="+", help="methods shown, in this order (default: all)")
    g.add_argument("--datasets", nargs="+", help="only these datasets")
    g.add_argument("--dataset-config", type=Path, help="PySODEvalToolkit dataset JSON")
    g.add_argument("--method-config", type=Path, help="PySODEvalToolkit method JSON")
    g.add_argument(
        "--by",
        default="Sm",
        metavar="KEY",
        help="the measure the cases are ordered by, worst first (Sm)",
    )
    g.add_argument(
        "--method",
        metavar="NAME",
        help="order by this method's score (default: the mean over the methods)",
    )
    g.add_argument(
        "--count", type=int, default=100, help="how many cases (100; 0: every sample chosen)"
    )
    g.add_argument(
        "--filter",
        default="",
        metavar="EXPR",
        help="only the samples this filter keeps, as typed in the window's browser "
        "(e.g. 'Sm[A] - Sm[B] < -0.1 and cod10k=Aquatic', 'tag 1', 'tagged')",
    )
    g.add_argument(
        "--samples-from",
        type=Path,
        metavar="FILE",
        help="the cases of a case list the window exported (CSV), in its order",
    )
    g.add_argument(
        "--show",
        nargs="+",
        metavar="KEY",
        help="measures printed under each map (default: Sm wFm MAE maxEm maxFm, those scored)",
    )
    g.add_argument(
        "--measures",
        nargs="+",
        metavar="KEY",
        help="measures scored (default: eval's, so that its stored scores are read)",
    )
    g.add_argument("--aliases", type=Path, help="short method names: JSON or YAML")
    g.add_argument("--title", default="", help="the site's title")
    g.add_argument(
        "--cache", type=Path, help="result store (default: the one eval used for the dataset)"
    )
    g.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="local worker processes for scores not stored yet, and threads for the pictures (1)",
    )
    add_param_options(g)
    add_limit_options(g)
    g.set_defaults(func=cmd_gallery)


def cmd_gallery(args: argparse.Namespace) -> int:
    from fminspect.batch.gallery import GalleryError, make_gallery
    from fminspect.batch.subsets import SubsetError, read_image_list
    from fminspect.io.aliases import AliasError, read_aliases
    from fminspect.pipeline.config import EvalConfig
    from fminspect.pipeline.tags import existing_tags

    command = "gallery"
    if args.count < 0 or args.jobs < 1:
        return fail("--count must be 0 or more and --jobs 1 or more", command=command)
    try:
        config = EvalConfig(params(args), measure_words(args), interpolation(args), args.max_pixels)
        labels = read_aliases(args.aliases) if args.aliases else {}
        listed = read_image_list(args.samples_from).order if args.samples_from else ()
    except (ValueError, AliasError, SubsetError) as exc:
        return fail(str(exc), command=command)
    found = find_datasets_or_fail(args, command)
    if isinstance(found, int):
        return found
    folder = args.root if args.root is not None else args.dataset_config.parent
    try:
        written = make_gallery(
            found,
            args.out,
            config,
            methods=args.methods or (),
            by=args.by,
            method=args.method,
            count=args.count,
            shown=args.show or (),
            labels=labels,
            title=args.title,
            filter_text=args.filter,
            listed=listed,
            store=args.cache,
            tags=existing_tags(folder),
            jobs=args.jobs,
            on_message=say(),
        )
    except GalleryError as exc:
        return fail(str(exc), command=command)
    for note in written.notes:
        print(f"warning: {note}", file=sys.stderr)
    print(
        f"{count(written.cases, 'case')}, {count(written.files, 'file')}, "
        f"{written.bytes / 1e6:.1f} MB: "
        f"{written.index}",
        file=sys.stderr,
    )
    return 0
