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

A ``start`` stops the request under way (its units in hand finish and are stored). A task
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
    lock = threading.Lock()
    requests: queue.Queue[Any] = queue.Queue()
    current: dict[str, Any] = {"generation": None, "stop": threading.Event()}

    def send(message: Any) -> None:
        with lock:
            try:
                write_message(out, message)
            except (BrokenPipeError, ValueError):  # the window is gone: stop quietly
                current["stop"].set()
                requests.put(None)

    def read_commands() -> None:
        while True:
            message = read_message(commands)
            if message is None or message[0] == "quit":
                current["stop"].set()
                task_state["stop"].set()
                requests.put(None)
                tasks.put(None)
                return
            if message[0] == "start":
                current["stop"].set()  # a newer request replaces the one under way
                requests.put(message)
            elif message[0] == "stop" and message[1] == current["generation"]:
                current["stop"].set()
            elif message[0] == "task":
                task_state["stop"].set()  # a newer task replaces the one under way
                stop = threading.Event()  # made here: a stop sent at once is not lost
                task_state["task"], task_state["stop"] = message[1], stop
                tasks.put((message, stop))
            elif message[0] == "task-stop" and message[1] == task_state["task"]:
                task_state["stop"].set()

    tasks: queue.Queue[Any] = queue.Queue()
    task_state: dict[str, Any] = {"task": None, "stop": threading.Event()}

    def run_tasks() -> None:
        from fminspect.batch.tasks import TaskStopped, run_task

        while True:
            queued = _latest(tasks)
            if queued is None:
                return
            (_, task, kind, task_args, task_kwargs), stop = queued
            if kind == "compare":  # it scores on the service's workers
                task_kwargs = {**task_kwargs, "jobs": jobs, "pool": workers()}

            def report(text: str, task: int = task) -> None:
                send((task, "task-progress", text))

            try:
                value = run_task(kind, task_args, task_kwargs, report=report, stop=stop)
            except TaskStopped:
                send((task, "task-failed", "stopped"))
            except (OSError, ValueError, sqlite3.DatabaseError) as exc:  # said to the user
                send((task, "task-failed", str(exc)))
            except Exception as exc:  # a bug: the window shows it; the trace is for a report
                send((task, "task-failed", _bug(exc)))
            else:
                try:
                    send((task, "task-result", value))
                except Exception as exc:  # e.g. a result that cannot be pickled: said
                    send((task, "task-failed", _bug(exc)))

    from fminspect.batch.pool import LocalPool

    pool: LocalPool | None = None
    pool_lock = threading.Lock()

    def workers() -> LocalPool | None:  # shared by the scoring and the tasks
        nonlocal pool
        with pool_lock:
            if pool is None and jobs > 1:
                pool = LocalPool(jobs, preload=True)
            return pool

    threading.Thread(target=read_commands, daemon=True).start()
    threading.Thread(target=run_tasks, daemon=True).start()
    from fminspect.batch.scores import score_matrix
    from fminspect.batch.stream import stream_evaluation
    from fminspect.pipeline.store import is_damaged, set_aside

    try:
        while True:
            request = _latest(requests)
            if request is None:
                return
            _, generation, dataset, config, store_path = request
            if isinstance(dataset, DatasetPieces):
                dataset = whole(dataset)
            stop = threading.Event()
            current["generation"], current["stop"] = generation, stop
            try:
                matrix = score_matrix(dataset, config)
                for event in stream_evaluation(
                    dataset, matrix, config, store_path, jobs=jobs, pool=workers, stop=stop
                ):
                    send((generation, "event", event))
            except OSError as exc:  # a store or file that cannot be used: the window says so
                send((generation, "failed", str(exc)))
            except sqlite3.DatabaseError as exc:  # locked for 30 s, full disk, damaged
                note = str(exc)
                if is_damaged(exc):  # found after it opened: moved aside, so that opening
                    note = set_aside(Path(store_path), exc)  # the dataset again starts anew
                send((generation, "failed", f"{store_path}: {note}; open the dataset again"))
            except Exception as exc:  # a bug: the window shows it; the trace is for a report
                send((generation, "failed", _bug(exc)))
            send((generation, "finished", None))
            # what the evaluation's reading left frozen (quiet_collector) is collected again
            gc.unfreeze()
    finally:
        if pool is not None:
            pool.close()
