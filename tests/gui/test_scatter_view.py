"""The Scatter tab: the listed samples' points, a click opens a sample, a Shift-drag
rectangle becomes the browser's filter ``selected``, the shown sample ringed."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore
from PySide6.QtTest import QTest

from tests.datasets import make_dataset
from tests.gui.conftest import settle, wait_for


def _screen(sc, x: float, y: float) -> QtCore.QPoint:  # type: ignore[no-untyped-def]
    """Where the data point (x, y) is on the plot widget."""
    scene = sc.view.mapViewToScene(QtCore.QPointF(x, y))
    return sc.plot.mapFromScene(scene)


def test_points_click_and_rectangle_selection(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=12, methods=("A", "B", "C"), size=(60, 80))
    window.resize(1400, 900)
    window.open_path(root)
    settle(qtbot, window)
    window.tabs.setCurrentIndex(2)
    sc, model = window.scatter, window.model
    # a model not shown is offered too, after the shown ones (a trial looked for one)
    model.selection.set_shown(["A", "B"])
    wait_for(qtbot, lambda: sc.b.findData("C") > sc.b.findData("B") >= 0, "C offered last")
    assert sc.b.itemData(sc.b.findData("C") - 1) is None  # the separator
    model.selection.set_shown(["A", "B", "C"])
    sc.a.setCurrentIndex(sc.a.findData("A"))
    sc.b.setCurrentIndex(sc.b.findData("B"))
    sc.redraw()
    assert len(sc.data) == 12 and sc.points.data.size == 12 and sc.diagonal.isVisible()
    # the shown sample is ringed
    shown = model.walk.matrix.sample_index[model.requested.name]
    (k,) = np.flatnonzero(sc.data.rows == shown)
    assert sc.shown.data.size == 1 and sc.shown.data[0]["x"] == sc.data.x[k]
    # a click on a point opens its sample
    target = next(i for i in range(len(sc.data)) if sc.data.rows[i] != shown)
    name = model.walk.matrix.samples[int(sc.data.rows[target])]
    QTest.mouseClick(
        sc.plot.viewport(),
        QtCore.Qt.MouseButton.LeftButton,
        QtCore.Qt.KeyboardModifier.NoModifier,
        _screen(sc, sc.data.x[target], sc.data.y[target]),
    )
    wait_for(qtbot, lambda: model.requested is not None and model.requested.name == name)
    settle(qtbot, window)
    assert sc.shown.data[0]["x"] == sc.data.x[target]
    # a rectangle over the points where A is worse than B: the browser lists those
    below = sc.data.y < sc.data.x
    x0, x1 = float(sc.data.x.min()) - 0.01, float(sc.data.x.max()) + 0.01
    names = sc.select_rect(x0, x1, -1.0, float(sc.data.y[below].max()) + 1e-9)
    assert names >= {model.walk.matrix.samples[i] for i in sc.data.rows[below]}
    assert window.browser.filter.text() == "selected"
    assert set(model.walk.ordered()) == set(names)
    assert window.browser.filter_note.text() == f"{len(names)} of 12 samples listed"
    wait_for(qtbot, lambda: sc.chosen.data.size == len(names), "the selection drawn")
    assert len(sc.data) == 12  # drawn among the rest
    # and said so (a trial read "12 points of 12 listed samples" beside a shorter list)
    wait_for(qtbot, lambda: f"{len(names)} listed" in sc.note.text(), "the note")
    assert "but for 'selected'" in sc.note.text()

    # Shift + drag on the plot draws the rectangle (a drag without Shift pans)
    class Drag:
        def __init__(self, a: QtCore.QPointF, b: QtCore.QPointF) -> None:
            self.a, self.b = sc.view.mapFromView(a), sc.view.mapFromView(b)

        def modifiers(self):  # type: ignore[no-untyped-def]
            return QtCore.Qt.KeyboardModifier.ShiftModifier

        def buttonDownPos(self):  # type: ignore[no-untyped-def]
            return self.a

        def pos(self):  # type: ignore[no-untyped-def]
            return self.b

        def isFinish(self) -> bool:
            return True

        def accept(self) -> None:
            pass

    got: list[frozenset[str]] = []
    sc.selected.connect(got.append)
    sc.view.mouseDragEvent(Drag(QtCore.QPointF(x0, -1.0), QtCore.QPointF(x1, 2.0)))
    assert got and got[-1] == frozenset(model.walk.matrix.samples)  # every point
    # cleared: the clause leaves the filter, and the rest of the filter stays
    window.browser.filter.setText("name ~ img and selected")
    window.browser.apply_filter()
    sc.clear.click()
    assert window.browser.filter.text() == "name ~ img"
    assert len(model.walk.ordered()) == 12
    wait_for(qtbot, lambda: sc.chosen.data.size == 0, "the selection cleared")
    # against the objects' shares, read in the background
    sc.against.setCurrentIndex(1)
    wait_for(qtbot, lambda: model.walk.shares is not None, "the objects' shares")
    wait_for(qtbot, lambda: len(sc.data) == 12)
    assert sc.data.xlabel == "object's share of the image"
    settle(qtbot, window)


def test_a_sample_in_several_groups_of_a_table_is_counted_once(
    qtbot, window, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A trial read "67 points of 50 listed samples": a table's sample is a point in every
    group it is in."""
    from PySide6 import QtWidgets

    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"), size=(40, 50))
    table = tmp_path / "attrs.csv"
    table.write_text("image,occluded,small\nimg1,1,1\nimg2,1,0\nimg3,0,1\nimg4,0,0\n")
    window.open_path(root)
    settle(qtbot, window)
    window.tabs.setCurrentIndex(2)
    sc = window.scatter
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *a: (str(table), ""))
    sc.against.setCurrentIndex(sc.against.findText("attribute table…"))
    wait_for(qtbot, lambda: len(sc.data) == 4, "img1 twice, img2 and img3 once")
    assert "4 points (3 samples, a point in each group it is in) of 4" in sc.note.text()
    assert "(1 in no group)" in sc.note.text()  # img4
