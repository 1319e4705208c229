"""The Qt side of the inspector model: where its work runs, and where it keeps preferences.

:class:`QtRuntime` gives :class:`~fminspect.inspector.model.InspectorModel` Qt's global
thread pool (:mod:`fminspect.gui.workers`: jobs niced below the GUI thread, held while a
sample is drawn), threads of their own for reading folders, ``QTimer`` s, and queued calls
to the GUI thread; :class:`QtPreferences` its ``QSettings``. Everything else the window
knows of the model it learns from the model's events.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

from PySide6 import QtCore

from fminspect.gui.workers import cancel, submit
from fminspect.inspector.model import InspectorModel
from fminspect.inspector.runtime import failure_message
from fminspect.inspector.scoring import ScoringService


class _QtTimer:
    """A single-shot ``QTimer`` as :class:`~fminspect.inspector.runtime.Timer`."""

    def __init__(self, owner: QtCore.QObject, ms: int, callback: Callable[[], None]) -> None:
        self._timer = QtCore.QTimer(owner)
        self._timer.setSingleShot(True)
        self._timer.setInterval(ms)
        self._timer.timeout.connect(callback)

    def start(self, ms: int | None = None) -> None:
        if ms is None:
            self._timer.start()
        else:
            self._timer.start(ms)

    def stop(self) -> None:
        self._timer.stop()

    def is_active(self) -> bool:
        return self._timer.isActive()


class _Poster(QtCore.QObject):
    """Runs callables sent from any thread on the thread it lives on (the GUI thread)."""

    posted = QtCore.Signal(object)

    def __init__(self, parent: QtCore.QObject) -> None:
        super().__init__(parent)
        self.posted.connect(self._run, QtCore.Qt.ConnectionType.QueuedConnection)

    @staticmethod
    def _run(callback: Callable[[], None]) -> None:
        callback()


class QtRuntime:
    """The model's :class:`~fminspect.inspector.runtime.Runtime` in the window: nothing is
    called back once ``owner`` (the window) has been deleted."""

    def __init__(self, owner: QtCore.QObject) -> None:
        self.owner = owner
        self._poster = _Poster(owner)

    def submit(
        self,
        func: Callable[[], Any],
        done: Callable[[Any], None],
        failed: Callable[[str], None] | None = None,
        *,
        priority: int = 0,
        own_thread: bool = False,
    ) -> Any:
        if not own_thread:
            return submit(func, done, failed, priority=priority, owner=self.owner)

        def run() -> None:
            try:
                result = func()
            except Exception as exc:  # said in the window: a thread's error would be lost
                message = failure_message(exc)
                self.post(lambda: failed(message) if failed is not None else None)
                return
            self.post(lambda: done(result))

        thread = threading.Thread(target=run, name="fminspect-read", daemon=True)
        thread.start()
        return thread

    def cancel(self, job: Any) -> bool:
        return False if isinstance(job, threading.Thread) else cancel(job)

    def timer(self, ms: int, callback: Callable[[], None]) -> _QtTimer:
        return _QtTimer(self.owner, ms, callback)

    def call_later(self, ms: int, callback: Callable[[], object]) -> None:
        QtCore.QTimer.singleShot(ms, self.owner, callback)

    def post(self, callback: Callable[[], None]) -> None:
        with contextlib.suppress(RuntimeError):  # the window was deleted meanwhile
            self._poster.posted.emit(callback)

    def wait_until(self, condition: Callable[[], bool], timeout_ms: int) -> bool:
        timer = QtCore.QElapsedTimer()
        timer.start()
        app = QtCore.QCoreApplication.instance()
        assert app is not None, "wait_until() needs the application"
        while not condition() and timer.elapsed() < timeout_ms:
            app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 20)
            QtCore.QThread.msleep(2)
        app.processEvents()
        return condition()


class QtPreferences:
    """``QSettings`` as the model's :class:`~fminspect.inspector.preferences.Preferences`."""

    def __init__(self, settings: QtCore.QSettings) -> None:
        self.settings = settings

    def value(self, key: str, default: Any = None) -> Any:
        return self.settings.value(key, default)

    def set_value(self, key: str, value: Any) -> None:
        self.settings.setValue(key, value)


def window_model(
    owner: QtCore.QObject, settings: QtCore.QSettings, scoring_in_process: bool = False
) -> InspectorModel:
    """The inspector model of a window: its work on Qt's pool and timers, its preferences
    in ``settings``; the dataset-wide scoring in a service process of its own, or (with
    ``scoring_in_process``: the tests' windows) on a thread of this process, one image at
    a time."""
    runtime = QtRuntime(owner)
    service = (
        ScoringService(runtime, jobs=1, in_process=True)
        if scoring_in_process
        else ScoringService(runtime)
    )
    return InspectorModel(runtime, QtPreferences(settings), service)
