"""docs/api.md's example of the window's model runs as written (a new user's trial could
not find one and guessed the calls)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def test_the_docs_example_of_the_model_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    example = re.search(r"## The inspector's model.*?```python\n(.*?)```", text, re.S)
    assert example is not None
    # a copy of the demo, so that the tag is kept beside it, not in the user's data folder
    shutil.copytree(ROOT / "resources" / "demo", tmp_path / "resources" / "demo")
    monkeypatch.chdir(tmp_path)
    exec(compile(example.group(1), "docs/api.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert any(line.startswith("GTblur 0.97") for line in printed), printed
    assert (tmp_path / "gt_errors.csv").read_text().splitlines() == [
        "dataset,sample,tags,note",
        "demo,coffee,GT error,",
    ]
