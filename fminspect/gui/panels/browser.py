"""The dataset browser: every sample with per-model scores, sortable three ways.

* by a measure of one model (worst or best first);
* by the difference between two models on a measure (where A beats B, or loses);
* "measures disagree": by how differently two measures rank the models on that sample
  (Kendall's τ between the two rankings; lowest first) — the most interesting cases.

The numbers come from a background batch run (:mod:`fminspect.batch`) over the dataset;
the panel only sorts and shows them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from PySide6 import QtCore, QtWidgets

from fminspect.meta.rankings import disagreement
from fminspect.metrics import MEASURE_KEYS, MEASURES_BY_KEY

SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1


class BrowserModel(QtCore.QAbstractTableModel):
    """Rows: samples. Columns: sample, one per model, Δ(A − B), τ(X, Y)."""

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.samples: list[str] = []
        self.models: list[str] = []
        self.scores: dict[str, dict[str, dict[str, float]]] = {}  # sample → model → key → v
        self.measure = "Sm"
        self.pair = ("", "")
        self.measures_xy = ("maxFm", "Sm")
        self._tau: dict[str, float] = {}  # sample → τ(X, Y), made once per rows or view

    def set_rows(self, samples: list[str], models: list[str], rows: list[dict[str, Any]]) -> None:
        """Per-image rows from a batch run (dataset, method, image, scores…)."""
        self.beginResetModel()
        self.samples, self.models = samples, models
        self.scores = defaultdict(dict)
        for row in rows:
            self.scores[row["image"]][row["method"]] = {k: row[k] for k in MEASURE_KEYS if k in row}
        if models and self.pair == ("", ""):
            self.pair = (models[0], models[1] if len(models) > 1 else models[0])
        self._tau = {}
        self.endResetModel()

    def set_view(self, measure: str, pair: tuple[str, str], xy: tuple[str, str]) -> None:
        """Which measure, model pair and measure pair the columns show."""
        self.beginResetModel()
        self.measure, self.pair, self.measures_xy = measure, pair, xy
        self._tau = {}
        self.endResetModel()

    def columnCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.models) + 3

    def rowCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.samples)

    def cell(self, row: int, col: int) -> float | str:
        name = self.samples[row]
        per = self.scores.get(name, {})
        if col == 0:
            return name
        if col <= len(self.models):
            return per.get(self.models[col - 1], {}).get(self.measure, math.nan)
        if col == len(self.models) + 1:
            a, b = self.pair
            va = per.get(a, {}).get(self.measure, math.nan)
            vb = per.get(b, {}).get(self.measure, math.nan)
            return va - vb
        if name not in self._tau:  # asked for again and again while sorting
            self._tau[name] = disagreement(per, *self.measures_xy)
        return self._tau[name]

    def data(
        self, index: QtCore.QModelIndex, role: int = QtCore.Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid():
            return None
        v = self.cell(index.row(), index.column())
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            return v if isinstance(v, str) else ("–" if math.isnan(v) else f"{v:.3f}")
        if role == SORT_ROLE:
            if isinstance(v, str):
                from fminspect.io.discovery import natural_key

                return str(natural_key(v))
            return math.inf if math.isnan(v) else v
        return None

    def headerData(
        self,
        section: int,
        orientation: QtCore.Qt.Orientation,
        role: int = QtCore.Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if (
            role != QtCore.Qt.ItemDataRole.DisplayRole
            or orientation != QtCore.Qt.Orientation.Horizontal
        ):
            return None
        if section == 0:
            return "sample"
        if section <= len(self.models):
            return self.models[section - 1]
        if section == len(self.models) + 1:
            return f"Δ {self.pair[0]} − {self.pair[1]}"
        return f"τ({self.measures_xy[0]}, {self.measures_xy[1]})"


class DatasetBrowserPanel(QtWidgets.QWidget):
    """Samples with their scores; choosing one loads it.

    Signals
    -------
    sample_chosen(str)
        The sample name the user picked.
    """

    sample_chosen = QtCore.Signal(str)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = BrowserModel(self)
        self.proxy = QtCore.QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.dataset = QtWidgets.QComboBox()
        self.measure = QtWidgets.QComboBox()
        self.measure.addItems(list(MEASURE_KEYS))
        self.measure.setCurrentText("Sm")
        self.model_a, self.model_b = QtWidgets.QComboBox(), QtWidgets.QComboBox()
        self.measure_x, self.measure_y = QtWidgets.QComboBox(), QtWidgets.QComboBox()
        for combo, value in ((self.measure_x, "maxFm"), (self.measure_y, "Sm")):
            combo.addItems(list(MEASURE_KEYS))
            combo.setCurrentText(value)
        self.order = QtWidgets.QComboBox()
        self.order.addItems(
            [
                "sample name",
                "worst first (measure, model A)",
                "A − B: A worse first",
                "measures disagree first",
            ]
        )
        self.status = QtWidgets.QLabel("")
        self.status.setStyleSheet("color: gray")
        # wrapped, so that a long status never widens the dock (and shrinks the maps)
        self.status.setWordWrap(True)
        self.view = QtWidgets.QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().hide()
        self.view.horizontalHeader().setDefaultSectionSize(64)
        self.view.clicked.connect(self._on_clicked)
        form = QtWidgets.QFormLayout()
        form.addRow("dataset", self.dataset)
        form.addRow("measure", self.measure)
        pair = QtWidgets.QHBoxLayout()
        pair.addWidget(self.model_a)
        pair.addWidget(QtWidgets.QLabel("vs"))
        pair.addWidget(self.model_b)
        form.addRow("models A, B", pair)
        xy = QtWidgets.QHBoxLayout()
        xy.addWidget(self.measure_x)
        xy.addWidget(QtWidgets.QLabel("vs"))
        xy.addWidget(self.measure_y)
        form.addRow("disagreement", xy)
        form.addRow("order", self.order)
        box = QtWidgets.QVBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        box.addLayout(form)
        box.addWidget(self.view)
        box.addWidget(self.status)
        for combo in (self.measure, self.model_a, self.model_b, self.measure_x, self.measure_y):
            combo.currentTextChanged.connect(self._on_view_changed)
        self.order.currentIndexChanged.connect(self.apply_order)

    def set_rows(self, samples: list[str], models: list[str], rows: list[dict[str, Any]]) -> None:
        """Show a dataset's per-image scores."""
        for combo in (self.model_a, self.model_b):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(models)
            combo.blockSignals(False)
        if len(models) > 1:
            self.model_b.setCurrentIndex(1)
        self.model.set_rows(samples, models, rows)
        self._on_view_changed()

    def _on_view_changed(self, *_: object) -> None:
        self.model.set_view(
            self.measure.currentText(),
            (self.model_a.currentText(), self.model_b.currentText()),
            (self.measure_x.currentText(), self.measure_y.currentText()),
        )
        self.apply_order()

    def apply_order(self, *_: object) -> None:
        """Sort by the chosen order (clicking a header sorts by that column instead)."""
        mode = self.order.currentIndex()
        models = self.model.models
        if mode == 0:
            self.proxy.sort(0, QtCore.Qt.SortOrder.AscendingOrder)
        elif mode == 1 and models:
            col = (
                1 + models.index(self.model_a.currentText())
                if self.model_a.currentText() in models
                else 1
            )
            higher = MEASURES_BY_KEY[self.model.measure].higher_is_better
            self.proxy.sort(
                col,
                QtCore.Qt.SortOrder.AscendingOrder
                if higher
                else QtCore.Qt.SortOrder.DescendingOrder,
            )
        elif mode == 2:
            higher = MEASURES_BY_KEY[self.model.measure].higher_is_better
            self.proxy.sort(
                len(models) + 1,
                QtCore.Qt.SortOrder.AscendingOrder
                if higher
                else QtCore.Qt.SortOrder.DescendingOrder,
            )
        else:
            self.proxy.sort(len(models) + 2, QtCore.Qt.SortOrder.AscendingOrder)

    def ordered_samples(self) -> list[str]:
        """Sample names in the order currently shown."""
        return [self.proxy.data(self.proxy.index(r, 0)) for r in range(self.proxy.rowCount())]

    def select(self, name: str) -> None:
        """Highlight ``name`` without emitting."""
        for r in range(self.proxy.rowCount()):
            if self.proxy.data(self.proxy.index(r, 0)) == name:
                self.view.blockSignals(True)
                self.view.selectRow(r)
                self.view.blockSignals(False)
                return

    def _on_clicked(self, index: QtCore.QModelIndex) -> None:
        self.sample_chosen.emit(self.proxy.data(self.proxy.index(index.row(), 0)))
