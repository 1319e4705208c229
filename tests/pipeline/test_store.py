"""The one result store: bulk reads, typed notes, where eval's results are found again."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import numpy as np

from fminspect.metrics import DatasetAccumulator
from fminspect.pipeline import Note, Record, ResultStore, register_store, store_for
from fminspect.pipeline.store import SCHEMA_VERSION, default_store_path, whole_pair_key


def _record(i: int) -> Record:
    curve = np.linspace(0, 1, 256) * i
    return Record({"MAE": i / 10}, {"Fm": curve}, (Note("GT", "empty-gt", f"note {i}"),))


def test_records_round_trip_in_bulk_with_and_without_curves(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "s.sqlite") as store:
        store.put_many((f"k{i}", _record(i)) for i in range(2000))
        assert store.present([f"k{i}" for i in range(1990, 2010)]) == {
            f"k{i}" for i in range(1990, 2000)
        }
        # most of the store asked for: read in one scan of its keys, the same answer
        asked = [f"k{i}" for i in range(500, 2600)]
        assert store.present(asked) == {f"k{i}" for i in range(500, 2000)}
        assert store.present([]) == set()
        got = dict(store.get_many([f"k{i}" for i in range(0, 2000, 7)]))
        assert len(got) == len(range(0, 2000, 7))
        for key, rec in got.items():
            i = int(key[1:])
            assert rec.scores == {"MAE": i / 10} and rec.notes == _record(i).notes
            assert np.array_equal(rec.curves["Fm"], _record(i).curves["Fm"])
        ((_, light),) = store.get_many(["k5"], curves=False)
        assert light.curves == {} and light.scores == {"MAE": 0.5}
        assert store.get("nope") is None and store.has("k1")


def test_a_store_of_another_schema_is_emptied_not_misread(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE records (key TEXT PRIMARY KEY, scores TEXT)")
    db.execute("INSERT INTO records VALUES ('k', '{}')")
    db.commit()
    db.close()
    with ResultStore(path) as store:
        assert not store.has("k")
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_digests_are_remembered_by_absolute_path_from_any_working_folder(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from fminspect.pipeline import store as store_module

    (tmp_path / "a").mkdir()
    f = tmp_path / "a" / "x.png"
    f.write_bytes(b"123")
    hashed: list[Path] = []
    real = store_module.file_digest

    def counting(path: Path) -> str:
        hashed.append(Path(path))
        return real(path)

    monkeypatch.setattr(store_module, "file_digest", counting)
    with ResultStore(tmp_path / "s.sqlite") as store:
        monkeypatch.chdir(tmp_path)
        first = store.digest(Path("a/x.png"))
        monkeypatch.chdir(tmp_path / "a")
        assert store.digest(Path("x.png")) == first
        assert store.digest(f) == first
    assert len(hashed) == 1


def test_many_digests_and_rows_read_in_one_pass_or_looked_up_give_the_same_answer(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Asked for most of a table, the store reads it in one pass; asked for a few of its
    rows, it looks them up in key order: both answer the same, for paths given as paths or
    as texts, absolute and normal or not."""
    from fminspect.pipeline import store as store_module

    folder = tmp_path / "maps"
    folder.mkdir()
    files = []
    for i in range(1200):  # more than one chunk of lookups
        files.append(folder / f"m{i:04d}.png")
        files[-1].write_bytes(str(i).encode())
    hashed: list[str] = []
    real = store_module.file_digest
    monkeypatch.setattr(store_module, "file_digest", lambda p: hashed.append(str(p)) or real(p))
    with ResultStore(tmp_path / "s.sqlite") as store:
        first = store.digests(files)
        assert len(hashed) == 1200 and all(isinstance(d, str) for d in first.values())
        texts = [os.fspath(f) for f in files]
        assert store.digests(texts) == {os.fspath(f): d for f, d in first.items()}  # one pass
        few = [*texts[:3], str(folder / ".." / "maps" / "m0004.png")]  # looked up
        assert store.digests(few) == {
            **{t: first[f] for t, f in zip(texts[:3], files[:3], strict=True)},
            few[3]: first[files[4]],
        }
        assert len(hashed) == 1200  # nothing hashed again
        files[7].write_bytes(b"changed")
        os.utime(files[7], ns=(1, 1))
        again = store.digests(files)
        assert len(hashed) == 1201 and again[files[7]] != first[files[7]]
        # rows of every score: every key (one pass) and a few (looked up)
        blob = np.zeros(1).astype("<f8").tobytes()
        keys = [whole_pair_key((f"{i:032x}", ""), ["t"]) for i in range(2000)]
        assert store.put_pair_scores([(k, "MAE", blob) for k in keys[:1500]])
        store.commit()
        assert store.pairs_present(keys) == set(keys[:1500])
        assert store.pairs_present(keys[1490:1510]) == set(keys[1490:1500])


def test_the_window_finds_the_store_eval_registered_for_a_gt_folder(tmp_path: Path) -> None:
    gt = tmp_path / "DS" / "GT"
    gt.mkdir(parents=True)
    assert store_for(gt) == default_store_path()  # nothing registered yet
    older, newer = tmp_path / "r1" / "cache.sqlite", tmp_path / "r2" / "cache.sqlite"
    for p in (older, newer):
        ResultStore(p).close()
    register_store([gt], older)
    register_store([gt], newer)
    assert store_for(gt) == newer
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert store_for(Path("DS/GT")) == newer  # the same folder, typed relatively
    finally:
        os.chdir(cwd)
    newer.unlink()  # results folder deleted: the earlier one is used
    assert store_for(gt) == older


def test_the_store_asked_for_most_of_a_folder_s_scores_is_chosen(tmp_path: Path) -> None:
    """A trial: after a whole eval, an eval --images of 18 cases into a new folder became
    "the last store used", and the window and the gallery scored 20,000 pairs again."""
    import sqlite3

    from fminspect.pipeline.store import user_cache_dir

    gt = tmp_path / "DS" / "GT"
    gt.mkdir(parents=True)
    index = user_cache_dir() / "stores.sqlite"
    index.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(index) as db:  # an index written before the scores were counted
        db.execute("DROP TABLE IF EXISTS stores")
        db.execute(
            "CREATE TABLE stores (folder TEXT NOT NULL, store TEXT NOT NULL, "
            "used REAL NOT NULL, PRIMARY KEY (folder, store))"
        )
    whole, cases, later = (tmp_path / n / "cache.sqlite" for n in ("out", "out_sub", "out2"))
    for p in (whole, cases, later):
        ResultStore(p).close()
    register_store([gt], whole, {str(gt): 20_000 * 4})
    register_store([gt], cases, {str(gt): 18 * 20 * 1})
    assert store_for(gt) == whole
    register_store([gt], whole, {str(gt): 18})  # the same store asked for less: it still holds
    assert store_for(gt) == whole
    register_store([gt], later, {str(gt): 20_000 * 4})  # as much, later: the later one
    assert store_for(gt) == later


def test_running_curve_sums_equal_numpy_mean_to_the_last_bit() -> None:
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 333):
        curves = [rng.random(256) * rng.random() for _ in range(n)]
        acc = DatasetAccumulator()
        for i, c in enumerate(curves):
            acc.add(str(i), {"maxFm": 0.0}, {"Fm": c})
        assert np.array_equal(acc.mean_curves()["Fm"], np.mean(np.array(curves), axis=0))


def test_rows_of_every_score_of_a_pair_are_only_a_shortcut(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    key, other = whole_pair_key(("a" * 32, "b" * 32), ["t1", "t2"]), b"x" * 16
    assert key == whole_pair_key(("a" * 32, "b" * 32), ["t2", "t1"])  # tags in any order
    with ResultStore(path) as store:  # none stored yet: no table, nothing found
        assert store.pairs_present([key]) == set() and list(store.pair_scores([key])) == []
        blob = np.array([0.5, 0.25]).astype("<f8").tobytes()
        assert store.put_pair_scores([(key, "MAE,Sm", blob)])
    with ResultStore(path) as store:
        assert store.pairs_present([key, other]) == {key}
        assert list(store.pair_scores([key, other])) == [(key, "MAE,Sm", blob)]
    # another process writing: the shortcut is left out within milliseconds, and what was
    # stored before stays
    with ResultStore(path) as store:
        other_writer = sqlite3.connect(path, timeout=0)
        other_writer.execute("BEGIN IMMEDIATE")
        start = time.monotonic()
        assert not store.put_pair_scores([(other, "MAE", blob[:8])], shortcut=True)
        assert time.monotonic() - start < 5
        other_writer.rollback()
        other_writer.close()
        assert store.pairs_present([key, other]) == {key}
    # a store that cannot be written: left out, nothing fails
    readonly = ResultStore(path)
    readonly._db.close()
    readonly._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert not readonly.put_pair_scores([(other, "MAE", blob[:8])], shortcut=True)
    assert readonly.pairs_present([key, other]) == {key}
    readonly._db.close()
