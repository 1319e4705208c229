"""The C++ copy of a Python table model that the views read (fminspect.gui.mirror)."""

from __future__ import annotations

from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.mirror import Mirror
from tests.gui.conftest import PATIENCE_MS, settle

DISPLAY = QtCore.Qt.ItemDataRole.DisplayRole
TOOLTIP = QtCore.Qt.ItemDataRole.ToolTipRole
BACKGROUND = QtCore.Qt.ItemDataRole.BackgroundRole
FONT = QtCore.Qt.ItemDataRole.FontRole


class _Table(QtCore.QAbstractTableModel):
    def __init__(self, rows: int, cols: int) -> None:
        super().__init__()
        self.values = [[r * 10 + c for c in range(cols)] for r in range(rows)]
        self.asked = 0

    def rowCount(self, parent: Any = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.values)

    def columnCount(self, parent: Any = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or not self.values else len(self.values[0])

    def data(self, index: Any, role: int = DISPLAY) -> Any:
        self.asked += 1
        v = self.values[index.row()][index.column()]
        return {DISPLAY: str(v), TOOLTIP: f"cell {v}"}.get(role)

    def headerData(self, section: int, orientation: Any, role: int = DISPLAY) -> Any:
        return f"{orientation.name[0]}{section}" if role == DISPLAY else None

    def flags(self, index: Any) -> QtCore.Qt.ItemFlag:
        return QtCore.Qt.ItemFlag.ItemIsEnabled | QtCore.Qt.ItemFlag.ItemIsSelectable


def _cells(model: QtCore.QAbstractItemModel, role: int) -> list[list[Any]]:
    return [
        [model.index(r, c).data(role) for c in range(model.columnCount())]
        for r in range(model.rowCount())
    ]


def _same(mirror: Mirror) -> None:
    for role in (DISPLAY, TOOLTIP):
        assert _cells(mirror.items, role) == _cells(mirror.source, role)
    for orientation, n in (
        (QtCore.Qt.Orientation.Horizontal, mirror.source.columnCount()),
        (QtCore.Qt.Orientation.Vertical, mirror.source.rowCount()),
    ):
        got = [mirror.items.headerData(s, orientation, DISPLAY) for s in range(n)]
        assert got == [mirror.source.headerData(s, orientation, DISPLAY) for s in range(n)]


def test_a_mirror_follows_its_model_copying_only_what_changed(qtbot) -> None:  # type: ignore[no-untyped-def]
    table = _Table(3, 4)
    mirror = Mirror(table, (DISPLAY, TOOLTIP))
    _same(mirror)
    assert not mirror.items.flags(mirror.items.index(0, 0)) & QtCore.Qt.ItemFlag.ItemIsEditable
    changed: list[tuple[int, int, int, int]] = []
    mirror.items.dataChanged.connect(
        lambda a, b, *_: changed.append((a.row(), a.column(), b.row(), b.column()))
    )
    table.values[1][2] = 99
    table.asked = 0
    table.dataChanged.emit(table.index(1, 0), table.index(1, 3))
    assert table.asked == 4 * 2  # the row's cells, each role once
    assert changed == [(1, 0, 1, 3)]  # one signal for the block
    _same(mirror)
    table.beginResetModel()
    table.values = [[7, 8]]
    table.endResetModel()
    _same(mirror)
    assert (mirror.items.rowCount(), mirror.items.columnCount()) == (1, 2)


def test_the_metrics_table_s_view_shows_exactly_its_model(qtbot, window, dataset_root) -> None:  # type: ignore[no-untyped-def]
    window.open_path(dataset_root)
    settle(qtbot, window)
    model, items = window.table.model, window.table.mirror.items
    assert window.table.proxy.sourceModel() is items
    window.model.set_threshold(40)
    settle(qtbot, window)
    window.table.set_names({"A": "Alpha"})
    for role in (DISPLAY, BACKGROUND, FONT, QtCore.Qt.ItemDataRole.UserRole + 1):
        assert _cells(items, role) == _cells(model, role)
    # a cell's tooltip is made when asked for, from the model's row under that cell (sorted
    # by a column, the view's rows are not the model's)
    col = model.keys.index("MAE")
    window.table.view.sortByColumn(col, QtCore.Qt.SortOrder.DescendingOrder)
    view = window.table.view
    cell = window.table.proxy.index(0, col)
    source = window.table.proxy.mapToSource(cell)
    assert source.row() != 0  # A has not the largest MAE: another row is on top
    at = view.visualRect(cell).center()
    event = QtGui.QHelpEvent(QtCore.QEvent.Type.ToolTip, at, view.viewport().mapToGlobal(at))
    QtWidgets.QApplication.sendEvent(view.viewport(), event)
    shown = QtWidgets.QToolTip.text()
    assert shown == model.tooltip(source.row(), col)
    assert shown.startswith(f"{model.models[source.row()]} — MAE")
    view.sortByColumn(-1, QtCore.Qt.SortOrder.AscendingOrder)
    rows = range(model.rowCount())
    vertical = QtCore.Qt.Orientation.Vertical
    names = [items.headerData(r, vertical, DISPLAY) for r in rows]
    assert names == [model.headerData(r, vertical, DISPLAY) for r in rows] and names[0] == "Alpha"
    cols = range(model.columnCount())
    horizontal = QtCore.Qt.Orientation.Horizontal
    assert [items.headerData(c, horizontal, DISPLAY) for c in cols] == [
        model.headerData(c, horizontal, DISPLAY) for c in cols
    ]
    assert any("t=40" in str(items.headerData(c, horizontal, DISPLAY)) for c in cols)
    assert any(cell is not None for row in _cells(items, BACKGROUND) for cell in row)  # a best


class _Cells(_Table):
    """A model that gives a cell's roles at once, one of them only for large values."""

    def cell_data(self, row: int, col: int) -> dict[int, Any]:
        self.asked += 1
        v = self.values[row][col]
        return {DISPLAY: str(v), **({BACKGROUND: "large"} if v > 20 else {})}

    def data(self, index: Any, role: int = DISPLAY) -> Any:
        return self.cell_data(index.row(), index.column()).get(role)


def test_a_mirror_copies_a_cell_s_roles_at_once_and_clears_those_it_lost(qtbot) -> None:  # type: ignore[no-untyped-def]
    table = _Cells(3, 2)
    mirror = Mirror(table, (DISPLAY, BACKGROUND))
    assert _cells(mirror.items, BACKGROUND) == [[None, None], [None, None], [None, "large"]]
    table.values[2] = [25, 1]
    table.asked = 0
    table.dataChanged.emit(table.index(2, 0), table.index(2, 1))
    assert table.asked == 2  # once a cell
    assert _cells(mirror.items, BACKGROUND) == [[None, None], [None, None], ["large", None]]
    assert _cells(mirror.items, DISPLAY) == _cells(table, DISPLAY)
    table.values[2] = [1, 1]  # only the marks are said to have changed
    table.dataChanged.emit(table.index(2, 0), table.index(2, 0), [BACKGROUND])
    assert _cells(mirror.items, BACKGROUND)[2] == [None, None]
    assert _cells(mirror.items, DISPLAY)[2] == ["25", "1"]  # the other roles were not copied


def test_a_new_sample_clears_the_table_s_selection(qtbot, window, dataset_root) -> None:  # type: ignore[no-untyped-def]
    # the copy is updated in place, so no reset of the model clears the view's selection
    window.open_path(dataset_root)
    settle(qtbot, window)
    window.table.view.setCurrentIndex(window.table.proxy.index(1, 0))  # as a click selects it
    assert window.table.view.selectionModel().selectedIndexes()
    window.model.step(1)
    assert window.model.wait(PATIENCE_MS)
    settle(qtbot, window)
    assert window.table.view.selectionModel().selectedIndexes() == []
