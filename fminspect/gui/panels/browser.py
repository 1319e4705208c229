"""The dataset browser: every sample with per-model scores, sortable three ways — the order
stepping walks (:mod:`fminspect.inspector.walk` holds it, without Qt).

* by a measure of one model (worst or best first);
* by the difference between two models on a measure (where A beats B, or loses);
* "measures disagree": by how differently two measures rank the models on that sample
  (Kendall's τ between the two rankings; lowest first) — the most interesting cases.

The list of samples is shown as soon as the folders are read; the scores fill in as the
background evaluation (:mod:`fminspect.batch.stream`) reads them from the store or computes
them, and an order by a score is kept up to date as they land. The panel holds the scores
in a :class:`~fminspect.batch.scores.ScoreMatrix` (never pixels) and sorts with NumPy, so
thousands of samples × dozens of models sort in milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.batch.filters import Filter, FilterError, parse
from fminspect.batch.scores import ScoreMatrix
from fminspect.batch.subsets import SUBSET_RULES, Subsets, subsets_rule
from fminspect.gui.dialogs.measures import fill_combo
from fminspect.gui.window_fit import narrow_combos
from fminspect.inspector.model import InspectorModel
from fminspect.inspector.walk import Walk
from fminspect.io.discovery import Dataset
from fminspect.metrics import MEASURES_BY_KEY, default_keys

#: The orders of the order box (a last entry names a column whose title was clicked).
ORDERS = (
    "sample name",
    "worst first (measure, model A)",
    "A − B: A worse first",
    "measures disagree first",
)
#: what Qt passes as an item's index
_Index = QtCore.QModelIndex | QtCore.QPersistentModelIndex
ASC, DESC = QtCore.Qt.SortOrder.AscendingOrder, QtCore.Qt.SortOrder.DescendingOrder


class BrowserModel(QtCore.QAbstractTableModel):
    """Rows: samples, in the order of its :class:`~fminspect.inspector.walk.Walk` (the one
    stepping follows). Columns: sample, one per model, Δ(A − B), τ(X, Y)."""

    def __init__(self, parent: QtCore.QObject | None = None, walk: Walk | None = None) -> None:
        super().__init__(parent)
        self.walk = walk if walk is not None else Walk()
        self.names: dict[str, str] = {}  # display names

    # the walk's state, as the panel and the tests read it
    @property
    def matrix(self) -> ScoreMatrix:
        return self.walk.matrix

    @property
    def models(self) -> list[str]:
        return self.walk.models

    @property
    def shown(self) -> list[str]:
        return self.walk.shown

    @property
    def order(self) -> np.ndarray:
        return self.walk.order

    @property
    def measure(self) -> str:
        return self.walk.measure

    @property
    def pair(self) -> tuple[str, str]:
        return self.walk.pair

    @property
    def measures_xy(self) -> tuple[str, str]:
        return self.walk.measures_xy

    @property
    def sort_column(self) -> int:
        return self.walk.sort_column

    @property
    def sort_order(self) -> QtCore.Qt.SortOrder:
        return DESC if self.walk.descending else ASC

    @property
    def samples(self) -> list[str]:
        """Every sample, in natural order."""
        return self.walk.samples

    def use_walk(self, walk: Walk) -> None:
        """List the samples of ``walk`` (the inspector model's)."""
        self.beginResetModel()
        self.walk = walk
        self.endResetModel()

    def set_matrix(self, matrix: ScoreMatrix, models: list[str]) -> None:
        """Show a dataset: its samples at once, its scores as they arrive in ``matrix``."""
        self.beginResetModel()
        self.walk.set_matrix(matrix, models)
        self.endResetModel()

    def set_columns(self, models: list[str], names: dict[str, str]) -> None:
        """Show a column for each of ``models``, headed by its display name."""
        self.beginResetModel()
        self.names = dict(names)
        self.walk.set_columns(models)
        self.endResetModel()

    def set_view(self, measure: str, pair: tuple[str, str], xy: tuple[str, str]) -> None:
        """Which measure, model pair and measure pair the columns show."""
        self.beginResetModel()
        self.walk.set_view(measure, pair, xy)
        self.endResetModel()

    def set_filter(self, flt: Filter | None) -> None:
        """List only the samples ``flt`` passes."""
        self.beginResetModel()
        self.walk.set_filter(flt)
        self.endResetModel()

    def refilter(self) -> None:
        """The tags changed: a filter by them is applied again."""
        self.beginResetModel()
        self.walk.tags_changed()
        self.endResetModel()

    def scores_changed(self, samples: frozenset[int] | set[int]) -> None:
        """New scores for these sample indices: redraw, and re-sort if the order depends on
        scores (the selection stays on its sample)."""
        if self.walk.filter is not None and self.walk.filter.on_scores:
            self.beginResetModel()  # rows come and go: the view is told afresh
            self.walk.scores_changed(samples)
            self.endResetModel()
            return
        if self.walk.sort_column == 0:
            self.walk.scores_changed(samples)
            if self.rowCount():
                self.dataChanged.emit(
                    self.index(0, 1), self.index(self.rowCount() - 1, self.columnCount() - 1)
                )
            return
        self.layoutAboutToBeChanged.emit()
        before = self.walk.order.copy()
        self.walk.scores_changed(samples)
        self._move_persistent(before)
        self.layoutChanged.emit()

    def _move_persistent(self, before: np.ndarray) -> None:
        """Keep persistent indexes (the view's selection and current cell) on their sample."""
        order = self.walk.order
        row_of = np.full(len(self.walk.samples), -1, dtype=np.intp)
        row_of[order] = np.arange(len(order))
        old = self.persistentIndexList()
        new = [
            self.index(int(r), i.column())
            if (r := row_of[before[i.row()]]) >= 0
            else QtCore.QModelIndex()
            for i in old
        ]
        self.changePersistentIndexList(old, new)

    def column_values(self, col: int) -> np.ndarray:
        """The values of a score column for every sample (natural order)."""
        return self.walk.column_values(col)

    def sort(self, column: int, order: QtCore.Qt.SortOrder = ASC) -> None:
        self.layoutAboutToBeChanged.emit()
        before = self.walk.order.copy()
        self.walk.sort(column, order == DESC)
        self._move_persistent(before)
        self.layoutChanged.emit()

    def cell(self, row: int, col: int) -> float | str:
        """The value shown at ``row`` (in the current order), ``col``."""
        if col == self.tags_column:  # "1 3"
            return " ".join(map(str, sorted(self.walk.tags_of(str(self.walk.cell(row, 0))))))
        return self.walk.cell(row, col)

    @property
    def tags_column(self) -> int:
        """The last column: the sample's tags."""
        return len(self.walk.models) + 3

    def tags_changed(self, name: str) -> None:
        """Show ``name``'s tags again (every sample's, for an empty name)."""
        rows = range(self.rowCount())
        if name:
            row = self.walk.row_of(name)
            rows = range(row, row + 1) if row is not None else range(0)
        if len(rows):
            for col in (0, self.tags_column):  # the name's bold face, the tags' column
                self.dataChanged.emit(self.index(rows[0], col), self.index(rows[-1], col))

    # ------------------------------------------------------------------ Qt model
    def columnCount(self, parent: _Index = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.models) + 4

    def rowCount(self, parent: _Index = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.walk.order)

    def data(self, index: _Index, role: int = QtCore.Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role != QtCore.Qt.ItemDataRole.DisplayRole:
            if index.column() != 0:
                return None
            name = str(self.cell(index.row(), 0))
            if role == QtCore.Qt.ItemDataRole.ToolTipRole:  # the whole name, where elided
                tags = self.cell(index.row(), self.tags_column)
                return f"{name}\ntags: {tags}" if tags else name
            if role == QtCore.Qt.ItemDataRole.FontRole and self.walk.tags_of(name):
                font = QtGui.QFont()
                font.setBold(True)  # a tagged sample stands out in the list
                return font
            return None
        v = self.cell(index.row(), index.column())
        return v if isinstance(v, str) else ("–" if math.isnan(v) else f"{v:.3f}")

    def headerData(
        self,
        section: int,
        orientation: QtCore.Qt.Orientation,
        role: int = QtCore.Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation != QtCore.Qt.Orientation.Horizontal:
            return None
        if role == QtCore.Qt.ItemDataRole.ToolTipRole and 0 < section <= len(self.models):
            model = self.models[section - 1]  # the whole name, where the title is elided
            shown = self.names.get(model, model)
            return shown if shown == model else f"{shown} ({model})"
        if role != QtCore.Qt.ItemDataRole.DisplayRole:
            return None
        if section == 0:
            return "sample"
        name = self.names.get
        if section <= len(self.models):
            return name(self.models[section - 1], self.models[section - 1])
        if section == len(self.models) + 1:
            a, b = self.pair
            return f"Δ {name(a, a)} − {name(b, b)}"
        if section == self.tags_column:
            return "tags"
        return f"τ({self.measures_xy[0]}, {self.measures_xy[1]})"


class _SampleTable(QtWidgets.QTableView):
    """The browser's table; tells when its size changed (Qt calls back into Python for that
    alone, not for each of its viewport's events as an event filter would)."""

    resized = QtCore.Signal()

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        self.resized.emit()

    def moveCursor(
        self,
        cursorAction: QtWidgets.QAbstractItemView.CursorAction,
        modifiers: QtCore.Qt.KeyboardModifier,
    ) -> QtCore.QModelIndex:
        """``Home`` and ``End`` go to the first and the last sample (a table's own go to
        the first and last column of the row)."""
        action = QtWidgets.QAbstractItemView.CursorAction
        rows = self.model().rowCount() if self.model() is not None else 0
        if rows and cursorAction in (action.MoveHome, action.MoveEnd):
            column = max(self.currentIndex().column(), 0)
            row = 0 if cursorAction == action.MoveHome else rows - 1
            return self.model().index(row, column)
        return super().moveCursor(cursorAction, modifiers)


class DatasetBrowserPanel(QtWidgets.QWidget):
    """Samples with their scores; choosing one loads it.

    Signals
    -------
    sample_chosen(str)
        The sample name the user picked.
    """

    sample_chosen = QtCore.Signal(str)
    #: a sample opened by moving the list's row with the keyboard, and the direction moved
    row_opened = QtCore.Signal(str, int)

    #: Least time between two re-sorts while scores stream in (ms).
    RESORT_MS = 400

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("datasetBrowser")
        self.model = BrowserModel(self)
        self.dataset = QtWidgets.QComboBox()
        self.measure = QtWidgets.QComboBox()
        self.measure.addItems(default_keys())
        self.measure.setCurrentText("Sm")
        self.model_a, self.model_b = QtWidgets.QComboBox(), QtWidgets.QComboBox()
        self.measure_x, self.measure_y = QtWidgets.QComboBox(), QtWidgets.QComboBox()
        for combo, value in ((self.measure_x, "maxFm"), (self.measure_y, "Sm")):
            combo.addItems(default_keys())
            combo.setCurrentText(value)
        self.order = QtWidgets.QComboBox()
        self.order.addItems([*ORDERS, ""])  # the last: a column's header, as clicked
        self.order.setToolTip(
            "the order of the list, which D / → and A / ← walk; a click on a column's title "
            "orders by that column (said here)"
        )
        self.status = QtWidgets.QLabel("")
        self.status.setStyleSheet("color: gray")
        # wrapped, so that a long status never widens the dock (and shrinks the maps)
        self.status.setWordWrap(True)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(6)
        self.progress.hide()
        # their room kept: a status that wraps into another number of lines, or the bar
        # shown or hidden, re-laid out the list as scores arrived (a whole repaint of it,
        # 15–25 ms at 1,000 samples)
        self.status.setFixedHeight(2 * self.status.fontMetrics().lineSpacing() + 2)
        self.status.setAlignment(
            QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop
        )
        policy = self.progress.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.progress.setSizePolicy(policy)
        self.view = _SampleTable()
        self.view.setObjectName("sampleBrowser")
        self.view.setModel(self.model)
        self.view.setSortingEnabled(True)
        self.view.horizontalHeader().setSortIndicator(0, ASC)
        self.view.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().hide()
        self.view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        self.view.horizontalHeader().setDefaultSectionSize(64)
        # sample names differ at their end (…-Frog-52): elided at the start when too long
        self.view.setTextElideMode(QtCore.Qt.TextElideMode.ElideLeft)
        self.view.setWordWrap(False)
        # and a model's title longer than its column keeps both ends (BS…v2)
        self.view.horizontalHeader().setTextElideMode(QtCore.Qt.TextElideMode.ElideMiddle)
        self._name_widths = (0, 0)  # the sample column: its names' width, its title's
        self._name_sized_by_user = self._sizing_names = False
        self.view.horizontalHeader().sectionResized.connect(self._on_section_resized)
        self.view.resized.connect(self._on_view_resized)
        self.view.clicked.connect(self._on_clicked)
        # ↑ ↓ PgUp PgDn Home End move the current row: that sample is opened
        self.view.selectionModel().currentRowChanged.connect(self._on_row_moved)
        self.view.horizontalHeader().sortIndicatorChanged.connect(self._on_header_sorted)
        self._highlighting = False  # select() moves the row: not the user
        # a re-sort moves the current row with its sample: not the user either
        self.model.layoutAboutToBeChanged.connect(lambda *_: self._set_highlighting(True))
        self.model.layoutChanged.connect(lambda *_: self._set_highlighting(False))
        narrow_combos(self.dataset, self.order)
        narrow_combos(
            self.measure, self.model_a, self.model_b, self.measure_x, self.measure_y, letters=5
        )
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
        self.filter = QtWidgets.QLineEdit()
        self.filter.setObjectName("browserFilter")
        self.filter.setPlaceholderText("filter: Sm[A] < 0.5 and untagged …")
        self.filter.setClearButtonEnabled(True)
        self.filter.setToolTip(
            "list and walk only these samples — clauses joined by 'and', each possibly "
            "after 'not': Sm[FT] < 0.5 · Sm[FT] - Sm[RC] < -0.05 · name ~ Crab · tag 1 · "
            'tag "GT error" · tagged · untagged · cod10k=Aquatic · cod10k-sub=Crab · '
            "attributes.csv:occlusion (as eval --subsets)"
        )
        form.addRow("filter", self.filter)
        self.filter_note = QtWidgets.QLabel("")
        self.filter_note.setWordWrap(True)
        form.addRow("", self.filter_note)
        box = QtWidgets.QVBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        box.addLayout(form)
        box.addWidget(self.view)
        box.addWidget(self.progress)
        box.addWidget(self.status)
        for combo in (self.measure, self.model_a, self.model_b, self.measure_x, self.measure_y):
            combo.currentTextChanged.connect(self._on_view_changed)
        self.order.currentIndexChanged.connect(self.apply_order)
        self._filter_timer = QtCore.QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(300)  # while typing: once it pauses
        self._filter_timer.timeout.connect(self.apply_filter)
        self.filter.textEdited.connect(lambda _t: self._filter_timer.start())
        self.filter.returnPressed.connect(self.apply_filter)
        self.model.modelReset.connect(self._after_reset)
        self.tag_names: Callable[[], dict[int, str]] = dict
        self.folder: Callable[[], Path | None] = lambda: None  # the opened dataset folder
        self.request_shares: Callable[[], bool] = lambda: False
        self.current: Callable[[], str | None] = lambda: None
        self._changed: set[int] = set()
        self._resort = QtCore.QTimer(self)
        self._resort.setSingleShot(True)
        self._resort.setInterval(self.RESORT_MS)
        self._resort.timeout.connect(self._flush)

    def bind(self, model: InspectorModel) -> None:
        """Show ``model``'s datasets, the current one's samples and scores, and its shown
        sample; a sample or a dataset picked here is shown by the model."""
        scores, selection = model.scores, model.selection
        self.model.use_walk(model.walk)
        model.cases.changed.connect(self._on_tags_changed)
        self.model.walk.tags_of = lambda name: (
            model.cases.tags(model.dataset.name, name) if model.dataset is not None else frozenset()
        )
        self.model.walk.dataset_name = lambda: (
            model.dataset.name if model.dataset is not None else ""
        )
        self.tag_names = lambda: model.cases.names
        self.folder = lambda: model.cases.folder
        self.request_shares = model.request_shares
        model.facts_changed.connect(self._on_facts_changed)
        self.current = lambda: model.requested.name if model.requested is not None else None

        def matrix_started(dataset: str, matrix: ScoreMatrix) -> None:
            self.set_matrix(matrix, selection.shown, selection.aliases)
            if model.sample is not None:
                self.select(model.sample.name)

        def datasets_shown(datasets: list[Dataset]) -> None:
            self.dataset.blockSignals(True)
            self.dataset.clear()
            self.dataset.addItems([d.name for d in datasets])
            self.dataset.blockSignals(False)

        def sample_chosen(name: str, direction: int = 1) -> None:
            if model.requested is None or name != model.requested.name:
                model.open_sample(name, direction)

        def models_changed() -> None:
            if self.model.matrix.methods:
                self.set_columns(selection.shown, selection.aliases)

        scores.matrix_started.connect(matrix_started)
        scores.scores_arrived.connect(self.scores_changed)
        scores.status.connect(self.status.setText)
        scores.progress.connect(self.show_progress)
        scores.progress_ended.connect(self.progress.hide)
        model.datasets_shown.connect(datasets_shown)
        model.sample_loaded.connect(lambda sample: self.select(sample.name))
        model.models_listed.connect(models_changed)
        model.models_changed.connect(models_changed)
        self.sample_chosen.connect(sample_chosen)
        self.row_opened.connect(sample_chosen)
        self.dataset.currentTextChanged.connect(
            lambda name: model.choose_dataset(name) if name else None
        )
        model.dataset_chosen.connect(self.show_dataset)

    def show_dataset(self, name: str) -> None:
        """Show ``name`` as the current dataset (chosen elsewhere: a script, the meta view)."""
        if self.dataset.currentText() != name:
            with QtCore.QSignalBlocker(self.dataset):
                self.dataset.setCurrentText(name)

    def set_matrix(
        self, matrix: ScoreMatrix, models: list[str], names: dict[str, str] | None = None
    ) -> None:
        """Show a dataset's samples now and its scores as they land in ``matrix``; a column
        for each of ``models`` (the shown ones), under their display ``names``."""
        self.model.names = dict(names or {})
        self._fill_pair(matrix.methods, models)
        self._fill_measures(matrix.keys)
        self._changed.clear()
        self.model.set_matrix(matrix, [m for m in models if m in matrix.method_index])
        self._on_view_changed()
        self._fit_names(matrix.samples)

    #: The most of the list's width the sample column takes, so that the score columns of
    #: the shown models are seen beside it; longer names are elided at their start.
    NAME_SHARE = 0.55

    def _fit_names(self, names: Sequence[str]) -> None:
        """Make the sample column as wide as its longest name (measured from the font: the
        view's own fitting asked the model for 1,000 cells, 60 ms at 1,000 samples), but no
        wider than :attr:`NAME_SHARE` of the list. COD10K's names (``COD10K-CAM-1-Aquatic-
        3-Crab-154``) took the whole width of the dock: one score column was seen of 12."""
        metrics = self.view.fontMetrics()
        longest = sorted(names, key=len)[-20:]  # measured on the 20 longest in characters
        text = max((metrics.horizontalAdvance(n) for n in longest), default=0)
        header = self.view.horizontalHeader()
        title = header.fontMetrics().horizontalAdvance("sample") + 24  # and the sort arrow
        self._name_widths = (text + 12, title)
        self._name_sized_by_user = False
        self._size_names()

    def _size_names(self) -> None:
        fit, title = self._name_widths
        if not fit:
            return  # no dataset yet
        share = int(self.NAME_SHARE * self.view.viewport().width())
        self._sizing_names = True
        self.view.setColumnWidth(0, max(min(fit, share), title))
        self._sizing_names = False

    def _on_section_resized(self, section: int, *_: int) -> None:
        if section == 0 and not self._sizing_names:
            self._name_sized_by_user = True  # a width the user dragged to is kept

    def _on_view_resized(self) -> None:
        """The sample column follows the list's width (the dock resized, the window shown)
        until the user drags it."""
        if not self._name_sized_by_user:
            self._size_names()

    def _fill_measures(self, keys: Sequence[str]) -> None:
        """The measure lists offer the keys being scored."""
        for combo, fallback in (
            (self.measure, "Sm"),
            (self.measure_x, "maxFm"),
            (self.measure_y, "Sm"),
        ):
            fill_combo(combo, keys, fallback)

    def _fill_pair(self, every: list[str], shown: list[str]) -> None:
        """A and B can be any of the dataset's models; by default the first two shown."""
        names = self.model.names
        for combo, default in ((self.model_a, 0), (self.model_b, 1)):
            current = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            for m in every:
                combo.addItem(names.get(m, m), m)
            if current in every:
                i = combo.findData(current)
            elif shown:
                i = combo.findData(shown[min(default, len(shown) - 1)])
            else:
                i = min(default, len(every) - 1)
            combo.setCurrentIndex(i)
            combo.blockSignals(False)

    def set_columns(self, models: list[str], names: dict[str, str]) -> None:
        """Columns for these models (the shown ones) under these display names."""
        self.model.names = dict(names)
        self._fill_pair(self.model.matrix.methods, models)
        self.model.set_columns(models, names)
        self._on_view_changed()

    def show_progress(self, done: int, total: int) -> None:
        """Show the progress bar at ``done`` of ``total`` (0 of 0: busy, no end known).

        Changing a ``QProgressBar``'s value or range repaints it at once, and with it
        everything else waiting to be repainted in the window: the paint of the whole
        window joined the event-loop turn that reported the progress. Its updates are held
        meanwhile, so that it is repainted with the rest of the window, in a turn of its
        own."""
        bar = self.progress
        bar.setUpdatesEnabled(False)
        if (bar.minimum(), bar.maximum()) != (0, total):
            bar.setRange(0, total)
        bar.setValue(done)
        bar.setUpdatesEnabled(True)  # and marked for repainting
        bar.show()

    def scores_changed(self, samples: frozenset[int]) -> None:
        """Scores of these samples arrived: shown (and re-sorted) within :data:`RESORT_MS`."""
        self._changed |= samples
        if not self._resort.isActive():
            self._resort.start()

    def _flush(self) -> None:
        changed, self._changed = self._changed, set()
        self.model.scores_changed(changed)

    def _on_view_changed(self, *_: object) -> None:
        self.model.set_view(
            self.measure.currentText(),
            (self.model_a.currentData() or "", self.model_b.currentData() or ""),
            (self.measure_x.currentText(), self.measure_y.currentText()),
        )
        self.apply_order()

    def _mode_sort(self, mode: int) -> tuple[int, QtCore.Qt.SortOrder] | None:
        """The column and direction of an order of the box (None: the clicked column's)."""
        models = self.model.models
        worst = ASC if MEASURES_BY_KEY[self.model.measure].higher_is_better else DESC
        if mode == 0:
            return 0, ASC
        if mode == 1:
            a = self.model_a.currentData()
            return (1 + models.index(a) if a in models else 1), worst
        if mode == 2:
            return len(models) + 1, worst
        if mode == 3:
            return len(models) + 2, ASC
        return None

    def apply_order(self, *_: object) -> None:
        """Sort by the chosen order (a click on a column's title sorts by that column)."""
        chosen = self._mode_sort(self.order.currentIndex())
        if chosen is None:  # the clicked column's: kept as it is
            column, order = self.model.sort_column, self.model.sort_order
            if column > len(self.model.models) + 2:
                column, order = 0, ASC
        else:
            column, order = chosen
        header = self.view.horizontalHeader()
        header.blockSignals(True)  # the view would sort too: once is enough
        header.setSortIndicator(column, order)
        header.blockSignals(False)
        self.model.sort(column, order)
        self._say_clicked(column, order)

    def _on_header_sorted(self, column: int, order: QtCore.Qt.SortOrder) -> None:
        """A column's title was clicked: the view sorted by it; the box says which order
        that is (one of its own, or the column's)."""
        mode = next((m for m in range(len(ORDERS)) if self._mode_sort(m) == (column, order)), None)
        with QtCore.QSignalBlocker(self.order):
            self.order.setCurrentIndex(len(ORDERS) if mode is None else mode)
        self._say_clicked(column, order)

    def _say_clicked(self, column: int, order: QtCore.Qt.SortOrder) -> None:
        """The box's last entry names the clicked column's order."""
        title = self.model.headerData(column, QtCore.Qt.Orientation.Horizontal)
        way = "Z → A" if column == 0 else "largest first"
        if order == ASC:
            way = "A → Z" if column == 0 else "smallest first"
        self.order.setItemText(len(ORDERS), f"column {title}: {way}")

    def ordered_samples(self) -> list[str]:
        """Sample names in the order currently shown."""
        return [self.model.samples[int(i)] for i in self.model.order]

    def select(self, name: str) -> None:
        """Highlight ``name`` (the shown sample) without opening it again."""
        row = self.model.walk.row_of(name)
        if row is None:
            return
        self._highlighting = True
        try:
            self.view.blockSignals(True)
            self.view.selectRow(row)
            self.view.scrollTo(self.model.index(row, 0))
            self.view.blockSignals(False)
        finally:
            self._highlighting = False

    def apply_filter(self) -> None:
        """Read the filter bar: list only what it passes, or say what it cannot read."""
        self._filter_timer.stop()
        m = self.model.matrix
        try:
            flt = parse(
                self.filter.text(), m.keys, m.methods, self.tag_names(), self._attribute_table
            )
        except FilterError as exc:
            self.filter_note.setStyleSheet("color: #c0392b")
            self.filter_note.setText(str(exc))
            return
        self.filter_note.setStyleSheet("color: gray")
        if flt is not None and any(c.uses_shares for c in flt.clauses):
            self.request_shares()  # read in the background; the list follows when they are
        self.model.set_filter(flt)
        self._say_count()

    def _attribute_table(self, spec: str) -> Subsets:
        """A filter's attribute table: a relative path is the opened folder's when it has
        that file (a trial's ``attrs.csv`` beside the dataset was looked for in the folder
        the window was started from), else the working folder's, as ``eval`` reads it."""
        folder = self.folder()
        if spec.lower() not in SUBSET_RULES and folder is not None:
            beside = folder / spec
            if not Path(spec).is_absolute() and beside.is_file():
                return subsets_rule(str(beside))
        return subsets_rule(spec)

    def _on_facts_changed(self) -> None:
        """The shares, the scatter's selection or the problems changed: filter again."""
        if self.model.walk.filter is not None and self.model.walk.filter.on_facts:
            self.model.refilter()
            self._say_count()

    def _say_count(self) -> None:
        walk = self.model.walk
        if walk.filter is None:
            self.filter_note.setText("")
            return
        text = f"{len(walk.order)} of {walk.total} samples listed"
        if not len(walk.order):  # a class misspelt: the ones there are (a trial got no hint)
            for clause in walk.filter.clauses:
                known = clause.known_labels(walk.samples)
                if known and not clause.negated:
                    shown = ", ".join(known[:12]) + (", …" if len(known) > 12 else "")
                    text += f" — {clause.text.split('=')[0].split(':')[0].strip()}: {shown}"
        self.filter_note.setText(text)

    def _after_reset(self) -> None:
        """Rows came and went (a filter): the shown sample highlighted again, the count."""
        name = self.current()
        if name is not None:
            self.select(name)
        if self.model.walk.filter is not None and self.filter_note.styleSheet() != "color: #c0392b":
            self._say_count()

    def _on_tags_changed(self, _dataset: str, name: str) -> None:
        if self.model.walk.filter is not None:
            self.model.refilter()
        else:
            self.model.tags_changed(name)

    def _set_highlighting(self, on: bool) -> None:
        self._highlighting = on

    def _on_clicked(self, index: QtCore.QModelIndex) -> None:
        self.sample_chosen.emit(self.model.cell(index.row(), 0))

    def _on_row_moved(self, current: QtCore.QModelIndex, previous: QtCore.QModelIndex) -> None:
        """The current row moved (the keyboard, or a click): open its sample, reading ahead
        in the direction it moved. A re-sort moves rows with their samples: nothing new."""
        if self._highlighting or not current.isValid():
            return
        name = self.model.cell(current.row(), 0)
        direction = -1 if previous.isValid() and current.row() < previous.row() else 1
        self.row_opened.emit(str(name), direction)
