"""Building blocks of the explain views: matrix panels, a numbers table, export."""

from __future__ import annotations

import csv
import html
import io
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.colours import CONFUSION_NAMES as _NAMES
from fminspect.gui.colours import CONFUSION_RGB
from fminspect.gui.export import save_image
from fminspect.gui.panels.map_grid import DIVERGING, colormap
from fminspect.io.atomic import write_text
from fminspect.metrics import SuiteResult
from fminspect.metrics.equations import cite


def _ignore_height_hint(widget: QtWidgets.QWidget) -> None:
    policy = widget.sizePolicy()
    policy.setVerticalPolicy(QtWidgets.QSizePolicy.Policy.Ignored)
    widget.setSizePolicy(policy)


class MatrixPanel(QtWidgets.QWidget):
    """One matrix with a title, fixed colour levels, a colour bar and a hover read-out."""

    def __init__(
        self, title: str, parent: QtWidgets.QWidget | None = None, item: pg.ImageItem | None = None
    ) -> None:
        super().__init__(parent)
        self.title = QtWidgets.QLabel(f"<b>{title}</b>")
        self.title.setWordWrap(True)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setMinimumSize(160, 100)
        # its height follows the window, not pyqtgraph's large size hint (which would make
        # the explain view's scroll area as tall as three 500-px rows)
        _ignore_height_hint(self.graphics)
        self.view = self.graphics.addViewBox(
            row=0, col=0, lockAspect=True, invertY=True, enableMenu=False
        )
        self.image = item if item is not None else pg.ImageItem()
        self.view.addItem(self.image)
        self.colorbar: pg.ColorBarItem | None = None
        self.readout = QtWidgets.QLabel(" ")
        self.readout.setStyleSheet("color: gray; font-size: 8pt")
        self.array: np.ndarray | None = None
        self._names: list[str] | None = None  # of the categories, when codes are shown
        box = QtWidgets.QVBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        box.addWidget(self.title)
        box.addWidget(self.graphics, 1)
        box.addWidget(self.readout)
        self.graphics.scene().sigMouseMoved.connect(self._on_move)

    def show_matrix(
        self,
        array: np.ndarray,
        levels: tuple[float, float] = (0.0, 1.0),
        cmap: str = "viridis",
        diverging: bool = False,
    ) -> None:
        """Draw ``array`` (2-D values, or (H, W, 3|4) uint8 colours)."""
        self.array = np.asarray(array)
        if self.array.ndim == 3:
            self.image.setImage(self.array, levels=(0, 255))
            return
        data = self.array.astype(np.float64)
        if diverging:
            bound = float(np.nanmax(np.abs(data))) or 1.0
            levels, cmap = (-bound, bound), DIVERGING
        self._names = None
        self.image.setImage(data, levels=levels)
        cm = colormap(cmap)
        self.image.setLookupTable(cm.getLookupTable(nPts=256))
        if self.colorbar is None:
            self.colorbar = pg.ColorBarItem(values=levels, colorMap=cm, interactive=False, width=10)
            self.graphics.addItem(self.colorbar, row=0, col=1)
        self.colorbar.show()
        self.colorbar.setColorMap(cm)
        self.colorbar.setLevels(levels)
        self.colorbar.setImageItem(self.image)
        self.image.setLevels(levels)
        self.view.autoRange(padding=0.02)

    def show_categories(self, codes: np.ndarray, colours: np.ndarray, names: list[str]) -> None:
        """Draw integer ``codes`` in ``colours`` (one RGB row per code), without a colour bar;
        hovering names the category."""
        self.show_matrix(np.asarray(colours, np.uint8)[codes])
        self.array = np.asarray(codes)
        self._names = names
        if self.colorbar is not None:
            self.colorbar.hide()

    def add_item(self, item: pg.GraphicsObject) -> None:
        """Draw a shape (centroid, quadrant lines, ellipse…) over the matrix."""
        self.view.addItem(item, ignoreBounds=True)

    def _on_move(self, pos: QtCore.QPointF) -> None:
        if self.array is None or not self.view.sceneBoundingRect().contains(pos):
            return
        p = self.view.mapSceneToView(pos)
        r, c = int(np.floor(p.y())), int(np.floor(p.x()))
        if 0 <= r < self.array.shape[0] and 0 <= c < self.array.shape[1]:
            v = self.array[r, c]
            if self._names is not None:
                text = self._names[int(v)]
            elif np.ndim(v):
                text = ",".join(str(int(x)) for x in v)
            else:
                text = f"{float(v):.4g}"
            self.readout.setText(f"row {r}, col {c}: {text}")


class SmallTable(QtWidgets.QTableWidget):
    """A compact read-only table: one row per region or quadrant, numbers right-aligned."""

    def __init__(self, columns: tuple[str, ...], *, tooltip: str = "") -> None:
        super().__init__(0, len(columns))
        self.setHorizontalHeaderLabels(list(columns))
        header = self.horizontalHeader()
        header.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setToolTip(tooltip)

    def set_rows(self, rows: list[tuple[str, ...]], row_help: list[str] | None = None) -> None:
        """Fill the table; the first column is a name (with ``row_help`` as its tooltip), the
        others numbers."""
        self.setRowCount(len(rows))
        right = QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QtWidgets.QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(right)
                elif row_help:
                    item.setToolTip(row_help[r])
                self.setItem(r, c, item)


class ExplainView(QtWidgets.QWidget):
    """A measure's explanation: what it computes (with equations), its matrices, and the
    numbers that make up the score. Subclasses fill it from a :class:`SuiteResult`."""

    TITLE = "measure"
    #: the measure families the view draws from (see :func:`with_families`)
    NEEDS: tuple[str, ...] = ()
    #: the families whose equations the header cites (default: :attr:`NEEDS`)
    CITES: tuple[str, ...] | None = None

    def __init__(
        self,
        result: SuiteResult,
        model: str,
        sample: str,
        image: np.ndarray | None,
        threshold: int = 128,
        parent: QtWidgets.QWidget | None = None,
        *,
        teaching: tuple[str, str, str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.result, self.model, self.sample, self.image = result, model, sample, image
        self.threshold = threshold
        self.header = QtWidgets.QLabel()
        self.header.setWordWrap(True)
        self.header.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.teaching = QtWidgets.QLabel()
        self.teaching.setObjectName("teachingNote")
        self.teaching.setWordWrap(True)
        self.teaching.setTextFormat(QtCore.Qt.TextFormat.RichText)
        if teaching is None:
            self.teaching.hide()
        else:  # set before the layout is made, so the label's wrapped height is right
            self.set_teaching(*teaching)
        self.panels: dict[str, MatrixPanel] = {}
        self.grid = QtWidgets.QGridLayout()
        self.numbers = QtWidgets.QTableWidget(0, 3)
        self.numbers.setHorizontalHeaderLabels(["quantity", "value", "what it is"])
        self.numbers.horizontalHeader().setStretchLastSection(True)
        self.numbers.verticalHeader().hide()
        self.numbers.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.controls = QtWidgets.QHBoxLayout()
        png = QtWidgets.QPushButton("Export PNG…")
        png.clicked.connect(self._export_png)
        csv_button = QtWidgets.QPushButton("Export numbers as CSV…")
        csv_button.clicked.connect(self._export_csv)
        self.controls.addStretch(1)
        self.controls.addWidget(png)
        self.controls.addWidget(csv_button)
        grid_host = QtWidgets.QWidget()
        grid_host.setLayout(self.grid)
        # in a small window the matrices and plots scroll rather than lose their axes
        scroll = QtWidgets.QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        scroll.setWidget(grid_host)
        # the text and the numbers side by side above the matrices: stacked, they took
        # 400 of a 1000-px window's height and the matrices were drawn ~100 px high
        self.text = QtWidgets.QWidget()
        text_box = QtWidgets.QVBoxLayout(self.text)
        text_box.setContentsMargins(0, 0, 4, 0)
        text_box.addWidget(self.header)
        text_box.addWidget(self.teaching)
        text_box.addStretch(1)
        text_scroll = QtWidgets.QScrollArea()
        text_scroll.setWidgetResizable(True)
        text_scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        text_scroll.setWidget(self.text)
        self.top = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        self.top.addWidget(text_scroll)
        self.top.addWidget(self.numbers)
        self.top.setStretchFactor(0, 11)
        self.top.setStretchFactor(1, 9)
        self.top.setSizes([550, 450])
        lower = QtWidgets.QWidget()
        lower_box = QtWidgets.QVBoxLayout(lower)
        lower_box.setContentsMargins(0, 0, 0, 0)
        lower_box.addLayout(self.controls)
        lower_box.addWidget(scroll, 1)
        splitter = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        splitter.addWidget(self.top)
        splitter.addWidget(lower)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)  # the matrices and plots take what the window gains
        splitter.setSizes([250, 650])
        self.splitter = splitter
        self._dragged = False  # the user moved the splitter: their height is kept
        splitter.splitterMoved.connect(self._on_dragged)
        box = QtWidgets.QVBoxLayout(self)
        box.addWidget(splitter, 1)
        self.build()

    # ------------------------------------------------------------------ helpers for subclasses
    def set_header(self, variant: str, equations: str) -> None:
        """Name what is shown (measure, model, sample, variant) and how it is computed, with
        the equation numbers of :data:`fminspect.metrics.equations.EQUATIONS`."""
        norm = html.escape(self.result.params.norm.label)
        model, sample = html.escape(self.model), html.escape(self.sample)  # names from files
        cited = cite(*self.cited_families())
        source = f"<p><b>equations:</b> {html.escape(cited)}</p>" if cited else ""
        self.header.setText(
            f"<h3>{self.TITLE} — {model} on {sample}</h3>"
            f"<p><b>variant:</b> {variant}; {norm}</p><p>{equations}</p>{source}"
        )

    @classmethod
    def cited_families(cls) -> tuple[str, ...]:
        """The families whose equations the header lists."""
        return cls.NEEDS if cls.CITES is None else cls.CITES

    def set_teaching(self, note: str, paper: str, reference: str) -> None:
        """What the measure rewards and misses, the paper (with equation numbers) and the
        reference implementation, from its registry entry."""
        # the header lists the equations already: the paper is named again only when its
        # registry entry says more than them
        repeated = bool(self.NEEDS) and paper == cite(self.NEEDS[0])
        note, paper, reference = (html.escape(text) for text in (note, paper, reference))
        source = "" if repeated else f"<b>paper:</b> {paper} · "
        self.teaching.setText(  # escaped: a note's "β² < 1" is not a tag
            f"<p><b>what it rewards and misses:</b> {note}</p>"
            f"<p>{source}<b>reference:</b> {reference}</p>"
        )
        self.teaching.show()

    def panel(self, key: str, title: str, row: int, col: int) -> MatrixPanel:
        """A matrix panel at (row, col) of the grid (created once; its title is updated on
        every call, since titles carry the threshold and values of what is shown)."""
        if key not in self.panels:
            self.panels[key] = MatrixPanel(title)
            self.grid.addWidget(self.panels[key], row, col)
            self.grid.setRowStretch(row, 3)
        else:
            self.panels[key].title.setText(f"<b>{title}</b>")
        return self.panels[key]

    def add_plot(
        self, plot: QtWidgets.QWidget, row: int, col: int, rowspan: int = 1, colspan: int = 1
    ) -> None:
        """Put a plot in the grid with a usable minimum height. Its width follows the grid's
        columns: a long title must not widen it over its neighbours in a small window."""
        plot.setMinimumHeight(200)
        _ignore_height_hint(plot)
        self.grid.setRowStretch(row, 4)  # a plot needs room for its axes more than a map does
        plot.setMinimumWidth(160)  # not the width its title asks for
        if isinstance(plot, pg.PlotWidget):
            for side in ("left", "bottom"):  # values in [0, 1] are not "×0.001"
                plot.getAxis(side).enableAutoSIPrefix(False)
        self.grid.addWidget(plot, row, col, rowspan, colspan)

    def set_numbers(self, rows: list[tuple[str, object, str]]) -> None:
        """The numbers behind the score: (quantity, value, explanation). The text and the
        table are fitted again when the number of rows changes — not on every update, which
        would undo the user's dragging of the splitter; the rest of the height goes to the
        grid."""
        resize = len(rows) != self.numbers.rowCount()
        self.numbers.setRowCount(len(rows))
        for r, (name, value, note) in enumerate(rows):
            text = f"{value:.6g}" if isinstance(value, float) else str(value)
            for c, cell in enumerate((name, text, note)):
                self.numbers.setItem(r, c, QtWidgets.QTableWidgetItem(cell))
        self.numbers.resizeColumnsToContents()
        if resize:
            self._fit_top()

    def _on_dragged(self, *_: object) -> None:
        self._dragged = True

    def _fit_top(self) -> None:
        """The text and numbers get the height the longer of them needs — the text wrapped
        at its width, the table up to six rows (it scrolls beyond) — and at most 40 % of the
        view (25 % below 900 px); the matrices and plots the rest."""
        if self._dragged:
            return
        total = sum(self.splitter.sizes()) or self.height()
        width = self.top.sizes()[0] or int(self.width() * 0.55)
        layout = self.text.layout()
        text = layout.totalHeightForWidth(width - 8) if layout is not None else 0
        shown = min(self.numbers.rowCount(), 6)
        table = (
            self.numbers.horizontalHeader().sizeHint().height()
            + shown * self.numbers.verticalHeader().defaultSectionSize()
            + 2 * self.numbers.frameWidth()
            + 4
        )
        # on a short screen (a laptop's 768 px) at most a quarter: the text scrolls, and the
        # matrices were drawn ~85 px high under a top of 40 %
        height = min(max(text, table), int((0.4 if total >= 900 else 0.25) * total))
        self.splitter.setSizes([height, max(total - height, 1)])

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        self._fit_top()  # now that the widths are known

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_top()

    def numbers_csv(self) -> str:
        """The numbers table as CSV."""
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["quantity", "value", "what it is"])
        for r in range(self.numbers.rowCount()):
            items = [self.numbers.item(r, c) for c in range(3)]
            w.writerow([item.text() if item is not None else "" for item in items])
        for row in self.extra_csv_rows():
            w.writerow(row)
        return buf.getvalue()

    def extra_csv_rows(self) -> list[tuple[str, str, str]]:
        """Numbers a view shows outside the numbers table (exported after its rows)."""
        return []

    def set_threshold(self, index: int) -> None:
        """Follow the inspector's threshold (views that depend on it override)."""
        self.threshold = index

    def build(self) -> None:
        """Fill the panels and numbers (subclasses)."""
        raise NotImplementedError

    def export_png(self, path: Path | str) -> None:
        """Write the whole view as PNG."""
        save_image(self.grab(), path)

    def _export_png(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Export view", f"{self.sample}_{self.model}_{self.TITLE}.png", "PNG (*.png)"
        )
        if path:
            self.export_png(path)

    def _export_csv(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Export numbers", f"{self.sample}_{self.model}_{self.TITLE}.csv", "CSV (*.csv)"
        )
        if path:
            write_text(path, self.numbers_csv(), encoding="utf-8")


#: Confusion codes (0 TN, 1 FP, 2 FN, 3 TP) in the inspector's colours (fminspect.gui.colours).
CONFUSION_COLOURS = CONFUSION_RGB
CONFUSION_NAMES = list(_NAMES)


class ThresholdView(ExplainView):
    """A view of one binarisation: curve point t (a slider that follows the inspector's) or
    the adaptive binarisation p ≥ 2·mean (a check box). Subclasses draw it in :meth:`show_at`
    and call :meth:`add_threshold_controls` in ``build``."""

    def add_threshold_controls(self, adaptive_threshold: float, used_by: str) -> None:
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.slider.setRange(0, 255)
        self.slider.setValue(self.threshold)
        self.slider.valueChanged.connect(self.set_threshold)
        self.slider_label = QtWidgets.QLabel()
        self.adaptive = QtWidgets.QCheckBox(f"adaptive: p ≥ {adaptive_threshold:.4f}")
        self.adaptive.setToolTip(f"the binarisation behind {used_by} (2·mean)")
        self.adaptive.toggled.connect(self.set_adaptive)
        self.controls.insertWidget(0, QtWidgets.QLabel("threshold t"))
        self.controls.insertWidget(1, self.slider, 2)
        self.controls.insertWidget(2, self.slider_label)
        self.controls.insertWidget(3, self.adaptive)

    def set_threshold(self, index: int) -> None:
        super().set_threshold(index)
        if self.slider.value() != index:
            self.slider.setValue(index)
            return
        if self.adaptive.isChecked():
            self.adaptive.setChecked(False)  # shows curve point t
            return
        self.show_at(index)

    def set_adaptive(self, on: bool) -> None:
        """Show the adaptive binarisation (``on``) or curve point t again."""
        if self.adaptive.isChecked() != on:
            self.adaptive.setChecked(on)
            return
        self.show_at(None if on else self.threshold)

    def show_at(self, index: int | None) -> None:
        """Draw curve point ``index``, or the adaptive binarisation when None (subclasses)."""
        raise NotImplementedError
