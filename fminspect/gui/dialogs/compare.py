"""The dataset view's "Compare with a table…": what ``fminspect compare`` reports, in a window.

One row per value of the other table — theirs, ours, the difference, and whether fminspect
agrees, which convention reproduces it, or that none does — coloured by verdict, the
unexplained and explained values first, sortable; the summary (which hypothesis explains how many values, what was tried) above it;
the report saved as text, Markdown, CSV or JSON exactly as the command writes it.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.batch.compare import render, rows, summary_lines

#: Columns of the table (keys of :func:`fminspect.batch.compare.rows`).
COLUMNS = ("dataset", "method", "measure", "theirs", "ours", "difference", "why")
#: Report formats: file suffix → :func:`fminspect.batch.compare.render`'s format.
FORMATS = {".txt": "text", ".md": "markdown", ".csv": "csv", ".json": "json"}
#: Background of each verdict (colour-blind-safe tints: blue, orange, grey; an agreeing
#: value is left plain).
VERDICT_COLOURS = {
    "explained": QtGui.QColor(0, 114, 178, 90),
    "unexplained": QtGui.QColor(230, 159, 0, 110),
    "not here": QtGui.QColor(128, 128, 128, 60),
}
#: Rows are listed what needs a look first.
VERDICT_ORDER = {"unexplained": 0, "explained": 1, "not here": 2, "agrees": 3}


#: Where a cell keeps its number for sorting.
SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1


class _Item(QtWidgets.QTableWidgetItem):
    """A cell that sorts by its number when it has one (the text keeps the printed digits)."""

    def __lt__(self, other: QtWidgets.QTableWidgetItem) -> bool:
        a, b = self.data(SORT_ROLE), other.data(SORT_ROLE)
        if isinstance(a, float) and isinstance(b, float):
            return a < b
        return super().__lt__(other)


def _number(text: str) -> float | None:
    try:
        return float(text.replace("−", "-"))
    except ValueError:
        return None


class CompareDialog(QtWidgets.QDialog):
    """The report of one comparison (a :class:`~fminspect.batch.compare.Comparison`)."""

    def __init__(self, comparison: Any, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareDialog")
        self.comparison = comparison
        self.setWindowTitle(f"Compare with {Path(comparison.reference.source).name}")
        summary = QtWidgets.QLabel(
            "<br>".join(html.escape(line) for line in summary_lines(comparison))
        )
        summary.setObjectName("compareSummary")
        summary.setWordWrap(True)
        summary.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        table_rows = sorted(rows(comparison), key=lambda r: VERDICT_ORDER.get(r["verdict"], 4))
        self.table = QtWidgets.QTableWidget(len(table_rows), len(COLUMNS))
        self.table.setObjectName("compareTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        for i, row in enumerate(table_rows):
            colour = VERDICT_COLOURS.get(row["verdict"])
            for j, col in enumerate(COLUMNS):
                item = _Item(row[col])
                if col in ("theirs", "ours", "difference"):
                    item.setTextAlignment(
                        QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter
                    )
                    number = _number(row[col])
                    if number is not None:
                        item.setData(SORT_ROLE, number)
                if colour is not None:
                    item.setBackground(colour)
                item.setToolTip(row["why"])
                self.table.setItem(i, j, item)
        # sortable by a click; enabling it would sort by the first column at once
        self.table.horizontalHeader().setSortIndicator(-1, QtCore.Qt.SortOrder.AscendingOrder)
        self.table.setSortingEnabled(True)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        save = QtWidgets.QPushButton("Save report…")
        save.setObjectName("compareSave")
        save.clicked.connect(self._save)
        close = QtWidgets.QPushButton("Close")
        close.clicked.connect(self.close)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(save)
        buttons.addWidget(close)
        box = QtWidgets.QVBoxLayout(self)
        box.addWidget(summary)
        box.addWidget(self.table, 1)
        box.addLayout(buttons)
        self.resize(1100, 600)

    def save(self, path: Path | str) -> Path:
        """Write the report to ``path``, in the format its suffix names (.txt, .md, .csv,
        .json; another suffix: text), atomically."""
        from fminspect.io.atomic import write_text

        path = Path(path)
        write_text(path, render(self.comparison, FORMATS.get(path.suffix.lower(), "text")))
        return path

    def _save(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self,
            "Save the comparison",
            "compare.md",
            "Markdown (*.md);;text (*.txt);;CSV (*.csv);;JSON (*.json)",
        )
        if not path:
            return
        try:
            self.save(path)
        except OSError as exc:
            QtWidgets.QMessageBox.warning(self, "Save the comparison", f"{path}: {exc}")
