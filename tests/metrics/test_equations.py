"""Equation numbers: the one table (fminspect.metrics.equations) against the papers' texts,
and every surface that cites a measure's equations reading it.

The papers' texts live beside the repository in ``../shared/papers/`` (or where
``FMINSPECT_PAPERS`` points); the check against them is skipped, saying so, where they are
not present (they are not part of the package).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from fminspect.metrics import REGISTRY
from fminspect.metrics.equations import EQUATIONS, PAPERS, cite, tag

_PAPERS_DIR = Path(
    os.environ.get("FMINSPECT_PAPERS", Path(__file__).resolve().parents[3] / "shared" / "papers")
)
# an equation's number ends its line: "\tag{8}$$", "\quad (8)$$", "..., (8)" or "(2)" alone
_NUMBER = re.compile(r"(?:\\tag\{(\d+)\}|(?:^|\s)\((\d+)\))\s*\$*\s*$")


def _equations(text: str) -> dict[int, list[str]]:
    """Number → the text of each equation so numbered (from the previous one's end), in
    order of appearance (the Context-measure paper's appendix numbers again from 1)."""
    found: dict[int, list[str]] = {}
    block: list[str] = []
    for line in text.splitlines():
        block.append(line)
        m = _NUMBER.search(line)
        if m:
            found.setdefault(int(m.group(1) or m.group(2)), []).append("\n".join(block))
            block = []
    return found


@pytest.mark.skipif(not _PAPERS_DIR.is_dir(), reason=f"papers' texts not at {_PAPERS_DIR}")
def test_every_cited_equation_is_that_equation_in_the_paper() -> None:
    texts = {
        key: _equations((_PAPERS_DIR / paper.text).read_text(encoding="utf-8"))
        for key, paper in PAPERS.items()
    }
    checked = 0
    for family, equations in EQUATIONS.items():
        for eq in equations:
            blocks = texts[eq.paper].get(eq.number, [])
            assert blocks, f"{family}: {PAPERS[eq.paper].text} has no equation ({eq.number})"
            # the appendix's numbering is the paper's second one
            block = blocks[-1] if eq.appendix else blocks[0]
            if eq.appendix:
                assert len(blocks) > 1, f"{family}: no appendix equation ({eq.number})"
            assert eq.fragment in block, (
                f"{family}: {eq.quantity} is not {eq.tag} of {PAPERS[eq.paper].text}:\n{block}"
            )
            checked += 1
    assert checked == sum(len(e) for e in EQUATIONS.values()) > 30


def test_the_registry_cites_the_table() -> None:
    for family in EQUATIONS:
        assert cite(family) in REGISTRY.families[family].paper


_CITED = re.compile(r"Eqs?\.\s*\(?(\d+)\)?(?:\s*[–-]\s*\(?(\d+)\)?)?")


def _numbers(text: str) -> set[int]:
    out: set[int] = set()
    for m in _CITED.finditer(text):
        low = int(m.group(1))
        out.update(range(low, int(m.group(2) or low) + 1))
    return out


def test_each_measure_module_docstring_cites_its_equations() -> None:
    for family, equations in EQUATIONS.items():
        module = sys.modules[REGISTRY.families[family].compute.__module__]
        cited = _numbers(module.__doc__ or "")
        missing = {eq.number for eq in equations} - cited
        assert not missing, f"{module.__name__}'s docstring does not cite Eq. {sorted(missing)}"


def test_parameter_descriptions_cite_their_own_family_s_equations() -> None:
    """A number typed into a parameter's description is one of its family's equations."""
    checked = 0
    for family, info in REGISTRY.families.items():
        for p in info.params:
            cited = _numbers(p.description)
            known = {eq.number for eq in EQUATIONS.get(family, ())}
            assert cited <= known, f"{p.name}: Eq. {sorted(cited - known)} is not {family}'s"
            checked += bool(cited)
    assert checked >= 7


def test_the_command_line_help_cites_the_table() -> None:
    """The options' help (written out: building the parser must not import the measures)
    names the equations the table holds for them."""
    import argparse

    from fminspect.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {
        a.option_strings[-1]: str(a.help or "")
        for a in sub.choices["eval"]._actions
        if a.option_strings
    }
    assert tag("fmeasure", "F_β") in helps["--beta2"]
    assert tag("weighted_fmeasure", "F^w_β") in helps["--beta2"]
    assert tag("smeasure", "S") in helps["--alpha"]
    assert tag("smeasure", "S_r") in helps["--param"]
    assert tag("weighted_fmeasure", "dependency A") in helps["--param"]
    for option, text in helps.items():  # nothing else is cited by number
        assert _numbers(text) <= {4, 8, 11, 14, 15}, option


def test_the_numbers_the_issue_found_wrong_are_right() -> None:
    # Fβ is Margolin et al.'s Eq. (4), not (2); C^ω_β's β is β, Eq. (10)
    assert "F_β Eq. (4)" in cite("fmeasure")
    assert "kernel P_Y Eq. (1)" in cite("context")
    from fminspect.metrics.context_measure import CAMO_BETA2

    assert "β = 1.2" in CAMO_BETA2.description and "1.44" in CAMO_BETA2.description


def test_measures_equations_lists_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from fminspect.cli import main

    assert main(["measures", "--equations", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == sum(len(e) for e in EQUATIONS.values())
    assert {
        "family": "smeasure",
        "paper": PAPERS["smeasure"].citation,
        "equation": "Eq. (8)",
        "defines": "S_r",
    } in rows
