"""Application set-up: one QApplication, pyqtgraph's row-major image order, the theme."""

from __future__ import annotations

import gc
import os
import sys

import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

from fminspect import __version__
from fminspect._runtime import single_thread_blas, tune_allocator

# numpy (row, col) arrays display upright; set once, before any image item exists
pg.setConfigOptions(imageAxisOrder="row-major", antialias=False)


def serial_raster_fills() -> None:
    """Keep Qt's raster painting on the thread that paints (``QT_NO_GUI_THREADPOOL``),
    unless ``FMINSPECT_QT_GUI_THREADPOOL=1`` asks for Qt's default.

    Qt 6 hands every fill of 96 or more scan lines (a translucent band, a tall polygon) to
    a private thread pool and waits for it. Its threads end after 30 s without work, so the
    first repaint after a pause — the first step after a dataset had been scored, with the
    machine idle — waited for new threads to be made and scheduled: the three curve plots
    took 12–27 ms each instead of 0.5–2 (a 62–96 ms block of the GUI thread, measured at
    1,000 × 20 on 2 cores). On 2 cores that pool also competes with the scoring threads.
    Painted on the GUI thread, the same fills took 1.4–1.9 ms. Qt reads the variable once,
    at the first such fill: it is set before the application exists."""
    if os.environ.get("FMINSPECT_QT_GUI_THREADPOOL") != "1":
        os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def application(argv: list[str] | None = None) -> QtWidgets.QApplication:
    """The QApplication (created once)."""
    serial_raster_fills()
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


def _scene_changed(*_: object) -> None:
    """A receiver for ``QGraphicsScene.changed`` (see :func:`coalesce_scene_updates`)."""


def coalesce_scene_updates(root: QtWidgets.QWidget) -> int:
    """Make the graphics views under ``root`` repaint with the rest of the window.

    A QGraphicsScene whose ``changed`` signal nobody receives takes a shortcut after every
    change: it flushes its window's pending update at once (Qt's
    ``QGraphicsViewPrivate::dispatchPendingUpdates``), i.e. repaints the *whole* window —
    tables, scroll bars and every other plot — synchronously, once per scene. With the
    inspector's seven scenes that was up to three full repaints in a row (136 ms) when a
    dataset was opened. With a receiver connected, the views are told of changes by that
    signal instead and only mark their area dirty: the window is repainted once, in one
    update request, and the GUI thread gets a turn between it and the work that caused it.
    Returns how many views were changed (call it again for views made later: it is
    idempotent per scene)."""
    views = root.findChildren(QtWidgets.QGraphicsView)
    for view in views:
        scene = view.scene()
        if scene is not None and not scene.property("fminspectCoalesced"):
            scene.changed.connect(_scene_changed)
            scene.setProperty("fminspectCoalesced", True)
    return len(views)


def settle_garbage() -> None:
    """Run Python's full garbage collection now and leave what survives out of later ones.

    A full collection visits every object the collector tracks: after a dataset of 1,000
    images × 20 models was opened (its samples, paths and names: ~170,000 objects) one took
    60–90 ms, and it ran whenever the allocations happened to trigger it — in the middle of
    showing the first sample. Called at the end of the window's start and of opening a
    dataset (user actions that already take longer), it does that work then; the survivors
    are frozen (``gc.freeze``), so that the automatic collections while the window is used
    visit only what was made since (a few ms). ``gc.unfreeze`` first: the previous
    dataset's objects, garbage now, are collected rather than kept forever."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


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


def resize_for_screen(widget: QtWidgets.QWidget, width: int, height: int) -> None:
    """Resize ``widget`` to ``width`` × ``height``, or to what its screen leaves free when
    that is smaller (a trial: explain views opened 900 px high on a 768-px laptop)."""
    screen = widget.screen() or QtGui.QGuiApplication.primaryScreen()
    if screen is not None:
        free = screen.availableGeometry()
        if free.width() > 0 and free.height() > 0:
            width, height = min(width, free.width()), min(height, free.height())
    widget.resize(width, height)
