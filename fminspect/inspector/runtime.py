"""Where the inspector model's work runs, and when its timers fire.

The model never starts a thread or a timer itself: it asks a :class:`Runtime`. The window
gives it Qt's (``fminspect.gui.controller.QtRuntime``: the thread pool, ``QTimer``, queued
calls to the GUI thread). Tests and scripts give it a :class:`ManualRuntime`, which runs
jobs and fires timers only when asked — on the caller's thread, in a fixed order, on a
clock of its own — so that what the model does can be checked step by step, whatever the
machine's load.
"""

from __future__ import annotations

import collections
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


class Timer(Protocol):
    """A restartable single-shot timer."""

    def start(self, ms: int | None = None) -> None:
        """(Re)start it: ``callback`` runs after ``ms`` (its interval when None)."""

    def stop(self) -> None:
        """Do not run it (if started)."""

    def is_active(self) -> bool:
        """Started and not yet run."""


class Runtime(Protocol):
    """What the model needs to run work off its thread and later."""

    def submit(
        self,
        func: Callable[[], Any],
        done: Callable[[Any], None],
        failed: Callable[[str], None] | None = None,
        *,
        priority: int = 0,
        own_thread: bool = False,
    ) -> Any:
        """Run ``func()`` in the background (on a new thread of its own with
        ``own_thread``, else on the pool, higher ``priority`` first); then, on the model's
        thread, ``done(result)`` or ``failed(one-line message)``. Returns a job handle."""

    def cancel(self, job: Any) -> bool:
        """Take a job that has not started off the queue (its callbacks never run)."""

    def timer(self, ms: int, callback: Callable[[], None]) -> Timer:
        """A single-shot timer of interval ``ms`` running ``callback`` on the model's thread."""

    def call_later(self, ms: int, callback: Callable[[], object]) -> None:
        """Run ``callback`` once, ``ms`` from now (0: in the next turn), on the model's thread."""

    def post(self, callback: Callable[[], None]) -> None:
        """From any thread: run ``callback`` on the model's thread."""

    def wait_until(self, condition: Callable[[], bool], timeout_ms: int) -> bool:
        """Run what is due (on this thread) until ``condition()`` holds; False after
        ``timeout_ms`` without it (for scripts and tests; never in the window's own code)."""


def failure_message(exc: BaseException) -> str:
    """The one line a failed job reports."""
    return f"{type(exc).__name__}: {exc}"


# ---------------------------------------------------------------------------- manual
@dataclass(order=True)
class _Job:
    rank: tuple[int, int]  # (−priority, sequence): the highest priority first, then FIFO
    func: Callable[[], Any] = field(compare=False)
    done: Callable[[Any], None] = field(compare=False)
    failed: Callable[[str], None] | None = field(compare=False)


class _ManualTimer:
    def __init__(self, runtime: ManualRuntime, ms: int, callback: Callable[[], object]) -> None:
        self._runtime, self.interval, self.callback = runtime, ms, callback
        self.due: float | None = None
        self.seq = 0

    def start(self, ms: int | None = None) -> None:
        if ms is not None:
            self.interval = ms
        self.due = self._runtime.now_ms + self.interval
        self.seq = self._runtime._next()
        self._runtime._timers.add(self)

    def stop(self) -> None:
        self.due = None
        self._runtime._timers.discard(self)

    def is_active(self) -> bool:
        return self.due is not None


class ManualRuntime:
    """A :class:`Runtime` that runs jobs and timers only when asked, on the calling thread.

    * :meth:`run_jobs` runs the queued jobs (the highest priority first, then in the order
      they were submitted) and their callbacks;
    * :meth:`advance` moves its clock on, firing the timers that fall due, in order;
    * :meth:`settle` does both until nothing is left to do: what the window's event loop
      and thread pool would do, one step at a time;
    * callbacks :meth:`post`-ed from other threads (the scoring service's reader) run in
      :meth:`settle` and :meth:`wait_until`, which waits for them.
    """

    def __init__(self) -> None:
        self.now_ms = 0.0
        self._seq = 0
        self._jobs: list[_Job] = []
        self._timers: set[_ManualTimer] = set()
        self._posted: collections.deque[Callable[[], None]] = collections.deque()
        self._arrived = threading.Condition()
        self.ran: list[Callable[[], Any]] = []  # every job's function, in the order run

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    # ------------------------------------------------------------------ Runtime
    def submit(
        self,
        func: Callable[[], Any],
        done: Callable[[Any], None],
        failed: Callable[[str], None] | None = None,
        *,
        priority: int = 0,
        own_thread: bool = False,
    ) -> _Job:
        job = _Job((-priority, self._next()), func, done, failed)
        self._jobs.append(job)
        return job

    def cancel(self, job: Any) -> bool:
        if job in self._jobs:
            self._jobs.remove(job)
            return True
        return False

    def timer(self, ms: int, callback: Callable[[], object]) -> _ManualTimer:
        return _ManualTimer(self, ms, callback)

    def call_later(self, ms: int, callback: Callable[[], object]) -> None:
        self.timer(ms, callback).start()

    def post(self, callback: Callable[[], None]) -> None:
        with self._arrived:
            self._posted.append(callback)
            self._arrived.notify_all()

    def wait_until(self, condition: Callable[[], bool], timeout_ms: int) -> bool:
        deadline = time.monotonic() + timeout_ms / 1000
        while not condition():
            if self.step():
                continue
            if self._timers:  # nothing else to do: on to the next timer
                self.advance(min(t.due for t in self._timers if t.due is not None) - self.now_ms)
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with self._arrived:  # only another thread can change anything now
                if not self._posted:
                    self._arrived.wait(min(left, 0.5))
        return True

    # ------------------------------------------------------------------ driving
    @property
    def pending_jobs(self) -> int:
        """Jobs queued and not run."""
        return len(self._jobs)

    def run_posted(self) -> int:
        """Run the callbacks posted so far; how many."""
        n = 0
        while True:
            with self._arrived:
                if not self._posted:
                    return n
                callback = self._posted.popleft()
            callback()
            n += 1

    @property
    def queued(self) -> list[Any]:
        """The jobs queued, in the order they would run."""
        return sorted(self._jobs)

    def begin(self, job: Any) -> None:
        """Take ``job`` off the queue as a pool thread would when it starts it: it can no
        longer be cancelled, and runs when :meth:`finish` says."""
        self._jobs.remove(job)

    def finish(self, job: Any) -> None:
        """Run a job (queued, or begun) and its callback now."""
        if job in self._jobs:
            self._jobs.remove(job)
        self.ran.append(job.func)
        try:
            result = job.func()
        except Exception as exc:
            traceback.print_exc()
            if job.failed is not None:
                job.failed(failure_message(exc))
        else:
            job.done(result)

    def run_jobs(self, limit: int | None = None) -> int:
        """Run queued jobs (``limit`` at most), each followed by its callback; how many."""
        n = 0
        while self._jobs and (limit is None or n < limit):
            self.finish(min(self._jobs))
            n += 1
        return n

    def fire_due(self) -> int:
        """Run the timers due now (in the order they fall due); how many."""
        n = 0
        while True:
            due = [t for t in self._timers if t.due is not None and t.due <= self.now_ms]
            if not due:
                return n
            timer = min(due, key=lambda t: (t.due, t.seq))
            timer.stop()
            timer.callback()
            n += 1

    def advance(self, ms: float) -> None:
        """Move the clock on by ``ms``, firing the timers that fall due on the way."""
        end = self.now_ms + ms
        while True:
            due = [t for t in self._timers if t.due is not None and t.due <= end]
            if not due:
                break
            timer = min(due, key=lambda t: (t.due, t.seq))
            self.now_ms = max(self.now_ms, float(timer.due))  # type: ignore[arg-type]
            timer.stop()
            timer.callback()
        self.now_ms = end

    def step(self) -> bool:
        """One round of what is due now: posted callbacks, then jobs, then timers due;
        True if anything ran."""
        return bool(self.run_posted() + self.run_jobs() + self.fire_due())

    def settle(self, *, timers: bool = True, max_rounds: int = 100_000) -> None:
        """Run everything until nothing is left: jobs, posted callbacks and (with
        ``timers``) every timer, moving the clock on to each in turn."""
        for _ in range(max_rounds):
            if self.step():
                continue
            if timers and self._timers:
                self.advance(min(t.due for t in self._timers if t.due is not None) - self.now_ms)
                continue
            return
        raise RuntimeError(f"still busy after {max_rounds} rounds (a timer restarting itself?)")
