"""Evaluation on a Dask cluster: connect, check every worker, run units, fail in one line.

``fminspect eval --scheduler ADDR`` (and ``meta``) send their work units — one image with
all its pending methods — to the workers of a Dask scheduler. What can go wrong there is
checked before any work and reported as a :class:`ClusterError` whose text is the whole
message (the command prints it on one line; no traceback):

* **Connecting** (:func:`connect`) fails after ``connect_timeout`` seconds with the address.
* **No worker** within ``worker_timeout`` seconds, or none left during the run for that
  long: said so, with how to start one (``fminspect worker ADDR``).
* **The handshake** (:meth:`Cluster.check_workers`): every worker runs
  :func:`process_versions`; a worker that cannot import fminspect, or whose fminspect,
  measure definitions, Python or value-changing libraries (NumPy, SciPy, OpenCV,
  scikit-image) differ from this process's, is refused by name. ``allow_mismatch`` accepts
  other releases and libraries (recorded in ``results.json``), never other *measure
  definitions*: their values would be stored under keys that say otherwise.
* **The data** (:meth:`Cluster.check_data`): paths are made absolute here (a worker runs in
  its own folder), and every worker must read a sample of them — the first file of every
  folder read (GT, image, each method's maps) — or the run stops naming the worker and the
  file. A worker that joins later is checked too, and every unit checks on its worker that
  it can read its own files (the client read them all) before it is scored.
* **During the run** (:meth:`Cluster.run`): at most a few units per worker thread are in
  flight and each future is released once its result is taken (the caller stores it at
  once), so a lost worker costs only its running units and the workers' memory stays flat.
  Every result says which worker computed it under which definitions; one computed under
  other definitions is never passed on. Workers that leave or join are reported. A lost
  scheduler ends the run with :class:`ClusterLost` (what was stored is kept; rerunning the
  command resumes).

Scheduler overhead is per task, so units are whole images: 5,000 images × 40 methods is
5,000 tasks, not 200,000 (``benchmarks/bench_cluster.py`` measures the overhead per task).
Dask is imported only when a cluster is used (``pip install 'fminspect[cluster]'``).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fminspect.batch.stopped import RunStopped

if TYPE_CHECKING:
    from threading import Event

__all__ = [
    "Cluster",
    "ClusterError",
    "ClusterLost",
    "absolute_paths",
    "connect",
    "process_versions",
    "reachable",
]

#: Seconds to reach the scheduler before giving up.
CONNECT_TIMEOUT = 10.0
#: Seconds to wait for a first worker (and, during a run, for any worker to come back).
WORKER_TIMEOUT = 60.0
#: Libraries whose version can change a measure's value (resizing, distance transforms,
#: Gaussian filters, SSIM windows, float summation order).
VALUE_LIBRARIES = ("numpy", "scipy", "cv2", "skimage")
#: Units in flight per worker thread: enough to keep every worker busy while results
#: travel back, few enough that a lost worker loses little.
IN_FLIGHT_PER_THREAD = 4
#: Seconds between looks at the scheduler's worker list during a run.
WATCH_EVERY = 2.0

#: What :meth:`Cluster._take` gives for a future whose result was lost with its worker
#: after it finished: the scheduler computes it again, so it goes back to the running set.
_AGAIN = object()

OnMessage = Callable[[str], None]


class ClusterError(RuntimeError):
    """A cluster problem; its text is the whole message for the user (one line)."""


class ClusterLost(ClusterError, RunStopped):
    """The scheduler, or every worker, went away during a run: what was done is kept
    (:class:`~fminspect.batch.stopped.RunStopped`; exit status 130)."""

    def __init__(self, what: str, kept: int = 0, total: int = 0) -> None:
        RunStopped.__init__(self, what, kept, total)

    def __str__(self) -> str:
        return RunStopped.__str__(self)


class WorkerDataError(RuntimeError):
    """Raised on a worker that cannot read a file of its unit (the client read it)."""

    def __init__(self, path: str, why: str, worker: str) -> None:
        super().__init__(path, why, worker)
        self.path = path
        self.why = why
        self.worker = worker


@functools.cache
def _library_versions() -> tuple[tuple[str, str], ...]:
    import importlib
    import platform

    out = [("python", platform.python_version())]
    for name in VALUE_LIBRARIES:
        try:
            out.append((name, str(importlib.import_module(name).__version__)))
        except ImportError:
            out.append((name, "not installed"))
    return tuple(out)


def process_versions() -> dict[str, str]:
    """What this process computes with: fminspect's release and measure-definition version,
    Python's and the value-changing libraries' versions (run on every worker)."""
    import fminspect  # the attributes are read now: a patched or other release shows

    return {
        "fminspect": str(fminspect.__version__),
        "measure_definitions": str(fminspect.MEASURE_DEFINITION_VERSION),
        **dict(_library_versions()),
    }


def _unreadable(paths: Sequence[str]) -> list[tuple[str, str]]:
    """(path, why) for each of ``paths`` this process cannot open (run on every worker)."""
    out = []
    for p in paths:
        try:
            with open(p, "rb") as f:
                f.read(1)
        except OSError as exc:
            out.append((p, exc.strerror or type(exc).__name__))
    return out


def _run_unit(fn: Callable[[Any], Any], unit: Any) -> tuple[str, str, Any]:
    """``fn(unit)`` on a worker, with who computed it under which measure definitions."""
    from distributed import get_worker

    try:
        worker = get_worker().address
    except ValueError:  # not on a worker (a client-side test run)
        worker = "client"
    files = getattr(unit, "files", None)
    if files is not None:  # the client read them all: a failure here is this worker's
        missing = _unreadable([str(p) for p in files()])
        if missing:
            raise WorkerDataError(*missing[0], worker)
    return worker, process_versions()["measure_definitions"], fn(unit)


def absolute_paths(obj: Any) -> Any:
    """``obj`` with every relative :class:`~pathlib.Path` inside it (dataclass fields,
    dicts, lists, tuples) made absolute against this process's folder: a worker runs in
    its own folder, often on another machine, and must get paths that mean the same there."""
    import dataclasses

    if isinstance(obj, Path):
        return obj if obj.is_absolute() else obj.absolute()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {
            f.name: absolute_paths(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init
        }
        return dataclasses.replace(obj, **changes)
    if isinstance(obj, dict):
        return {k: absolute_paths(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(absolute_paths(v) for v in obj)
    return obj


def _first_paths(units: Sequence[Any]) -> list[str]:
    """A sample of the files a run reads: the first file of each folder the units read
    (the GT, image and each method's folder of every dataset), from their ``files()``."""
    seen: set[Path] = set()
    out: list[str] = []
    for unit in units:
        for path in getattr(unit, "files", list)():
            path = absolute_paths(path)
            if path.parent not in seen:
                seen.add(path.parent)
                out.append(str(path))
    return out


def _dask_loggers() -> list[Any]:
    """Dask's, tornado's and asyncio's loggers, their children included (Dask gives some of
    them levels of their own, e.g. ``tornado.application``: error)."""
    import logging

    roots = ("distributed", "tornado", "asyncio")
    names = [
        n for n in logging.root.manager.loggerDict if n.startswith(tuple(f"{r}." for r in roots))
    ]
    return [logging.getLogger(n) for n in (*roots, *names)]


def silence_dask_logs() -> None:
    """Dask's own log lines off for the rest of the process: the command line says what
    happened itself, in one line (a Ctrl-C at the wrong moment made tornado log a Dask
    callback's traceback after the run had stopped)."""
    import logging

    with contextlib.suppress(ImportError):
        import distributed  # noqa: F401  (its logging set-up, which sets levels, first)
    for lg in _dask_loggers():
        lg.setLevel(logging.CRITICAL + 1)


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask's own log lines (reconnect attempts, lost-connection warnings) off while we say
    what happened ourselves."""
    import logging

    loggers = _dask_loggers()
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class Cluster:
    """A connected Dask scheduler whose workers passed the handshake (see the module notes).
    Made by :func:`connect`; closing it closes the client (never the cluster)."""

    def __init__(
        self,
        client: Any,
        address: str,
        *,
        worker_timeout: float = WORKER_TIMEOUT,
        allow_mismatch: bool = False,
        on_message: OnMessage | None = None,
        own: bool = True,
    ) -> None:
        self.client = client
        self.address = address
        self.worker_timeout = worker_timeout
        self.allow_mismatch = allow_mismatch
        self.say: OnMessage = on_message or (lambda _m: None)
        self.own = own
        self.client_versions = process_versions()
        #: worker address → its versions (every worker checked, in the order seen)
        self.workers: dict[str, dict[str, str]] = {}
        #: worker address → units it computed in this process's runs
        self.units_by_worker: Counter[str] = Counter()
        #: workers that left during a run
        self.lost: list[str] = []

    # ------------------------------------------------------------------ checks
    def _current_workers(self) -> dict[str, int]:
        info = self.client.scheduler_info(n_workers=-1)
        return {a: int(w.get("nthreads", 1)) for a, w in info.get("workers", {}).items()}

    def wait_for_workers(self) -> None:
        """Block until a worker is connected; :class:`ClusterError` after
        :attr:`worker_timeout` seconds."""
        try:
            self.client.wait_for_workers(1, timeout=self.worker_timeout)
        except (TimeoutError, OSError) as exc:  # dask raises TimeoutError on expiry
            raise ClusterError(
                f"no worker joined the Dask scheduler at {self.address} within "
                f"{self.worker_timeout:g} s; start workers with `fminspect worker "
                f"{self.address}` (see README, 'On a cluster'), or wait longer with "
                "--worker-timeout"
            ) from exc

    def check_workers(self, addresses: Sequence[str] | None = None) -> None:
        """The handshake (see the module notes) with ``addresses`` (default: every worker
        connected now); refuses a worker by name."""
        replies = self.client.run(
            process_versions, workers=list(addresses) if addresses else None, on_error="return"
        )
        mine = self.client_versions
        for worker, reply in sorted(replies.items()):
            if isinstance(reply, BaseException):
                if isinstance(reply, ImportError) or "fminspect" in str(reply):
                    raise ClusterError(
                        f"worker {worker} cannot import fminspect ({_short(reply)}): install "
                        f"fminspect {mine['fminspect']} in that worker's environment and "
                        f"start it with `fminspect worker {self.address}`"
                    )
                raise ClusterError(f"worker {worker} failed the version check: {_short(reply)}")
            differ = {k: (reply.get(k, "?"), v) for k, v in mine.items() if reply.get(k) != v}
            if "measure_definitions" in differ:
                theirs, ours = differ["measure_definitions"]
                raise ClusterError(
                    f"worker {worker} computes measure definitions version {theirs} "
                    f"(fminspect {reply.get('fminspect', '?')}), this client {ours} "
                    f"(fminspect {mine['fminspect']}): its values would differ; install "
                    f"fminspect {mine['fminspect']} there (never overridable)"
                )
            if differ and not self.allow_mismatch:
                what = ", ".join(f"{k} {a} (here {b})" for k, (a, b) in sorted(differ.items()))
                raise ClusterError(
                    f"worker {worker} runs {what}: values may differ; install the same "
                    "versions there, or accept them with --allow-version-mismatch "
                    "(recorded in results.json)"
                )
            if differ:
                what = ", ".join(f"{k} {a}" for k, (a, _) in sorted(differ.items()))
                self.say(f"note: worker {worker} runs {what} (accepted: --allow-version-mismatch)")
            self.workers[worker] = dict(reply)

    def check_data(self, units: Sequence[Any], addresses: Sequence[str] | None = None) -> None:
        """Every worker (or those of ``addresses``) can read the first GT, image and
        prediction of every dataset and method of ``units`` (else :class:`ClusterError`
        naming the worker and the file)."""
        paths = _first_paths(units)
        if not paths:
            return
        replies = self.client.run(
            _unreadable, paths, workers=list(addresses) if addresses else None, on_error="return"
        )
        for worker, reply in sorted(replies.items()):
            if isinstance(reply, BaseException):
                raise ClusterError(f"worker {worker} could not check the data: {_short(reply)}")
            if reply:
                path, why = reply[0]
                more = f" (and {len(reply) - 1} more of the {len(paths)} files tried)"
                raise ClusterError(
                    f"worker {worker} cannot read {path} ({why})"
                    + (more if len(reply) > 1 else "")
                    + ": the data must be at the same path on every worker (a shared or "
                    "copied folder); start workers with `fminspect worker "
                    f"{self.address} --data FOLDER` to check a worker before the run"
                )

    # ------------------------------------------------------------------ run
    def run(
        self, units: Sequence[Any], fn: Callable[[Any], Any], stop: Event | None = None
    ) -> Iterator[Any]:
        """``fn(unit)`` for every unit on the workers, results in completion order (see the
        module notes). Raises :class:`ClusterError`, or :class:`ClusterLost` if the scheduler
        goes away."""
        from distributed import wait

        units = [absolute_paths(u) for u in units]
        self.check_data(units)
        pending = iter(units)
        running: set[Any] = set()
        done_count = 0
        known = self._current_workers()
        last_watch = time.monotonic()
        alone_since: float | None = None
        try:
            with _quiet_dask():
                while True:
                    if stop is not None and stop.is_set():
                        return
                    limit = max(2, IN_FLIGHT_PER_THREAD * max(1, sum(known.values())))
                    while len(running) < limit:
                        unit = next(pending, None)
                        if unit is None:
                            break
                        running.add(self.client.submit(_run_unit, fn, unit, pure=False))
                    if not running:
                        return
                    try:
                        finished, running = wait(
                            running, timeout=WATCH_EVERY, return_when="FIRST_COMPLETED"
                        )
                    except TimeoutError:
                        finished = set()
                    except (OSError, CancelledError) as exc:  # the connection broke
                        raise self._lost(done_count, len(units), exc) from exc
                    for fut in finished:
                        out = self._take(fut, done_count, len(units))
                        if out is _AGAIN:
                            running.add(fut)
                            continue
                        fut.release()
                        done_count += 1
                        yield out
                    now = time.monotonic()
                    if now - last_watch >= WATCH_EVERY or not finished:
                        last_watch = now
                        known, alone_since = self._watch(known, alone_since, done_count, units)
        finally:
            for fut in running:
                with contextlib.suppress(Exception):
                    fut.cancel()

    def _take(self, fut: Any, done: int, total: int) -> Any:
        """The result of a finished future, checked (see :meth:`run`)."""
        if fut.status == "error":
            exc = fut.exception()
            if isinstance(exc, WorkerDataError):
                raise ClusterError(
                    f"worker {exc.worker} cannot read {exc.path} ({exc.why}), which this client "
                    f"reads: the data must be at the same path on every worker; {done} of "
                    f"{total} images were done and are kept: stop that worker or give it the "
                    "data, then rerun the same command to resume"
                )
            if isinstance(exc, ImportError) and "fminspect" in str(exc):
                raise ClusterError(
                    f"a worker of {self.address} cannot import fminspect ({_short(exc)}): "
                    f"start workers with `fminspect worker {self.address}`"
                )
            fut.result()  # the unit's own error: raised as it is (a bug, not the cluster)
        if fut.status in ("lost", "pending"):
            # finished, then its worker died holding the result (Dask's "lost-data"): the
            # scheduler recomputes it elsewhere; the scheduler itself is still there
            return _AGAIN
        if fut.status != "finished":
            raise self._lost(done, total, None)
        try:
            worker, definitions, out = fut.result()
        except (OSError, CancelledError) as exc:
            raise self._lost(done, total, exc) from exc
        mine = self.client_versions["measure_definitions"]
        if definitions != mine:
            raise ClusterError(
                f"worker {worker} joined during the run computing measure definitions "
                f"version {definitions} (this client {mine}): its result was not stored; "
                f"stop that worker or install fminspect {self.client_versions['fminspect']} "
                "on it, then rerun the same command to resume"
            )
        self.units_by_worker[worker] += 1
        return out

    def _watch(
        self,
        known: dict[str, int],
        alone_since: float | None,
        done: int,
        units: Sequence[Any],
    ) -> tuple[dict[str, int], float | None]:
        """Report workers that left or joined (checking the new ones); stop when none has
        been there for :attr:`worker_timeout` seconds."""
        try:
            now_workers = self._current_workers()
        except (OSError, CancelledError) as exc:
            raise self._lost(done, len(units), exc) from exc
        for w in sorted(set(known) - set(now_workers)):
            self.lost.append(w)
            self.say(f"worker {w} left; the images it was scoring are rescheduled")
        joined = sorted(set(now_workers) - set(known))
        if joined:  # checked (a unit it starts meanwhile checks its own files first)
            try:
                self.check_workers(joined)
                self.check_data(units, joined)
            except ClusterError as exc:  # mid-run: what was done is kept, say so
                raise ClusterError(
                    f"{exc}; {done} of {len(units)} images were done and are kept: stop that "
                    "worker or fix it, then rerun the same command to resume"
                ) from exc
            self.say(f"worker{'s' if len(joined) > 1 else ''} {', '.join(joined)} joined")
        if now_workers:
            return now_workers, None
        now = time.monotonic()
        if alone_since is None:
            self.say(f"no worker left on {self.address}; waiting {self.worker_timeout:g} s")
            return now_workers, now
        if now - alone_since > self.worker_timeout:
            raise ClusterLost(
                f"no worker on the Dask scheduler at {self.address} for {self.worker_timeout:g} s",
                done,
                len(units),
            )
        return now_workers, alone_since

    def _lost(self, done: int, total: int, exc: BaseException | None) -> ClusterError:
        cause = "" if exc is None or isinstance(exc, CancelledError) else f" ({_short(exc)})"
        return ClusterLost(f"lost the Dask scheduler at {self.address}{cause}", done, total)

    # ------------------------------------------------------------------ record
    def describe(self) -> dict[str, Any]:
        """What ``results.json`` records about the run: the scheduler, every worker with
        its versions and the images it computed, the workers lost."""
        return {
            "scheduler": self.address,
            "client": dict(self.client_versions),
            "workers": {
                w: {**v, "images": self.units_by_worker.get(w, 0)}
                for w, v in sorted(self.workers.items())
            },
            "workers_lost": list(self.lost),
            "version_mismatch_allowed": self.allow_mismatch,
        }

    def close(self) -> None:
        """Close the client (if made here); the scheduler and workers go on."""
        if self.own:
            with _quiet_dask(), contextlib.suppress(Exception):
                self.client.close(timeout=2)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_address(address: str) -> None:
    """A scheme Dask knows and a host name that resolves (Dask reports both as a timeout)."""
    import socket

    scheme, sep, rest = address.rpartition("://")
    if sep and scheme not in ("tcp", "tls", "inproc", "ucx", "ws", "wss"):
        raise ClusterError(
            f"{address} is not a Dask scheduler address: use tcp://host:port "
            "(e.g. tcp://host:8786, as the scheduler prints it)"
        )
    host = rest.rsplit(":", 1)[0].strip("[]") if ":" in rest else rest
    if scheme in ("", "tcp", "tls") and host:
        try:
            socket.getaddrinfo(host, None)
        except OSError as exc:
            raise ClusterError(
                f"cannot resolve the host {host!r} of the Dask scheduler address {address} "
                f"({exc.strerror or exc})"
            ) from exc


def reachable(address: str, timeout: float = CONNECT_TIMEOUT) -> str:
    """Why the scheduler at ``address`` cannot be reached over TCP ("" if it can): what
    ``fminspect worker`` checks before starting Dask (whose worker waits, then fails with a
    long traceback)."""
    import socket

    try:
        _check_address(address)
    except ClusterError as exc:
        return str(exc)
    rest = address.rpartition("://")[2]
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        return ""  # not host:port (another transport): left to Dask
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return ""
    except OSError as exc:
        return (
            f"cannot reach the Dask scheduler at {address} ({exc.strerror or exc}); is it "
            "running, and is the address right (e.g. tcp://host:8786)?"
        )


def connect(
    scheduler: Any,
    *,
    connect_timeout: float = CONNECT_TIMEOUT,
    worker_timeout: float = WORKER_TIMEOUT,
    allow_mismatch: bool = False,
    on_message: OnMessage | None = None,
) -> Cluster:
    """Connect to ``scheduler`` (an address such as ``tcp://host:8786``, or a Dask
    ``Client``), wait for a worker and check every worker (see the module notes).

    Raises :class:`ClusterError` with the whole message (unreachable scheduler, no worker,
    a refused worker) — never a Dask traceback."""
    if isinstance(scheduler, Cluster):
        return scheduler
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ClusterError(
            "--scheduler needs Dask distributed: pip install 'fminspect[cluster]'"
        ) from exc
    if hasattr(scheduler, "submit"):
        client, own = scheduler, False
        address = str(getattr(client.scheduler, "address", client))
    else:
        address = str(scheduler)
        _check_address(address)
        with _quiet_dask():
            try:
                client = Client(address, timeout=connect_timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ClusterError(
                    f"cannot reach the Dask scheduler at {address} within "
                    f"{connect_timeout:g} s ({_short(exc)}); is it running, and is the "
                    "address right (e.g. tcp://host:8786)?"
                ) from exc
        own = True
    cluster = Cluster(
        client,
        address,
        worker_timeout=worker_timeout,
        allow_mismatch=allow_mismatch,
        on_message=on_message,
        own=own,
    )
    try:
        with _quiet_dask():
            cluster.wait_for_workers()
            cluster.check_workers()
    except BaseException:
        cluster.close()
        raise
    return cluster


# ---------------------------------------------------------------------------- workers
def worker_command(
    address: str, *, nworkers: int = 1, name: str | None = None, extra: Sequence[str] = ()
) -> list[str]:
    """The command starting Dask workers for fminspect with this Python (so with this
    fminspect): one thread per worker process (a unit is CPU-bound Python, parallel across
    processes), no dashboard, and ``-P`` so that a folder called ``fminspect`` in the
    current folder is never imported instead of the installed package."""
    import sys

    cmd = [sys.executable, "-P", "-m", "distributed.cli.dask_worker", address]
    cmd += ["--nthreads", "1", "--nworkers", str(max(1, nworkers)), "--no-dashboard"]
    if name:
        cmd += ["--name", name]
    return cmd + list(extra)


def unreadable_folders(folders: Sequence[Path]) -> list[str]:
    """Why each of ``folders`` is unusable here: it cannot be listed, or it is empty (an
    unmounted share often is). Empty list: all fine."""
    out = []
    for folder in folders:
        path = Path(folder).resolve()
        try:
            empty = next(iter(path.iterdir()), None) is None
        except OSError as exc:
            out.append(f"cannot read {path} ({exc.strerror or type(exc).__name__})")
            continue
        if empty:
            out.append(f"{path} is an empty folder")
    return out
