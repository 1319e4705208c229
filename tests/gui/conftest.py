"""Fixtures for the Qt tests (offscreen; QT_QPA_PLATFORM is set in tests/conftest.py)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from PySide6 import QtCore

from tests.datasets import make_dataset


@pytest.fixture
def qsettings(tmp_path: Path) -> QtCore.QSettings:
    """A throw-away settings file (never the user's)."""
    return QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, qsettings):  # type: ignore[no-untyped-def]
    """An inspector window, shown offscreen."""
    from fminspect.gui.app import application
    from fminspect.gui.main_window import InspectorWindow

    application()
    w = InspectorWindow(settings=qsettings)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    yield w
    w.controller.wait(30000)
    QtCore.QThreadPool.globalInstance().waitForDone(30000)
    # free what the window held (results with their matrices, explain windows, the Qt
    # objects): kept until the interpreter's next cycle collection otherwise, the windows of
    # successive tests added up to 1.5 GB in one test file
    for other in list(w.explain_windows):
        other.close()
        other.deleteLater()
    w.explain_windows.clear()
    w.controller.open_datasets([])
    w.close()
    w.deleteLater()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    gc.collect()


@pytest.fixture
def dataset_root(tmp_path: Path) -> Path:
    """A small flat dataset with images and three methods."""
    return make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B", "C"), size=(60, 80))


def settle(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """Wait until the current sample's results are drawn and the browser scores are in."""
    assert window.controller.wait(30000)
    qtbot.waitUntil(lambda: not window.scorer.running and not window.drawing, timeout=60000)
    qtbot.wait(20)
