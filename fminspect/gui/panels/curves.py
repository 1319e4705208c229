"""PR, F-measure and E-measure curves per model, with the current threshold and the
maximum and adaptive points marked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.panels.plain_items import CurveItem, line_item
from fminspect.gui.panels.unit_plot import keep_unit_square
from fminspect.metrics import DEFAULT_PARAMS, SuiteResult

THRESHOLDS = np.arange(256) / 255

#: Qualitative palette: matplotlib's tab10, the colours most plots of the field use.
PALETTE = (
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
    (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207),
)  # fmt: skip
#: Line styles that multiply the palette: model i has colour i mod 10 and style i div 10, so
#: 40 models are 40 distinct (colour, style) pairs; past 40 the pairs repeat.
LINE_STYLES = (
    QtCore.Qt.PenStyle.SolidLine,
    QtCore.Qt.PenStyle.DashLine,
    QtCore.Qt.PenStyle.DotLine,
    QtCore.Qt.PenStyle.DashDotLine,
)
DISTINCT_STYLES = len(PALETTE) * len(LINE_STYLES)
PLOTS = ("pr", "fm", "em")


def model_colour(i: int) -> tuple[int, int, int]:
    """The colour of the model with palette index ``i``."""
    return PALETTE[i % len(PALETTE)]


def model_line_style(i: int) -> QtCore.Qt.PenStyle:
    """The line style of the model with palette index ``i`` (see :data:`LINE_STYLES`)."""
    return LINE_STYLES[(i // len(PALETTE)) % len(LINE_STYLES)]


def model_pen(i: int, width: float = 1.5, alpha: int = 255) -> QtGui.QPen:
    """The pen of the model with palette index ``i``."""
    pen = pg.mkPen((*model_colour(i), alpha), width=width)
    pen.setStyle(model_line_style(i))
    return pen


#: What the third plot can show against the threshold (its combo box).
THIRD = ("E-measure", "IoU", "Dice")


def _third(result: SuiteResult, which: str) -> tuple[np.ndarray, float, float, float]:
    """(curve, adaptive value, adaptive threshold, max) of the third plot's measure."""
    e, o = result.emeasure, result.overlap
    if which == "E-measure":
        assert e is not None
        return e.curve, e.adaptive, e.adaptive_threshold, e.max
    assert o is not None  # the window always computes it (controller.PANEL_KEYS)
    scores = o.iou if which == "IoU" else o.dice
    return scores.curve, scores.adaptive, o.sweep.adaptive_threshold, scores.max


def _points(
    result: SuiteResult, t: int, third: str = THIRD[0]
) -> dict[str, tuple[tuple[float, float], ...]]:
    """(current, max, adaptive) points of one result in each plot."""
    f, e = result.fmeasure, result.emeasure
    assert f is not None and e is not None  # only results with curves reach the plots
    p, r, fc = f.precision.curve, f.recall.curve, f.fmeasure.curve
    fa = f.fmeasure.argmax
    curve, adaptive, thr, best = _third(result, third)
    ea = int(curve.argmax())
    return {
        "pr": ((r[t], p[t]), (r[fa], p[fa]), (f.recall.adaptive, f.precision.adaptive)),
        "fm": ((t / 255, fc[t]), (fa / 255, f.max), (f.adaptive_threshold, f.adaptive)),
        "em": ((t / 255, curve[t]), (ea / 255, best), (thr, adaptive)),
    }


#: With no model highlighted, markers are drawn for every model up to this many curves.
MARKERS_FOR_ALL = 5


def legend_icon(i: int, width: int = 28, height: int = 12) -> QtGui.QIcon:
    """A legend icon: a short line in the model's colour and style."""
    pixmap = QtGui.QPixmap(width, height)
    pixmap.fill(QtCore.Qt.GlobalColor.transparent)
    painter = QtGui.QPainter(pixmap)
    painter.setPen(model_pen(i, width=2.5))
    painter.drawLine(1, height // 2, width - 1, height // 2)
    painter.end()
    return QtGui.QIcon(pixmap)


class CurvesPanel(QtWidgets.QWidget):
    """Three plots; each model a curve, a marker at the current threshold (●), its maximum
    (★) and its adaptive point (◆). Items are created once per sample and updated in place.

    A legend lists the models with their colour and line style: unchecking one hides its
    curves; clicking one highlights it (thicker, the others faded, and only highlighted models
    carry markers — with no highlight, every model does when there are at most
    :data:`MARKERS_FOR_ALL`).

    Signals
    -------
    highlight_toggled(str)
        The user clicked a model in the legend.
    visibility_toggled(str, bool)
        The user checked (True) or unchecked a model in the legend.
    """

    highlight_toggled = QtCore.Signal(str)
    visibility_toggled = QtCore.Signal(str, bool)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("curvesPanel")
        self._fm_title = f"F (β²={DEFAULT_PARAMS.beta2:g})"
        self.plots = {
            "pr": pg.PlotWidget(title="Precision–recall"),
            "fm": pg.PlotWidget(title=self._fm_title),
            "em": pg.PlotWidget(title="E-measure"),
        }
        labels = {"pr": ("recall", "precision"), "fm": ("threshold", "F"), "em": ("threshold", "E")}
        box = QtWidgets.QHBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        for key, plot in self.plots.items():
            plot.setLabel("bottom", labels[key][0])
            plot.setLabel("left", labels[key][1])
            plot.showGrid(x=True, y=True, alpha=0.25)
            for axis in ("left", "bottom"):
                plot.getAxis(axis).enableAutoSIPrefix(False)
                # the axis (with its grid lines over the whole plot) is repainted whenever a
                # curve or marker moves; caching it as a pixmap makes that a blit (~4 ms each
                # otherwise on software rendering)
                plot.getAxis(axis).setCacheMode(
                    QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache
                )
            plot.setMinimumWidth(170)  # three beside the legend fit a 1366-px window
            # fixed [0, 1] ranges: every curve lives there, plots stay comparable between
            # samples, and new data does not re-lay out the axes (their tick text is the most
            # expensive thing to paint on software rendering)
            # (with room for the end ticks' labels and a ★ at 1; a right margin for "1.0")
            keep_unit_square(plot, spare_px=6.0)
            plot.getPlotItem().setContentsMargins(0, 0, 8, 0)
            plot.hideButtons()  # its "A" button would switch auto-range back on
            box.addWidget(plot)
        self.legend = QtWidgets.QListWidget()
        self.legend.setObjectName("curvesLegend")
        self.legend.setMinimumWidth(140)
        self.legend.setMaximumWidth(190)
        self.legend.setIconSize(QtCore.QSize(28, 12))
        # long names elided in the middle (both "BSA" and "v2" of BSA-Net-v2 tell models
        # apart), never a sideways scroll bar (a trial at 1366 px: it took a row of the 7
        # shown); the tooltip has the name whole
        self.legend.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.legend.setTextElideMode(QtCore.Qt.TextElideMode.ElideMiddle)
        self.legend.setToolTip(
            "click: highlight (thicker, with markers) · check box: show or hide the curves"
        )
        self.legend.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.NoSelection)
        self.legend.itemClicked.connect(self._on_legend_clicked)
        self.legend.itemChanged.connect(self._on_legend_changed)
        # the third plot: E, IoU or Dice against the threshold
        self.third = THIRD[0]
        self.third_choice = QtWidgets.QComboBox()
        self.third_choice.setObjectName("curvesThird")
        self.third_choice.addItems(THIRD)
        self.third_choice.setToolTip("what the third plot shows against the threshold")
        self.third_choice.currentTextChanged.connect(self.set_third)
        side = QtWidgets.QVBoxLayout()
        side.setContentsMargins(0, 0, 0, 0)
        side.addWidget(self.third_choice)
        side.addWidget(self.legend, 1)
        box.addLayout(side)
        self.highlighted: set[str] = set()
        self.hidden: set[str] = set()
        self._toggled: QtWidgets.QListWidgetItem | None = None
        self.names: dict[str, str] = {}
        # the current threshold: a line across the plot (clipped to it), under the curves
        dash = pg.mkPen((150, 150, 150), style=QtCore.Qt.PenStyle.DashLine)
        self.lines = {k: line_item(dash) for k in ("fm", "em")}
        for k, line in self.lines.items():
            self.plots[k].addItem(line, ignoreBounds=True)
            line.setZValue(0.5)  # (curves are at 1 and 2)
        # one scatter item per plot and marker kind, holding every model's spot
        self.markers = {
            (k, kind): pg.ScatterPlotItem(symbol=symbol, size=size, pen=pg.mkPen(edge))
            for k in PLOTS
            for kind, symbol, size, edge in (("at", "o", 8, "w"), ("max", "star", 12, "k"),
                                              ("adp", "d", 9, "k"))
        }  # fmt: skip
        for (k, _), item in self.markers.items():
            item.setZValue(5)
            item.hide()  # until it has markers (see _markers)
            self.plots[k].addItem(item)
        self.curves: dict[str, dict[str, CurveItem]] = {}
        self.results: dict[str, SuiteResult] = {}
        self.order: list[str] = []
        self.colours: dict[str, int] = {}
        self.threshold = 128
        self._place_lines()
        self._brushes: dict[int, QtGui.QBrush] = {}
        # (model, plot) → the F- and E-measure results its curve shows
        self._drawn: dict[tuple[str, str], tuple[object, object, str]] = {}

    def reset(
        self,
        models: list[str],
        colours: dict[str, int] | None = None,
        names: dict[str, str] | None = None,
    ) -> None:
        """New sample: one (empty) curve per model in each plot. ``colours`` gives each
        model's palette index (default: its position in ``models``), ``names`` its display
        name. The curves of a model that keeps its colour are emptied and reused (making 3
        items per model anew cost ~10 ms per model on every change of sample); those of a
        new model are made when its results are first drawn, one plot per event-loop turn
        (making them all here held the GUI thread ~30 ms for 12 new models)."""
        colours = colours or {m: i for i, m in enumerate(models)}
        names = names or {}
        old, self.curves = self.curves, {}
        for model, items in old.items():
            if model in models and colours[model] == self.colours.get(model):
                for item in items.values():
                    item.clear()
                self.curves[model] = items
            else:
                for k, item in items.items():
                    self.plots[k].removeItem(item)
        self.results, self.order, self.colours, self._drawn = {}, list(models), colours, {}
        self.highlighted &= set(models)
        self._fill_legend(models, {m: names.get(m, m) for m in models})
        self._restyle()
        self._markers()

    # ------------------------------------------------------------------ legend & emphasis
    def _fill_legend(self, models: list[str], names: dict[str, str]) -> None:
        if (
            models
            == [
                self.legend.item(i).data(QtCore.Qt.ItemDataRole.UserRole)
                for i in range(self.legend.count())
            ]
            and names == self.names
        ):
            return  # the same legend (the common case: the next sample)
        self.names = names
        self.legend.blockSignals(True)
        self.legend.clear()
        for model in models:
            item = QtWidgets.QListWidgetItem(legend_icon(self.colours[model]), names[model])
            item.setData(QtCore.Qt.ItemDataRole.UserRole, model)
            item.setToolTip(model)
            item.setFlags(item.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
            hidden = model in self.hidden
            item.setCheckState(
                QtCore.Qt.CheckState.Unchecked if hidden else QtCore.Qt.CheckState.Checked
            )
            self.legend.addItem(item)
        self.legend.blockSignals(False)

    def set_names(self, names: dict[str, str]) -> None:
        """New display names (aliases) in the legend."""
        models = [
            self.legend.item(i).data(QtCore.Qt.ItemDataRole.UserRole)
            for i in range(self.legend.count())
        ]
        self._fill_legend(models, {m: names.get(m, m) for m in models})
        self.set_emphasis(self.highlighted, self.hidden)

    def _on_legend_clicked(self, item: QtWidgets.QListWidgetItem) -> None:
        if self._toggled is item:  # a click on the check box: it shows/hides, no more
            self._toggled = None
            return
        self.highlight_toggled.emit(item.data(QtCore.Qt.ItemDataRole.UserRole))

    def _on_legend_changed(self, item: QtWidgets.QListWidgetItem) -> None:
        # Qt reports a click on the check box as a change and then as a click on the item
        self._toggled = item
        QtCore.QTimer.singleShot(0, self._forget_toggle)
        shown = item.checkState() == QtCore.Qt.CheckState.Checked
        self.visibility_toggled.emit(item.data(QtCore.Qt.ItemDataRole.UserRole), shown)

    def _forget_toggle(self) -> None:
        self._toggled = None

    def set_emphasis(self, highlighted: set[str], hidden: set[str]) -> None:
        """Highlight these models and hide those models' curves."""
        self.highlighted, self.hidden = set(highlighted), set(hidden)
        self.legend.blockSignals(True)
        for i in range(self.legend.count()):
            item = self.legend.item(i)
            model = item.data(QtCore.Qt.ItemDataRole.UserRole)
            item.setCheckState(
                QtCore.Qt.CheckState.Unchecked if model in hidden else QtCore.Qt.CheckState.Checked
            )
            font = item.font()
            font.setBold(model in highlighted)
            item.setFont(font)
        self.legend.blockSignals(False)
        self._restyle()
        self._markers()

    def _item(self, model: str, plot: str) -> CurveItem:
        """The curve of ``model`` in ``plot``, made (and styled) on first use."""
        items = self.curves.setdefault(model, {})
        item = items.get(plot)
        if item is None:
            item = items[plot] = CurveItem()
            self.plots[plot].addItem(item, ignoreBounds=True)
            self._style(model, item)
        return item

    def _style(self, model: str, item: CurveItem) -> None:
        i = self.colours[model]
        if model in self.highlighted:
            pen = model_pen(i, width=3.0)
        else:
            pen = model_pen(i, width=1.5, alpha=70 if self.highlighted else 255)
        item.setPen(pen)
        # stacked by the model's colour, not by when its result came: the same picture
        # whatever order the results arrive in (highlighted ones on top of all)
        item.setZValue((2 if model in self.highlighted else 1) + min(i, 999) / 2000)
        item.setVisible(model not in self.hidden)

    def _restyle(self) -> None:
        for model, items in self.curves.items():
            for item in items.values():
                self._style(model, item)

    def marked(self) -> list[str]:
        """The models whose markers are drawn (see the class notes)."""
        models = [m for m in self.results if m not in self.hidden]
        if self.highlighted:
            return [m for m in models if m in self.highlighted]
        return models if len(models) <= MARKERS_FOR_ALL else []

    def set_results(self, results: dict[str, SuiteResult], plots: Sequence[str] = PLOTS) -> None:
        """Draw (or update) these models' curves in ``plots``; curves whose F- and E-measure
        results are unchanged (e.g. after a change of α) are left alone."""
        changed: set[str] = set()
        for model, result in results.items():
            f, e = result.fmeasure, result.emeasure
            if f is None or e is None or model not in self.order:
                continue
            self.results[model] = result
            for k in plots:
                drawn = self._drawn.get((model, k))
                if drawn is not None and drawn == (f, e, self.third):
                    continue  # the same objects: update_suite kept them
                x, y = {
                    "pr": (f.recall.curve, f.precision.curve),
                    "fm": (THRESHOLDS, f.fmeasure.curve),
                    "em": (THRESHOLDS, _third(result, self.third)[0]),
                }[k]
                self._item(model, k).set_data(x, y)
                self._drawn[(model, k)] = (f, e, self.third)
                changed.add(k)
        if changed:
            self._markers(changed)

    def set_third(self, which: str) -> None:
        """Show ``which`` (one of :data:`THIRD`) against the threshold in the third plot."""
        if which not in THIRD or which == self.third:
            return
        self.third = which
        self.plots["em"].setTitle(which)
        self.plots["em"].setLabel("left", {"E-measure": "E", "IoU": "IoU", "Dice": "Dice"}[which])
        self.set_results(dict(self.results), plots=("em",))

    def set_beta2(self, beta2: float) -> None:
        """Name the F-measure's β² in its plot's title."""
        # short: a title wider than the plot widens it past its place (its right end is cut)
        title = f"F (β²={beta2:g})"
        if title != self._fm_title:  # a new title re-lays out and repaints the plot
            self._fm_title = title
            self.plots["fm"].setTitle(title)

    def set_result(self, model: str, result: SuiteResult) -> None:
        """Draw one model's curves."""
        self.set_results({model: result})

    def _markers(self, plots: Iterable[str] = PLOTS) -> None:
        keys = [key for key in self.markers if key[0] in plots]
        xs: dict[tuple[str, str], list[float]] = {key: [] for key in keys}
        ys: dict[tuple[str, str], list[float]] = {key: [] for key in keys}
        brushes: list[QtGui.QBrush] = []
        models = self.marked()
        for model in models:
            brushes.append(self._brush(self.colours[model]))
            for k, (at, mx, adp) in _points(
                self.results[model], self.threshold, self.third
            ).items():
                for kind, (x, y) in (("at", at), ("max", mx), ("adp", adp)):
                    if (k, kind) in xs:
                        xs[(k, kind)].append(x)
                        ys[(k, kind)].append(y)
        for key in keys:
            item = self.markers[key]
            if not models and not len(item.data):
                continue  # empty and hidden already: nothing to tell Qt
            item.setData(x=xs[key], y=ys[key], brush=brushes, data=models)
            # a hidden item is skipped when the plot is painted (an empty one is still asked
            # for its bounds in Python)
            item.setVisible(bool(models))

    def _brush(self, i: int) -> QtGui.QBrush:
        """One brush object per colour: pyqtgraph's symbol atlas keys on the object, so a new
        brush per update would render every symbol again (and grow the atlas)."""
        key = i % len(PALETTE)
        if key not in self._brushes:
            self._brushes[key] = pg.mkBrush(model_colour(i))
        return self._brushes[key]

    def marker(self, model: str, plot: str, kind: str = "at") -> tuple[float, float]:
        """Position of a model's marker (for tests)."""
        for spot in self.markers[(plot, kind)].points():
            if spot.data() == model:
                return spot.pos().x(), spot.pos().y()
        raise KeyError(model)

    def _place_lines(self) -> None:
        x = self.threshold / 255
        for line in self.lines.values():
            line.setLine(x, -10.0, x, 11.0)  # past the plot's y range (zoomed out too)

    def set_threshold(self, index: int) -> None:
        """Move the current-threshold markers."""
        self.threshold = index
        self._place_lines()
        self._markers()
