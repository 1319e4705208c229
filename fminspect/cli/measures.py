"""``fminspect measures``: every measure key the registry holds — its family, exact variant,
direction, how its dataset value is formed, whether it is computed by default, the paper
and equations it implements and its reference implementation."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    m = sub.add_parser(
        "measures",
        help="list every measure key: variant, dataset value, paper, reference",
        description="List every measure key fminspect computes (the measure registry). "
        "`--measures` of eval, meta and rank takes these keys, a family's name (every key "
        "of it), 'default' or 'all'. `--equations` lists which equation of which paper each "
        "measure implements (the numbers the explain views cite).",
    )
    m.add_argument(
        "--equations",
        action="store_true",
        help="list each measure family's equations: paper, equation number, what it defines",
    )
    m.add_argument(
        "--parameters",
        action="store_true",
        help="list the measures' parameters instead (name, default, range; settable with "
        "--param NAME=VALUE, or --beta2/--alpha)",
    )
    m.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="text (default), a Markdown table (docs/measures.md's), or JSON",
    )
    m.set_defaults(func=run)


def rows() -> list[dict[str, object]]:
    """One row per key, in registry order."""
    from fminspect.metrics import DEFAULT_PARAMS, REGISTRY

    out: list[dict[str, object]] = []
    for name, fam in REGISTRY.families.items():
        for m in fam.measures:
            out.append(
                {
                    "key": m.key,
                    "family": name,
                    "measure": m.family,
                    "variant": m.label(DEFAULT_PARAMS)[len(m.key) :].strip(),
                    "higher_is_better": m.higher_is_better,
                    "dataset_value": m.aggregation,
                    "default": m.default,
                    "needs_image": m.needs_image,
                    "paper": fam.paper,
                    "reference": fam.reference,
                }
            )
    return out


def markdown() -> str:
    """docs/measures.md's table: one row per family, its keys, paper and reference."""
    from fminspect.metrics import REGISTRY

    lines = [
        "| family (`--measures` name) | keys (**default** in bold) | paper, equations "
        "| reference |",
        "|---|---|---|---|",
    ]
    for name, fam in REGISTRY.families.items():
        if not fam.measures:
            continue
        keys = ", ".join(f"**{m.key}**" if m.default else m.key for m in fam.measures)
        lines.append(f"| {fam.name} (`{name}`) | {keys} | {fam.paper} | {fam.reference} |")
    return "\n".join(lines) + "\n"


def parameter_rows() -> list[dict[str, object]]:
    """Every registered parameter: its name, symbol, default, range or choices."""
    from fminspect.metrics import parameters

    out: list[dict[str, object]] = []
    for name, p in parameters().items():
        if p.choices:
            allowed = " / ".join(p.choices)
        else:
            low = f"> {p.low:g}" if p.open_low else f"≥ {p.low:g}"
            allowed = f"{low}, ≤ {p.high:g}" + (", whole" if p.integer else "")
        out.append(
            {
                "name": name,
                "symbol": p.symbol,
                "default": p.default,
                "allowed": allowed,
                "description": p.description,
            }
        )
    return out


def parameters_markdown() -> str:
    """docs/measures.md's table of the parameters."""
    lines = ["| parameter | default | allowed | what it is |", "|---|---|---|---|"]
    for r in parameter_rows():
        lines.append(
            f"| `{r['name']}` ({r['symbol']}) | {r['default']} | {r['allowed']} | "
            f"{r['description']} |"
        )
    return "\n".join(lines) + "\n"


def equation_rows() -> list[dict[str, object]]:
    """One row per cited equation: family, paper, number, what it defines."""
    from fminspect.metrics.equations import EQUATIONS, PAPERS

    return [
        {
            "family": family,
            "paper": PAPERS[eq.paper].citation,
            "equation": eq.tag,
            "defines": eq.quantity,
        }
        for family, equations in EQUATIONS.items()
        for eq in equations
    ]


def run(args: argparse.Namespace) -> int:
    if args.equations:
        table = equation_rows()
        if args.format == "json":
            print(json.dumps(table, indent=1, ensure_ascii=False))
        elif args.format == "markdown":
            print("| family | paper | equation | defines |\n|---|---|---|---|")
            for r in table:
                print(f"| `{r['family']}` | {r['paper']} | {r['equation']} | {r['defines']} |")
        else:
            for r in table:
                print(f"{r['family']:<19} {r['equation']:<19} {r['defines']:<22} {r['paper']}")
        return 0
    if args.parameters:
        if args.format == "json":
            print(json.dumps(parameter_rows(), indent=1, ensure_ascii=False))
        elif args.format == "markdown":
            print(parameters_markdown(), end="")
        else:
            for r in parameter_rows():
                print(f"{r['name']:<17} {r['symbol']:<9} {r['default']!s:<9} {r['allowed']}")
        return 0
    if args.format == "json":
        print(json.dumps(rows(), indent=1, ensure_ascii=False))
    elif args.format == "markdown":
        print(markdown(), end="")
    else:
        table = rows()
        width = max(len(str(r["key"])) for r in table)
        for r in table:
            arrow = "↑" if r["higher_is_better"] else "↓"
            flag = "default" if r["default"] else ""
            print(
                f"{r['key']:<{width}} {arrow} {r['measure']:<24} {r['variant']:<22} "
                f"{flag:<8} {r['dataset_value']}"
            )
    return 0
