"""Hostile file names, damaged caches and input limits, end to end through the command line:
each case ends in a defined value or one line naming the file — never a traceback — and
nothing already computed is lost."""

from __future__ import annotations

import csv
import os
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

from fminspect.cli import main
from tests.datasets import make_dataset, write_png
from tests.processes import PATIENCE_S, wait_until_stored

pytestmark = pytest.mark.faults

MEASURES = ["--measures", "MAE", "Sm", "maxFm"]


def _eval(root: Path, out: Path, *extra: str) -> int:
    return main(["eval", str(root), "--out", str(out), "--quiet", "--no-plots", *MEASURES, *extra])


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.skipif(sys.platform != "linux", reason="POSIX file names are bytes")
def test_names_that_are_not_utf8_or_hold_spaces_and_accents_are_evaluated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=2, methods=("A", "B"))
    rng = np.random.default_rng(1)
    gt = (rng.random((48, 64)) > 0.5).astype(np.uint8) * 255
    for stem in (b"bad\xff", "ünï cödé".encode(), b"tab\there"):
        for folder in (b"GT", b"Pred/A", b"Pred/B"):
            array = gt if folder == b"GT" else (rng.random((48, 64)) * 255).astype(np.uint8)
            path = os.fsencode(root) + b"/" + folder + b"/" + stem + b".png"
            write_png(Path(os.fsdecode(path)), array)
    assert _eval(root, tmp_path / "out") == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    names = {r["image"] for r in _rows(tmp_path / "out" / "per_image.csv")}
    assert {"bad\\xff", "ünï cödé", "tab\\x09here"} <= names  # matched across the folders
    problems = [r for r in _rows(tmp_path / "out" / "problems.csv") if "UTF-8" in r["message"]]
    assert [p["path"] for p in problems] == [str(root / f) for f in ("GT", "Pred/A", "Pred/B")]
    for p in problems:
        assert p["message"].startswith("2 file names not valid UTF-8 (or with control chara")


def _damage_pages(path: Path) -> None:
    """Overwrite every page but the header's with noise (SQLite finds it when it reads)."""
    data = bytearray(path.read_bytes())
    noise = np.random.default_rng(0).integers(0, 256, len(data), np.uint8).tobytes()
    for at in range(4096, len(data), 4096):
        data[at + 8 : at + 1500] = noise[at + 8 : at + 1500]
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["not-a-database", "malformed-pages"])
def test_a_damaged_cache_is_set_aside_and_the_values_are_the_same(
    tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B"))
    out = tmp_path / "out"
    assert _eval(root, out) == 0
    clean = (out / "summary.csv").read_bytes()
    cache = out / "cache.sqlite"
    if damage == "not-a-database":
        cache.write_bytes(np.random.default_rng(0).bytes(8192))
    else:
        with sqlite3.connect(cache) as db:  # everything in the main file, none in the WAL
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _damage_pages(cache)
    capsys.readouterr()
    assert _eval(root, out) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (aside,) = (
        p for p in out.glob("cache.sqlite.damaged-*") if p.name[-4:] not in ("-wal", "-shm")
    )
    assert "not a readable result cache" in err and aside.name in err
    assert (out / "summary.csv").read_bytes() == clean  # recomputed, same values
    warnings = [r["message"] for r in _rows(out / "problems.csv")]
    assert any(aside.name in m for m in warnings)


def test_a_locked_cache_is_not_taken_for_a_damaged_one(tmp_path: Path) -> None:
    from fminspect.pipeline.store import ResultStore, is_damaged

    path = tmp_path / "cache.sqlite"
    ResultStore(path).close()
    holder = sqlite3.connect(path)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing
    try:
        other = sqlite3.connect(path, timeout=0)
        with pytest.raises(sqlite3.OperationalError) as caught:
            other.execute("DELETE FROM records")  # a writer waits for no one here
        other.close()
        assert not is_damaged(caught.value)
    finally:
        holder.rollback()
        holder.close()
    assert not list(tmp_path.glob("*.damaged-*"))


def test_max_pixels_refuses_files_by_their_header_and_names_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=2, methods=("A",), size=(48, 64))
    assert _eval(root, tmp_path / "out", "--max-pixels", "3000") == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "48 = 3,072 pixels, more than the limit of 3,000" in err and "--max-pixels" in err
    assert _eval(root, tmp_path / "out2", "--max-pixels", "3,072") == 0
    with pytest.raises(SystemExit) as usage:
        main(["score", "a.png", "b.png", "--max-pixels", "0"])
    assert usage.value.code == 2
    assert "--max-pixels: must be at least 1, got 0" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SIGKILL and the forkserver")
def test_workers_die_with_a_killed_eval_and_a_pipeline_ends(tmp_path: Path) -> None:
    """SIGKILL (or the out-of-memory killer) gives ``eval`` no chance to stop its pool: the
    workers must notice on their own, or ``fminspect eval … | tee log`` never ends."""
    import signal
    import subprocess
    import time

    root = make_dataset(tmp_path / "DS", n_images=200, size=(200, 200), methods=("A", "B"))
    command = Path(sys.executable).parent / "fminspect"
    cmd = [str(command), "eval", str(root), "--out", str(tmp_path / "out"), "--jobs", "2"]
    cmd += ["--no-plots", "--measures", "MAE", "Sm", "wFm", "maxEm"]
    # as `fminspect eval … 2>&1 | tee log`: the reader waits for every holder of the pipe
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    if not wait_until_stored(tmp_path / "out" / "cache.sqlite", proc):
        pytest.skip("the run ended before it could be killed")
    workers = _children_of(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    ended = time.monotonic()
    try:  # the pipe ends once no process holds its write end
        assert _reaches_eof(proc.stdout.fileno(), seconds=PATIENCE_S), "the pipe is held open"
    finally:
        proc.stdout.close()
        for p in _alive(workers):  # what a failure left behind
            os.kill(p, signal.SIGKILL)
    while _alive(workers) and time.monotonic() - ended < PATIENCE_S:
        time.sleep(0.1)
    assert _alive(workers) == []


def _reaches_eof(fd: int, seconds: float) -> bool:
    import select
    import time

    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([fd], [], [], left)
        if readable and not os.read(fd, 65536):
            return True
    return False


def _alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running (a zombie waiting for a parent to reap it is not)."""
    out = []
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(p)
    return out


def _children_of(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        found += kids
        frontier += kids
    return found


def test_duplicate_stems_use_one_file_and_say_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A",))
    png = next((root / "Pred" / "A").glob("*.png"))
    write_png(png.with_suffix(".jpg"), np.zeros((48, 64), np.uint8))  # same stem, other file
    assert _eval(root, tmp_path / "out") == 0
    assert "Traceback" not in capsys.readouterr().err
    (problem,) = [
        r for r in _rows(tmp_path / "out" / "problems.csv") if "same name" in r["message"]
    ]
    assert problem["path"] == str(png.with_suffix(".jpg"))
    assert problem["message"] == f"same name as {png.name}; {png.name} is used"


def test_an_unreadable_method_folder_is_named_and_the_others_are_evaluated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import fminspect.io.discovery as discovery

    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A", "B"))
    real = os.scandir
    locked = root / "Pred" / "B"

    def scandir(path):  # type: ignore[no-untyped-def]  # as root, chmod cannot lock a folder
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    code = _eval(root, tmp_path / "out")
    err = capsys.readouterr().err
    assert "Traceback" not in err and code == 1
    assert f"{locked}: folder cannot be read (Permission denied)" in err
    methods = {r["method"] for r in _rows(tmp_path / "out" / "summary.csv")}
    assert "A" in methods


def test_a_full_disk_leaves_the_previous_outputs_whole_and_says_which_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    import fminspect.io.atomic as atomic

    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A",))
    out = tmp_path / "out"
    assert _eval(root, out) == 0
    before = {
        p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and "cache" not in p.name
    }
    real_open = open

    class Full:
        """A file on a disk that is full."""

        def __init__(self, fh):  # type: ignore[no-untyped-def]
            self.fh = fh

        def write(self, data):  # type: ignore[no-untyped-def]
            raise OSError(errno.ENOSPC, "No space left on device", self.fh.name)

        def __getattr__(self, name):  # type: ignore[no-untyped-def]
            return getattr(self.fh, name)

        def __enter__(self):  # type: ignore[no-untyped-def]
            return self

        def __exit__(self, *exc):  # type: ignore[no-untyped-def]
            self.fh.close()

    def full_open(file, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
        fh = real_open(file, mode, *args, **kwargs)
        return Full(fh) if "w" in mode else fh

    monkeypatch.setattr(atomic, "open", full_open, raising=False)
    capsys.readouterr()
    code = main(
        ["eval", str(root), "--out", str(out), "--quiet", "--no-plots", "--measures", "MAE"]
    )
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"fminspect eval: {out}/") and line.endswith("No space left on device")
    after = {p.name: p.read_bytes() for p in out.iterdir() if "cache" not in p.name}
    assert after == before  # every earlier output whole; no temporary file left behind


def test_a_database_error_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import fminspect.batch.runner as runner

    root = make_dataset(tmp_path / "DS", n_images=2, methods=("A",))

    def locked(path):  # type: ignore[no-untyped-def]  # as after 30 s of another writer
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(runner, "ResultStore", locked)
    assert _eval(root, tmp_path / "out", "--cache", str(tmp_path / "c.sqlite")) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"fminspect eval: {tmp_path / 'c.sqlite'}: database is locked (if another program is "
        "writing it, try again when it is done)"
    )
