"""The inspector's background evaluation of the open dataset, in a scoring service process.

The service (:mod:`fminspect.batch.service`) plans, reads the store, scores on its worker
processes (the same pool ``fminspect eval --jobs`` uses) and collects the dataset values,
at a lower priority than the window; the model only receives its events — scores as
compact arrays — on its own thread (through the runtime), and the window draws. A newer
request (another dataset, new parameters) makes the events of the older one be dropped.
The service is started on the first request and kept until the window closes.

The service also runs the dataset view's jobs (:mod:`fminspect.batch.tasks`: bootstrap
statistics, ``compare``) beside the scoring: :meth:`ScoringService.run_task`; a newer job
replaces the one under way.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from fminspect._runtime import background_niceness
from fminspect.batch.scores import ScoreMatrix, score_matrix
from fminspect.batch.service import (
    DatasetPieces,
    command,
    in_pieces,
    read_message,
    serve,
    write_message,
)
from fminspect.inspector.events import Event
from fminspect.inspector.runtime import Runtime
from fminspect.io.discovery import Dataset
from fminspect.pipeline.config import EvalConfig

#: Priority of the scoring service and its workers below the window's own.
SERVICE_NICE = 10


class ScoringService:
    """Scores a whole dataset in the background, into a :class:`ScoreMatrix`.

    Events (on the model's thread)
    ------------------------------
    news(object)
        An event of :mod:`fminspect.batch.stream` of the current request; a ``Scores``
        event's block is already in the matrix when it is emitted.
    failed(str)
        The current request stopped on an error (its message).
    finished()
        The current request is over (complete, stopped or failed).
    task_progress(int, str), task_done(int, object), task_failed(int, str)
        A line of progress, the result, or why it failed (``"stopped"`` when stopped), of
        the job :meth:`run_task` numbered; only the latest job's are emitted.
    """

    def __init__(self, runtime: Runtime, jobs: int | None = None, in_process: bool = False) -> None:
        self.runtime = runtime
        #: the service runs on a thread of this process (same requests and events, through
        #: pipes): for tests and scripts; the window gives it a process of its own
        self.in_process = in_process
        self.news = Event("news")
        self.failed = Event("failed")
        self.finished = Event("finished")
        self.task_progress = Event("task_progress")
        self.task_done = Event("task_done")
        self.task_failed = Event("task_failed")
        self._closed = False
        self.jobs = jobs or max(1, min(os.cpu_count() or 1, 8))
        self.generation = 0
        self.task = 0  # the latest job's number
        self.task_running = False
        self.running = False
        self.matrix: ScoreMatrix | None = None
        self._process: subprocess.Popen[bytes] | _ServiceThread | None = None
        self._lock = threading.Lock()
        # requests are pickled and written by a thread (a dataset of 20,000 files takes
        # ~0.15 s to pickle), in the order they were made
        self._outbox: queue.Queue[Any] = queue.Queue()
        threading.Thread(target=self._write, name="fminspect-scorer-out", daemon=True).start()

    def start(
        self,
        dataset: Dataset,
        config: EvalConfig,
        store_path: Path | str,
        pieces: DatasetPieces | None = None,
        matrix: ScoreMatrix | None = None,
    ) -> ScoreMatrix:
        """Score ``dataset`` (what the store has is read, the rest computed); the returned
        matrix fills in as the events arrive. ``pieces``: the dataset already pickled
        (:func:`~fminspect.batch.service.in_pieces`, done on the thread that read it);
        ``matrix``: an empty :func:`score_matrix` of it made there too (used if its measures
        are still those of ``config``)."""
        self.generation += 1
        fresh = score_matrix(dataset, config, matrix)
        self.matrix = fresh
        self.running = True
        self._outbox.put(
            ("start", self.generation, pieces or dataset, config, str(Path(store_path).absolute()))
        )
        return fresh

    def run_task(self, kind: str, *args: Any, **kwargs: Any) -> int:
        """Run the job ``kind`` of :mod:`fminspect.batch.tasks` with these arguments in the
        service; its number (the signals say which job they concern)."""
        self.task += 1
        self.task_running = True
        self._outbox.put(("task", self.task, kind, args, kwargs))
        return self.task

    def stop_task(self) -> None:
        """Stop the latest job (it says ``"stopped"`` through :attr:`task_failed`)."""
        if self._process is not None:
            self._outbox.put(("task-stop", self.task))

    def warm_up(self) -> None:
        """Start the service now (it takes about a second to import what it needs), so that
        the first dataset opened is read at once."""
        with self._lock, contextlib.suppress(OSError):
            self._service()

    def _service(self) -> subprocess.Popen[bytes] | _ServiceThread:
        if self._process is None or self._process.poll() is not None:
            if self._process is not None and self._process.stdin is not None:
                self._process.stdin.close()
            self._process = (
                _ServiceThread(self.jobs)
                if self.in_process
                else subprocess.Popen(
                    command(self.jobs, background_niceness(SERVICE_NICE)),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )
            )
            threading.Thread(
                target=self._read, args=(self._process,), name="fminspect-scorer", daemon=True
            ).start()
        return self._process

    def _write(self) -> None:
        while True:
            message = self._outbox.get()
            if message is None:
                return
            if message[0] == "start" and isinstance(message[2], Dataset):
                # pickled a piece at a time (see DatasetPieces)
                message = (*message[:2], in_pieces(message[2]), *message[3:])
            self._send(message)

    def _send(self, message: Any) -> None:
        with self._lock:
            try:
                process = self._service()
                assert process.stdin is not None
                write_message(process.stdin, message)
            except OSError as exc:  # the service died: say so, a later request restarts it
                if message[0] == "task":
                    self._relay((message[1], "task-failed", f"scoring service: {exc}"))
                    return
                self._relay((self.generation, "failed", f"scoring service: {exc}"))
                self._relay((self.generation, "finished", None))

    def _read(self, process: subprocess.Popen[bytes] | _ServiceThread) -> None:
        assert process.stdout is not None
        while True:
            message = read_message(process.stdout)
            if message is None:
                break
            self._relay(message)
        process.stdout.close()
        if process is self._process:  # ended without being asked: report it
            code = process.wait()
            why = f"the scoring process stopped (exit code {code})"
            self._relay((self.generation, "failed", why))
            self._relay((self.generation, "finished", None))
            if self.task_running:
                self._relay((self.task, "task-failed", why))

    def _relay(self, message: Any) -> None:
        """From a thread: hand ``message`` to the model's thread (dropped once closed)."""
        self.runtime.post(lambda: None if self._closed else self._on_relay(message))

    def _on_relay(self, message: Any) -> None:
        generation, kind, payload = message
        if kind.startswith("task-"):
            if generation == self.task:  # (a job's number) only the latest job's
                if kind != "task-progress":
                    if not self.task_running:
                        return  # said already (the service died after answering)
                    self.task_running = False
                signal = {
                    "task-progress": self.task_progress,
                    "task-result": self.task_done,
                    "task-failed": self.task_failed,
                }[kind]
                signal.emit(generation, payload)
            return
        if generation != self.generation:
            return  # an older request's
        if kind == "event":
            block = getattr(payload, "block", None)
            if block is not None and self.matrix is not None:
                self.matrix.put(block)
            self.news.emit(payload)
        elif kind == "failed":
            self.failed.emit(payload)
        elif self.running:
            self.running = False
            self.finished.emit()

    def cancel(self) -> None:
        """Stop the current request (its units under way finish and are stored)."""
        if self.running and self._process is not None:
            self._outbox.put(("stop", self.generation))

    def close(self) -> None:
        """Stop the service and its workers (the window is closing); nothing is reported
        after this."""
        self._closed = True
        self._outbox.put(None)
        with self._lock:  # a request being written is written whole
            process, self._process = self._process, None
        self.running = False
        if process is None:
            return
        with contextlib.suppress(OSError):
            assert process.stdin is not None
            write_message(process.stdin, ("quit",))
            process.stdin.close()
        try:
            process.wait(15)  # the workers finish the units in hand
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class _ServiceThread:
    """The service (:func:`~fminspect.batch.service.serve`) on a thread of this process,
    speaking through two pipes as the process does through its stdin and stdout."""

    def __init__(self, jobs: int) -> None:
        commands_in, commands_out = os.pipe()
        events_in, events_out = os.pipe()
        self.stdin: IO[bytes] | None = os.fdopen(commands_out, "wb")
        self.stdout: IO[bytes] | None = os.fdopen(events_in, "rb")
        commands, out = os.fdopen(commands_in, "rb"), os.fdopen(events_out, "wb")
        self.pid = os.getpid()

        def run() -> None:
            try:
                serve(commands, out, jobs)
            finally:
                out.close()
                commands.close()

        self._thread = threading.Thread(target=run, name="fminspect-service", daemon=True)
        self._thread.start()

    def poll(self) -> int | None:
        return None if self._thread.is_alive() else 0

    def wait(self, timeout: float | None = None) -> int:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise subprocess.TimeoutExpired("fminspect-service", timeout or 0)
        return 0

    def kill(self) -> None:
        """End it: its commands end (it stops at once, as at ``quit``)."""
        if self.stdin is not None:
            with contextlib.suppress(OSError):
                self.stdin.close()
