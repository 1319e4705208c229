"""The dataset evaluation as a stream (the window's browser), and its service process."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fminspect.batch import stream
from fminspect.batch.progress import Progress
from fminspect.batch.scores import ScoreMatrix
from fminspect.batch.service import command, read_message, write_message
from fminspect.cli import main
from fminspect.io.discovery import discover
from fminspect.pipeline import EvalConfig
from tests.datasets import make_dataset

KEYS = ("MAE", "Sm", "maxFm", "meanEm", "adpIoU")


def _events(root: Path, store: Path, config: EvalConfig) -> tuple[list[object], ScoreMatrix]:
    (ds,), _ = discover(root)
    matrix = ScoreMatrix([s.name for s in ds.samples], ds.method_names, config.keys_for(True))
    return list(stream.stream_evaluation(ds, matrix, config, store, every=0)), matrix


def _summary(out: Path) -> dict[str, dict[str, float]]:
    return json.loads((out / "summary.json").read_text())["DS"]


def test_the_stream_reads_what_eval_stored_and_computes_nothing(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B", "C"))
    out = tmp_path / "out"
    assert main(["eval", str(root), "--out", str(out), "--measures", *KEYS, "--quiet"]) == 0
    events, matrix = _events(root, out / "cache.sqlite", EvalConfig(keys=KEYS))
    planned = events[0]
    assert isinstance(planned, stream.Planned)
    assert (planned.pairs, planned.stored, planned.units) == (18, 18, 0)
    scores = [e for e in events if isinstance(e, stream.Scores)]
    assert scores and all(e.stored for e in scores) and matrix.filled.all()
    assert not any(isinstance(e, stream.Progress) for e in events)  # nothing to compute
    # the dataset values are eval's, to the last bit
    (results,) = [e for e in events if isinstance(e, stream.Results)]
    summary = _summary(out)
    assert {r.method: r.values for r in results.results} == summary
    # and the per-image scores are per_image.csv's
    with open(out / "per_image.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 18
    for row in rows:
        for label, text in row.items():
            key = label.split(" ")[0]  # "Sm α=0.5": the key, then its variant
            if key in KEYS:
                assert matrix.value(row["image"], row["method"], key) == float(text)


def test_the_stream_computes_what_is_missing_and_equals_eval(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B"))
    events, matrix = _events(root, tmp_path / "store.sqlite", EvalConfig(keys=KEYS))
    planned = events[0]
    assert (planned.pairs, planned.stored, planned.units) == (10, 0, 5)
    progress = [e for e in events if isinstance(e, stream.Progress)]
    assert [p.done for p in progress] == [1, 2, 3, 4, 5] and progress[-1].total == 5
    assert matrix.filled.all()
    out = tmp_path / "out"
    # eval on the same store afterwards: everything comes from it, the same values
    assert (
        main(
            [
                "eval",
                str(root),
                "--out",
                str(out),
                "--cache",
                str(tmp_path / "store.sqlite"),
                "--measures",
                *KEYS,
                "--quiet",
            ]
        )
        == 0
    )
    (results,) = [e for e in events if isinstance(e, stream.Results)]
    assert {r.method: r.values for r in results.results} == _summary(out)


@pytest.mark.faults
def test_a_stopped_stream_ends_after_the_unit_in_hand(tmp_path: Path) -> None:
    import threading

    root = make_dataset(tmp_path / "DS", n_images=5, methods=("A",))
    (ds,), _ = discover(root)
    config = EvalConfig(keys=KEYS)
    matrix = ScoreMatrix([s.name for s in ds.samples], ds.method_names, config.keys_for(True))
    stop = threading.Event()
    seen = []
    for event in stream.stream_evaluation(
        ds, matrix, config, tmp_path / "s.sqlite", stop=stop, every=0
    ):
        seen.append(event)
        if isinstance(event, stream.Progress):
            stop.set()
    assert [e.done for e in seen if isinstance(e, stream.Progress)] == [1]
    assert not any(isinstance(e, stream.Results) for e in seen)
    assert matrix.filled.sum() == 1


def test_progress_writes_plain_lines_when_not_on_a_terminal() -> None:
    out = io.StringIO()
    with Progress(3, "evaluating", stream=out, every=0) as p:
        for _ in range(3):
            p.advance()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("evaluating: 1/3 (33.3%), ") and "/s, ETA " in lines[0]
    assert lines[-1].startswith("evaluating: 3/3 (100.0%)") and "\r" not in out.getvalue()
    silent = io.StringIO()
    with Progress(3, "x", stream=silent, enabled=False) as p:
        p.advance()
    assert silent.getvalue() == ""


def test_the_service_process_answers_requests_over_its_pipes(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A", "B"))
    (ds,), _ = discover(root)
    proc = subprocess.Popen(
        command(1, 0), stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        write_message(proc.stdin, ("start", 7, ds, EvalConfig(keys=KEYS), str(tmp_path / "s.db")))
        kinds, results = [], None
        while True:
            generation, kind, payload = read_message(proc.stdout)
            assert generation == 7
            kinds.append(type(payload).__name__ if kind == "event" else kind)
            if isinstance(payload, stream.Results):
                results = payload
            if kind == "finished":
                break
        assert kinds[0] == "Planned" and kinds[-2:] == ["Results", "finished"]
        assert results is not None and {r.method for r in results.results} == {"A", "B"}
        write_message(proc.stdin, ("quit",))
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.stdin.close()
        proc.stdout.close()


def test_score_blocks_carry_whole_pairs_between_matrices() -> None:
    a = ScoreMatrix(["s1", "s2"], ["M", "N"], ("MAE", "Sm"))
    block = a.block([("s2", "N", {"MAE": 0.5, "Sm": 0.25}), ("nope", "M", {"MAE": 1.0})])
    assert len(block) == 1
    b = ScoreMatrix(["s1", "s2"], ["M", "N"], ("MAE", "Sm"))
    b.put(block)
    assert b.get("s2", "N") == {"MAE": 0.5, "Sm": 0.25} and b.get("s1", "N") is None
    assert np.isnan(b.value("s1", "M", "MAE")) and b.done == 1


@pytest.mark.parametrize("jobs", [2])
def test_the_stream_on_worker_processes_gives_the_same_matrix(tmp_path: Path, jobs: int) -> None:
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"))
    config = EvalConfig(keys=KEYS)
    _, serial = _events(root, tmp_path / "one.sqlite", config)
    (ds,), _ = discover(root)
    matrix = ScoreMatrix([s.name for s in ds.samples], ds.method_names, config.keys_for(True))
    list(stream.stream_evaluation(ds, matrix, config, tmp_path / "two.sqlite", jobs=jobs))
    assert np.array_equal(serial.values, matrix.values, equal_nan=True)
