"""``fminspect compare ROOT REFERENCE``: which convention (or which images) explains the
difference between fminspect's numbers and a table from elsewhere, through
:mod:`fminspect.batch.compare`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect.cli._common import (
    add_limit_options,
    add_param_options,
    add_significance_options,
    fail,
    find_datasets_or_fail,
    interpolation,
    params,
    say,
    significance_setup,
)

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    c = sub.add_parser(
        "compare",
        help="why does my number differ from the paper's? try every convention",
        description="Evaluate ROOT as fminspect does and under every other convention (each "
        "knob alone, each preset, other resize rules, empty GTs left out, max as the mean of "
        "per-image maxima), and say for each value of REFERENCE — a CSV of a paper's table "
        "(a 'method' column, measure columns, and a 'dataset' column when there are several), "
        "a JSON {dataset: {method: {measure: value}}}, an XLSX, or another eval folder — "
        "whether fminspect agrees, which convention reproduces it, or that none does "
        "(with what is known of the images). A value printed with 3 decimals is matched to "
        "±0.0005.",
    )
    c.add_argument("root", type=Path, help="the dataset folder (as for eval)")
    c.add_argument("reference", type=Path, help="the other numbers: CSV, JSON, XLSX or a folder")
    c.add_argument("--datasets", nargs="+", help="only these datasets")
    c.add_argument("--methods", nargs="+", help="only these methods")
    c.add_argument("--dataset-config", type=Path, help="PySODEvalToolkit dataset JSON")
    c.add_argument("--method-config", type=Path, help="PySODEvalToolkit method JSON")
    c.add_argument(
        "--format",
        choices=("text", "markdown", "csv", "json"),
        default="text",
        help="report format (text)",
    )
    c.add_argument("--out", type=Path, help="write the report here (default: standard output)")
    c.add_argument(
        "--cache",
        type=Path,
        help="result store (default: compare.sqlite in fminspect's user cache folder)",
    )
    c.add_argument("--jobs", type=int, default=1, help="local worker processes (1)")
    add_significance_options(
        c,
        "uncertainty (docs/evaluation.md: 'Significance')",
        "bootstrap intervals of fminspect's values (is theirs inside?) and paired tests "
        "between the methods: which of the table's orders of two methods are reversed or "
        "not significant here",
    )
    add_param_options(c)
    add_limit_options(c)
    c.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from fminspect.batch.compare import CompareError, read_reference, render, run_compare
    from fminspect.io.atomic import write_text
    from fminspect.pipeline.store import user_cache_dir

    try:
        base = params(args)
        resize = interpolation(args)
        setup = significance_setup(args)
    except ValueError as exc:
        return fail(str(exc), command="compare")
    found = find_datasets_or_fail(args, "compare")
    if isinstance(found, int):
        return found
    datasets = found
    try:
        reference = read_reference(args.reference, [d.name for d in datasets])
    except CompareError as exc:
        return fail(str(exc), command="compare")
    if args.methods:
        reference.values = {k: v for k, v in reference.values.items() if k[1] in args.methods}
    if args.datasets:
        reference.values = {k: v for k, v in reference.values.items() if k[0] in args.datasets}
    if not reference.values:
        return fail(
            f"{reference.source} has no value for the methods and datasets chosen",
            command="compare",
        )
    cache = args.cache or user_cache_dir() / "compare.sqlite"
    comparison = run_compare(
        datasets,
        reference,
        base,
        resize,
        cache,
        jobs=args.jobs,
        on_message=say("fminspect compare: "),
        significance=setup,
    )
    content = render(comparison, args.format)
    if args.out is None:
        sys.stdout.write(content)
    else:
        write_text(args.out, content, encoding="utf-8")
        print(f"fminspect compare: report written to {args.out}", file=sys.stderr)
    return 0
