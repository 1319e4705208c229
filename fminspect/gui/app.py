"""Application set-up: one QApplication, pyqtgraph's row-major image order, the theme."""

from __future__ import annotations

import os
import sys

import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

from fminspect import __version__
from fminspect._runtime import single_thread_blas, tune_allocator

# numpy (row, col) arrays display upright; set once, before any image item exists
pg.setConfigOptions(imageAxisOrder="row-major", antialias=False)


def application(argv: list[str] | None = None) -> QtWidgets.QApplication:
    """The QApplication (created once)."""
    existing = QtWidgets.QApplication.instance()
    if existing is None:
        app = QtWidgets.QApplication(argv if argv is not None else sys.argv[:1])
    else:
        assert isinstance(existing, QtWidgets.QApplication), "a QApplication is needed"
        app = existing
    # also when another library made the QApplication (pytest-qt, a notebook); idempotent
    single_thread_blas()  # the models are scored in parallel worker threads
    tune_allocator()  # scoring 5 models at 400²: 66 → 51 ms (see fminspect._runtime)
    app.setApplicationName("fminspect")
    app.setOrganizationName("fminspect")
    app.setApplicationVersion(__version__)
    app.setWindowIcon(QtGui.QIcon.fromTheme("image-x-generic"))
    return app


def offscreen() -> bool:
    """Running without a display (tests, screenshots in CI)."""
    return os.environ.get("QT_QPA_PLATFORM", "") == "offscreen"


#: What Qt's offscreen platform says about every window it cannot resize or raise.
OFFSCREEN_NOTICES = ("This plugin does not support",)


def drop_offscreen_notices(mode, context, message: str) -> None:  # type: ignore[no-untyped-def]
    """A Qt message handler: print Qt's messages as Qt would, except the offscreen
    platform's notices (install it with ``QtCore.qInstallMessageHandler``)."""
    if not message.startswith(OFFSCREEN_NOTICES):
        sys.stderr.write(message + "\n")
