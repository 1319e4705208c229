"""MAE, relaxed boundary F-measure and multiscale IoU explained."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from fminspect.gui.views.base import CONFUSION_COLOURS, ExplainView
from fminspect.metrics.equations import tag


class MAEView(ExplainView):
    """The per-pixel absolute error and its mean."""

    TITLE = "MAE"
    NEEDS = ("mae",)

    def build(self) -> None:
        m = self.result.mae
        assert m is not None  # the inspector computes every measure
        self.set_header(
            "mean absolute error",
            "MAE = mean |p − g| over all pixels (lower is better; Perazzi et al., CVPR 2012; "
            f"the Context-measure paper's {tag('mae', 'MAE')}).",
        )
        self.panel("map", "map p", 0, 0).show_matrix(self.result.pair.pred)
        self.panel("gt", "GT g", 0, 1).show_matrix(self.result.pair.mask.astype(float), cmap="gray")
        self.panel("err", "|p − g|", 0, 2).show_matrix(m.error_map, cmap="inferno")
        self.set_numbers(
            [
                ("MAE", m.score, "mean of |p − g|"),
                ("mean error on the GT foreground", m.foreground_error, "missed object"),
                ("mean error on the background", m.background_error, "false alarms"),
            ]
        )


class BoundaryView(ExplainView):
    """Both boundaries, their tolerance bands and the matched boundary pixels."""

    TITLE = "relaxed boundary F-measure"
    NEEDS = ("relaxed_fmeasure",)

    def build(self) -> None:
        b = self.result.relaxed_fmeasure
        assert b is not None  # the inspector computes every measure
        self.set_header(
            f"ρ = {b.rho} px, β² = {b.beta2:g}, map binarised at p ≥ {b.threshold:g}",
            "Boundary = mask XOR its 3×3 erosion; relaxed precision = share of predicted-boundary "
            "pixels within ρ px of the GT boundary; relaxed recall = share of GT-boundary pixels "
            "within ρ px of the predicted boundary; relaxF = (1 + β²)PR/(β²P + R). Qin et al. "
            "(BASNet), CVPR 2019.",
        )
        h, w = b.gt_boundary.shape
        rgb = np.zeros((h, w, 3), np.uint8)
        rgb[b.gt_band] = (40, 60, 90)
        rgb[b.pred_band & ~b.gt_band] = (80, 50, 30)
        rgb[b.gt_boundary] = (60, 140, 255)
        rgb[b.pred_boundary] = (255, 150, 40)
        rgb[b.matched_pred] = (255, 235, 80)
        self.panel(
            "all", "GT boundary (blue), predicted (orange), matched (yellow), bands (dim)", 0, 0
        ).show_matrix(rgb)
        self.panel("gtb", "GT boundary and its ρ band", 0, 1).show_matrix(
            b.gt_band * 0.4 + b.gt_boundary * 0.6
        )
        self.panel("pb", "predicted boundary and its ρ band", 0, 2).show_matrix(
            b.pred_band * 0.4 + b.pred_boundary * 0.6
        )
        self.set_numbers(
            [
                ("relaxF", b.score, ""),
                (
                    "relaxed precision",
                    b.precision,
                    f"{int(b.matched_pred.sum())} of {int(b.pred_boundary.sum())} predicted boundary px",
                ),
                (
                    "relaxed recall",
                    b.recall,
                    f"{int(b.matched_gt.sum())} of {int(b.gt_boundary.sum())} GT boundary px",
                ),
            ]
            + [("note", x, "") for x in b.warnings]
        )


class MSIoUView(ExplainView):
    """Edge maps, box counting at every cell size, and the ratio curve."""

    TITLE = "multiscale IoU"
    NEEDS = ("msiou",)

    def build(self) -> None:
        m = self.result.msiou
        assert m is not None  # the inspector computes every measure
        self.set_header(
            "adaptive (p ≥ 2·mean) and binary (p > 0.5) binarisations",
            "Edges = support of the Sobel response; for cell sizes 1, 2, …, 512 the cells holding "
            "an edge are counted (zero padding top/left); ratio = (|pred ∧ GT cells| + 1)/(|GT "
            "cells| + 1); MSIoU = area under the 10 ratios (dx = 1/9). Ahmadzadeh et al., ICIP 2021. "
            "GT cell counts in float16 by default, as pysodmetrics does (rounded above 2048); "
            "the paper counts exactly: msiou_counting=exact.",
        )
        self.mode = QtWidgets.QComboBox()
        self.mode.addItems(["adaptive", "binary"])
        self.scale = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.scale.setRange(0, len(m.cell_sizes) - 1)
        self.scale.setValue(3)
        for w in (
            QtWidgets.QLabel("binarisation"),
            self.mode,
            QtWidgets.QLabel("cell size"),
            self.scale,
        ):
            self.controls.insertWidget(self.controls.count() - 3, w)
        self.mode.currentIndexChanged.connect(lambda _: self.refresh())
        self.scale.valueChanged.connect(lambda _: self.refresh())
        self.plot = pg.PlotWidget(title="ratio per cell size")
        self.plot.setLabel("bottom", "log₂ cell size")
        curve = self.result.msiou_curve
        self.add_plot(self.plot, 1, 0, 1, 3 if curve is None else 2)
        if curve is not None:  # the 257-threshold curve, when it was computed
            over = pg.PlotWidget(title="MSIoU per threshold t (★ max)")
            over.plot(
                np.arange(curve.curve.size), curve.curve, pen=pg.mkPen((31, 119, 180), width=2)
            )
            over.plot(
                [curve.argmax],
                [curve.max],
                pen=None,
                symbol="star",
                symbolSize=14,
                symbolBrush=(255, 190, 0),
            )
            over.setLabel("bottom", "threshold t (floor(255·p) ≥ t; 256: empty)")
            self.add_plot(over, 1, 2)
        self.refresh()

    def refresh(self) -> None:
        m = self.result.msiou
        assert m is not None
        s = m.adaptive if self.mode.currentIndex() == 0 else m.binary
        k = self.scale.value()
        size = m.cell_sizes[k]
        self.panel("pe", f"predicted edges ({s.rule})", 0, 0).show_matrix(
            s.pred_edge.astype(float), cmap="gray"
        )
        self.panel("ge", "GT edges", 0, 1).show_matrix(s.gt_edge.astype(float), cmap="gray")
        cells = s.pred_grids[k].astype(np.intp) + 2 * s.gt_grids[k]
        title = (
            f"cells of {size}×{size} with an edge: both yellow, GT only blue, map only vermillion"
        )
        self.panel("cells", title, 0, 2).show_categories(
            cells, CONFUSION_COLOURS, ["neither", "map only", "GT only", "both"]
        )
        self.plot.clear()
        self.plot.plot(
            np.arange(len(s.ratios)), s.ratios, pen=pg.mkPen((31, 119, 180), width=2), symbol="o"
        )
        self.plot.plot(
            [k], [s.ratios[k]], pen=None, symbol="o", symbolSize=12, symbolBrush=(235, 60, 50)
        )
        rows: list[tuple[str, object, str]] = [
            ("MSIoU", s.score, f"{s.rule}; GT cells counted {m.counting}")
        ]
        if self.result.msiou_curve is not None:
            c = self.result.msiou_curve
            rows += [
                ("meanMSIoU", c.mean, "mean over t = 0..256"),
                ("maxMSIoU", c.max, f"at t = {c.argmax}"),
            ]
        for i, sz in enumerate(m.cell_sizes):
            rows.append(
                (
                    f"cell {sz}",
                    float(s.ratios[i]),
                    f"({s.intersections[i]} + 1) / ({s.gt_cells[i]} + 1); pred cells {s.pred_cells[i]}",
                )
            )
        self.set_numbers(rows)


class Curves255View(ExplainView):
    """The F- and E-measure curves over fminspect's 256 thresholds and over eval-co-sod's
    255: the same measures, sampled elsewhere."""

    TITLE = "F and E over 255 thresholds"
    NEEDS = ("curves255", "fmeasure", "emeasure")
    CITES = ("fmeasure", "emeasure")

    def build(self) -> None:
        from fminspect.metrics.thresholds255 import THRESHOLDS

        c, f, e = self.result.curves255, self.result.fmeasure, self.result.emeasure
        assert c is not None and f is not None and e is not None
        self.set_header(
            f"β² = {c.beta2:g}; 255 thresholds θ = linspace(0, 1 − 1e-10, 255), p ≥ θ "
            "(eval-co-sod) against floor(255·p) ≥ t, t = 0..255 (pysodmetrics)",
            f"F<sub>β</sub> ({tag('fmeasure', 'F_β')}) and E ({tag('emeasure', 'E')}) of "
            "each binary map; max and mean over the curve. The formulas are the same: only the "
            "set of binary maps differs, and with it the max and the mean.",
        )
        x256 = np.arange(256) / 255
        for col, (name, ours, theirs) in enumerate(
            (("F-measure", f.fmeasure.curve, c.fmeasure), ("E-measure", e.curve, c.emeasure))
        ):
            plot = pg.PlotWidget(title=f"{name}: 256 thresholds (blue), 255 (orange, dashed)")
            plot.plot(x256, ours, pen=pg.mkPen((31, 119, 180), width=2))
            plot.plot(
                THRESHOLDS,
                theirs,
                pen=pg.mkPen((255, 127, 14), width=2, style=QtCore.Qt.PenStyle.DashLine),
            )
            plot.setLabel("bottom", "threshold")
            plot.setLabel("left", name)
            self.add_plot(plot, 0, col)
        self.set_numbers(
            [
                ("maxFm (256)", f.fmeasure.max, "max of the 256-point F curve"),
                ("maxFm255", float(c.fmeasure.max()), "max of the 255-point F curve"),
                ("meanFm (256)", f.fmeasure.mean, "mean of the 256-point F curve"),
                ("meanFm255", float(c.fmeasure.mean()), "mean of the 255-point F curve"),
                ("maxEm (256)", e.max, "max of the 256-point E curve"),
                ("maxEm255", float(c.emeasure.max()), "max of the 255-point E curve"),
                ("meanEm (256)", e.mean, "mean of the 256-point E curve"),
                ("meanEm255", float(c.emeasure.mean()), "mean of the 255-point E curve"),
            ]
        )
