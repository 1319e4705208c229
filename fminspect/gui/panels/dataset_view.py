"""The dataset view: how the methods rank over whole datasets, and where a pair disagrees.

* A table of methods × measures, per dataset side by side, holding exactly the values
  ``fminspect eval`` writes to ``summary.json`` (the same :class:`MethodResult` s, made by the
  same :class:`~fminspect.batch.evaluation.Evaluation` from the same store): max of the
  averaged curve for maxFm, the mean of per-image values for Sm, and so on — each header
  names its aggregation. A coverage column says how many of the dataset's images each method
  was scored on (⚠ when some are missing or unreadable). Sortable, best per column marked,
  copyable as CSV.
* The dataset-level PR, F-measure and E-measure curves (the averaged curves) of the shown
  methods; the methods whose rows are selected are highlighted in them.
* Choosing two methods (two rows of the table, or the A/B lists) lists the images of the
  dataset where the two differ most on a measure, and says on how many images each is better
  — where the ranking of the whole dataset flips. Clicking an image opens it.
* **Intervals and tests** (``fminspect eval --ci``, the same
  :meth:`~fminspect.batch.evaluation.Evaluation.statistics` on the same store): every value
  gets its bootstrap interval (± in the cell, both ends in its tip) and the letters of the
  groups of methods not significantly different; the pair list says whether the chosen
  pair differs significantly, with the test, n and B.
* **Compare with a table…** (``fminspect compare``): which convention, or which images,
  explain the difference between these values and a paper's table, another tool's JSON or
  XLSX, or another ``eval`` folder, in a window of its own.

Both run in the scoring service (:mod:`fminspect.batch.tasks`), never in the window's
thread; the panel only asks for them (:attr:`DatasetViewPanel.statistics_requested`,
:attr:`DatasetViewPanel.compare_requested`) and shows what comes back.
"""

from __future__ import annotations

import csv
import html
import io
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.batch.evaluation import MethodResult
from fminspect.batch.scores import ScoreMatrix
from fminspect.batch.significance import RESAMPLES, SPREAD_NOTE, Setup, spread_text
from fminspect.gui.panels.curves import THRESHOLDS, legend_icon, model_pen
from fminspect.gui.panels.metrics_table import BEST_BRUSH, bold_font
from fminspect.gui.panels.plain_items import CurveItem
from fminspect.gui.panels.unit_plot import keep_unit_square
from fminspect.inspector.model import InspectorModel
from fminspect.inspector.selection import ModelSelection
from fminspect.inspector.walk import Walk
from fminspect.metrics import MEASURE_KEYS, MEASURES_BY_KEY, default_keys

#: What the dataset view's third plot can show: choice → (x curve or None for the
#: threshold, y curve, title, axis labels). The ROC's curves come with every evaluation
#: that has a confusion-count measure (:data:`fminspect.batch.evaluation.ROC_CURVES`).
DATASET_THIRD: dict[str, tuple[str | None, str, str, tuple[str, str]]] = {
    "E-measure": (None, "Em", "mean E", ("threshold", "E")),
    "IoU": (None, "IoU", "mean IoU", ("threshold", "IoU")),
    "Dice": (None, "Dice", "mean Dice", ("threshold", "Dice")),
    "ROC": ("FPR", "Recall", "mean ROC", ("false positive rate", "hit rate (recall)")),
}

#: what Qt passes as an item's index
_Index = QtCore.QModelIndex | QtCore.QPersistentModelIndex
SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1
#: Images listed for a method pair.
PAIR_ROWS = 200
#: Dataset curves added per event-loop turn, to one plot (as pyqtgraph items each cost the
#: GUI thread ~3 ms, and the plot's repaint ~12 ms; they are Qt's own items now).
CURVES_PER_TURN = 8


def short_test(test: str) -> str:
    """The test's name without its formula (``statistics.json``'s ``setup.test``)."""
    return test.split(":")[0].split(" (")[0]


def n_text(setup: dict[str, Any]) -> str:
    """What the tests counted: ``1000 images``, or ``40 groups`` of a grouped evaluation."""
    return f"{setup.get('units', setup['images'])} {setup.get('unit', 'images')}"


def p_text(p: float) -> str:
    """``= 0.0123``, or ``< 0.0001`` for a p-value too small to print usefully."""
    return "< 0.0001" if p < 1e-4 else f"= {p:.3g}"


class DatasetTableModel(QtCore.QAbstractTableModel):
    """Rows: methods. Columns: per dataset, images covered, then each measure."""

    def __init__(self, selection: ModelSelection, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.selection = selection
        self.datasets: list[str] = []
        self.methods: list[str] = []
        self.results: dict[tuple[str, str], MethodResult] = {}
        self.columns: list[tuple[str, str]] = []  # (dataset, key or "coverage")
        self._best: dict[int, float] = {}
        #: {dataset: statistics.json's entry} (intervals, tests, groups), when made
        self.stats: dict[str, dict[str, Any]] = {}

    def set_statistics(self, stats: dict[str, dict[str, Any]]) -> None:
        """Show these intervals and groups (``{dataset: {"setup", "keys"}}``; ``{}``: none)."""
        self.stats = dict(stats)
        if self.columns and self.methods:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self.methods) - 1, len(self.columns) - 1)
            )

    def key_stats(self, dataset: str, key: str) -> dict[str, Any] | None:
        """The intervals, pairs and groups of ``key`` on ``dataset`` (None: not made)."""
        return self.stats.get(dataset, {}).get("keys", {}).get(key)

    def _interval(self, dataset: str, key: str, method: str) -> tuple[float, float] | None:
        st = self.key_stats(dataset, key)
        iv = st.get("intervals", {}).get(method) if st else None
        if iv is None or not all(math.isfinite(x) for x in iv):
            return None
        return float(iv[0]), float(iv[1])

    def set_results(self, results: dict[str, Sequence[MethodResult]]) -> None:
        """Show these datasets' results (``{dataset: results}``, in this order)."""
        self.beginResetModel()
        self.datasets = list(results)
        self.results = {(r.dataset, r.method): r for rs in results.values() for r in rs}
        methods: list[str] = []
        for rs in results.values():
            methods += [r.method for r in rs if r.method not in methods]
        self.methods = methods
        self.columns = []
        for d in self.datasets:
            keys = {k for r in results[d] for k in r.values}
            self.columns.append((d, "coverage"))
            self.columns += [(d, k) for k in MEASURE_KEYS if k in keys]
        self._best = {}
        for c, (_d, key) in enumerate(self.columns):
            if key == "coverage":
                continue
            vals = [self.value(row, c) for row in range(len(self.methods))]
            finite = [v for v in vals if v is not None and math.isfinite(v)]
            if finite:
                best = max if MEASURES_BY_KEY[key].higher_is_better else min
                self._best[c] = best(finite)
        self.endResetModel()

    def value(self, row: int, col: int) -> float | None:
        d, key = self.columns[col]
        r = self.results.get((d, self.methods[row]))
        if r is None:
            return None
        if key == "coverage":
            return float(r.n_images)
        return r.values.get(key)

    def rowCount(self, parent: _Index = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.methods)

    def columnCount(self, parent: _Index = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index: _Index, role: int = QtCore.Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        d, key = self.columns[col]
        r = self.results.get((d, self.methods[row]))
        v = self.value(row, col)
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            if r is None:
                return "–"
            if key == "coverage":
                return r.coverage.label
            if v is None or not math.isfinite(v):
                return "–"
            text = f"{v:.4f}"
            iv = self._interval(d, key, r.method)
            if iv is not None:
                text += " " + spread_text(v, iv, 4)
            st = self.key_stats(d, key)
            group = st.get("groups", {}).get(r.method, "") if st else ""
            return f"{text} {group}" if group else text
        if role == SORT_ROLE:
            if v is None or not math.isfinite(v):
                return -math.inf
            return v if key == "coverage" or MEASURES_BY_KEY[key].higher_is_better else -v
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and key != "coverage":
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        best = col in self._best and v is not None and v == self._best[col]
        if role == QtCore.Qt.ItemDataRole.FontRole and best:
            return bold_font()
        if role == QtCore.Qt.ItemDataRole.BackgroundRole and best:
            return BEST_BRUSH
        if role == QtCore.Qt.ItemDataRole.ToolTipRole and r is not None:
            if key == "coverage":
                c = r.coverage
                return (
                    f"{r.method} on {d}: {len(c.matched)} images scored, {len(c.missing)} "
                    f"without a map, {len(c.failed)} unreadable"
                )
            info = MEASURES_BY_KEY[key]
            n = r.counts.get(key, r.n_images)
            tip = f"{info.key}: {info.aggregation} — over {n} images"
            st = self.key_stats(d, key)
            if st is None:
                return tip
            setup = self.stats[d]["setup"]
            iv = self._interval(d, key, r.method)
            if iv is not None:
                tip += (
                    f"\n{setup['interval']} interval [{iv[0]:.6f}, {iv[1]:.6f}] "
                    f"(B = {setup['resamples']}, n = {n_text(setup)}"
                    + ("" if setup.get("reliable", True) else "; too few images: unreliable")
                    + ")"
                )
            group = st.get("groups", {}).get(r.method, "")
            if group:
                tip += (
                    f"\ngroup {group}: methods sharing a letter are not significantly "
                    f"different ({setup['test']}; {setup['correction']}; "
                    f"α = {setup['alpha']})"
                )
            elif r.method not in setup.get("tested_methods", [r.method]):
                tip += "\nnot tested: this method lacks images the others have"
            return tip
        return None

    def headerData(
        self,
        section: int,
        orientation: QtCore.Qt.Orientation,
        role: int = QtCore.Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation == QtCore.Qt.Orientation.Vertical:
            model = self.methods[section]
            if role == QtCore.Qt.ItemDataRole.DisplayRole:
                return self.selection.name(model)
            if role == QtCore.Qt.ItemDataRole.DecorationRole:
                return legend_icon(self.selection.colour_index(model))
            if role == QtCore.Qt.ItemDataRole.ToolTipRole:
                return model
            return None
        d, key = self.columns[section]
        prefix = f"{d}\n" if len(self.datasets) > 1 else ""
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            if key == "coverage":
                return prefix + "images"
            arrow = "↑" if MEASURES_BY_KEY[key].higher_is_better else "↓"
            return f"{prefix}{key} {arrow}"
        if role == QtCore.Qt.ItemDataRole.ToolTipRole and key != "coverage":
            info = MEASURES_BY_KEY[key]
            return f"{d}: {key} — {info.family}; dataset value: {info.aggregation}"
        return None

    def to_csv(self) -> str:
        """Every value at full precision, one row per (dataset, method)."""
        buf = io.StringIO()
        w = csv.writer(buf)
        keys = [k for k in MEASURE_KEYS if any((d, k) in self.columns for d in self.datasets)]
        stats = bool(self.stats)
        head = ["dataset", "method", "alias", "images", "coverage"]
        for k in keys:  # with statistics: each value's interval and group beside it
            head += [k, f"{k} low", f"{k} high", f"{k} group"] if stats else [k]
        w.writerow(head)
        for d in self.datasets:
            for m in self.methods:
                r = self.results.get((d, m))
                if r is None:
                    continue
                alias = self.selection.name(m)
                row: list[Any] = [d, m, alias if alias != m else "", r.n_images, r.coverage.label]
                for k in keys:
                    row.append(repr(float(r.values[k])) if k in r.values else "")
                    if stats:
                        iv = self._interval(d, k, m)
                        st = self.key_stats(d, k)
                        row += [repr(iv[0]), repr(iv[1])] if iv else ["", ""]
                        row.append(st.get("groups", {}).get(m, "") if st else "")
                w.writerow(row)
        return buf.getvalue()


def _curve_plots() -> dict[str, pg.PlotWidget]:
    """The dataset view's three plots: PR, F against the threshold, and the third (its
    title and axes follow the choice of what it shows)."""
    plots = {
        "pr": pg.PlotWidget(title="mean PR"),  # short: a laptop's plot is ~170 px wide
        "fm": pg.PlotWidget(title="mean F"),
        "em": pg.PlotWidget(),
    }
    labels = {"pr": ("recall", "precision"), "fm": ("threshold", "F")}
    for k, plot in plots.items():
        if k in labels:
            plot.setLabel("bottom", labels[k][0])
            plot.setLabel("left", labels[k][1])
        plot.showGrid(x=True, y=True, alpha=0.25)
        keep_unit_square(plot)  # the end ticks' labels whole at a laptop's ~150 px
        plot.setMinimumWidth(120)
        plot.getPlotItem().setContentsMargins(0, 0, 8, 0)  # the tick "1.0" whole
        plot.hideButtons()
    return plots


class _PairList(QtWidgets.QTableWidget):
    """The disagreement list; narrower than :attr:`BOTH_FROM` px it hides the A and B
    columns (their values are in each name's tooltip): at 1366 px the names were cut to
    ten characters beside them ("…3-Crab-28")."""

    BOTH_FROM = 330

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        narrow = event.size().width() < self.BOTH_FROM
        for col in (1, 2):
            if self.isColumnHidden(col) != narrow:
                self.setColumnHidden(col, narrow)


def _disagreement_list() -> QtWidgets.QTableWidget:
    """The list of the images where two methods disagree most."""
    table = _PairList(0, 4)
    table.setObjectName("pairDisagreement")
    table.setHorizontalHeaderLabels(["image", "A", "B", "A ahead"])
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(20)
    table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
    # the list takes the height left by the summary above it (never the reverse: a long
    # list squeezed the summary's last lines away)
    table.setSizePolicy(
        QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Ignored
    )
    table.setMinimumHeight(120)
    # a name too long for the column keeps its end, as the browser's list does: the class
    # and number (…Aquatic-3-Crab-28; a trial at 1366 px saw "COD1…-210" when both ends
    # were kept, the part every name shares and too little of the rest); the tooltip has it
    table.setTextElideMode(QtCore.Qt.TextElideMode.ElideLeft)
    table.setWordWrap(False)
    return table


class DatasetViewPanel(QtWidgets.QWidget):
    """The dataset table, the dataset curves and the method-pair disagreement list.

    Signals
    -------
    sample_chosen(str, str)
        (dataset, sample) the user clicked in the disagreement list.
    statistics_requested(object)
        The user asked for intervals and tests made this way (a
        :class:`~fminspect.batch.significance.Setup`).
    compare_requested(object)
        The user chose a table to compare with (its :class:`~pathlib.Path`).
    stop_requested()
        The user stopped the job under way.
    """

    sample_chosen = QtCore.Signal(str, str)
    statistics_requested = QtCore.Signal(object)
    compare_requested = QtCore.Signal(object)
    stop_requested = QtCore.Signal()

    def __init__(
        self,
        selection: ModelSelection,
        matrix_of: Callable[[str], ScoreMatrix | None],
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("datasetView")
        self.selection = selection
        self.matrix_of = matrix_of
        self.results: dict[str, Sequence[MethodResult]] = {}
        self._note = ""
        self._stale = False  # results given while hidden, not drawn yet
        self._pair_stale = False  # the browser's list changed while hidden
        #: the browser's walk (its dataset's filter): the pair list keeps to what it lists
        self.walk: Walk | None = None
        self.model = DatasetTableModel(selection, self)
        self.proxy = QtCore.QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QtWidgets.QTableView()
        self.table.setObjectName("datasetTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.proxy.sort(-1)
        self.table.horizontalHeader().setSortIndicator(-1, QtCore.Qt.SortOrder.AscendingOrder)
        self.table.horizontalHeader().setDefaultSectionSize(70)
        self.table.horizontalHeader().setMinimumHeight(36)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        copy = QtGui.QAction("Copy table as CSV", self.table)
        copy.setShortcut(QtGui.QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(QtCore.Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_csv)
        self.table.addAction(copy)
        self.table.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.ActionsContextMenu)
        self.table.selectionModel().selectionChanged.connect(self._on_rows_selected)
        self.status = QtWidgets.QLabel("no dataset scored yet")
        self.status.setObjectName("datasetStatus")
        self.status.setWordWrap(True)
        self.copy_button = QtWidgets.QPushButton("copy as CSV")
        self.copy_button.clicked.connect(self.copy_csv)
        # intervals and tests; compare
        self.stats_button = QtWidgets.QPushButton("Intervals && tests")
        self.stats_button.setObjectName("datasetStatsButton")
        self.stats_button.setToolTip(
            "bootstrap confidence intervals over images for every value, and paired tests "
            "between the methods (Holm-corrected) giving groups of methods not significantly "
            "different — what fminspect eval --ci writes; made in the background"
        )
        self.stats_button.clicked.connect(self._ask_statistics)
        self.stats_test = QtWidgets.QComboBox()
        self.stats_test.setObjectName("datasetStatsTest")
        self.stats_test.addItem("paired bootstrap", "bootstrap")
        self.stats_test.addItem("Wilcoxon", "wilcoxon")
        self.stats_test.setToolTip(
            "paired bootstrap t-test of the difference of dataset values, or the Wilcoxon "
            "signed-rank test on per-image differences (keys that are a mean over images)"
        )
        self.stats_resamples = QtWidgets.QSpinBox()
        self.stats_resamples.setObjectName("datasetStatsResamples")
        # the resampling weights take 24·B·n bytes in the service: 10,000 × 5,000 images
        # is 1.2 GB (fminspect eval --resamples has no such bound)
        self.stats_resamples.setRange(100, 10_000)
        self.stats_resamples.setSingleStep(500)
        self.stats_resamples.setValue(RESAMPLES)
        self.stats_resamples.setPrefix("B = ")
        self.stats_resamples.setToolTip("bootstrap resamples of the images")
        self.compare_button = QtWidgets.QPushButton("Compare with a table…")
        self.compare_button.setObjectName("datasetCompareButton")
        self.compare_button.setToolTip(
            "why does a paper's number differ from these? Choose its table (CSV, JSON, XLSX "
            "or another eval folder): every convention is tried, as fminspect compare does"
        )
        menu = QtWidgets.QMenu(self.compare_button)
        menu.addAction("a table file (CSV, JSON, XLSX)…", self._ask_compare_file)
        menu.addAction("another eval folder…", self._ask_compare_folder)
        self.compare_button.setMenu(menu)
        self.stop_button = QtWidgets.QPushButton("stop")
        self.stop_button.setObjectName("datasetTaskStop")
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.hide()
        self.task_note = QtWidgets.QLabel("")
        self.task_note.setObjectName("datasetTaskNote")
        self.task_note.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # file names, errors
        self.task_note.setWordWrap(True)
        for w in (self.stats_button, self.compare_button):
            w.setEnabled(False)  # until a dataset's values are there
        # curves of one dataset
        self.curve_dataset = QtWidgets.QComboBox()
        self.third = QtWidgets.QComboBox()  # what the third plot shows
        self.third.setObjectName("datasetCurvesThird")
        self.third.addItems(list(DATASET_THIRD))
        self.third.setToolTip(
            "the third plot: a mean curve against the threshold, or the ROC (hit rate = "
            "recall against the false positive rate, both averaged over the images)"
        )
        self.plots = _curve_plots()
        # method pair
        self.pair_a, self.pair_b = QtWidgets.QComboBox(), QtWidgets.QComboBox()
        self.pair_measure = QtWidgets.QComboBox()
        self.pair_measure.addItems(default_keys())
        self.pair_measure.setCurrentText("Sm")
        self.pair_dataset = QtWidgets.QComboBox()
        self.pair_summary = QtWidgets.QLabel("")
        self.pair_summary.setObjectName("pairSummary")
        self.pair_summary.setWordWrap(True)
        self.pair_summary.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Minimum
        )
        self.pair_summary.setToolTip(
            "'A ahead' > 0: A is better on that image, by that much, whichever direction the "
            "measure counts as better (lower for MAE)"
        )
        self.pair_list = _disagreement_list()
        self.pair_list.cellClicked.connect(self._on_pair_clicked)
        # layout
        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.copy_button)
        top.addWidget(self.compare_button)  # here, not below: that row's width left the
        jobs = QtWidgets.QHBoxLayout()  # pair list too little on a laptop (names were "…")
        jobs.addWidget(self.stats_button)
        jobs.addWidget(self.stats_test)
        jobs.addWidget(self.stats_resamples)
        jobs.addWidget(self.stop_button)
        jobs.addStretch(1)
        left = QtWidgets.QVBoxLayout()
        left.addLayout(top)
        left.addLayout(jobs)
        left.addWidget(self.task_note)
        left.addWidget(self.table, 3)
        curves_bar = QtWidgets.QHBoxLayout()
        curves_bar.addWidget(QtWidgets.QLabel("curves of"))
        curves_bar.addWidget(self.curve_dataset)
        curves_bar.addWidget(QtWidgets.QLabel("third plot"))
        curves_bar.addWidget(self.third)
        curves_bar.addStretch(1)
        left.addLayout(curves_bar)
        plots = QtWidgets.QHBoxLayout()
        for plot in self.plots.values():
            plots.addWidget(plot)
        left.addLayout(plots, 2)
        right = QtWidgets.QVBoxLayout()
        form = QtWidgets.QFormLayout()
        form.addRow("dataset", self.pair_dataset)
        form.addRow("method A", self.pair_a)
        form.addRow("method B", self.pair_b)
        form.addRow("measure", self.pair_measure)
        heading = QtWidgets.QLabel("<b>Where two methods disagree most</b>")
        heading.setWordWrap(True)  # two lines rather than a window too wide for a laptop
        right.addWidget(heading)
        right.addLayout(form)
        right.addWidget(self.pair_summary)
        right.addWidget(self.pair_list, 1)
        pair_box = QtWidgets.QWidget()
        pair_box.setLayout(right)
        left_box = QtWidgets.QWidget()
        left_box.setLayout(left)
        left.setContentsMargins(0, 0, 0, 0)
        # a splitter, so that the pair list can be widened to read long image names
        # (COD10K's: COD10K-CAM-1-Aquatic-3-Crab-12) when the table needs less room
        self.splitter = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        self.splitter.setObjectName("datasetSplitter")
        self.splitter.addWidget(left_box)
        self.splitter.addWidget(pair_box)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setChildrenCollapsible(False)
        self._dragged = False  # the user's width of the pair list is kept, once dragged
        self.splitter.splitterMoved.connect(lambda *_: setattr(self, "_dragged", True))
        box = QtWidgets.QHBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        box.addWidget(self.splitter)
        for combo in (self.pair_a, self.pair_b, self.pair_measure, self.pair_dataset):
            combo.currentIndexChanged.connect(self.update_pair)
        self.curve_dataset.currentIndexChanged.connect(self.draw_curves)
        self.third.currentIndexChanged.connect(self._third_changed)
        self._label_third()
        selection.changed.connect(self._on_selection)
        selection.highlight_changed.connect(self.draw_curves)
        self._curve_items: list[tuple[str, CurveItem]] = []
        self._curve_generation = 0

    # ------------------------------------------------------------------ results
    def bind(self, model: InspectorModel) -> None:
        """Show ``model``'s dataset values and the results of its jobs; the jobs asked for
        here run in its scoring service."""
        scores = model.scores
        self.walk = model.walk
        scores.results_changed.connect(self.set_results)
        scores.note.connect(self.set_note)
        scores.task_started.connect(self.task_started)
        scores.task_progress.connect(self.task_progress)
        scores.task_ended.connect(self.task_ended)
        scores.statistics_ready.connect(self.set_statistics)
        model.models_listed.connect(self.names_changed)
        self.statistics_requested.connect(scores.ask_statistics)
        self.compare_requested.connect(
            lambda reference: scores.ask_compare(reference, self.setup())
        )
        self.stop_requested.connect(scores.stop_task)

    def set_results(self, results: dict[str, Sequence[MethodResult]], note: str = "") -> None:
        """Show these datasets' dataset values (``{dataset: results}``, in order). While the
        view is hidden (the sample view is in front) they are only kept, and drawn when it is
        shown; then the table first, the curves and the pair list in the next event-loop
        turns (a 20-method table with its curves took 100 ms of the GUI thread at once)."""
        self.results = dict(results)
        self._note = note
        self._stale = True
        if self.isVisible():
            self.refresh()

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self._dragged:  # the pair list: 35 % of the width, within 240–460 px
            width = self.splitter.width()
            pair = min(460, max(240, int(0.35 * width)))
            self.splitter.setSizes([max(1, width - pair), pair])

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()
        elif self._pair_stale:
            self.update_pair()

    def listing_changed(self) -> None:
        """The browser's list changed (a filter, the tags it filters by): the pair list
        keeps to what it lists, now or when shown."""
        self._pair_stale = True
        if self.isVisible() and self.walk is not None:
            self.update_pair()

    def _listed(self, dataset: str) -> tuple[np.ndarray, str] | None:
        """Which samples of ``dataset`` the browser's filter lists, and the filter; None
        when it lists them all (no filter, or the browser shows another dataset)."""
        walk = self.walk
        if walk is None or walk.filter is None or walk.matrix is not self.matrix_of(dataset):
            return None
        mask = walk.listed_mask()
        return None if mask is None else (mask, walk.filter.text)

    def refresh(self) -> None:
        """Draw the results last given (the table now, the rest in the next turns)."""
        self._stale = False
        results, note = self.results, self._note
        self.model.set_results(self.results)
        header = self.table.horizontalHeader()
        header.setDefaultSectionSize(66)
        metrics = header.fontMetrics()
        horizontal = QtCore.Qt.Orientation.Horizontal
        for col, (_d, key) in enumerate(self.model.columns):
            if key == "coverage":
                self.table.resizeColumnToContents(col)
                continue
            # as wide as its title ("meanEm ↑" was cut to "eanEm ↑"), measured from the
            # font rather than by Qt's fitting, which asks the model for every cell
            title = str(self.model.headerData(col, horizontal))
            need = max(metrics.horizontalAdvance(line) for line in title.split("\n")) + 14
            header.resizeSection(col, max(need, 66))
        if self.model.stats:  # cells with intervals and groups are wider than their titles
            self._fit_cells()
        n = sum(len(r) for r in results.values())
        if results:
            self.status.setText(
                f"{len(results)} dataset{'s' if len(results) != 1 else ''}, {n} method results"
                " · values as fminspect eval's summary.json · best per column marked"
                + (f" · {note}" if note else "")
            )
        else:
            self.status.setText(note or "no dataset scored yet")
        for combo in (self.curve_dataset, self.pair_dataset):
            current = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(list(results))
            if current in results:
                combo.setCurrentText(current)
            combo.blockSignals(False)
        self._fill_pair_methods()
        for button in (self.stats_button, self.compare_button):
            button.setEnabled(bool(results))
        QtCore.QTimer.singleShot(0, self.draw_curves)
        QtCore.QTimer.singleShot(0, self.update_pair)

    def set_note(self, note: str) -> None:
        """A line about the scoring still under way."""
        if not self.results:
            self.status.setText(note)

    # ------------------------------------------------------------------ jobs
    def setup(self) -> Setup:
        """How intervals and tests are asked for (the controls' values)."""
        return Setup(resamples=self.stats_resamples.value(), test=self.stats_test.currentData())

    def _ask_statistics(self) -> None:
        self.statistics_requested.emit(self.setup())

    def _ask_compare_file(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self,
            "Compare with a table",
            "",
            "tables (*.csv *.json *.xlsx);;all files (*)",
        )
        if path:
            self.compare_requested.emit(Path(path))

    def _ask_compare_folder(self) -> None:
        path = QtWidgets.QFileDialog.getExistingDirectory(
            self, "Compare with another fminspect eval folder"
        )
        if path:
            self.compare_requested.emit(Path(path))

    def task_started(self, text: str) -> None:
        """A job (statistics, compare) was started: say so, offer to stop it."""
        self.task_note.setText(text)
        self.stop_button.show()

    def task_progress(self, text: str) -> None:
        self.task_note.setText(text)

    def task_ended(self, text: str = "") -> None:
        """The job is over (``text``: why it failed, or what it gave)."""
        self.task_note.setText(text)
        self.stop_button.hide()

    def set_statistics(self, stats: dict[str, dict[str, Any]]) -> None:
        """Show these intervals, tests and groups (``{dataset: statistics.json's entry}``;
        ``{}`` when the values they were made for are gone)."""
        self.model.set_statistics(stats)
        if stats:
            self._fit_cells()
            setup = next(iter(stats.values()))["setup"]
            self.task_ended(
                f"{setup['interval']} intervals (B = {setup['resamples']}; both ends in each "
                f"cell's tip and the CSV): {SPREAD_NOTE}. Letters: methods sharing one are "
                f"not significantly different ({short_test(setup['test'])}, Holm over all "
                f"pairs, α = {setup['alpha']}); n = "
                + ", ".join(f"{n_text(s['setup'])} ({d})" for d, s in stats.items())
            )
            self.task_note.setToolTip(f"{setup['test']}; {setup['correction']}")
        self.update_pair()

    def _fit_cells(self) -> None:
        """Every column as wide as its widest cell and its title (with intervals and groups:
        "0.7977 +0.0070/−0.0068 g"), with room for the cell's margins: Qt's fitting measured
        a few pixels short of the bold best value and of the "−" drawn from another font."""
        self.table.resizeColumnsToContents()
        header = self.table.horizontalHeader()
        for col in range(header.count()):
            header.resizeSection(
                col, header.sectionSize(col) + header.fontMetrics().averageCharWidth()
            )

    def names_changed(self) -> None:
        """The display names or the dataset's models changed (a new dataset was chosen)."""
        self._on_selection()

    def _on_selection(self) -> None:
        if not self.isVisible():
            self._stale = bool(self.results)  # redrawn when shown
            return
        rows = self.model.rowCount()
        if rows:  # (for an empty model, section 0 does not exist: the header view crashed)
            self.model.headerDataChanged.emit(QtCore.Qt.Orientation.Vertical, 0, rows - 1)
        self._fill_pair_methods()
        self.draw_curves()

    def _fill_pair_methods(self) -> None:
        methods = self.model.methods
        for combo, default in ((self.pair_a, 0), (self.pair_b, 1)):
            current = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            for m in methods:
                combo.addItem(self.selection.name(m), m)
            i = combo.findData(current) if current is not None else -1
            combo.setCurrentIndex(i if i >= 0 else min(default, len(methods) - 1))
            combo.blockSignals(False)

    def copy_csv(self) -> None:
        QtWidgets.QApplication.clipboard().setText(self.model.to_csv())

    # ------------------------------------------------------------------ curves
    def draw_curves(self, *_: object) -> None:
        """The averaged curves of the shown methods on the chosen dataset: removed at once,
        added :data:`CURVES_PER_TURN` per event-loop turn (60 curves at once held the GUI
        thread for 100–200 ms); a newer call drops what an older one has left to add."""
        if not self.isVisible():
            self._stale = bool(self.results)  # redrawn when shown
            return
        for k, item in self._curve_items:
            self.plots[k].removeItem(item)
        self._curve_items = []
        self._curve_generation += 1
        d = self.curve_dataset.currentText()
        shown = set(self.selection.shown)
        highlighted = self.selection.highlighted
        x_name, y_name = DATASET_THIRD[self.third.currentText()][:2]
        todo: list[tuple[str, Any, Any, Any]] = []
        for r in self.results.get(d, ()):
            if r.method not in shown or not r.mean_curves:
                continue
            i = self.selection.colour_index(r.method)
            strong = r.method in highlighted
            pen = model_pen(
                i, width=3.0 if strong else 1.5, alpha=70 if highlighted and not strong else 255
            )
            c = r.mean_curves
            third_x = THRESHOLDS if x_name is None else c.get(x_name)
            for k, xy in (
                ("pr", (c.get("Recall"), c.get("Precision"))),
                ("fm", (THRESHOLDS, c.get("Fm"))),
                ("em", (third_x, c.get(y_name))),
            ):
                if xy[0] is not None and xy[1] is not None:
                    todo.append((k, xy[0], xy[1], pen))
        todo.sort(key=lambda t: list(self.plots).index(t[0]))  # by plot, methods in order
        self._add_curves(self._curve_generation, todo)

    def _add_curves(self, generation: int, todo: list[tuple[str, Any, Any, Any]]) -> None:
        if generation != self._curve_generation:
            return  # redrawn since
        if not self.isVisible():
            self._stale = bool(self.results)  # redrawn when shown
            return
        # one plot per turn (a turn repaints only the plot it changed; todo is by plot)
        n = 0
        while n < min(len(todo), CURVES_PER_TURN) and todo[n][0] == todo[0][0]:
            n += 1
        for k, x, y, pen in todo[:n]:
            item = CurveItem(pen)  # painted by Qt alone (see plain_items)
            item.set_data(x, y)
            self.plots[k].addItem(item, ignoreBounds=True)
            self._curve_items.append((k, item))
        rest = todo[n:]
        if rest:
            QtCore.QTimer.singleShot(0, lambda: self._add_curves(generation, rest))

    def _label_third(self) -> None:
        _, _, title, (x_label, y_label) = DATASET_THIRD[self.third.currentText()]
        plot = self.plots["em"]
        plot.setTitle(title)
        plot.setLabel("bottom", x_label)
        plot.setLabel("left", y_label)

    def _third_changed(self, *_: object) -> None:
        self._label_third()
        self.draw_curves()

    # ------------------------------------------------------------------ method pair
    def _on_rows_selected(self, *_: object) -> None:
        rows = sorted(
            {self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()}
        )
        if rows:  # their curves stand out (thicker, with markers), here and in the sample view
            self.selection.set_highlighted(self.model.methods[r] for r in rows)
        if len(rows) >= 2:
            a, b = self.model.methods[rows[0]], self.model.methods[rows[1]]
            self.set_pair(a, b)

    def set_pair(
        self, a: str, b: str, measure: str | None = None, dataset: str | None = None
    ) -> None:
        """Compare methods ``a`` and ``b`` (on ``measure``, in ``dataset``)."""
        self.pair_a.blockSignals(True)
        self.pair_b.blockSignals(True)
        self.pair_a.setCurrentIndex(self.pair_a.findData(a))
        self.pair_b.setCurrentIndex(self.pair_b.findData(b))
        self.pair_a.blockSignals(False)
        self.pair_b.blockSignals(False)
        if measure is not None:
            self.pair_measure.setCurrentText(measure)
        if dataset is not None:
            self.pair_dataset.setCurrentText(dataset)
        self.update_pair()

    def pair_rows(self) -> list[tuple[str, float, float, float]]:
        """(image, A, B, by how much A is ahead) of the images where A and B differ most,
        largest first: A − B for a measure where higher is better, B − A for one where lower
        is (MAE), so that a positive value always means A is better."""
        d = self.pair_dataset.currentText()
        a, b = self.pair_a.currentData(), self.pair_b.currentData()
        key = self.pair_measure.currentText()
        matrix = self.matrix_of(d) if d else None
        if matrix is None or a is None or b is None or key not in matrix.key_index:
            return []
        if a not in matrix.method_index or b not in matrix.method_index:
            return []
        va, vb = matrix.column(a, key), matrix.column(b, key)
        sign = 1.0 if MEASURES_BY_KEY[key].higher_is_better else -1.0
        diff = sign * (va - vb)
        keep = np.isfinite(diff)
        listed = self._listed(d)
        if listed is not None and len(listed[0]) == len(keep):  # the browser's filter
            keep &= listed[0]
        ok = np.flatnonzero(keep)
        order = ok[np.argsort(-np.abs(diff[ok]), kind="stable")]
        return [(matrix.samples[i], float(va[i]), float(vb[i]), float(diff[i])) for i in order]

    def update_pair(self, *_: object) -> None:
        """Fill the disagreement list of the chosen pair."""
        self._pair_stale = False
        rows = self.pair_rows()
        a, b = self.pair_a.currentText(), self.pair_b.currentText()
        key = self.pair_measure.currentText()
        self.pair_list.setRowCount(0)
        listed = self._listed(self.pair_dataset.currentText())
        which = "" if listed is None else f" listed by the filter <i>{html.escape(listed[1])}</i>"
        if not rows:
            self.pair_summary.setText(
                f"no image{which} has scores of both"
                if listed is not None and self.results
                else "choose two methods (or select two rows of the table)"
                if self.results
                else "the per-image scores are not ready yet"
            )
            return
        diffs = np.array([r[3] for r in rows])
        better_a, better_b = int((diffs > 0).sum()), int((diffs < 0).sum())
        ties = len(diffs) - better_a - better_b
        arrow = "higher" if MEASURES_BY_KEY[key].higher_is_better else "lower"
        self.pair_summary.setText(
            f"per image {key} ({arrow} is better), {len(rows)} images{which} with both: "
            f"<b>{html.escape(a)}</b> better on {better_a}, "
            f"<b>{html.escape(b)}</b> better on {better_b}, tied on {ties}; largest "
            f"differences first, click one to open it."
            + self._pair_test(self.pair_a.currentData(), self.pair_b.currentData(), key)
        )
        shown = rows[:PAIR_ROWS]
        self.pair_list.setRowCount(len(shown))
        for i, (name, va, vb, diff) in enumerate(shown):
            items = [name, f"{va:.3f}", f"{vb:.3f}", f"{diff:+.3f}"]  # narrow: room for names
            for j, text in enumerate(items):
                item = QtWidgets.QTableWidgetItem(text)
                if j:
                    item.setTextAlignment(
                        QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter
                    )
                else:
                    # the whole name, however narrow the column, and A's and B's values
                    # (hidden when the list is narrow)
                    item.setToolTip(f"{name}\nA {va:.4f}, B {vb:.4f}")
                self.pair_list.setItem(i, j, item)
        header = self.pair_list.horizontalHeader()
        header.setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeMode.Stretch)
        for j in (1, 2, 3):
            header.setSectionResizeMode(j, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)

    def _pair_test(self, a: str, b: str, key: str) -> str:
        """What the paired test says of ``a`` and ``b`` on ``key`` (once statistics are
        made), as a sentence to append."""
        d = self.pair_dataset.currentText()
        st = self.model.key_stats(d, key)
        if st is None:
            return ""
        said = pair_test_sentence(st, self.model.stats[d]["setup"], a, b, key)
        if self._listed(d) is not None:  # (its n beside the filter's count read as a mismatch)
            said += " The test is of the whole dataset, not only the images listed."
        return said

    def _on_pair_clicked(self, row: int, _col: int) -> None:
        item = self.pair_list.item(row, 0)
        if item is not None:
            self.sample_chosen.emit(self.pair_dataset.currentText(), item.text())


def pair_test_sentence(st: dict[str, Any], setup: dict[str, Any], a: str, b: str, key: str) -> str:
    """What the paired test of ``key``'s statistics ``st`` (made as ``setup`` says) says of
    ``a`` and ``b``, as a sentence to append to the pair's summary."""
    for pair in st.get("pairs", []):
        if {pair["a"], pair["b"]} != {a, b}:
            continue
        diff = pair["difference"] * (1 if pair["a"] == a else -1)
        if not math.isfinite(pair["p"]):
            why = (
                f"too few: n = {n_text(setup)}"
                if not setup.get("reliable", True)
                else "their difference does not vary over the resamples"
            )
            return f"<br>Dataset {key}: no test ({why})."
        verdict = (
            "<b>significantly different</b>"
            if pair["significant"]
            else "<b>not significantly different</b>"
        )
        return (
            f"<br>Dataset {key}, A − B = {diff:+.4f}: {verdict} "
            f"(p {html.escape(p_text(pair['p']))}, Holm-adjusted "
            f"{html.escape(p_text(pair['p_holm']))}, α = "
            f"{setup['alpha']}; {short_test(setup['test'])}; n = {n_text(setup)}, "
            f"B = {setup['resamples']})."
        )
    return (
        f"<br>Dataset {key}: not tested (a method lacks images the other has, or a value "
        "is not a number)."
    )
