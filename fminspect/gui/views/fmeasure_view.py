"""F-measure, IoU and Dice explained: the confusion maps at the threshold and the PR curve."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from fminspect.gui.views.base import ExplainView, confusion_rgb


class FmeasureView(ExplainView):
    """TP/FP/FN/TN at a threshold, and where the adaptive and maximum points lie."""

    TITLE = "F-measure / IoU / Dice"

    def build(self) -> None:
        f = self.result.fmeasure
        self.set_header(
            f"β² = {f.beta2:g}; curve points floor(255·p) ≥ t; adaptive p ≥ {f.adaptive_threshold:.4f}",
            "P = TP/(TP + FP), R = TP/(TP + FN), F<sub>β</sub> = (1 + β²)PR/(β²P + R); "
            "IoU = TP/(TP + FP + FN); Dice = 2TP/(2TP + FP + FN). maxF / meanF = max / mean over "
            "the 256 thresholds; adpF at 2·mean(p). Zero denominators give 0.",
        )
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.slider.setRange(0, 255)
        self.slider.setValue(self.threshold)
        self.slider.valueChanged.connect(self.set_threshold)
        self.controls.insertWidget(0, QtWidgets.QLabel("threshold t"))
        self.controls.insertWidget(1, self.slider, 2)
        self.pr = pg.PlotWidget(title="precision–recall (● t, ★ max F, ◆ adaptive)")
        self.pr.plot(f.recall.curve, f.precision.curve, pen=pg.mkPen((31, 119, 180), width=2))
        fa = f.fmeasure.argmax
        self.pr.plot(
            [f.recall.curve[fa]],
            [f.precision.curve[fa]],
            pen=None,
            symbol="star",
            symbolSize=14,
            symbolBrush=(255, 190, 0),
        )
        self.pr.plot(
            [f.recall.adaptive],
            [f.precision.adaptive],
            pen=None,
            symbol="d",
            symbolSize=11,
            symbolBrush=(148, 103, 189),
        )
        self.pr_marker = self.pr.plot(
            [0], [0], pen=None, symbol="o", symbolSize=10, symbolBrush=(235, 60, 50)
        )
        self.pr.setLabel("bottom", "recall")
        self.pr.setLabel("left", "precision")
        self.add_plot(self.pr, 0, 2, 2, 2)
        self.set_threshold(self.threshold)

    def set_threshold(self, index: int) -> None:
        super().set_threshold(index)
        if self.slider.value() != index:
            self.slider.setValue(index)
            return
        r = self.result
        f, o = r.fmeasure, r.overlap
        codes = r.pair.confusion_codes(index)
        self.panel("conf", f"TP green, FP red, FN blue, TN dark — t = {index}", 0, 0).show_matrix(
            confusion_rgb(codes)
        )
        self.panel("map", "map", 0, 1).show_matrix(r.pair.pred)
        self.panel("tp", "TP", 1, 0).show_matrix((codes == 3).astype(float), cmap="gray")
        self.panel("fpfn", "FP (1) and FN (−1)", 1, 1).show_matrix(
            (codes == 1).astype(float) - (codes == 2), levels=(-1, 1), cmap="CET-D1"
        )
        self.pr_marker.setData([f.recall.curve[index]], [f.precision.curve[index]])
        c = f.sweep.at(index)
        self.set_numbers(
            [
                (
                    "TP, FP, FN, TN at t",
                    f"{c.tp}, {c.fp}, {c.fn}, {c.tn}",
                    f"binarisation floor(255·p) ≥ {index}",
                ),
                ("P, R at t", f"{f.precision.curve[index]:.4f}, {f.recall.curve[index]:.4f}", ""),
                ("F at t", float(f.fmeasure.curve[index]), f"β² = {f.beta2:g}"),
                ("IoU, Dice at t", f"{o.iou.curve[index]:.4f}, {o.dice.curve[index]:.4f}", ""),
                ("maxF", f.max, f"at t = {f.fmeasure.argmax}"),
                ("meanF", f.mean, "mean over the 256 thresholds"),
                ("adpF", f.adaptive, f"p ≥ {f.adaptive_threshold:.4f}"),
                (
                    "max / mean / adp IoU",
                    f"{o.iou.max:.4f} / {o.iou.mean:.4f} / {o.iou.adaptive:.4f}",
                    "",
                ),
                (
                    "max / mean / adp Dice",
                    f"{o.dice.max:.4f} / {o.dice.mean:.4f} / {o.dice.adaptive:.4f}",
                    "",
                ),
            ]
        )
