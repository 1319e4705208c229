"""What keeps the GUI thread's turns short when a dataset is opened (issue #18's ≤ 50 ms
target; benchmarks/bench_browser.py measures it): one repaint of the window per turn, a grid
whose geometry is set once, pool threads that yield to the GUI thread, and the full garbage
collection done while opening rather than while the first sample is shown, and Qt's raster
fills painted on the painting thread."""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.app import coalesce_scene_updates
from fminspect.gui.workers import WORKER_NICENESS, hold_jobs, release_jobs, submit
from tests.datasets import make_dataset
from tests.gui.conftest import PATIENCE_MS, settle, wait_for

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


def test_the_browser_progress_waits_for_the_window_repaint(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A ``QProgressBar`` repaints the whole window at once when its value changes; the
    browser's bar is repainted with the rest of the window, in a turn of its own."""
    from fminspect.gui.panels.browser import DatasetBrowserPanel

    host = QtWidgets.QWidget()
    layout = QtWidgets.QHBoxLayout(host)
    panel, table = DatasetBrowserPanel(), QtWidgets.QTableWidget(3, 3)
    layout.addWidget(panel)
    layout.addWidget(table)
    qtbot.addWidget(host)
    host.resize(600, 300)
    host.show()
    qtbot.waitExposed(host)
    counter = _UpdateRequests()
    host.installEventFilter(counter)
    for done, total in ((0, 0), (0, 10), (3, 10), (9, 10)):
        table.viewport().update()  # something else waits to be repainted
        before = counter.count
        panel.show_progress(done, total)
        assert counter.count == before  # not repainted at once
        assert (panel.progress.value(), panel.progress.maximum()) == (done, total)
        assert panel.progress.isVisible()
        wait_for(qtbot, lambda b=before: counter.count > b)  # but soon
    table.viewport().update()
    before = counter.count
    panel.progress.setValue(1)  # what Qt's own call does
    assert counter.count > before
    host.removeEventFilter(counter)


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
def test_the_grid_is_laid_out_once_and_titles_do_not_resize_it(
    qtbot, window, many_root, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from fminspect.gui.panels import map_grid

    monkeypatch.setattr(map_grid, "FILL_BUDGET_MS", 0.0)  # one panel per turn, however fast
    seen: list[tuple[int, tuple[float, float, float, float]]] = []

    def look() -> None:  # at every event-loop turn: how many panels, where the first is
        if (cell := window.grid.cells.get("image")) is not None:
            seen.append((len(window.grid.cells), cell.view.geometry().getRect()))

    every_turn = QtCore.QTimer()
    every_turn.timeout.connect(look)
    every_turn.start(0)
    window.open_path(many_root)
    settle(qtbot, window)
    every_turn.stop()
    assert len(window.grid.cells) == 14  # image, GT and 12 models
    # the models' panels were made one per turn, after the first panel was laid out…
    assert {n for n, _ in seen} >= set(range(1, 15))
    # …and took placeholders' places: the first panel never moved
    assert {rect for _, rect in seen} == {window.grid.cells["image"].view.geometry().getRect()}
    before = _geometry(window)
    window.selection.set_alias("M03", "a very long display name " * 4)
    settle(qtbot, window)
    QtWidgets.QApplication.processEvents()
    label = window.grid.cells["M03"].label
    assert label.text.startswith("a very long")
    assert _geometry(window) == before  # a long title is elided, not laid out
    # the whole title is the tooltip; the one drawn ends in "…" and fits its panel
    assert label.toolTip() == label.text
    assert label.shown.endswith("…") and label.shown[:-1] in label.text
    width = QtGui.QFontMetricsF(label.font()).horizontalAdvance(label.shown)
    assert 0 < width <= window.grid.cells["M03"].view.geometry().width()


_NICENESS = """
import os, threading
from PySide6 import QtCore
from fminspect.gui.app import application
from fminspect.gui.controller import QtRuntime
from fminspect.gui.workers import submit
from fminspect.inspector.scoring import ScoringService
app = application()
got = []
submit(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), got.append)
while not got:
    app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 50)
scorer = ScoringService(QtRuntime(QtCore.QObject()))
scorer.warm_up()
pid = scorer._process.pid
# the service lowers its own priority as it starts
while os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0):
    if scorer._process.poll() is not None:
        break
    threading.Event().wait(0.05)
print(os.getpriority(os.PRIO_PROCESS, 0), got[0], os.getpriority(os.PRIO_PROCESS, pid))
scorer.close()
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness: Linux")
def test_background_work_yields_to_the_gui_thread() -> None:
    """By default (the tests set FMINSPECT_NO_NICE), the pool's threads and the scoring
    service run at a lower priority than the window."""
    import subprocess

    from fminspect.inspector.scoring import SERVICE_NICE

    env = {k: v for k, v in os.environ.items() if k != "FMINSPECT_NO_NICE"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    run = subprocess.run(
        [sys.executable, "-c", _NICENESS], env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    window, thread, service = map(int, run.stdout.split())
    assert thread >= window + WORKER_NICENESS or thread == 19
    assert service == min(19, window + SERVICE_NICE)


def test_the_tests_run_the_background_work_at_their_own_priority(qtbot) -> None:  # type: ignore[no-untyped-def]
    got: list[int] = []
    submit(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), got.append)
    wait_for(qtbot, lambda: bool(got))
    assert got[0] == os.getpriority(os.PRIO_PROCESS, 0)


class _Probe:
    """A reference cycle that becomes garbage while frozen."""

    def __init__(self) -> None:
        self.me = self


_FILL = """
import os
from PySide6 import QtCore, QtGui
from fminspect.gui.app import application
application()
threads = lambda: len(os.listdir("/proc/self/task"))
before = threads()
image = QtGui.QImage(600, 600, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
image.fill(0)
painter = QtGui.QPainter(image)
painter.setPen(QtCore.Qt.PenStyle.NoPen)
painter.setBrush(QtGui.QColor(200, 10, 10, 128))  # translucent: blended line by line
corners = [QtCore.QPointF(0, 0), QtCore.QPointF(590, 20), QtCore.QPointF(300, 590)]
painter.drawPolygon(QtGui.QPolygonF(corners))
painter.end()
print(before, threads())
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_raster_fills_are_painted_on_the_painting_thread() -> None:
    """Qt's default hands a tall fill to a pool of threads that end after 30 s idle (the
    first repaint after a pause waited for new ones); the application keeps it serial."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "QT_NO_GUI_THREADPOOL"}
    env["QT_QPA_PLATFORM"] = "offscreen"

    def threads(**extra: str) -> tuple[int, int]:
        run = subprocess.run(
            [sys.executable, "-c", _FILL], env={**env, **extra}, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        before, after = run.stdout.split()
        return int(before), int(after)

    before, after = threads()
    assert after == before  # no thread started to paint
    before, after = threads(FMINSPECT_QT_GUI_THREADPOOL="1")  # Qt's default, on request
    assert after > before


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


def _shown(layer) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The RGBA bytes of the pixmap Qt paints for ``layer`` (copied: the picture goes)."""
    picture = layer.item.pixmap().toImage().convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    h, w, line = picture.height(), picture.width(), picture.bytesPerLine()
    rows = np.frombuffer(picture.constBits(), np.uint8, count=h * line).reshape(h, line)
    return rows[:, : 4 * w].reshape(h, w, 4).copy()


@pytest.mark.slow
def test_a_map_layer_paints_what_pyqtgraph_would_and_keeps_its_bytes(qtbot) -> None:  # type: ignore[no-untyped-def]
    from fminspect.gui.app import application
    from fminspect.gui.panels.image_layer import ImageLayer
    from fminspect.gui.panels.map_grid import lookup_table

    application()
    rng = np.random.default_rng(7)
    grey = rng.integers(0, 256, (23, 31), dtype=np.uint8)
    rgb = rng.integers(0, 256, (23, 31, 3), dtype=np.uint8)
    rgba = rng.integers(0, 256, (23, 31, 4), dtype=np.uint8)
    rgba[..., 3] = rng.choice([0, 255], (23, 31)).astype(np.uint8)  # as the overlays: on or off
    see_through = np.concatenate(
        [lookup_table("inferno"), np.arange(256, dtype=np.uint8)[:, None]], 1
    )
    cases = [
        (grey, (0, 255), lookup_table("viridis")),
        (grey, (0, 255), see_through),
        (rgb, None, None),
        (rgba, None, None),
        (rng.random((23, 31)), (0.2, 0.8), lookup_table("cividis")),  # the general path
    ]
    for image, levels, lut in cases:
        layer = ImageLayer()
        layer.set_image(image.copy(), levels, lut)  # the copy is the layer's alone
        gc.collect()
        # allocations that take the place of any bytes freed meanwhile (a pixmap of the
        # screen's format shares its image's bytes: they must live as long as it)
        reuse = [np.full(4 * image.shape[0] * image.shape[1], 90, np.uint8) for _ in range(64)]
        if lut is None:  # bytes shown as they are, opaque unless they say otherwise
            alpha = image[..., 3] if image.shape[2] == 4 else np.full(image.shape[:2], 255)
            expected = np.dstack([image[..., :3], alpha]).astype(np.uint8)
        else:  # pyqtgraph's own rendering of the same image, levels and table
            bgra, _ = pg.functions.makeARGB(image, lut=lut, levels=levels)
            expected = bgra[..., [2, 1, 0, 3]]
        np.testing.assert_array_equal(layer.rgba(), expected)
        shown = _shown(layer)
        np.testing.assert_array_equal(shown[..., 3], expected[..., 3])
        opaque = expected[..., 3] == 255  # a see-through pixel's colour is not kept as it is
        np.testing.assert_array_equal(shown[opaque], expected[opaque])
    del reuse
    layer.clear()
    assert layer.image is None and layer.item.pixmap().isNull() and layer.rgba() is None


def _entered_by_qt(widget: QtWidgets.QWidget) -> set[str]:
    """The files of the Python functions Qt calls while it repaints ``widget``."""
    entered: set[str] = set()
    pending: list[str] = []

    def profile(frame, event, arg) -> None:  # type: ignore[no-untyped-def]
        # a Python function entered while a C function runs: Qt calling Python
        if event == "call":
            if pending and pending[-1] == "c":
                entered.add(Path(frame.f_code.co_filename).name)
            pending.append("py")
        elif event == "c_call":
            pending.append("c")
        elif pending and event in ("return", "c_return", "c_exception"):
            pending.pop()

    sys.setprofile(profile)
    try:
        widget.repaint()
    finally:
        sys.setprofile(None)
    return entered


def test_the_grid_s_maps_are_painted_without_calling_python(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    window.open_path(many_root)
    settle(qtbot, window)
    entered = _entered_by_qt(window.grid.graphics.viewport())
    assert "ViewBox.py" in entered  # the probe sees Qt's calls
    # the 3 layers and the (hidden) crosshair of 14 panels: Qt alone
    assert not entered & {"ImageItem.py", "image_layer.py", "InfiniteLine.py", "plain_items.py"}


def test_the_curves_and_threshold_lines_are_painted_without_calling_python(
    qtbot, window, many_root
) -> None:  # type: ignore[no-untyped-def]
    window.open_path(many_root)
    settle(qtbot, window)
    curves = window.curves
    wait_for(qtbot, lambda: len(curves.results) == len(curves.order) > 5)
    pyqtgraph_items = {"PlotCurveItem.py", "PlotDataItem.py", "InfiniteLine.py", "plain_items.py"}
    for plot in curves.plots.values():
        entered = _entered_by_qt(plot.viewport())
        assert "AxisItem.py" in entered  # the probe sees Qt's calls (the axes are pyqtgraph's)
        # more than 5 curves and none highlighted: no markers, so the scatter items are hidden
        assert not entered & {*pyqtgraph_items, "ScatterPlotItem.py"}
    # highlighted: that model's markers are drawn (by pyqtgraph); the curves still by Qt
    curves.legend.itemClicked.emit(curves.legend.item(0))
    assert curves.marked() == [curves.order[0]]
    entered = _entered_by_qt(curves.plots["pr"].viewport())
    assert "ScatterPlotItem.py" in entered and not entered & pyqtgraph_items


def test_the_metrics_table_is_painted_without_calling_python(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    window.open_path(many_root)
    settle(qtbot, window)
    # the probe sees Qt's calls: a view of the Python model itself calls it for every cell
    direct = QtWidgets.QTableView()
    direct.setModel(window.table.model)
    direct.resize(600, 300)
    direct.show()
    QtWidgets.QApplication.processEvents()
    assert "metrics_table.py" in _entered_by_qt(direct.viewport())
    direct.close()
    # the window's view reads the C++ copy: no Python at all (tooltips come from a delegate,
    # which a repaint does not call); the other widgets' pending repaints are done first
    for _ in range(5):
        QtWidgets.QApplication.processEvents()
    assert _entered_by_qt(window.table.view.viewport()) == set()


def test_collections_resume_when_the_last_quiet_block_ends() -> None:
    import gc

    from fminspect._runtime import _quiet, quiet_collector

    # a folder an earlier test of this process opened may still be read on its thread, in
    # a quiet block of its own: wait for it to end (a condition, not a time)
    deadline = time.monotonic() + PATIENCE_MS / 1000
    while _quiet[0] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _quiet[0] == 0 and gc.isenabled(), "an earlier test's folder is still being read"
    first, second = quiet_collector(), quiet_collector()  # two folders read at once
    first.__enter__()
    second.__enter__()
    assert not gc.isenabled()
    first.__exit__(None, None, None)
    assert not gc.isenabled()  # the second is still reading
    second.__exit__(None, None, None)
    assert gc.isenabled()


#: What moves a widget on the screen (and repaints it): a layout request that changes no
#: geometry (a status line's new text in a room of fixed height) repaints nothing.
_LAYOUT = (QtCore.QEvent.Type.Resize, QtCore.QEvent.Type.Move)


class _LaidOutAfterPaint(QtCore.QObject):
    """Counts the moves and resizes of the watched widgets once ``first`` was painted whole
    while ``ready()`` holds."""

    def __init__(
        self,
        first: QtWidgets.QWidget,
        widgets: list[QtWidgets.QWidget],
        ready: Callable[[], bool],
    ) -> None:
        super().__init__()
        self.first, self.ready, self.painted, self.late = first, ready, False, 0
        for widget in widgets:
            widget.installEventFilter(self)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        kind = event.type()
        if kind == QtCore.QEvent.Type.Paint and watched is self.first:
            assert isinstance(event, QtGui.QPaintEvent)
            self.painted |= event.rect().size() == self.first.size() and self.ready()
        elif kind in _LAYOUT and self.painted:
            self.late += 1
        return False


def test_an_opened_list_is_painted_once_it_is_laid_out(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    """The list is painted once the layouts that opening asked for are done: painted before
    them (the browser's progress bar shown, the status bar's), it was painted whole twice
    more in the next turns, as they were laid out (at 1,000 samples its frame moved: 15–25 ms
    each); and the scoring's news (the browser's status line, its progress bar) do not move
    it either. A repaint queued before the folder was read (the "reading…" line) came before
    the timer that laid it out, and painted it first: 2 runs in 3 on a busy machine. The
    empty list may be painted while the folder is read (the window stays live): the probe
    watches from the first whole paint of the list with its rows."""
    qtbot.waitExposed(window)
    view = window.browser.view
    watched: list[QtWidgets.QWidget] = [view.viewport(), view]
    while (parent := watched[-1].parentWidget()) is not None and parent is not window:
        watched.append(parent)
    probe = _LaidOutAfterPaint(view.viewport(), watched, lambda: view.model().rowCount() > 0)
    window.open_in_background(many_root)
    wait_for(qtbot, lambda: window.model.sample is not None)
    assert window.browser.model.rowCount() == 3
    assert probe.painted and probe.late == 0
    for widget in watched:
        widget.removeEventFilter(probe)


def test_held_jobs_start_when_released(qtbot) -> None:  # type: ignore[no-untyped-def]
    ran: list[int] = []
    hold_jobs(limit=60)
    try:
        submit(lambda: ran.append(1), lambda _: None)
        qtbot.wait(300)
        assert not ran  # held
    finally:
        release_jobs()
    wait_for(qtbot, lambda: bool(ran))


def test_a_hold_lapses_by_itself(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A hold nobody releases keeps jobs from starting for its limit at most."""
    ran: list[int] = []
    hold_jobs(limit=0.2)
    submit(lambda: ran.append(1), lambda _: None)
    wait_for(qtbot, lambda: bool(ran))
    release_jobs()


@pytest.mark.slow
def test_a_shown_sample_is_scored_once_its_panels_are_drawn(
    qtbot, window, many_root, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Scoring threads held the interpreter lock in turn with the GUI thread while it drew
    the sample's panels: its models are scored once the grid is filled and the table and
    the curves are emptied for it (and painted)."""
    from fminspect.gui import workers
    from fminspect.inspector import samples as controller_module

    monkeypatch.setattr(workers, "HOLD_LIMIT_S", 60.0)  # only the release lets them start
    events: list[str] = []
    score_model = controller_module.score_model

    def scoring(*args, **kwargs):  # type: ignore[no-untyped-def]
        events.append("scored")  # (on a pool thread: list.append is atomic)
        return score_model(*args, **kwargs)

    monkeypatch.setattr(controller_module, "score_model", scoring)
    reset = window.drawer.reset_for_sample

    def emptied(step: str) -> None:
        reset(step)
        events.append(step)

    monkeypatch.setattr(window.drawer, "reset_for_sample", emptied)
    window.open_path(many_root)
    settle(qtbot, window)
    assert len(window.model.results) == 12
    first = events.index("scored")
    assert {"table", "curves"} <= set(events[:first])
