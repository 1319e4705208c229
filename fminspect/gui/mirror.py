"""A table model's cells copied into a Qt item model, so that views read them with no Python.

A view asks its model for every visible cell's display text, font, colours, alignment… at
every repaint, and a Python model answers each question in Python: ~1,450 calls for one
repaint of the metrics table. Each call waits for the interpreter lock, which the threads
scoring the shown sample hold in turns: that repaint took 3 ms alone and 15–28 ms while
they ran. :class:`Mirror` keeps a ``QStandardItemModel`` equal to a Python table model,
updating only the cells the model says changed (its ``dataChanged``, ``headerDataChanged``
and ``modelReset`` signals); views are given :attr:`Mirror.items` (or a proxy over it).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6 import QtCore, QtGui

_Roles = Sequence[QtCore.Qt.ItemDataRole | int]


class Mirror(QtCore.QObject):
    """A ``QStandardItemModel`` (:attr:`items`) that follows ``source``, a flat table model.

    ``roles``: the cell roles copied; ``header_roles``: the header roles copied (both
    orientations). Rows and columns are the source's, in its order; a cell's flags are
    copied when it is made (a new shape), as the tables mirrored keep theirs.
    """

    def __init__(
        self,
        source: QtCore.QAbstractItemModel,
        roles: _Roles,
        header_roles: _Roles = (QtCore.Qt.ItemDataRole.DisplayRole,),
        parent: QtCore.QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.source = source
        self.roles = tuple(roles)
        self.header_roles = tuple(header_roles)
        self.items = QtGui.QStandardItemModel(self)
        source.modelReset.connect(self.reset)
        source.dataChanged.connect(self._cells_changed)
        source.headerDataChanged.connect(self._headers_changed)
        self.reset()

    def reset(self) -> None:
        """Copy every cell and header again (the source was reset)."""
        rows, cols = self.source.rowCount(), self.source.columnCount()
        if (rows, cols) != (self.items.rowCount(), self.items.columnCount()):
            self.items.setRowCount(rows)  # the structure changes are signalled
            self.items.setColumnCount(cols)
            with QtCore.QSignalBlocker(self.items):
                for row in range(rows):
                    for col in range(cols):
                        if self.items.item(row, col) is None:
                            item = QtGui.QStandardItem()
                            item.setFlags(self.source.flags(self.source.index(row, col)))
                            self.items.setItem(row, col, item)
        if rows and cols:
            self._copy(0, rows - 1, 0, cols - 1)
        for orientation, count in (
            (QtCore.Qt.Orientation.Horizontal, cols),
            (QtCore.Qt.Orientation.Vertical, rows),
        ):
            if count:
                self._headers_changed(orientation, 0, count - 1)

    def _cells_changed(
        self,
        top_left: QtCore.QModelIndex,
        bottom_right: QtCore.QModelIndex,
        roles: Sequence[int] = (),
    ) -> None:
        if top_left.isValid() and bottom_right.isValid():
            some = tuple(r for r in roles if r in self.roles)
            if roles and not some:
                return  # roles that are not copied
            rows = (top_left.row(), bottom_right.row())
            self._copy(*rows, top_left.column(), bottom_right.column(), some)

    def _copy(self, top: int, bottom: int, left: int, right: int, roles: _Roles = ()) -> None:
        """Copy a block of cells: ``roles`` of each, or all of them (the source's
        ``cell_data(row, col)``, a dict by role, if it has one: one call a cell)."""
        source, items = self.source, self.items
        whole = getattr(source, "cell_data", None) if not roles else None
        with QtCore.QSignalBlocker(items):  # one signal for the block, not one per cell
            for row in range(top, bottom + 1):
                for col in range(left, right + 1):
                    if whole is not None:
                        cell = whole(row, col)
                        # every copied role: setItemData keeps those it is not given
                        values = {r: cell.get(r) for r in self.roles}
                        items.setItemData(items.index(row, col), values)
                        continue
                    index, item = source.index(row, col), items.item(row, col)
                    for role in roles or self.roles:
                        item.setData(source.data(index, role), role)
        items.dataChanged.emit(items.index(top, left), items.index(bottom, right), list(roles))

    def _headers_changed(self, orientation: QtCore.Qt.Orientation, first: int, last: int) -> None:
        source, items = self.source, self.items
        with QtCore.QSignalBlocker(items):
            for section in range(first, last + 1):
                for role in self.header_roles:
                    items.setHeaderData(
                        section, orientation, source.headerData(section, orientation, role), role
                    )
        items.headerDataChanged.emit(orientation, first, last)
