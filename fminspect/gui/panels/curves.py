"""PR, F-measure and E-measure curves per model, with the current threshold and the
maximum and adaptive points marked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.metrics import SuiteResult

THRESHOLDS = np.arange(256) / 255

#: Qualitative palette (matplotlib's tab10, then tab20's light shades).
PALETTE = (
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
    (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207),
    (174, 199, 232), (255, 187, 120), (152, 223, 138), (255, 152, 150), (197, 176, 213),
)  # fmt: skip
PLOTS = ("pr", "fm", "em")


def model_colour(i: int) -> tuple[int, int, int]:
    """A distinct colour per model."""
    return PALETTE[i % len(PALETTE)]


def _points(result: SuiteResult, t: int) -> dict[str, tuple[tuple[float, float], ...]]:
    """(current, max, adaptive) points of one result in each plot."""
    f, e = result.fmeasure, result.emeasure
    p, r, fc = f.precision.curve, f.recall.curve, f.fmeasure.curve
    fa, ea = f.fmeasure.argmax, e.argmax
    return {
        "pr": ((r[t], p[t]), (r[fa], p[fa]), (f.recall.adaptive, f.precision.adaptive)),
        "fm": ((t / 255, fc[t]), (fa / 255, f.max), (f.adaptive_threshold, f.adaptive)),
        "em": ((t / 255, e.curve[t]), (ea / 255, e.max), (e.adaptive_threshold, e.adaptive)),
    }


class CurvesPanel(QtWidgets.QWidget):
    """Three plots; each model a curve, a marker at the current threshold (●), its maximum
    (★) and its adaptive point (◆). Items are created once per sample and updated in place."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.plots = {
            "pr": pg.PlotWidget(title="Precision–recall"),
            "fm": pg.PlotWidget(title="F-measure (β²=0.3)"),
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
            plot.setMinimumWidth(200)
            # fixed [0, 1] ranges: every curve lives there, plots stay comparable between
            # samples, and new data does not re-lay out the axes (their tick text is the most
            # expensive thing to paint on software rendering)
            # (padded so that a ★ at 1 is whole; a right margin so that the tick "1.0" is)
            plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0.06)
            plot.getPlotItem().setContentsMargins(0, 0, 8, 0)
            plot.disableAutoRange()
            plot.hideButtons()  # its "A" button would switch auto-range back on
            box.addWidget(plot)
        dash = pg.mkPen((150, 150, 150), style=QtCore.Qt.PenStyle.DashLine)
        self.lines = {k: pg.InfiniteLine(angle=90, movable=False, pen=dash) for k in ("fm", "em")}
        for k, line in self.lines.items():
            self.plots[k].addItem(line)
        # one scatter item per plot and marker kind, holding every model's spot
        self.markers = {
            (k, kind): pg.ScatterPlotItem(symbol=symbol, size=size, pen=pg.mkPen(edge))
            for k in PLOTS
            for kind, symbol, size, edge in (("at", "o", 8, "w"), ("max", "star", 12, "k"),
                                              ("adp", "d", 9, "k"))
        }  # fmt: skip
        for (k, _), item in self.markers.items():
            item.setZValue(5)
            self.plots[k].addItem(item)
        self.curves: dict[str, dict[str, pg.PlotDataItem]] = {}
        self.results: dict[str, SuiteResult] = {}
        self.order: list[str] = []
        self.colours: dict[str, int] = {}
        self.threshold = 128
        self._brushes: dict[int, QtGui.QBrush] = {}
        # (model, plot) → the F- and E-measure results its curve shows
        self._drawn: dict[tuple[str, str], tuple[object, object]] = {}

    def reset(self, models: list[str], colours: dict[str, int] | None = None) -> None:
        """New sample: one (empty) curve per model in each plot. ``colours`` gives each
        model's palette index (default: its position in ``models``). The curves of a model
        that keeps its colour are emptied and reused (making 3 items per model anew cost
        ~10 ms per model on every change of sample)."""
        colours = colours or {m: i for i, m in enumerate(models)}
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
        for model in models:
            if model in self.curves:
                continue
            pen = pg.mkPen(model_colour(self.colours[model]), width=1.5)
            # no legend: the metrics table shows each model's colour beside its name
            self.curves[model] = {k: pg.PlotDataItem(pen=pen) for k in PLOTS}
            for k, item in self.curves[model].items():
                self.plots[k].addItem(item)
        self._markers()

    def set_results(self, results: dict[str, SuiteResult], plots: Sequence[str] = PLOTS) -> None:
        """Draw (or update) these models' curves in ``plots``; curves whose F- and E-measure
        results are unchanged (e.g. after a change of α) are left alone."""
        changed: set[str] = set()
        for model, result in results.items():
            f, e = result.fmeasure, result.emeasure
            if f is None or e is None or model not in self.curves:
                continue
            self.results[model] = result
            for k in plots:
                drawn = self._drawn.get((model, k))
                if drawn is not None and drawn[0] is f and drawn[1] is e:
                    continue  # the same objects: update_suite kept them
                x, y = {
                    "pr": (f.recall.curve, f.precision.curve),
                    "fm": (THRESHOLDS, f.fmeasure.curve),
                    "em": (THRESHOLDS, e.curve),
                }[k]
                self.curves[model][k].setData(x, y)
                self._drawn[(model, k)] = (f, e)
                changed.add(k)
        if changed:
            self._markers(changed)

    def set_beta2(self, beta2: float) -> None:
        """Name the F-measure's β² in its plot's title."""
        # short: a title wider than the plot widens it past its place (its right end is cut)
        self.plots["fm"].setTitle(f"F-measure (β²={beta2:g})")

    def set_result(self, model: str, result: SuiteResult) -> None:
        """Draw one model's curves."""
        self.set_results({model: result})

    def _markers(self, plots: Iterable[str] = PLOTS) -> None:
        keys = [key for key in self.markers if key[0] in plots]
        xs: dict[tuple[str, str], list[float]] = {key: [] for key in keys}
        ys: dict[tuple[str, str], list[float]] = {key: [] for key in keys}
        brushes: list[QtGui.QBrush] = []
        models = list(self.results)
        for model in models:
            brushes.append(self._brush(self.colours[model]))
            for k, (at, mx, adp) in _points(self.results[model], self.threshold).items():
                for kind, (x, y) in (("at", at), ("max", mx), ("adp", adp)):
                    if (k, kind) in xs:
                        xs[(k, kind)].append(x)
                        ys[(k, kind)].append(y)
        for key in keys:
            self.markers[key].setData(x=xs[key], y=ys[key], brush=brushes, data=models)

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

    def set_threshold(self, index: int) -> None:
        """Move the current-threshold markers."""
        self.threshold = index
        for line in self.lines.values():
            line.setPos(index / 255)
        self._markers()
