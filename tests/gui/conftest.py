"""Fixtures for the Qt tests (offscreen; QT_QPA_PLATFORM is set in tests/conftest.py)."""

from __future__ import annotations

import gc
import inspect
from collections.abc import Callable
from pathlib import Path

import pytest
import pytestqt.exceptions
from PySide6 import QtCore

from tests.datasets import make_dataset


@pytest.fixture
def qsettings(tmp_path: Path) -> QtCore.QSettings:
    """A throw-away settings file (never the user's)."""
    return QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)


def _window(qtbot, qsettings, scoring_in_process: bool):  # type: ignore[no-untyped-def]
    from fminspect.gui.app import application
    from fminspect.gui.main_window import InspectorWindow

    application()
    w = InspectorWindow(settings=qsettings, scoring_in_process=scoring_in_process)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    yield w
    w.model.wait(PATIENCE_MS)
    QtCore.QThreadPool.globalInstance().waitForDone(PATIENCE_MS)
    # free what the window held (results with their matrices, explain windows, the Qt
    # objects): kept until the interpreter's next cycle collection otherwise, the windows of
    # successive tests added up to 1.5 GB in one test file
    for other in list(w.explain_windows):
        other.close()
        other.deleteLater()
    w.explain_windows.clear()
    w.model.open_datasets([])
    w.close()
    w.deleteLater()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    gc.collect()


@pytest.fixture
def window(qtbot, qsettings):  # type: ignore[no-untyped-def]
    """An inspector window, shown offscreen; its dataset-wide scoring runs on a thread of
    the test's process (the service's own code, without starting a process and a pool of
    workers for each test)."""
    yield from _window(qtbot, qsettings, scoring_in_process=True)


@pytest.fixture
def service_window(qtbot, qsettings):  # type: ignore[no-untyped-def]
    """An inspector window as the user gets it: its scoring service in a process of its own,
    with its worker processes."""
    yield from _window(qtbot, qsettings, scoring_in_process=False)


@pytest.fixture
def dataset_root(tmp_path: Path) -> Path:
    """A small flat dataset with images and three methods."""
    return make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B", "C"), size=(60, 80))


#: How long a test waits for something that will come, in ms: only a hung test reaches it.
#: On a machine kept busy by other work a sample's scoring takes many times its idle time,
#: and a test waits for the condition, never for a time.
PATIENCE_MS = 600_000


def _described(condition: Callable[[], object]) -> str:
    """The source of ``condition`` (a lambda's line), for a message."""
    try:
        return inspect.getsource(condition).strip()
    except (OSError, TypeError):
        return repr(condition)


def wait_for(
    qtbot, condition: Callable[[], object], what: str | None = None, timeout_ms: int = PATIENCE_MS
) -> None:  # type: ignore[no-untyped-def]
    """Process events until ``condition()`` is true; fail naming what it waited for."""
    try:
        qtbot.waitUntil(condition, timeout=timeout_ms)
    except pytestqt.exceptions.TimeoutError as exc:
        raise AssertionError(
            f"waited {timeout_ms / 1000:g} s for {what or _described(condition)}"
        ) from exc


def settle(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """Wait until the current sample's results are drawn and the browser scores are in."""
    assert window.model.wait(PATIENCE_MS), "waited for the current sample's scores"
    wait_for(
        qtbot,
        lambda: not window.model.service.running and not window.drawing,
        "the browser's scores and the sample's drawing",
    )


def deliver_posted() -> None:
    """Deliver what other threads have posted to the GUI thread so far (a finished job's
    result, a queued signal): for a test that checks that something is *not* shown."""
    from PySide6 import QtWidgets

    QtCore.QCoreApplication.sendPostedEvents()
    QtWidgets.QApplication.processEvents()
