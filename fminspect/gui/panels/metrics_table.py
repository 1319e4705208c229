"""The metrics table: one row per model, one column per measure, best per column marked."""

from __future__ import annotations

import csv
import functools
import io
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.mirror import Mirror
from fminspect.gui.panels.curves import legend_icon
from fminspect.metrics import MEASURES, MEASURES_BY_KEY, Params, SuiteResult, default_keys

#: what Qt passes as an item's index
_Index = QtCore.QModelIndex | QtCore.QPersistentModelIndex
SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1

#: Columns that follow the threshold slider: (name, how to read curve point t from a result).
AT_THRESHOLD = (
    ("Fm@t", lambda r, t: r.fmeasure.fmeasure.curve[t]),
    ("Em@t", lambda r, t: r.emeasure.curve[t]),
    ("IoU@t", lambda r, t: r.overlap.iou.curve[t]),
)
_AT_KEYS = dict(AT_THRESHOLD)
_ROLES = {
    QtCore.Qt.ItemDataRole.DisplayRole,
    SORT_ROLE,
    QtCore.Qt.ItemDataRole.TextAlignmentRole,
    QtCore.Qt.ItemDataRole.FontRole,
    QtCore.Qt.ItemDataRole.BackgroundRole,
    QtCore.Qt.ItemDataRole.ToolTipRole,
}
_HEADER_ROLES = (
    QtCore.Qt.ItemDataRole.DisplayRole,
    QtCore.Qt.ItemDataRole.ToolTipRole,
    QtCore.Qt.ItemDataRole.DecorationRole,
)
_RIGHT = int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
#: the background of the best value per column (also in the dataset view)
BEST_BRUSH = QtGui.QBrush(QtGui.QColor(70, 160, 90, 110))


@functools.cache
def bold_font() -> QtGui.QFont:  # made on first use: a QFont needs the application
    font = QtGui.QFont()
    font.setBold(True)
    return font


_HIGHER = {"Fm@t": True, "Em@t": True, "IoU@t": True}


def _higher_is_better(key: str) -> bool:
    return _HIGHER[key] if key in _HIGHER else MEASURES_BY_KEY[key].higher_is_better


class MetricsTableModel(QtCore.QAbstractTableModel):
    """Scores of every model (rows) for every measure (columns)."""

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.models: list[str] = []
        self.colours: dict[str, int] = {}
        self.names: dict[str, str] = {}  # display names (aliases)
        self.keys: list[str] = []
        self.scores: dict[str, dict[str, float]] = {}
        self.results: dict[str, SuiteResult] = {}
        self.params = Params()
        self.threshold = 128
        #: why the shown sample cannot be scored (its GT unreadable), or ""
        self.unscored = ""
        self._best: dict[str, float] = {}
        self._marked: set[tuple[int, int]] = set()  # the cells marked best

    def reset(
        self,
        models: list[str],
        with_image: bool,
        params: Params,
        colours: dict[str, int] | None = None,
        names: dict[str, str] | None = None,
        keys: Sequence[str] | None = None,
    ) -> None:
        """New sample or new parameters: empty the table, keep the layout. ``colours``: each
        model's palette index, as in the curves; ``names``: display names; ``keys``: the
        measures shown (default: the default ones)."""
        self.beginResetModel()
        self.models = list(models)
        self.colours = colours or {m: i for i, m in enumerate(models)}
        self.names = dict(names or {})
        shown = set(default_keys() if keys is None else keys)
        self.keys = [
            m.key for m in MEASURES if m.key in shown and (with_image or not m.needs_image)
        ]
        self.keys += [name for name, _ in AT_THRESHOLD]
        self.scores = {}
        self.results = {}
        self.params = params
        self._best = {}
        self._marked = set()
        self.endResetModel()

    def set_results(self, results: Mapping[str, SuiteResult]) -> None:
        """Fill these models' rows (results arrive a few models at a time)."""
        rows = []
        for model, result in results.items():
            if model in self.models:
                self.results[model] = result
                self.scores[model] = result.scores()
                rows.append(self.models.index(model))
        if rows:
            self._refresh(rows)

    def set_threshold(self, index: int) -> None:
        """Move the @t columns to curve point ``index``."""
        self.threshold = index
        self._refresh(None)

    def _refresh(self, rows: Sequence[int] | None) -> None:
        """Recompute the @t values and the best per column; say which cells changed: the
        ``rows`` of new results (else the @t columns), and those whose best mark changed."""
        for model, result in self.results.items():
            for name, get in AT_THRESHOLD:
                self.scores[model][name] = float(get(result, self.threshold))
        self._best = {}
        for key in self.keys:
            values = [s[key] for s in self.scores.values() if key in s and not math.isnan(s[key])]
            if len(values) > 1 and min(values) != max(values):  # all equal: nobody is best
                better = max if _higher_is_better(key) else min
                self._best[key] = better(values)
        if not self.models or not self.keys:
            return
        last_col = len(self.keys) - 1
        if rows is not None:
            for row in sorted(rows):
                self.dataChanged.emit(self.index(row, 0), self.index(row, last_col))
        else:  # the @t columns' values
            for col, key in enumerate(self.keys):
                if key in _AT_KEYS:
                    self.dataChanged.emit(self.index(0, col), self.index(len(self.models) - 1, col))
        # the cells that became or stopped being the best of their column: their marks
        marked, self._marked = self._marked, self._best_cells()
        marks = [QtCore.Qt.ItemDataRole.FontRole, QtCore.Qt.ItemDataRole.BackgroundRole]
        for r, col in sorted(marked ^ self._marked):
            if rows is None or r not in rows:
                self.dataChanged.emit(self.index(r, col), self.index(r, col), marks)

    def _best_cells(self) -> set[tuple[int, int]]:
        """(row, column) of every cell marked as the best of its column."""
        return {
            (r, c)
            for c, key in enumerate(self.keys)
            if key in self._best
            for r, model in enumerate(self.models)
            if self.scores.get(model, {}).get(key) == self._best[key]
        }

    def label(self, key: str) -> str:
        """Header text naming the exact variant."""
        if key in _AT_KEYS:
            extra = f" β²={self.params.beta2:g}" if key == "Fm@t" else ""
            return f"{key}{extra} t={self.threshold}"
        return MEASURES_BY_KEY[key].label(self.params)

    def rowCount(self, parent: _Index = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.models)

    def columnCount(self, parent: _Index = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.keys)

    def value(self, row: int, col: int) -> float | None:
        return self.scores.get(self.models[row], {}).get(self.keys[col])

    def data(self, index: _Index, role: int = QtCore.Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or role not in _ROLES:
            return None  # most of the roles a repaint asks for, answered before any work
        if role == QtCore.Qt.ItemDataRole.ToolTipRole:
            return self.tooltip(index.row(), index.column())
        return self.cell_data(index.row(), index.column()).get(role)

    def tooltip(self, row: int, col: int) -> str:
        """A cell's tooltip: the model, the exact variant and which way is better."""
        key = self.keys[col]
        if self.unscored:
            return f"{self.models[row]}: no scores, the GT cannot be read ({self.unscored})"
        return (
            f"{self.models[row]} — {self.label(key)}\n"
            f"{'higher' if _higher_is_better(key) else 'lower'} is better\n"
            f"{self.params.norm.label}\nclick to explain"
        )

    def cell_data(self, row: int, col: int) -> dict[int, Any]:
        """A cell's values by role (what :class:`~fminspect.gui.mirror.Mirror` copies; the
        tooltip, :meth:`tooltip`, is made when asked for)."""
        v = self.value(row, col)
        key = self.keys[col]
        waiting = "–" if self.unscored else "…"  # none to come, or still being computed
        roles: dict[int, Any] = {
            QtCore.Qt.ItemDataRole.DisplayRole: (
                waiting if v is None else ("nan" if math.isnan(v) else f"{v:.4f}")
            ),
            SORT_ROLE: -math.inf if v is None or math.isnan(v) else v,
            QtCore.Qt.ItemDataRole.TextAlignmentRole: _RIGHT,
        }
        if v is not None and key in self._best and v == self._best[key]:
            roles[QtCore.Qt.ItemDataRole.FontRole] = bold_font()
            roles[QtCore.Qt.ItemDataRole.BackgroundRole] = BEST_BRUSH
        return roles

    def headerData(
        self,
        section: int,
        orientation: QtCore.Qt.Orientation,
        role: int = QtCore.Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if (
            role == QtCore.Qt.ItemDataRole.DecorationRole
            and orientation == QtCore.Qt.Orientation.Vertical
        ):
            return legend_icon(self.colours[self.models[section]])  # as in the curves
        if (
            role == QtCore.Qt.ItemDataRole.ToolTipRole
            and orientation == QtCore.Qt.Orientation.Vertical
        ):
            return self.models[section]
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            if orientation == QtCore.Qt.Orientation.Horizontal:
                key = self.keys[section]
                arrow = "↑" if _higher_is_better(key) else "↓"
                # wrapped, not elided: the variant is the point of the header
                name, _, variant = self.label(key).partition(" ")
                return "\n".join(
                    [f"{name} {arrow}", *textwrap.wrap(variant, 11, break_long_words=False)]
                )
            model = self.models[section]
            return self.names.get(model, model)
        if (
            role == QtCore.Qt.ItemDataRole.ToolTipRole
            and orientation == QtCore.Qt.Orientation.Horizontal
        ):
            key = self.keys[section]
            if key in _AT_KEYS:
                return (
                    f"{self.label(key)}: the binarisation floor(255·p) ≥ t of the threshold slider"
                )
            info = MEASURES_BY_KEY[key]
            return f"{info.label(self.params)} — {info.family}; dataset value: {info.aggregation}"
        return None

    def to_csv(self) -> str:
        """The table as CSV, headers naming every variant."""
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["model", "alias", *[self.label(k) for k in self.keys], "normalization"])
        for m in self.models:
            s = self.scores.get(m, {})
            w.writerow(
                [
                    m,
                    self.names.get(m, ""),
                    *[repr(s[k]) if k in s else "" for k in self.keys],
                    self.params.norm.label,
                ]
            )
        return buf.getvalue()


class MetricsTablePanel(QtWidgets.QWidget):
    """Sortable, copyable table of every measure for every model.

    Signals
    -------
    cell_activated(str, str)
        (model, measure key) clicked — opens the explain view.
    rows_room_changed()
        What the rows leave of the panel changed: its width (the caption may take another
        line) or the header's height (titles of two or three lines).
    """

    cell_activated = QtCore.Signal(str, str)
    rows_room_changed = QtCore.Signal()

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.rows_room_changed.emit()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("metricsPanel")
        self.model = MetricsTableModel(self)
        # the view reads a C++ copy of the cells (see fminspect.gui.mirror)
        cell_roles = tuple(_ROLES - {QtCore.Qt.ItemDataRole.ToolTipRole})
        self.mirror = Mirror(self.model, cell_roles, _HEADER_ROLES, self)
        self.proxy = QtCore.QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.mirror.items)
        self.proxy.setSortRole(SORT_ROLE)
        self.view = QtWidgets.QTableView()
        self.view.setObjectName("metricsTable")
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.proxy.sort(-1)  # model order until the user clicks a header
        self.view.horizontalHeader().setSortIndicator(-1, QtCore.Qt.SortOrder.AscendingOrder)
        self.view.setAlternatingRowColors(True)
        self.view.horizontalHeader().setDefaultSectionSize(92)
        self.view.horizontalHeader().setMinimumHeight(42)
        self.view.verticalHeader().setDefaultSectionSize(22)
        self.view.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.view.clicked.connect(self._on_clicked)
        copy = QtGui.QAction("Copy table as CSV", self.view)
        copy.setShortcut(QtGui.QKeySequence.StandardKey.Copy)
        copy.triggered.connect(self.copy_csv)
        self.view.addAction(copy)
        # if the view ever gets the key press itself (Qt's item views copy the current cell
        # on Ctrl+C), it still copies the whole table, as documented
        self.view.installEventFilter(self)
        self.view.horizontalHeader().installEventFilter(self)
        self.view.setItemDelegate(_TooltipDelegate(self.model, self.proxy, self.view))
        self.view.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.ActionsContextMenu)
        self.caption = QtWidgets.QLabel()
        self.caption.setWordWrap(True)
        self.caption.setStyleSheet("color: gray; font-size: 9pt")
        box = QtWidgets.QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.view)
        box.addWidget(self.caption)

    def reset(
        self,
        models: list[str],
        with_image: bool,
        params: Params,
        colours: dict[str, int] | None = None,
        names: dict[str, str] | None = None,
        keys: Sequence[str] | None = None,
    ) -> None:
        """New sample, parameters or measures."""
        self.model.reset(models, with_image, params, colours, names, keys)
        # the copy of the cells is updated in place (no reset reaches the view): a row
        # selected for the previous sample would stay selected
        self.view.clearSelection()
        self.caption.setText(
            f"{params.norm.label} · max/mean/min: of this image's 256-threshold curve · "
            "adp: threshold 2·mean · bin: threshold 0.5 · best per column highlighted · click "
            "a cell to explain it · View → Measures… chooses the columns"
            + ("" if with_image else " · CCm needs the image")
        )

    def set_names(self, names: dict[str, str]) -> None:
        """New display names (aliases) of the models."""
        self.model.names = dict(names)
        if self.model.models:
            self.model.headerDataChanged.emit(
                QtCore.Qt.Orientation.Vertical, 0, len(self.model.models) - 1
            )

    def set_results(self, results: Mapping[str, SuiteResult]) -> None:
        """Fill these models' rows."""
        self.model.set_results(results)

    def set_threshold(self, index: int) -> None:
        """Follow the threshold slider."""
        self.model.set_threshold(index)
        self.model.headerDataChanged.emit(
            QtCore.Qt.Orientation.Horizontal, 0, len(self.model.keys) - 1
        )

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if (
            watched is self.view.horizontalHeader()
            and event.type() == QtCore.QEvent.Type.Resize
            and event.size().height() != event.oldSize().height()  # type: ignore[attr-defined]
        ):
            self.rows_room_changed.emit()
        if (
            watched is self.view
            and event.type() == QtCore.QEvent.Type.KeyPress
            and event.matches(QtGui.QKeySequence.StandardKey.Copy)  # type: ignore[attr-defined]
        ):
            self.copy_csv()
            return True
        return super().eventFilter(watched, event)

    def copy_csv(self) -> None:
        """Put the table on the clipboard as CSV."""
        QtWidgets.QApplication.clipboard().setText(self.model.to_csv())

    def _on_clicked(self, index: QtCore.QModelIndex) -> None:
        src = self.proxy.mapToSource(index)
        key = self.model.keys[src.column()]
        self.cell_activated.emit(self.model.models[src.row()], key.split("@")[0])


class _TooltipDelegate(QtWidgets.QStyledItemDelegate):
    """Makes a cell's tooltip when Qt asks for one (:meth:`MetricsTableModel.tooltip`): the
    copy of the cells the view reads has none, and only this, not painting, calls Python."""

    def __init__(
        self,
        model: MetricsTableModel,
        proxy: QtCore.QSortFilterProxyModel,
        parent: QtWidgets.QWidget,
    ) -> None:
        super().__init__(parent)
        self._model, self._proxy = model, proxy

    def helpEvent(
        self,
        event: QtGui.QHelpEvent,
        view: QtWidgets.QAbstractItemView,
        option: QtWidgets.QStyleOptionViewItem,
        index: QtCore.QModelIndex | QtCore.QPersistentModelIndex,
    ) -> bool:
        if event.type() != QtCore.QEvent.Type.ToolTip or not index.isValid():
            return super().helpEvent(event, view, option, index)
        source = self._proxy.mapToSource(self._proxy.index(index.row(), index.column()))
        text = self._model.tooltip(source.row(), source.column())
        QtWidgets.QToolTip.showText(event.globalPos(), text, view, view.visualRect(index))
        return True
