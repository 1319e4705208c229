"""Help → Keyboard shortcuts."""

from __future__ import annotations

from PySide6 import QtGui, QtWidgets

SHORTCUTS = (
    ("D  or  →", "next sample in the list's order (the zoom is kept)"),
    ("A  or  ←", "previous sample in the list's order"),
    ("↑ ↓ PgUp PgDn Home End", "in the sample list: open the sample moved to"),
    ("1 … 9", "tag the shown sample with that tag, or untag it (the Cases panel names them)"),
    ("N", "next sample without a tag, in the list's order"),
    ("B", "compare two maps: A, B, A − B, flicker (Space), focus (F)"),
    ("Esc  or  Ctrl+W", "close the A/B view, an explain window or this list"),
    ("R  or  double-click", "reset the zoom (fit the image)"),
    ("mouse wheel / drag", "zoom about the cursor / pan — every panel follows"),
    ("]  /  [", "threshold t + 1 / − 1"),
    ("Shift+]  /  Shift+[", "threshold t + 16 / − 16"),
    ("C", "toggle the TP / FP / FN overlay"),
    ("Ctrl+PgDown  /  Ctrl+PgUp", "next / previous page of model maps"),
    ("Ctrl+1  /  Ctrl+2  /  Ctrl+3", "the sample view / the dataset view / the scatter"),
    ("Ctrl+M", "choose the measures computed and shown"),
    ("Ctrl+O", "open a dataset folder"),
    ("Ctrl+E", "export the panel grid as PNG (native resolution)"),
    ("Ctrl+Shift+C", "copy the metrics table as CSV (also Ctrl+C in the table)"),
    ("Ctrl+Shift+E", "export the metrics table as CSV"),
    ("click a table cell", "explain that measure for that model"),
    ("F1", "this list"),
    ("Ctrl+Q", "quit"),
)


class ShortcutsDialog(QtWidgets.QDialog):
    """A two-column list of every keyboard shortcut."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        table = QtWidgets.QTableWidget(len(SHORTCUTS), 2)
        table.setHorizontalHeaderLabels(["keys", "action"])
        for r, (keys, action) in enumerate(SHORTCUTS):
            table.setItem(r, 0, QtWidgets.QTableWidgetItem(keys))
            table.setItem(r, 1, QtWidgets.QTableWidgetItem(action))
        table.resizeColumnsToContents()
        table.horizontalHeader().setStretchLastSection(True)
        table.verticalHeader().hide()
        table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        QtGui.QShortcut(QtGui.QKeySequence("Ctrl+W"), self, self.reject)  # Esc: a dialog's own
        box = QtWidgets.QVBoxLayout(self)
        box.addWidget(table)
        box.addWidget(buttons)
        self.table = table
        # as large as its rows, whole (a trial: 560 px cut them behind a scroll bar), within
        # the screen
        margins = box.contentsMargins()
        frame = 2 * table.frameWidth()
        width = (
            table.horizontalHeader().length() + frame + table.verticalScrollBar().sizeHint().width()
        )
        height = table.verticalHeader().length() + table.horizontalHeader().height() + frame
        height += buttons.sizeHint().height() + box.spacing()
        width += margins.left() + margins.right()
        height += margins.top() + margins.bottom()
        screen = self.screen().availableGeometry() if self.screen() else None
        if screen is not None:
            width, height = min(width, screen.width()), min(height, screen.height() - 60)
        self.resize(width, height)
