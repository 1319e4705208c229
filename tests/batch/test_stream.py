"""The dataset evaluation as a stream (the window's browser), and its service process."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from fminspect.batch import stream
from fminspect.batch.evaluation import Evaluation, MethodResult, aggregate_key
from fminspect.batch.progress import Progress
from fminspect.batch.scores import ScoreMatrix
from fminspect.batch.service import PIECE, command, in_pieces, read_message, whole, write_message
from fminspect.cli import main
from fminspect.io.discovery import discover
from fminspect.metrics import Params
from fminspect.pipeline import EvalConfig
from fminspect.pipeline.store import Aggregate, ResultStore
from tests.datasets import make_dataset
from tests.processes import PATIENCE_S

KEYS = ("MAE", "Sm", "maxFm", "meanEm", "adpIoU")


def _events(root: Path, store: Path, config: EvalConfig) -> tuple[list[object], ScoreMatrix]:
    (ds,), _ = discover(root)
    matrix = ScoreMatrix([s.name for s in ds.samples], ds.method_names, config.keys_for(True))
    return list(stream.stream_evaluation(ds, matrix, config, store, every=0)), matrix


def _summary(out: Path) -> dict[str, dict[str, float]]:
    return json.loads((out / "summary.json").read_text())["DS"]


@pytest.mark.slow
def test_the_stream_reads_what_eval_stored_and_computes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B", "C"))
    out = tmp_path / "out"
    assert main(["eval", str(root), "--out", str(out), "--measures", *KEYS, "--quiet"]) == 0
    # eval stored every pair's scores in one row as well: the stream reads those only
    with sqlite3.connect(out / "cache.sqlite") as db:
        assert db.execute("SELECT count(*) FROM pair_scores").fetchone()[0] == 18
    family_reads: list[object] = []
    monkeypatch.setattr(ResultStore, "raw_scores", lambda *a: family_reads.append(a) or [])
    events, matrix = _events(root, out / "cache.sqlite", EvalConfig(keys=KEYS))
    assert family_reads == []
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


def test_stored_scores_are_read_for_whole_pairs_only_and_for_twin_methods(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scores read back from the store are those computed, for pairs whose every family
    is stored; two methods with the same file each get them, the camouflage family is
    found by the image's pair key, and records of other parameters are left alone."""
    root = make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B"))
    twin = root / "Pred" / "Twin"  # a method whose maps are A's, file for file
    twin.mkdir()
    for f in (root / "Pred" / "A").iterdir():
        (twin / f.name).write_bytes(f.read_bytes())
    keys = (*KEYS, "CCm")
    store = tmp_path / "store.sqlite"
    for params in (Params(beta2=0.5), Params()):  # records of other parameters as well
        events, computed = _events(root, store, EvalConfig(params=params, keys=keys))
        assert isinstance(events[0], stream.Planned) and events[0].units == 5
    (ds,), _ = discover(root)
    config = EvalConfig(keys=keys)
    with ResultStore(store) as rs:
        plan = Evaluation([ds], config, rs).plans[0]
        # one family of B's img2, and the camouflage record A's and Twin's img4 share
        gone = [plan.keys_of("B", "img2")["fmeasure"]]  # type: ignore[index]
        gone.append(plan.keys_of("Twin", "img4")["camouflage_context"])  # type: ignore[index]
        rs._db.executemany("DELETE FROM records WHERE key = ?", [(k,) for k in gone])
        # and every pair's row of all its scores: read from the families' records
        rs._db.execute("DELETE FROM pair_scores")
        rs.commit()
        matrices = []
        read: list[list[str]] = []
        original = rs.raw_scores
        monkeypatch.setattr(rs, "raw_scores", lambda k: (read.append(k), original(k))[1])
        for _ in range(2):  # the second time from the rows the first reading wrote
            ev = Evaluation([ds], config, rs)
            assert ev.reused == 15 - 3
            matrix = ScoreMatrix(
                [s.name for s in ds.samples], ds.method_names, config.keys_for(True)
            )
            for block in ev.stored_blocks(ev.plans[0], matrix):
                matrix.put(block)
            matrices.append((matrix, sum(len(k) for k in read)))
            read.clear()
        # one row per whole pair, the twins' shared: 12 - 4
        assert rs._db.execute("SELECT count(*) FROM pair_scores").fetchone()[0] == 8
    (matrix, families_read), (again, none_read) = matrices
    fams = len(ev.plans[0].tags)
    # all the records the first time (the twins' shared once), then only the 3 broken pairs'
    assert (families_read, none_read) == (10 * fams, 2 * fams)
    np.testing.assert_array_equal(again.filled, matrix.filled)
    np.testing.assert_array_equal(again.values, matrix.values)
    expected = computed.filled.copy()
    for name, method in (("img2", "B"), ("img4", "A"), ("img4", "Twin")):
        expected[computed.sample_index[name], computed.method_index[method]] = False
    assert expected.sum() == 15 - 3
    np.testing.assert_array_equal(matrix.filled, expected)
    np.testing.assert_array_equal(matrix.values[expected], computed.values[expected])
    assert np.isnan(matrix.values[~expected]).all()
    assert matrix.get("img1", "Twin") == matrix.get("img1", "A")


def test_a_row_of_scores_is_remade_when_it_lacks_a_measure_or_a_family_was_missing(
    tmp_path: Path,
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A", "B"))
    store, config = tmp_path / "store.sqlite", EvalConfig(keys=KEYS)
    _, computed = _events(root, store, config)
    (ds,), _ = discover(root)
    with ResultStore(store) as rs:
        plan = Evaluation([ds], config, rs).plans[0]
        narrow, partial = plan.whole_key("A", "img1"), plan.whole_key("B", "img2")
        # A's img1 has a row with one score only (as a reader of fewer measures could
        # write); B's img2 lost a family's record and its row
        rs.put_pair_scores([(narrow, "MAE", np.array([9.0]).astype("<f8").tobytes())])
        rs._db.execute(
            "DELETE FROM records WHERE key = ?", (plan.keys_of("B", "img2")["smeasure"],)
        )  # type: ignore[index]
        rs._db.execute("DELETE FROM pair_scores WHERE key = ?", (partial,))
        rs.commit()
    events, matrix = _events(root, store, config)
    assert (events[0].stored, events[0].units) == (5, 1)  # type: ignore[attr-defined]
    # the narrow row was passed over for the records, the lost family computed again
    np.testing.assert_array_equal(matrix.values, computed.values)
    with ResultStore(store) as rs:
        rows = {k: n for k, n, _ in rs.pair_scores([narrow, partial])}
    assert set(rows) == {narrow, partial}
    for names in rows.values():  # both remade whole: every score of every family
        assert set(KEYS) <= set(names.split(","))


def test_a_stream_holds_the_collector_off_only_while_it_reads(tmp_path: Path) -> None:
    import gc

    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"))
    store, config = tmp_path / "store.sqlite", EvalConfig(keys=KEYS)
    _events(root, store, config)
    (ds,), _ = discover(root)
    for stop_after in (1, 2, None):  # stopped, dropped after an event, read to the end
        assert gc.isenabled()
        matrix = ScoreMatrix([s.name for s in ds.samples], ds.method_names, config.keys)
        stop = threading.Event()
        events = stream.stream_evaluation(ds, matrix, config, store, stop=stop, every=0)
        for n, _ in enumerate(events, 1):
            assert gc.isenabled()  # not while the caller handles an event
            if n == stop_after:
                stop.set()
            if stop_after is None and n == 2:
                del events  # dropped by its caller without being finished
                break
        assert gc.isenabled()


@pytest.mark.slow
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


def _results(events: list[object]) -> dict[str, MethodResult]:
    (results,) = [e for e in events if isinstance(e, stream.Results)]
    return {r.method: r for r in results.results}


def _assert_same(a: MethodResult, b: MethodResult) -> None:
    """The same dataset values to the last bit (NaN equal to NaN), counts, coverage, curves."""
    assert list(a.values) == list(b.values)
    np.testing.assert_array_equal(list(a.values.values()), list(b.values.values()))
    assert (a.counts, a.n_images, a.coverage) == (b.counts, b.n_images, b.coverage)
    assert list(a.mean_curves) == list(b.mean_curves)
    for name, curve in a.mean_curves.items():
        np.testing.assert_array_equal(curve, b.mean_curves[name])


def _count_curve_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The methods whose per-image records :meth:`Evaluation.method_results` reads."""
    read: list[str] = []
    original = Evaluation._stored

    def counted(self: Evaluation, plan: Any, method: str, *args: Any, **kw: Any) -> Any:
        read.append(method)
        return original(self, plan, method, *args, **kw)

    monkeypatch.setattr(Evaluation, "_stored", counted)
    return read


@pytest.mark.slow
def test_the_window_reads_evals_dataset_values_back_instead_of_every_curve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B", "C"), missing={"C": 2})
    out = tmp_path / "out"
    assert main(["eval", str(root), "--out", str(out), "--measures", *KEYS, "--quiet"]) == 0
    store, config = out / "cache.sqlite", EvalConfig(keys=KEYS)
    read = _count_curve_reads(monkeypatch)
    stored = _results(_events(root, store, config)[0])
    assert read == []  # eval stored every method's dataset values: no record was read
    assert stored["C"].coverage.missing == ["img5", "img6"]
    assert {m: r.values for m, r in stored.items()} == _summary(out)
    # the same as made afresh from the records
    with monkeypatch.context() as m:
        m.setattr(ResultStore, "get_aggregate", lambda self, key: None)
        fresh = _results(_events(root, store, config)[0])
    assert read == ["A", "B", "C"]
    for method in ("A", "B", "C"):
        _assert_same(stored[method], fresh[method])


def test_a_changed_map_makes_only_its_methods_dataset_values_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B"))
    store, config = tmp_path / "store.sqlite", EvalConfig(keys=KEYS)
    before = _results(_events(root, store, config)[0])  # made, and stored
    pred = root / "Pred" / "A" / "img2.png"
    pred.write_bytes(cv2.imencode(".png", 255 - cv2.imread(str(pred), 0))[1].tobytes())
    read = _count_curve_reads(monkeypatch)
    after = _results(_events(root, store, config)[0])
    assert read == ["A"]
    assert after["A"].values["MAE"] != before["A"].values["MAE"]
    _assert_same(after["B"], before["B"])
    with monkeypatch.context() as m:
        m.setattr(ResultStore, "get_aggregate", lambda self, key: None)
        fresh = _results(_events(root, store, config)[0])
    _assert_same(after["A"], fresh["A"])
    _assert_same(after["B"], fresh["B"])  # B's, read back, are still what its records give


def test_an_aggregates_key_names_its_records_groups_and_parameters(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"))
    (ds,), _ = discover(root)
    names = [s.name for s in ds.samples]
    with ResultStore(tmp_path / "store.sqlite") as store:
        plan = Evaluation([ds], EvalConfig(keys=KEYS), store).plans[0]
        key = aggregate_key(plan, "A", names, EvalConfig(keys=KEYS))
        assert key == aggregate_key(plan, "A", names, EvalConfig(keys=KEYS))
        others = {
            aggregate_key(plan, "B", names, EvalConfig(keys=KEYS)),  # other records
            aggregate_key(plan, "A", names[:-1], EvalConfig(keys=KEYS)),  # fewer images
            aggregate_key(plan, "A", names[::-1], EvalConfig(keys=KEYS)),  # another order
            # a parameter the records do not depend on but a dataset value may
            aggregate_key(plan, "A", names, EvalConfig(Params(beta2=1.0), KEYS)),
            aggregate_key(
                dataclasses.replace(plan, groups={n: n[-1] for n in names}),
                "A",
                names,
                EvalConfig(keys=KEYS),
            ),
        }
        assert key not in others and len(others) == 5


def test_stored_dataset_values_that_cannot_be_read_or_written_are_made_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.sqlite"
    curves = {"PR": np.linspace(0, 1, 256)}
    with ResultStore(path) as store:
        assert store.get_aggregate("k") is None  # no table yet: an older store
        assert store.put_aggregate(
            "k", Aggregate({"MAE": 0.25, "Sm": np.nan}, {"MAE": 3}, 3, curves)
        )
        back = store.get_aggregate("k")
        assert back is not None and back.counts == {"MAE": 3} and back.n_images == 3
        assert back.values["MAE"] == 0.25 and np.isnan(back.values["Sm"])
        np.testing.assert_array_equal(back.curves["PR"], curves["PR"])
        # a row this version cannot read (three names, two values)
        store._db.execute("UPDATE aggregates SET value_names = 'a,b,c' WHERE key = 'k'")
        assert store.get_aggregate("k") is None
    # stored and committed at once: no write lock is left for another process to wait on
    with ResultStore(path) as store:
        assert store.put_aggregate("k2", Aggregate({"MAE": 0.5}, {"MAE": 1}, 1, {}))
        other = sqlite3.connect(path, timeout=0)
        other.execute("BEGIN IMMEDIATE")  # would fail at once if the lock were still held
        # and while another process writes, the shortcut is left out within milliseconds
        start = time.monotonic()
        assert not store.put_aggregate("k3", Aggregate({}, {}, 0, {}))
        assert time.monotonic() - start < 5
        other.rollback()
        other.close()
        assert store.get_aggregate("k3") is None and store.get_aggregate("k2") is not None
    # a store that cannot be written: the shortcut is left out, nothing fails
    readonly = ResultStore(path)
    readonly._db.close()
    readonly._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert not readonly.put_aggregate("other", Aggregate({}, {}, 0, {}))
    readonly._db.close()


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


def test_a_dataset_pickled_in_pieces_is_the_same_dataset(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=2 * PIECE + 3, methods=("A", "B"), size=(8, 8))
    (ds,), _ = discover(root)
    pieces = in_pieces(ds)
    assert len(pieces.pieces) == 3
    assert whole(pieces) == ds  # samples (their paths, in order), folders, coverage


@pytest.mark.slow
@pytest.mark.parametrize("pieces", [False, True], ids=["whole", "in-pieces"])
def test_the_service_process_answers_requests_over_its_pipes(tmp_path: Path, pieces: bool) -> None:
    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A", "B"))
    (ds,), _ = discover(root)
    proc = subprocess.Popen(
        command(1, 0), stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path
    )
    assert proc.stdin is not None and proc.stdout is not None
    sent = in_pieces(ds) if pieces else ds  # as the window sends it, or whole
    try:
        write_message(proc.stdin, ("start", 7, sent, EvalConfig(keys=KEYS), str(tmp_path / "s.db")))
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
        assert proc.wait(PATIENCE_S) == 0
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


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [2])
def test_the_stream_on_worker_processes_gives_the_same_matrix(tmp_path: Path, jobs: int) -> None:
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"))
    config = EvalConfig(keys=KEYS)
    _, serial = _events(root, tmp_path / "one.sqlite", config)
    (ds,), _ = discover(root)
    matrix = ScoreMatrix([s.name for s in ds.samples], ds.method_names, config.keys_for(True))
    list(stream.stream_evaluation(ds, matrix, config, tmp_path / "two.sqlite", jobs=jobs))
    assert np.array_equal(serial.values, matrix.values, equal_nan=True)


def test_a_request_stopped_while_it_waits_its_turn_is_never_begun() -> None:
    """The window asks for a dataset's scores and stops the request at once (another folder
    opened, a measure changed): a stop that arrives before the service took the request up
    used to be dropped, and the whole dataset was scored for nothing. The commands are read
    here on the test's thread, then the request is served: it is only said finished."""
    from fminspect.batch.service import _Service

    commands = io.BytesIO()
    never_read = object()  # a dataset the service must not touch
    write_message(commands, ("start", 1, never_read, None, "store.sqlite"))
    write_message(commands, ("stop", 1))
    commands.seek(0)
    out = io.BytesIO()
    service = _Service(commands, out, jobs=1)
    service.read_commands()  # to the end of the commands
    request = service.requests.get()
    assert request[:2] == ("start", 1) and service.stopped == 1
    service.serve(request)
    out.seek(0)
    assert read_message(out) == (1, "finished", None) and read_message(out) is None


def test_what_eval_did_to_the_inputs_is_said_from_its_stored_notes(tmp_path: Path) -> None:
    """A trial: the window's filter ``problems`` knew nothing of the 20 maps an earlier eval
    had resized (its problems.csv listed them), since the scores were read, not computed."""
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"), size=(40, 60))
    small = root / "Pred" / "B" / "img2.png"
    cv2.imwrite(str(small), cv2.resize(cv2.imread(str(small), cv2.IMREAD_GRAYSCALE), (30, 20)))
    out = tmp_path / "out"
    assert main(["eval", str(root), "--out", str(out), "--measures", "Sm", "--quiet"]) == 0
    with open(out / "problems.csv", newline="", encoding="utf-8") as fh:
        listed = [r for r in csv.DictReader(fh) if "resized" in r["message"]]
    assert len(listed) == 1
    events, _ = _events(root, out / "cache.sqlite", EvalConfig(keys=("Sm",)))
    assert isinstance(events[0], stream.Planned) and events[0].units == 0  # all read
    (noted,) = [e for e in events if isinstance(e, stream.Noted)]
    (problem,) = [p for p in noted.problems if "resized" in p.message]
    assert (problem.method, problem.name, problem.severity) == ("B", "img2", "warning")
    assert Path(problem.path) == small
