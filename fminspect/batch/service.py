"""A scoring service: :func:`~fminspect.batch.stream.stream_evaluation` in its own process.

The window starts it once (``python -c …`` calling :func:`main`) and sends it requests; it
plans, reads the store, runs the work units on its own worker processes and collects the
dataset values, and sends the events back. So none of that work competes with the window
for its Python interpreter: the window only draws. The service and its workers run at a
lower priority (``nice``) than the window, which scores the sample the user looks at.

Protocol: length-prefixed pickles over the service's stdin and stdout (a private pipe
between two fminspect processes of the same installation).

* window → service: ``("start", generation, dataset, config, store_path)`` (the dataset
  as :class:`DatasetPieces`, or whole),
  ``("stop", generation)``, ``("task", task, kind, args, kwargs)``, ``("task-stop", task)``,
  ``("quit",)``;
* service → window: ``(generation, "event", event)``, ``(generation, "failed", message)``,
  ``(generation, "finished", None)``; for a task, ``(task, "task-progress", text)``, then
  ``(task, "task-result", value)`` or ``(task, "task-failed", message)``.

A ``start`` stops the request under way (its units in hand finish and are stored); a
``stop`` that arrives while its request waits its turn means it is never begun. A task
(:mod:`fminspect.batch.tasks`: statistics, compare) runs on a thread of its own, one at a
time, beside the scoring; a newer task stops the one under way. No Qt.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import os
import pickle
import queue
import sqlite3
import struct
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from fminspect.io.discovery import Dataset

_HEADER = struct.Struct("<Q")

#: Samples pickled per piece by :func:`in_pieces`.
PIECE = 25


@dataclass(frozen=True, slots=True)
class DatasetPieces:
    """A dataset pickled a few samples at a time (:func:`in_pieces`, :func:`whole`).

    Pickling a dataset of 1,000 images × 20 methods in one call held the interpreter lock
    for 50–80 ms: the window's writing thread did it while the window painted the list of
    samples just opened, and the paint (which calls Python) waited for it. In pieces, the
    lock changes hands between them."""

    head: bytes  # the dataset without its samples
    pieces: tuple[bytes, ...]


def in_pieces(dataset: Dataset) -> DatasetPieces:
    """``dataset`` pickled :data:`PIECE` samples at a time."""
    samples = dataset.samples
    return DatasetPieces(
        pickle.dumps(dataclasses.replace(dataset, samples=[]), protocol=pickle.HIGHEST_PROTOCOL),
        tuple(
            pickle.dumps(samples[i : i + PIECE], protocol=pickle.HIGHEST_PROTOCOL)
            for i in range(0, len(samples), PIECE)
        ),
    )


def whole(pieces: DatasetPieces) -> Dataset:
    """The dataset :func:`in_pieces` pickled."""
    dataset: Dataset = pickle.loads(pieces.head)
    dataset.samples = [s for piece in pieces.pieces for s in pickle.loads(piece)]
    return dataset


def write_message(stream: IO[bytes], message: Any) -> None:
    """Send one message."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_message(stream: IO[bytes]) -> Any:
    """Receive one message (None at the end of the stream)."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    size = _HEADER.unpack(header)[0]
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def command(jobs: int, nice: int) -> list[str]:
    """The command line that starts the service with this installation of fminspect,
    whatever the working folder holds (a folder named ``fminspect`` there is not imported
    instead)."""
    import fminspect

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(fminspect.__file__)))
    code = (
        "import sys; "
        f"sys.path[:] = [{package_parent!r}] + [p for p in sys.path if p not in ('', '.')]; "
        "from fminspect.batch.service import main; "
        f"main(['--jobs', '{jobs}', '--nice', '{nice}'])"
    )
    return [sys.executable, "-c", code]


def _latest(waiting: queue.Queue[Any]) -> Any:
    """The next message, or the newest of those waiting: only the latest request counts."""
    message = waiting.get()
    while message is not None and not waiting.empty():
        message = waiting.get()
    return message


def _bug(exc: Exception) -> str:
    """An unexpected error's trace on stderr (for a report) and its one-line message."""
    traceback.print_exc()
    return f"{type(exc).__name__}: {exc}"


def main(argv: list[str] | None = None) -> None:
    """Serve requests from stdin until ``quit`` or its end (the service process)."""
    ap = argparse.ArgumentParser(prog="fminspect-scoring-service")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--nice", type=int, default=0)
    args = ap.parse_args(argv)
    if args.nice:
        with contextlib.suppress(AttributeError, OSError):
            os.nice(args.nice)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the protocol
    serve(sys.stdin.buffer, out, args.jobs)


def serve(commands: IO[bytes], out: IO[bytes], jobs: int = 1) -> None:
    """Serve the requests read from ``commands`` until ``quit`` or its end, writing the
    events to ``out``: in the service process (:func:`main`), or on a thread of the caller's
    (:class:`fminspect.inspector.scoring.ScoringService` with ``in_process``)."""
    _Service(commands, out, jobs).run()


class _Service:
    """The service's three threads: commands read (``read_commands``), jobs run
    (``run_tasks``), and scoring requests served, the latest first (``run``)."""

    def __init__(self, commands: IO[bytes], out: IO[bytes], jobs: int) -> None:
        from fminspect.batch.pool import LocalPool

        self.commands, self.out, self.jobs = commands, out, jobs
        self.lock = threading.Lock()
        self.requests: queue.Queue[Any] = queue.Queue()
        self.generation: int | None = None  # the scoring request under way, and its stop
        self.stop = threading.Event()
        #: the newest request the window stopped: one stopped before it was taken up (its
        #: stop came while it waited its turn) is never begun
        self.stopped = 0
        self.tasks: queue.Queue[Any] = queue.Queue()
        self.task: int | None = None  # the job under way, and its stop
        self.task_stop = threading.Event()
        self.pool: LocalPool | None = None
        self.pool_lock = threading.Lock()

    def send(self, message: Any) -> None:
        with self.lock:
            try:
                write_message(self.out, message)
            except (BrokenPipeError, ValueError):  # the window is gone: stop quietly
                self.stop.set()
                self.requests.put(None)

    def workers(self) -> Any:
        """The worker processes, shared by the scoring and the jobs (made when first
        needed; none with one job)."""
        from fminspect.batch.pool import LocalPool

        with self.pool_lock:
            if self.pool is None and self.jobs > 1:
                self.pool = LocalPool(self.jobs, preload=True)
            return self.pool

    def read_commands(self) -> None:
        while True:
            message = read_message(self.commands)
            if message is None or message[0] == "quit":
                self.stop.set()
                self.task_stop.set()
                self.requests.put(None)
                self.tasks.put(None)
                return
            kind = message[0]
            if kind == "start":
                self.stop.set()  # a newer request replaces the one under way
                self.requests.put(message)
            elif kind == "stop":
                self.stopped = max(self.stopped, message[1])
                if message[1] == self.generation:
                    self.stop.set()
            elif kind == "task":
                self.task_stop.set()  # a newer task replaces the one under way
                stop = threading.Event()  # made here: a stop sent at once is not lost
                self.task, self.task_stop = message[1], stop
                self.tasks.put((message, stop))
            elif kind == "task-stop" and message[1] == self.task:
                self.task_stop.set()

    def run_tasks(self) -> None:
        while True:
            queued = _latest(self.tasks)
            if queued is None:
                return
            (_, task, kind, args, kwargs), stop = queued
            if kind == "compare":  # it scores on the service's workers
                kwargs = {**kwargs, "jobs": self.jobs, "pool": self.workers()}
            self._run_task(task, kind, args, kwargs, stop)

    def _run_task(
        self, task: int, kind: str, args: Any, kwargs: dict[str, Any], stop: threading.Event
    ) -> None:
        from fminspect.batch.tasks import TaskStopped, run_task

        def report(text: str) -> None:
            self.send((task, "task-progress", text))

        try:
            value = run_task(kind, args, kwargs, report=report, stop=stop)
        except TaskStopped:
            self.send((task, "task-failed", "stopped"))
        except (OSError, ValueError, sqlite3.DatabaseError) as exc:  # said to the user
            self.send((task, "task-failed", str(exc)))
        except Exception as exc:  # a bug: the window shows it; the trace is for a report
            self.send((task, "task-failed", _bug(exc)))
        else:
            try:
                self.send((task, "task-result", value))
            except Exception as exc:  # e.g. a result that cannot be pickled: said
                self.send((task, "task-failed", _bug(exc)))

    def run(self) -> None:
        threading.Thread(target=self.read_commands, daemon=True).start()
        threading.Thread(target=self.run_tasks, daemon=True).start()
        # imported now, while the window waits for nothing (warm_up): imported at the first
        # request, they delayed its first scores by 0.6–1.2 s
        import fminspect.batch.scores
        import fminspect.batch.stream
        import fminspect.pipeline.store  # noqa: F401

        try:
            while True:
                request = _latest(self.requests)
                if request is None:
                    return
                self.serve(request)
        finally:
            if self.pool is not None:
                self.pool.close()

    def serve(self, request: Any) -> None:
        """Score one ``start`` request, unless it was stopped while it waited; then say it
        is finished."""
        _, generation, dataset, config, store_path = request
        self.generation, self.stop = generation, threading.Event()
        if generation <= self.stopped:  # the window stopped it before it was taken up
            self.send((generation, "finished", None))
            return
        if isinstance(dataset, DatasetPieces):
            dataset = whole(dataset)
        self._score(generation, dataset, config, store_path, self.stop)
        self.send((generation, "finished", None))
        # what the evaluation's reading left frozen (quiet_collector) is collected
        gc.unfreeze()

    def _score(
        self, generation: int, dataset: Dataset, config: Any, store_path: str, stop: threading.Event
    ) -> None:
        from fminspect.batch.scores import score_matrix
        from fminspect.batch.stream import stream_evaluation
        from fminspect.pipeline.store import is_damaged, set_aside

        try:
            matrix = score_matrix(dataset, config)
            for event in stream_evaluation(
                dataset, matrix, config, store_path, jobs=self.jobs, pool=self.workers, stop=stop
            ):
                self.send((generation, "event", event))
        except OSError as exc:  # a store or file that cannot be used: the window says so
            self.send((generation, "failed", str(exc)))
        except sqlite3.DatabaseError as exc:  # locked for 30 s, full disk, damaged
            note = str(exc)
            if is_damaged(exc):  # found after it opened: moved aside, so that opening
                note = set_aside(Path(store_path), exc)  # the dataset again starts anew
            self.send((generation, "failed", f"{store_path}: {note}; open the dataset again"))
        except Exception as exc:  # a bug: the window shows it; the trace is for a report
            self.send((generation, "failed", _bug(exc)))
