"""Serial evaluation reads the next image's files while this one is scored (issue #50).

``fminspect eval --jobs 1`` (and ``meta``, ``rank create --auto``) runs its units in the
calling process; the next unit's files are decoded by a thread meanwhile. The results must be
those of :func:`evaluate_unit` unit by unit, in order; the reading must really happen during
the scoring (waited for by condition, not by time); and a unit too large for the memory
budget beside the one being scored is read only afterwards.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fminspect.batch import runner
from fminspect.batch.evaluation import Unit
from fminspect.batch.runner import evaluate_unit, run_units
from fminspect.io.discovery import discover
from fminspect.pipeline.config import EvalConfig
from tests.datasets import make_dataset

#: How long a test waits for the other thread to reach a point before it calls it a failure
#: (generous: it is only reached on a hang).
WAIT = 60.0


def _units(root: Path) -> list[Unit]:
    (ds,), _ = discover(root)
    fams = ("mae", "smeasure", "camouflage_context")
    return [Unit(s, tuple((m, fams) for m in sorted(s.preds)), EvalConfig()) for s in ds.samples]


def _records(result: Any) -> list[tuple[str, str, dict[str, float], list[Any], tuple[Any, ...]]]:
    return [
        (m, f, rec.scores, {k: v.tolist() for k, v in rec.curves.items()}, rec.notes)
        for m, f, rec in result.records
    ]


def test_read_ahead_gives_each_unit_its_own_results_in_order(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "ds", n_images=5)
    (root / "Pred" / "MethodB" / "img3.png").write_bytes(b"not a PNG")
    units = _units(root)
    assert units[0].needs_image  # the photograph is read ahead too
    expected = [evaluate_unit(u) for u in units]
    got = list(run_units(units))
    assert [(r.dataset, r.sample) for r in got] == [(r.dataset, r.sample) for r in expected]
    for a, b in zip(got, expected, strict=True):
        assert _records(a) == _records(b)
        assert [(p.path, p.message) for p in a.problems] == [
            (p.path, p.message) for p in b.problems
        ]
    assert any(r.problems for r in got)  # the unreadable map is reported, as without reading ahead


@dataclass
class _Fake:
    name: str


class _Recorder:
    """Stands in for the load and score steps: records their order, and lets a test hold
    the scoring of a unit until the next unit's reading has started."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.lock = threading.Lock()
        self.started: dict[str, threading.Event] = {}

    def _started(self, name: str) -> threading.Event:
        with self.lock:
            return self.started.setdefault(name, threading.Event())

    def load(self, unit: _Fake) -> str:
        with self.lock:
            self.events.append(f"load {unit.name}")
        self._started(unit.name).set()
        return f"data of {unit.name}"

    def score(self, unit: _Fake, loaded: str) -> str:
        assert loaded == f"data of {unit.name}"
        with self.lock:
            self.events.append(f"score {unit.name}")
        return unit.name


def _patch(monkeypatch: pytest.MonkeyPatch, rec: _Recorder, budget: int | None) -> None:
    monkeypatch.setattr(runner, "_load_unit", rec.load)
    monkeypatch.setattr(runner, "_score_unit", rec.score)
    monkeypatch.setattr(runner, "memory_budget", lambda: budget)
    monkeypatch.setattr(runner, "unit_memory", lambda unit: 100)


def test_the_next_unit_is_read_while_this_one_is_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _Recorder()
    _patch(monkeypatch, rec, budget=None)
    score = rec.score

    def score_after_the_next_read(unit: _Fake, loaded: str) -> str:
        if unit.name == "u0":  # held until u1's reading has begun, in the other thread
            assert rec._started("u1").wait(WAIT), "u1 was not read while u0 was scored"
        return score(unit, loaded)

    monkeypatch.setattr(runner, "_score_unit", score_after_the_next_read)
    units = [_Fake(f"u{i}") for i in range(4)]
    assert list(run_units(units)) == ["u0", "u1", "u2", "u3"]  # type: ignore[arg-type]
    assert rec.events.index("load u1") < rec.events.index("score u0")


def test_a_unit_over_the_budget_beside_another_is_read_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rec = _Recorder()
    _patch(monkeypatch, rec, budget=150)  # one unit (100) fits, two do not
    units = [_Fake(f"u{i}") for i in range(3)]
    assert list(run_units(units)) == ["u0", "u1", "u2"]  # type: ignore[arg-type]
    assert rec.events == ["load u0", "score u0", "load u1", "score u1", "load u2", "score u2"]


def test_stopping_ends_the_run_after_the_unit_under_way(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _Recorder()
    _patch(monkeypatch, rec, budget=None)
    stop = threading.Event()
    units = [_Fake(f"u{i}") for i in range(5)]
    got = []
    for name in run_units(units, stop=stop):  # type: ignore[arg-type]
        got.append(name)
        stop.set()
    assert got == ["u0"]
    assert "score u1" not in rec.events


def test_no_units_no_work() -> None:
    assert list(run_units([])) == []
