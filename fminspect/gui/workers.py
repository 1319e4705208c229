"""Background work for the GUI: scoring models, preparing GTs, scoring whole datasets.

Every job runs on Qt's global thread pool and reports through a ``JobSignals`` object whose
signals are delivered on the GUI thread (queued connections). Each job carries the
generation number of the request that created it, so the controller can drop stale results.
The window can keep jobs from starting while it draws a newly shown sample
(:func:`hold_jobs`).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6 import QtCore

from fminspect._runtime import background_niceness


class JobSignals(QtCore.QObject):
    """Signals of one background job.

    Signals
    -------
    done(object)
        The job's return value.
    failed(str)
        A one-line description of the exception.
    """

    done = QtCore.Signal(object)
    failed = QtCore.Signal(str)


class FunctionWorker(QtCore.QRunnable):
    """Run ``func()`` on the thread pool; emit its result or its error."""

    def __init__(self, func: Callable[[], Any]) -> None:
        super().__init__()
        self.func: Callable[[], Any] | None = func
        self.signals: JobSignals | None = JobSignals()

    def run(self) -> None:
        _yield_to_the_gui()
        _wait_for_the_gui()
        # what the job holds (a sample read from disk, its GT) is let go once it has run
        func, self.func = self.func, None
        signals = self.signals
        if func is None or signals is None:
            return
        try:
            result = func()
        except Exception as exc:
            traceback.print_exc()
            self._emit(signals.failed, f"{type(exc).__name__}: {exc}")
            return
        self._emit(signals.done, result)

    @staticmethod
    def _emit(signal: QtCore.SignalInstance, value: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the application is shutting down
            signal.emit(value)


#: The niceness given to the pool's threads (Linux: per thread), so that the GUI thread is
#: scheduled first when both want a core.
WORKER_NICENESS = 5
_niced: set[int] = set()


def _yield_to_the_gui() -> None:
    """Lower the calling pool thread's scheduling priority, once per thread (Linux; a no-op
    elsewhere). The background jobs score maps on every core while the GUI thread draws; at
    the same priority the GUI thread waited for a core, and for the interpreter lock held by
    jobs that had one, in the middle of a repaint."""
    tid = threading.get_native_id()
    niceness = background_niceness(WORKER_NICENESS)
    if tid in _niced or not niceness or not hasattr(os, "setpriority"):
        return
    _niced.add(tid)
    with contextlib.suppress(OSError):
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, max(current, niceness))


#: The longest a :func:`hold_jobs` keeps jobs from starting, whether or not it is released.
HOLD_LIMIT_S = 0.3
_released = threading.Event()
_released.set()
_held_until = 0.0  # (time.monotonic) when the hold under way lapses


def hold_jobs(limit: float | None = None) -> None:
    """Keep jobs from starting until :func:`release_jobs`, or for ``limit`` seconds at most
    (:data:`HOLD_LIMIT_S` by default); on the GUI thread. Jobs under way go on.

    A newly shown sample is drawn over several event-loop turns (the grid's panels, then
    the table and the curves emptied for it); jobs scoring it meanwhile held Python's
    interpreter lock in turn with the GUI thread, whose turns then took two to three times
    as long. The window holds the jobs while it draws a sample, so that its models are
    scored once the sample is on screen."""
    global _held_until
    _held_until = time.monotonic() + (HOLD_LIMIT_S if limit is None else limit)
    _released.clear()


def release_jobs() -> None:
    """Let held jobs start (GUI thread)."""
    _released.set()


def _wait_for_the_gui() -> None:
    """On a pool thread: wait while a :func:`hold_jobs` is under way."""
    remaining = _held_until - time.monotonic()
    if remaining > 0:
        _released.wait(remaining)


#: Workers in flight. Python must keep each worker (and its signals object) alive until its
#: result has been delivered, or the queued signal is lost with the garbage-collected QObject.
#: The pool deletes a worker's C++ side once it has run (Qt's ``autoDelete``); that is also
#: what lets PySide drop the reference it takes when the pool is given the worker. Kept with
#: ``autoDelete`` off, every worker and its signals object stayed in memory for good: ~13 a
#: sample shown, +34 MB of the window's memory in use over 500 samples.
_ACTIVE: set[FunctionWorker] = set()


def submit(
    func: Callable[[], Any],
    on_done: Callable[[Any], None],
    on_failed: Callable[[str], None] | None = None,
    *,
    priority: int = 0,
    owner: QtCore.QObject | None = None,
) -> FunctionWorker:
    """Run ``func`` on the global pool; call ``on_done(result)`` on the GUI thread. Queued
    jobs of a higher ``priority`` start first. With ``owner`` (the window or object the
    callbacks belong to), nothing is called once it has been deleted: a window closed while
    its job ran."""
    worker = FunctionWorker(func)
    _ACTIVE.add(worker)

    def finished(callback: Callable[[Any], None] | None) -> Callable[[Any], None]:
        def deliver(value: Any) -> None:
            _release(worker)
            if callback is not None and (owner is None or shiboken6.isValid(owner)):
                callback(value)

        return deliver

    signals = worker.signals
    assert signals is not None  # (a new worker's)
    signals.done.connect(finished(on_done), QtCore.Qt.ConnectionType.QueuedConnection)
    signals.failed.connect(finished(on_failed), QtCore.Qt.ConnectionType.QueuedConnection)
    QtCore.QThreadPool.globalInstance().start(worker, priority)
    return worker


def cancel(worker: FunctionWorker) -> bool:
    """Take a job that has not started off the queue (its callbacks are never called);
    False if it is running or done."""
    if not shiboken6.isValid(worker):
        return False  # it has run, and the pool has deleted it
    with contextlib.suppress(RuntimeError):  # (deleted meanwhile, on the pool's thread)
        if QtCore.QThreadPool.globalInstance().tryTake(worker):
            _release(worker)
            shiboken6.delete(worker)  # taken back from the pool, it is ours to delete
            return True
    return False


def _release(worker: FunctionWorker) -> None:
    """Let a worker whose result was delivered (or that was taken off the queue) go. Its
    signals hold the delivering functions, which hold the worker: a cycle through Qt's
    connections that Python's collector cannot see, so each job kept its function and what
    that held (the sample it scored, with its GT's memos: ~12 MB a step at 400×550 and 12
    models, without end) until the signals' connections are dropped."""
    _ACTIVE.discard(worker)
    worker.func = None
    # and its signals object: now, on the thread it belongs to. A worker can outlive its
    # runnable: PySide kept one reference to a worker the pool had deleted in ~1 run of 12
    # of tests/gui/test_memory.py (6.11.3); emptied, it holds nothing
    signals, worker.signals = worker.signals, None
    if signals is None:
        return
    with contextlib.suppress(RuntimeError, TypeError):  # (already dropped)
        signals.done.disconnect()
        signals.failed.disconnect()
