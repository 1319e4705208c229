"""PR, F-measure and E-measure curves per model, with the current threshold and the
maximum and adaptive points marked."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

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
    fa, ea = f.fmeasure.argmax, int(np.argmax(e.curve))
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
            "fm": pg.PlotWidget(title="F-measure vs threshold"),
            "em": pg.PlotWidget(title="E-measure vs threshold"),
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
            plot.setMinimumWidth(200)
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
        self.threshold = 128

    def reset(self, models: list[str]) -> None:
        """New sample: one (empty) curve per model in each plot."""
        for items in self.curves.values():
            for k, item in items.items():
                self.plots[k].removeItem(item)
        self.curves, self.results, self.order = {}, {}, list(models)
        for i, model in enumerate(models):
            pen = pg.mkPen(model_colour(i), width=1.5)
            # no legend: the metrics table shows each model's colour beside its name
            self.curves[model] = {k: pg.PlotDataItem(pen=pen) for k in PLOTS}
            for k, item in self.curves[model].items():
                self.plots[k].addItem(item)
        self._markers()

    def set_results(self, results: dict[str, SuiteResult]) -> None:
        """Draw (or update) the curves of these models."""
        for model, result in results.items():
            if result.fmeasure is None or result.emeasure is None or model not in self.curves:
                continue
            if self.results.get(model) is result:
                continue
            self.results[model] = result
            f, e = result.fmeasure, result.emeasure
            items = self.curves[model]
            items["pr"].setData(f.recall.curve, f.precision.curve)
            items["fm"].setData(THRESHOLDS, f.fmeasure.curve)
            items["em"].setData(THRESHOLDS, e.curve)
        self._markers()

    def set_result(self, model: str, result: SuiteResult) -> None:
        """Draw one model's curves."""
        self.set_results({model: result})

    def _markers(self) -> None:
        spots: dict[tuple[str, str], list[dict[str, object]]] = {key: [] for key in self.markers}
        for model, result in self.results.items():
            brush = pg.mkBrush(model_colour(self.order.index(model)))
            for k, (at, mx, adp) in _points(result, self.threshold).items():
                for kind, (x, y) in (("at", at), ("max", mx), ("adp", adp)):
                    spots[(k, kind)].append({"pos": (x, y), "brush": brush, "data": model})
        for key, item in self.markers.items():
            item.setData(spots[key])

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
