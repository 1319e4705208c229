"""The Scatter tab: one point per listed sample, a measure of model A against model B, against
the object's share of the image, or in columns by a COD10K class or an attribute of the
user's table (the points are :mod:`fminspect.inspector.scatter`'s).

A click on a point opens its sample; dragging with Shift held draws a rectangle whose points
become the browser's filter ``selected``; the shown sample is ringed. The points follow the
browser's list (its filter) and fill in as the dataset's scores arrive.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from fminspect.batch.filters import Filter
from fminspect.batch.subsets import SubsetError, subsets_rule
from fminspect.gui.dialogs.measures import fill_combo
from fminspect.gui.window_fit import narrow_combos
from fminspect.inspector.model import InspectorModel
from fminspect.inspector.scatter import ScatterData, inside, nearest, scatter_data

#: The x axis choices: (label, against, rule).
AXES = (
    ("model B", "method", ""),
    ("object's share of the image", "share", ""),
    ("COD10K class", "attribute", "cod10k"),
    ("COD10K sub-class", "attribute", "cod10k-sub"),
    ("attribute table…", "attribute", "csv"),
)
#: Milliseconds between redrawing the points while scores arrive.
REDRAW_MS = 400
POINT = (0, 114, 178, 150)
CHOSEN = (213, 94, 0, 230)
SHOWN = (204, 0, 102)


class _SelectBox(pg.ViewBox):
    """A view box where Shift + drag draws a selection rectangle (plain drag pans)."""

    def __init__(self, panel: ScatterPanel) -> None:
        super().__init__()
        self.panel = panel
        self.band = QtWidgets.QGraphicsRectItem()
        self.band.setPen(pg.mkPen((213, 94, 0), width=1, style=QtCore.Qt.PenStyle.DashLine))
        self.band.setBrush(pg.mkBrush(213, 94, 0, 30))
        self.band.setZValue(1e9)
        self.band.hide()
        self.addItem(self.band, ignoreBounds=True)

    def mouseDragEvent(self, ev: Any, axis: Any = None) -> None:
        if not ev.modifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier:
            super().mouseDragEvent(ev, axis)
            return
        ev.accept()
        a, b = self.mapToView(ev.buttonDownPos()), self.mapToView(ev.pos())
        rect = QtCore.QRectF(a, b).normalized()
        self.band.setRect(rect)
        self.band.show()
        if ev.isFinish():
            self.band.hide()
            self.panel.select_rect(a.x(), b.x(), a.y(), b.y())


class ScatterPanel(QtWidgets.QWidget):
    """The per-image scatter (see the module notes)."""

    #: the samples selected by a rectangle (empty: the selection cleared)
    selected = QtCore.Signal(frozenset)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("scatterView")
        self.model: InspectorModel | None = None
        self.data = ScatterData(np.zeros(0, np.intp), np.zeros(0), np.zeros(0), "", "")
        self._groups: Any = None
        self._problem = ""  # an attribute table that could not be read
        self._listed_n = 0
        box = QtWidgets.QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        bar = QtWidgets.QHBoxLayout()
        self.measure = QtWidgets.QComboBox()
        self.a = QtWidgets.QComboBox()
        self.against = QtWidgets.QComboBox()
        for label, _, _ in AXES:
            self.against.addItem(label)
        self.b = QtWidgets.QComboBox()
        narrow_combos(self.measure, letters=5)
        narrow_combos(self.a, self.against, self.b)
        self.log_x = QtWidgets.QCheckBox("log x")
        self.log_x.setToolTip("a logarithmic x axis (small objects spread out)")
        self.clear = QtWidgets.QPushButton("Clear selection")
        self.clear.setEnabled(False)
        for widget, label in (
            (self.measure, "measure"),
            (self.a, "A (y)"),
            (self.against, "against"),
            (self.b, ""),
        ):
            if label:
                bar.addWidget(QtWidgets.QLabel(label))
            bar.addWidget(widget, 1)
        box.addLayout(bar)
        self.view = _SelectBox(self)
        self.plot = pg.PlotWidget(viewBox=self.view)
        self.plot.setObjectName("scatterPlot")
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setBackground("w")
        for side in ("left", "bottom"):
            self.plot.getAxis(side).enableAutoSIPrefix(False)
        self.points = pg.ScatterPlotItem(size=6, pen=None, brush=pg.mkBrush(*POINT))
        self.chosen = pg.ScatterPlotItem(size=7, pen=None, brush=pg.mkBrush(*CHOSEN))
        self.shown = pg.ScatterPlotItem(
            size=16, pen=pg.mkPen(SHOWN, width=2.5), brush=pg.mkBrush(0, 0, 0, 0)
        )
        self.diagonal = pg.InfiniteLine(
            pos=(0, 0), angle=45, pen=pg.mkPen((128, 128, 128), width=1)
        )
        for item in (self.diagonal, self.points, self.chosen, self.shown):
            self.plot.addItem(item)
        self.points.sigClicked.connect(self._on_clicked)
        box.addWidget(self.plot, 1)
        self.note = QtWidgets.QLabel("")
        self.note.setObjectName("scatterNote")
        self.note.setStyleSheet("color: gray")
        self.note.setWordWrap(True)
        below = QtWidgets.QHBoxLayout()  # (beside the choices they widened the window)
        below.addWidget(self.note, 1)
        below.addWidget(self.log_x)
        below.addWidget(self.clear)
        box.addLayout(below)
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self.redraw)
        for combo in (self.measure, self.a, self.b):
            combo.currentIndexChanged.connect(self.redraw)
        self.against.currentIndexChanged.connect(self._on_against)
        self.log_x.toggled.connect(self._on_log)
        self.clear.clicked.connect(lambda: self.selected.emit(frozenset()))

    # ------------------------------------------------------------------ wiring
    def bind(self, model: InspectorModel) -> None:
        """Draw ``model``'s listed samples and follow its scores, list and shown sample."""
        self.model = model
        model.scores.matrix_started.connect(lambda *_: self._fill())
        model.scores.scores_arrived.connect(lambda *_: self.follow_list())
        model.models_changed.connect(self._fill)
        model.models_listed.connect(self._fill)
        model.facts_changed.connect(self.follow_list)
        model.sample_loaded.connect(lambda *_: self.mark_shown())
        self._fill()

    def follow_list(self) -> None:
        """Scores arrived, or the browser's list changed (a filter, an order): draw again
        soon (at most every :data:`REDRAW_MS` while they keep coming)."""
        if not self._timer.isActive():
            self._timer.start()

    def _fill(self) -> None:
        """The measures and models of the current dataset in the lists."""
        if self.model is None:
            return
        mx = self.model.walk.matrix
        fill_combo(self.measure, mx.keys, "Sm")
        shown = [m for m in self.model.selection.shown if m in mx.method_index]
        # the shown models first, then the others (a trial looked for a model not ticked)
        every = shown + [m for m in mx.methods if m not in shown]
        for combo, k in ((self.a, 0), (self.b, 1)):
            with QtCore.QSignalBlocker(combo):
                chosen = combo.currentData()
                combo.clear()
                for m in every:
                    combo.addItem(self.model.selection.name(m), m)
                if shown and len(every) > len(shown):
                    combo.insertSeparator(len(shown))
                i = combo.findData(chosen) if chosen is not None else -1
                if i < 0 and every:  # the k-th model (past the separator)
                    i = combo.findData(every[min(k, len(every) - 1)])
                combo.setCurrentIndex(i)
        self.redraw()

    def _on_against(self) -> None:
        _, against, rule = AXES[self.against.currentIndex()]
        self.b.setVisible(against == "method")
        self.log_x.setVisible(against == "share")
        self._groups = None
        if against == "attribute":
            if rule == "csv":
                path, _ = QtWidgets.QFileDialog.getOpenFileName(
                    self, "An attribute table (image, attribute, …)", "", "CSV (*.csv)"
                )
                if not path:
                    self.against.setCurrentIndex(0)
                    return
                rule = path
            try:
                self._groups = subsets_rule(rule)
                self._problem = ""
            except SubsetError as exc:
                self._problem = str(exc)
        if against == "share" and self.model is not None:
            self.model.request_shares()
        self.redraw()

    def _on_log(self, on: bool) -> None:
        self.redraw()

    def _log_x(self) -> bool:
        """A logarithmic x axis: asked for, and the x axis is the object's share."""
        return AXES[self.against.currentIndex()][1] == "share" and self.log_x.isChecked()

    # ------------------------------------------------------------------ drawing
    def redraw(self) -> None:
        """Draw the listed samples' points (and the selection and the shown sample)."""
        self._timer.stop()
        if self.model is None:
            return
        walk = self.model.walk
        _, against, _ = AXES[self.against.currentIndex()]
        if against == "share" and walk.shares is None:
            self.model.request_shares()  # (once; the view is drawn again when they come)
        key, a, b = self.measure.currentText(), self.a.currentData(), self.b.currentData()
        if not key or a is None:
            return
        self.data = scatter_data(
            walk.matrix,
            key,
            a,
            against=against,
            b=b,
            shares=walk.shares,
            groups=self._groups,
            labels={m: self.model.selection.name(m) for m in walk.matrix.methods},
            listed=(listed := self._listed()),
        )
        self._listed_n = len(listed)
        d = self.data
        x = d.x
        self.plot.setLogMode(x=self._log_x(), y=False)
        if self._log_x():  # (log mode takes log10 itself; an empty GT has no place on it)
            x = np.where(d.x > 0, d.x, np.nan)
        self.points.setData(x=x, y=d.y, data=d.rows)
        self.diagonal.setVisible(d.diagonal)
        axis = self.plot.getAxis("bottom")
        if d.categories:
            axis.setTicks([[(k, c) for k, c in enumerate(d.categories)]])
        else:
            axis.setTicks(None)
        self.plot.setLabel("bottom", d.xlabel)
        self.plot.setLabel("left", d.ylabel)
        self._draw_chosen()
        self.mark_shown()
        self._say(against)

    def _listed(self) -> np.ndarray:
        """The samples the browser lists, its filter's ``selected`` left out: the selection
        is drawn among the points it was taken from."""
        walk = self.model.walk if self.model is not None else None
        if walk is None:
            return np.zeros(0, np.intp)
        flt = walk.filter
        if flt is None or all(c.text.strip().lower() != "selected" for c in flt.clauses):
            return np.sort(walk.order)
        rest = [c for c in flt.clauses if c.text.strip().lower() != "selected"]
        keep = Filter(flt.text, tuple(rest)).mask(walk.matrix, walk.facts())
        return np.flatnonzero(keep)

    def _draw_chosen(self) -> None:
        chosen = self.model.walk.chosen if self.model is not None else frozenset()
        self.clear.setEnabled(bool(chosen))
        if not chosen or not len(self.data):
            self.chosen.setData(x=[], y=[])
            return
        names = self.model.walk.matrix.samples if self.model is not None else []
        hit = np.array([names[i] in chosen for i in self.data.rows.tolist()], bool)
        self.chosen.setData(x=self.data.x[hit], y=self.data.y[hit])

    def mark_shown(self) -> None:
        """Ring the shown sample's points."""
        m = self.model
        if m is None or m.requested is None or not len(self.data):
            self.shown.setData(x=[], y=[])
            return
        i = m.walk.matrix.sample_index.get(m.requested.name)
        at = self.data.rows == i
        self.shown.setData(x=self.data.x[at], y=self.data.y[at])

    def _say(self, against: str) -> None:
        m = self.model
        if m is None:
            return
        n, listed = len(self.data), self._listed_n
        flt = m.walk.filter
        by_selection = flt is not None and any(
            c.text.strip().lower() == "selected" for c in flt.clauses
        )
        # with the filter "selected", the points are those the selection was drawn among
        # (a trial read "1,000 points of 1,000 listed samples" beside a list of 27)
        whose = "samples the filter lists but for 'selected'" if by_selection else "listed samples"
        text = f"{n:,} points of {listed:,} {whose}"
        drawn = len(np.unique(self.data.rows))  # a sample is in several groups of a table
        if drawn != n:
            text = f"{n:,} points ({drawn:,} samples, a point in each group it is in) of "
            text += f"{listed:,} {whose}"
        if self._problem:
            text = f"{self._problem} — {text}"
        if against == "share" and m.walk.shares is None:
            text += " — reading the GTs for their objects' shares…"
        elif against == "attribute" and self._groups is not None and not self.data.categories:
            text += " — no sample has this attribute (COD10K's names, or the table's first column)"
        elif drawn < listed:
            missing = "in no group" if against == "attribute" else "without both values yet"
            text += f" ({listed - drawn:,} {missing})"
        if m.walk.chosen:
            text += f"; {len(m.walk.chosen):,} selected (the browser's filter: selected)"
            if by_selection:
                text += f", {len(m.walk.order):,} listed"
        text += ". Click a point to open its sample; Shift + drag selects."
        self.note.setText(text)

    # ------------------------------------------------------------------ input
    def _on_clicked(self, item: Any, points: Any, ev: Any = None) -> None:
        if self.model is None or not len(points):
            return
        i = int(points[0].data())
        self.model.open_sample(self.model.walk.matrix.samples[i], 1)

    def open_nearest(self, x: float, y: float) -> str | None:
        """Open the sample of the point nearest (x, y) in data units (for scripts)."""
        if self.model is None:
            return None
        (sx, sy) = self.view.viewPixelSize()
        i = nearest(self.data, x, y, sx or 1.0, sy or 1.0)
        if i is None:
            return None
        name = self.model.walk.matrix.samples[i]
        self.model.open_sample(name, 1)
        return name

    def select_rect(self, x0: float, x1: float, y0: float, y1: float) -> frozenset[str]:
        """Select the samples whose points lie in the rectangle (in data units; on a log x
        axis, in log10 units as drawn)."""
        if self.model is None:
            return frozenset()
        if self._log_x():
            x0, x1 = 10**x0, 10**x1
        rows = inside(self.data, x0, x1, y0, y1)
        names = frozenset(self.model.walk.matrix.samples[i] for i in rows.tolist())
        self.selected.emit(names)
        return names
