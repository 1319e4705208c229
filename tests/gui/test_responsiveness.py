"""What keeps the GUI thread's turns short when a dataset is opened (issue #18's ≤ 50 ms
target; benchmarks/bench_browser.py measures it): one repaint of the window per turn, a grid
whose geometry is set once, pool threads that yield to the GUI thread, and the full garbage
collection done while opening rather than while the first sample is shown."""

from __future__ import annotations

import gc
import os
import sys
import threading
import weakref
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtWidgets

from fminspect.gui.app import coalesce_scene_updates
from fminspect.gui.workers import WORKER_NICENESS, submit
from tests.datasets import make_dataset
from tests.gui.conftest import settle

MODELS = tuple(f"M{i:02d}" for i in range(14))


class _UpdateRequests(QtCore.QObject):
    """Counts the update requests (whole-window repaints) a window receives."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.UpdateRequest:
            self.count += 1
        return False


def _two_plots_changed(coalesce: bool) -> tuple[int, int]:
    """(repaints while the scenes' queued calls run, repaints in all) when two plots of one
    window change in the same turn."""
    host = QtWidgets.QWidget()
    layout = QtWidgets.QHBoxLayout(host)
    a, b = pg.PlotWidget(), pg.PlotWidget()
    layout.addWidget(a)
    layout.addWidget(b)
    host.resize(600, 300)
    host.show()
    for _ in range(5):
        QtWidgets.QApplication.processEvents()
    if coalesce:
        assert coalesce_scene_updates(host) == 2
    counter = _UpdateRequests()
    host.installEventFilter(counter)
    a.plot([1, 2, 3])
    b.plot([3, 2, 1])
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.MetaCall)
    during = counter.count
    QtWidgets.QApplication.processEvents()
    host.removeEventFilter(counter)
    host.close()
    host.deleteLater()
    return during, counter.count


def test_scenes_mark_the_window_dirty_instead_of_repainting_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    from fminspect.gui.app import application

    application()
    during, total = _two_plots_changed(coalesce=False)
    assert during >= 2  # Qt's shortcut: each scene repaints the whole window at once
    during, total = _two_plots_changed(coalesce=True)
    assert (during, total) == (0, 1)  # one repaint, in its own turn


def test_every_scene_of_the_inspector_is_coalesced(window) -> None:  # type: ignore[no-untyped-def]
    views = window.findChildren(QtWidgets.QGraphicsView)
    assert len(views) >= 5  # the grid, three curve plots, the dataset view's curves
    signal = QtCore.SIGNAL("changed(QList<QRectF>)")
    assert all(v.scene().receivers(signal) >= 1 for v in views)


@pytest.fixture
def many_root(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "Many", n_images=3, methods=MODELS, size=(30, 40))


def _geometry(window) -> list[tuple[float, float, float, float]]:  # type: ignore[no-untyped-def]
    return [c.view.geometry().getRect() for c in window.grid.cells.values()]


@pytest.mark.slow
def test_the_grid_is_laid_out_once_and_titles_do_not_resize_it(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    window.open_path(many_root)
    qtbot.waitUntil(lambda: bool(window.grid.cells), timeout=20000)
    QtWidgets.QApplication.processEvents()
    first = window.grid.cells["image"].view.geometry().getRect()
    assert window.grid.filling  # the models' panels are still being made, one per turn
    settle(qtbot, window)
    assert len(window.grid.cells) == 14  # image, GT and 12 models
    # the panels made later took placeholders' places: the first panel never moved
    assert window.grid.cells["image"].view.geometry().getRect() == first
    before = _geometry(window)
    window.selection.set_alias("M03", "a very long display name " * 4)
    settle(qtbot, window)
    QtWidgets.QApplication.processEvents()
    assert window.grid.cells["M03"].label.text.startswith("a very long")
    assert _geometry(window) == before  # a long title is clipped, not laid out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness: Linux")
def test_pool_threads_yield_to_the_gui_thread(qtbot) -> None:  # type: ignore[no-untyped-def]
    got: list[int] = []
    submit(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=10000)
    assert got[0] >= WORKER_NICENESS
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) < WORKER_NICENESS


class _Probe:
    """A reference cycle that becomes garbage while frozen."""

    def __init__(self) -> None:
        self.me = self


def test_opening_a_dataset_collects_what_was_frozen_and_freezes_the_rest(
    window, dataset_root
) -> None:  # type: ignore[no-untyped-def]
    probe = _Probe()
    gone = weakref.ref(probe)
    gc.freeze()  # as the window's start left it: the probe is out of automatic collections
    del probe
    gc.collect()
    assert gone() is not None  # frozen garbage stays…
    window.open_path(dataset_root)
    assert gone() is None  # …until a dataset is opened
    assert gc.get_freeze_count() > 0  # what survived is left out of later collections
