"""``fminspect eval --scheduler`` on a real Dask cluster: a scheduler and workers started as
separate processes on 127.0.0.1 the way the README says (``fminspect worker``), each worker
in a folder of its own. Every fault ends in one line naming its cause and a documented exit
status, never a traceback, and nothing computed under other definitions is cached."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from fminspect.batch.cluster import (
    Cluster,
    ClusterError,
    ClusterLost,
    _first_paths,
    _unreadable,
    absolute_paths,
    process_versions,
)
from fminspect.io.discovery import Sample
from tests.datasets import make_dataset
from tests.processes import PATIENCE_S, start_seconds

pytest.importorskip("distributed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.faults,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, process groups"),
]

PY = sys.executable
#: every output file that must be identical to a ``--jobs 1`` run's
COMPARED = ("summary.json", "per_image.csv", "summary.csv", "curves.csv", "problems.csv")


# ---------------------------------------------------------------------------- processes
class Proc:
    """A background process whose output goes to a log file; stopped at teardown."""

    def __init__(self, args: list[str], cwd: Path, log: Path) -> None:
        self.log = log
        self._out = log.open("wb")
        self.p = subprocess.Popen(
            args, cwd=cwd, stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True
        )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.p.poll() is None:
            os.killpg(self.p.pid, sig)  # the worker's nanny and its worker process too
            self.p.wait(PATIENCE_S)
        self._out.close()


def _wait(what: str, until: Any, timeout: float = PATIENCE_S) -> None:
    end = time.monotonic() + timeout
    while not until():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Lab:
    """Scheduler and workers of one test, each a process in its own folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: list[Proc] = []
        self.scheduler: Proc | None = None
        self.address = ""

    def start_scheduler(self) -> str:
        info = self.root / f"scheduler-{len(self.procs)}.json"
        self.scheduler = self._start(
            [
                PY,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(info),
            ],
            "scheduler",
        )
        _wait("the scheduler", lambda: info.exists() and info.stat().st_size > 0)
        self.address = json.loads(info.read_text())["address"]
        return self.address

    def start_worker(self, *extra: str) -> Proc:
        return self._start([PY, "-m", "fminspect", "worker", self.address, *extra], "worker")

    def wait_workers(self, n: int) -> None:
        assert self.scheduler is not None
        _wait(f"{n} workers", lambda: self.scheduler.text().count("Register worker") >= n)  # type: ignore[union-attr]

    def _start(self, args: list[str], kind: str) -> Proc:
        folder = self.root / f"{kind}-{len(self.procs)}"
        folder.mkdir(parents=True)
        proc = Proc(args, folder, folder / "log.txt")
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in reversed(self.procs):
            proc.kill()


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    lab = Lab(tmp_path / "lab")
    try:
        yield lab
    finally:
        lab.close()


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder holding ``data/`` (140 images × 3 methods) and the ``--jobs 1``
    outputs in ``serial/``."""
    work = tmp_path_factory.mktemp("work")
    make_dataset(work / "data", n_images=140, size=(240, 320), methods=("A", "B", "C"))
    done = _eval(work, "serial")
    assert done.returncode == 0, done.stderr
    return work


def _eval(work: Path, out: str, *args: str, wait: bool = True) -> Any:
    """``fminspect eval data`` run from ``work`` (a relative path, as a user types it)."""
    cmd = [PY, "-m", "fminspect", "eval", "data", "--out", out, "--no-plots", "--quiet", *args]
    if wait:
        return subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=PATIENCE_S)
    return subprocess.Popen(
        cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _children(pid: int, marker: str) -> list[int]:
    """The child processes of ``pid`` whose command line holds ``marker`` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid and marker.encode() in cmdline:
            out.append(int(stat.parent.name))
    return out


def _records(cache: Path) -> int:
    if not cache.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=1) as db:
            return int(db.execute("SELECT count(*) FROM records").fetchone()[0])
    except sqlite3.Error:
        return 0


def _same_outputs(a: Path, b: Path) -> None:
    for name in COMPARED:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def _one_line(stderr: str) -> str:
    """The one message line, with nothing else from Dask (its log lines) around it."""
    assert "Traceback" not in stderr and "distributed." not in stderr, stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("fminspect eval: ")]
    assert len(lines) == 1, stderr
    return lines[0]


# ---------------------------------------------------------------------------- happy paths
def test_relative_path_with_workers_elsewhere_gives_the_jobs_1_numbers(
    lab: Lab, data: Path
) -> None:
    address = lab.start_scheduler()
    lab.start_worker()
    lab.start_worker()
    lab.wait_workers(2)
    run = _eval(data, "dask", "--scheduler", address)
    assert run.returncode == 0, run.stderr
    _same_outputs(data / "serial", data / "dask")
    cluster = json.loads((data / "dask" / "results.json").read_text())["cluster"]
    assert cluster["scheduler"] == address
    images = [w["images"] for w in cluster["workers"].values()]
    assert len(images) == 2 and sum(images) == 140 and min(images) > 0, images
    for versions in cluster["workers"].values():
        assert versions["measure_definitions"] == process_versions()["measure_definitions"]


def test_a_worker_killed_mid_run_costs_only_its_running_images(lab: Lab, data: Path) -> None:
    address = lab.start_scheduler()
    lab.start_worker()
    victim = lab.start_worker()
    lab.wait_workers(2)
    run = _eval(data, "killed", "--scheduler", address, wait=False)
    _wait("some results", lambda: _records(data / "killed" / "cache.sqlite") >= 30)
    assert run.poll() is None, "the run ended before a worker could be killed"
    # the worker process itself (its nanny starts a new one, which must pass the handshake)
    worker_pids = _children(victim.p.pid, "spawn_main")
    assert worker_pids, victim.text()
    os.kill(worker_pids[0], signal.SIGKILL)
    _, stderr = run.communicate(timeout=PATIENCE_S)
    assert run.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert " left; the images it was scoring are rescheduled" in stderr
    _same_outputs(data / "serial", data / "killed")
    cluster = json.loads((data / "killed" / "results.json").read_text())["cluster"]
    assert len(cluster["workers_lost"]) == 1
    assert sum(w["images"] for w in cluster["workers"].values()) >= 140


#: A worker preload that holds every work unit after the first ``after`` for good: the run
#: cannot end before the test has done what it does mid-run, however busy the machine.
HOLD_UNITS = """import threading
import fminspect.batch.runner as runner
if not hasattr(runner, "_unheld"):  # Dask may preload it twice
    runner._unheld = runner.evaluate_unit
    _started, _lock = [0], threading.Lock()
    def _held(unit):
        with _lock:
            _started[0] += 1
            held = _started[0] > {after}
        if held:
            threading.Event().wait()
        return runner._unheld(unit)
    runner.evaluate_unit = _held
"""


def test_scheduler_killed_mid_run_keeps_the_results_and_a_rerun_resumes(
    lab: Lab, data: Path, tmp_path: Path
) -> None:
    script = tmp_path / "hold_units.py"
    script.write_text(HOLD_UNITS.format(after=40))
    address = lab.start_scheduler()
    lab.start_worker("--dask", f"--preload {script}")
    lab.wait_workers(1)
    run = _eval(data, "lost", "--scheduler", address, "--connect-timeout", "2", wait=False)
    _wait("some results", lambda: _records(data / "lost" / "cache.sqlite") >= 30)
    assert lab.scheduler is not None
    start = start_seconds("fminspect.cli, distributed")  # how loaded the machine is now
    assert run.poll() is None, "the run ended although the worker holds its last 100 images"
    lab.scheduler.kill()
    started = time.monotonic()
    _, stderr = run.communicate(timeout=PATIENCE_S)
    # it stops within its own time-outs (2 s to connect), not Dask's default minutes
    assert time.monotonic() - started < 20 + 4 * start
    assert run.returncode == 130, stderr
    line = _one_line(stderr)
    assert f"lost the Dask scheduler at {address}" in line
    assert "rerun the same command to resume" in line and "lost/cache.sqlite" in line
    kept = int(re.search(r"(\d+) of 140 images were done", line).group(1))  # type: ignore[union-attr]
    assert kept >= 1 and _records(data / "lost" / "cache.sqlite") >= kept
    assert not (data / "lost" / "summary.json").exists()
    # a new scheduler and worker; the same command resumes from the cache
    address = lab.start_scheduler()
    lab.start_worker()
    lab.wait_workers(1)
    again = _eval(data, "lost", "--scheduler", address)
    assert again.returncode == 0, again.stderr
    assert "wholly from the cache" in again.stderr
    reused = int(again.stderr.split(" wholly from the cache")[0].split()[-1])
    assert reused >= kept * 3  # three methods per image
    _same_outputs(data / "serial", data / "lost")


# ---------------------------------------------------------------------------- refusals
PATCH_DEFINITIONS = "import fminspect\nfminspect.MEASURE_DEFINITION_VERSION = 99\n"
BLOCK_FMINSPECT = """import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "fminspect" or name.startswith("fminspect."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
for m in [m for m in sys.modules if m.split(".")[0] == "fminspect"]:
    del sys.modules[m]
sys.meta_path.insert(0, _Block())
"""


@pytest.mark.parametrize(
    ("preload", "expected"),
    [
        (PATCH_DEFINITIONS, "computes measure definitions version 99"),
        (BLOCK_FMINSPECT, "cannot import fminspect"),
    ],
    ids=["other-definitions", "no-fminspect"],
)
def test_a_mismatched_worker_is_refused_by_name_and_nothing_is_cached(
    lab: Lab, data: Path, tmp_path: Path, preload: str, expected: str
) -> None:
    script = tmp_path / "preload_worker.py"
    script.write_text(preload)
    address = lab.start_scheduler()
    lab.start_worker("--dask", f"--preload {script}")
    lab.wait_workers(1)
    out = tmp_path / "refused"
    run = _eval(data, str(out), "--scheduler", address)
    assert run.returncode == 1, run.stderr
    line = _one_line(run.stderr)
    assert expected in line and "worker tcp://127.0.0.1:" in line, line
    assert _records(out / "cache.sqlite") == 0
    # the override accepts other releases and libraries, never other definitions
    if preload is PATCH_DEFINITIONS:
        forced = _eval(data, str(out), "--scheduler", address, "--allow-version-mismatch")
        assert forced.returncode == 1 and "never overridable" in _one_line(forced.stderr)
        assert _records(out / "cache.sqlite") == 0


HIDE_DATA = """import builtins
_open = getattr(builtins, "_unhidden_open", builtins.open)  # Dask may preload it twice
builtins._unhidden_open = _open
def _hidden(file, *args, **kw):
    if str(file).startswith({folder!r}):
        raise FileNotFoundError(2, "No such file or directory", str(file))
    return _open(file, *args, **kw)
builtins.open = _hidden
"""


def test_a_worker_without_the_data_joining_mid_run_stops_the_run_by_name(
    lab: Lab, data: Path, tmp_path: Path
) -> None:
    address = lab.start_scheduler()
    good = lab.start_worker()
    lab.wait_workers(1)
    script = tmp_path / "hide_data.py"
    script.write_text(HIDE_DATA.format(folder=str(data / "data")))
    out = data / "joined"
    run = _eval(data, "joined", "--scheduler", address, wait=False)
    _wait("some results", lambda: _records(out / "cache.sqlite") >= 30)
    assert run.poll() is None, "the run ended before a worker could join"
    os.killpg(good.p.pid, signal.SIGSTOP)  # paused while the other joins, so that it does
    try:
        lab.start_worker("--dask", f"--preload {script}")
        lab.wait_workers(2)
    finally:
        os.killpg(good.p.pid, signal.SIGCONT)
    _, stderr = run.communicate(timeout=PATIENCE_S)
    assert run.returncode == 1, stderr
    line = _one_line(stderr)
    assert re.search(r"worker tcp://127\.0\.0\.1:\d+ cannot read \S+/data/", line), line
    assert "rerun the same command to resume" in line
    assert not (out / "summary.json").exists()  # no partial summary passed off as whole
    # what was stored is right: a rerun on the good worker gives the --jobs 1 numbers
    lab.procs[-1].kill()
    again = _eval(data, "joined", "--scheduler", address)
    assert again.returncode == 0, again.stderr
    _same_outputs(data / "serial", out)


def test_ctrl_c_keeps_what_was_done(lab: Lab, data: Path) -> None:
    address = lab.start_scheduler()
    worker = lab.start_worker()
    lab.wait_workers(1)
    out = data / "interrupted"
    run = _eval(data, "interrupted", "--scheduler", address, wait=False)
    _wait("some results", lambda: _records(out / "cache.sqlite") >= 30)
    # the worker paused while the interrupt is sent: on a busy machine this process may not
    # run for seconds, in which the rest of the images would be done (a run that ended
    # cannot be interrupted)
    os.killpg(worker.p.pid, signal.SIGSTOP)
    try:
        if run.poll() is not None:
            pytest.skip("the run ended before it could be interrupted")
        run.send_signal(signal.SIGINT)
    finally:
        os.killpg(worker.p.pid, signal.SIGCONT)
    _, stderr = run.communicate(timeout=PATIENCE_S)
    assert run.returncode == 130, stderr
    line = _one_line(stderr)
    assert re.fullmatch(
        r"fminspect eval: interrupted: \d+ of 140 images were done and their results are kept "
        r"in interrupted/cache\.sqlite; rerun the same command to resume",
        line,
    ), line


def test_no_worker_is_a_clear_error_within_the_timeout(lab: Lab, data: Path) -> None:
    address = lab.start_scheduler()
    start = start_seconds("fminspect.cli, distributed")  # how loaded the machine is now
    started = time.monotonic()
    run = _eval(data, "none", "--scheduler", address, "--worker-timeout", "2")
    assert time.monotonic() - started < 2 + 10 + 4 * start  # its 2 s, and starting
    assert run.returncode == 1
    line = _one_line(run.stderr)
    assert f"no worker joined the Dask scheduler at {address} within 2 s" in line
    assert "fminspect worker" in line


def test_an_unreachable_scheduler_is_one_line_before_any_file_is_read(data: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = start_seconds("fminspect.cli, distributed")  # how loaded the machine is now
    started = time.monotonic()
    run = _eval(data, "nowhere", "--scheduler", f"tcp://127.0.0.1:{port}", "--connect-timeout", "2")
    assert time.monotonic() - started < 2 + 10 + 4 * start  # its 2 s, and starting
    assert run.returncode == 1
    line = _one_line(run.stderr)
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port} within 2 s" in line
    # stopped before discovery, hashing and outputs (only --out was checked: made, empty)
    assert not any((data / "nowhere").iterdir())


# ---------------------------------------------------------------------------- pieces
def test_paths_are_made_absolute_for_the_workers(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    s = Sample("DS", "a", Path("GT/a.png"), None, {"M": Path("Pred/M/a.png")})
    got = absolute_paths((s, [Path("x")], {"k": Path("/abs/y")}))
    assert got[0].gt == tmp_path / "GT/a.png" and got[0].preds["M"] == tmp_path / "Pred/M/a.png"
    assert got[0].image is None and got[1] == [tmp_path / "x"] and got[2]["k"] == Path("/abs/y")


def test_the_data_probe_names_the_worker_and_the_file(tmp_path: Path) -> None:
    gt = tmp_path / "GT.png"
    gt.write_bytes(b"x")
    missing = tmp_path / "Pred" / "M" / "a.png"
    unit = SimpleNamespace(files=lambda: [gt, missing, missing.with_name("b.png")])
    paths = _first_paths([unit, unit])
    assert paths == [str(gt), str(missing)]  # the first file of each folder read, once
    assert _unreadable(paths) == [(str(missing), "No such file or directory")]

    class Client:  # what Client.run returns: {worker: the function's value}
        def run(self, fn: Any, *args: Any, **kw: Any) -> dict[str, Any]:
            return {"tcp://10.0.0.7:4000": fn(*args)}

    cluster = Cluster(Client(), "tcp://sched:8786")
    with pytest.raises(ClusterError) as err:
        cluster.check_data([unit])
    text = str(err.value)
    assert text.startswith(f"worker tcp://10.0.0.7:4000 cannot read {missing}")
    assert "the data must be at the same path on every worker" in text


def test_a_result_computed_under_other_definitions_is_refused(tmp_path: Path) -> None:
    class Future:
        status = "finished"

        def result(self) -> tuple[str, str, object]:
            return ("tcp://10.0.0.9:4000", "99", object())

    cluster = Cluster(SimpleNamespace(), "tcp://sched:8786")
    with pytest.raises(ClusterError) as err:
        cluster._take(Future(), 3, 10)
    assert "worker tcp://10.0.0.9:4000 joined during the run" in str(err.value)
    assert "was not stored" in str(err.value)
    lost = ClusterLost("lost the Dask scheduler at tcp://sched:8786", 3, 10)
    lost.cache = "out/cache.sqlite"
    assert str(lost) == (
        "lost the Dask scheduler at tcp://sched:8786: 3 of 10 images were done and their "
        "results are kept in out/cache.sqlite; rerun the same command to resume"
    )


def test_a_result_lost_with_its_worker_after_finishing_is_awaited_again() -> None:
    """Dask's "lost-data": a future ``wait`` gave as finished turns "lost" when the worker
    holding its result dies; the scheduler recomputes it, so it is not a lost scheduler
    (the race behind a CI failure of the killed-worker test above)."""
    from fminspect.batch import cluster as cluster_module

    class Future:
        status = "lost"

        def result(self) -> object:
            raise AssertionError("a lost result is not read")

    cluster = Cluster(SimpleNamespace(), "tcp://sched:8786")
    assert cluster._take(Future(), 3, 10) is cluster_module._AGAIN
    Future.status = "cancelled"
    with pytest.raises(ClusterLost):
        cluster._take(Future(), 3, 10)
