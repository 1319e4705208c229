"""The table of exit statuses (docs/reliability.md) is the code's: the same statuses as
:class:`fminspect.cli.status.ExitStatus`, and each example that is one command exits with
its row's status (130 and 141 are checked with a real Ctrl-C and a real pipe in
tests/batch/test_eval.py)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from fminspect.cli import main
from fminspect.cli.status import ExitStatus
from tests.datasets import write_png

PAGE = Path(__file__).parents[1] / "docs" / "reliability.md"


def _rows() -> list[tuple[int, str, str]]:
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("<!-- exit-statuses -->", 1)[1].strip().splitlines()
    rows = []
    for line in table[2:]:  # after the header and its rule
        if not line.strip().startswith("|"):
            break
        status, meaning, example = (c.strip() for c in line.strip().strip("|").split("|"))
        rows.append((int(status), meaning, example))
    return rows


def test_the_table_lists_the_statuses_of_the_code() -> None:
    assert [status for status, _, _ in _rows()] == [s.value for s in ExitStatus]


@pytest.mark.parametrize(
    ("status", "command"),
    [
        (s, m.group(1))
        for s, _, example in _rows()
        if (m := re.fullmatch(r"`(fminspect [^`|]*)`", example))
    ],
)
def test_each_example_exits_with_its_status(
    status: int,
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gt = np.zeros((40, 50), np.uint8)
    gt[10:30, 10:35] = 255
    write_png(tmp_path / "gt.png", gt)
    write_png(tmp_path / "map.png", (gt * 0.8).astype(np.uint8))
    whole = (tmp_path / "map.png").read_bytes()
    (tmp_path / "corrupt.png").write_bytes(whole[: len(whole) // 2])  # a download cut off
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(command)[1:]) == status
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if status:
        assert err.strip(), "a failure says why"
