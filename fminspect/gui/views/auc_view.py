"""AUC of the ROC and PR curves and average precision explained: every binarisation as a
point, the straight lines the areas assume between them, AP's interpolated precision."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from fminspect.gui.views.base import ExplainView
from fminspect.metrics.auc import ELEVEN_LEVELS
from fminspect.metrics.equations import tag


class AUCView(ExplainView):
    """The ROC and PR points of the 256 binarisations, the areas under the lines joining
    them, and the interpolated precision average precision uses."""

    TITLE = "AUC / AP"
    NEEDS = ("auc",)

    def build(self) -> None:
        a = self.result.auc
        assert a is not None
        self.set_header(
            f"256 binarisations floor(255·p) ≥ t; AP interpolation: {a.interpolation}",
            f"ROC: hit rate TPR = TP/(TP + FN) ({tag('auc', 'hit rate')}) against false alarm "
            f"FPR = FP/(FP + TN) ({tag('auc', 'false alarm')}), from (0, 0); AUCROC = "
            f"trapezoidal area. PR: precision ({tag('auc', 'precision')}) against recall, from (R = 0, P = 1); AUCPR = trapezoidal "
            "area; AP = Σ ΔR · P<sub>int</sub> with P<sub>int</sub>(r) = max precision at recall ≥ r (all), "
            "or the mean of P<sub>int</sub> at r = 0, 0.1, …, 1 (11pt), or Σ ΔR · P (none). Both areas score the lines "
            "between the points, not where the points lie: Margolin's interpolation flaw.",
        )
        roc = pg.PlotWidget(title="ROC: each ● a binarisation; area under the lines")
        fill = pg.PlotDataItem(
            a.roc_fpr,
            a.roc_tpr,
            pen=pg.mkPen((31, 119, 180), width=2),
            fillLevel=0,
            fillBrush=(31, 119, 180, 50),
        )
        roc.addItem(fill)
        roc.plot(
            a.roc_fpr, a.roc_tpr, pen=None, symbol="o", symbolSize=5, symbolBrush=(31, 119, 180)
        )
        roc.plot(
            [0, 1], [0, 1], pen=pg.mkPen((150, 150, 150), style=pg.QtCore.Qt.PenStyle.DashLine)
        )
        roc.setLabel("bottom", "false alarm (FPR)")
        roc.setLabel("left", "hit rate (TPR)")
        roc.setRange(xRange=(0, 1), yRange=(0, 1), padding=0.04)
        self.add_plot(roc, 0, 0)
        pr = pg.PlotWidget(title="PR: ● binarisations, green: interpolated P, ◆ 11 recall levels")
        order = np.argsort(a.pr_recall, kind="stable")
        pr.addItem(
            pg.PlotDataItem(
                a.pr_recall[order],
                a.pr_precision[order],
                pen=pg.mkPen((255, 127, 14), width=1),
                fillLevel=0,
                fillBrush=(255, 127, 14, 40),
            )
        )
        pr.plot(
            a.pr_recall,
            a.pr_precision,
            pen=None,
            symbol="o",
            symbolSize=5,
            symbolBrush=(255, 127, 14),
        )
        pr.plot(
            a.pr_recall[order],
            a.pr_envelope[order],
            pen=pg.mkPen((44, 160, 44), width=2),
            stepMode=None,
        )
        pr.plot(
            ELEVEN_LEVELS,
            a.pr_eleven,
            pen=None,
            symbol="d",
            symbolSize=9,
            symbolBrush=(148, 103, 189),
        )
        pr.setLabel("bottom", "recall")
        pr.setLabel("left", "precision")
        pr.setRange(xRange=(0, 1), yRange=(0, 1), padding=0.04)
        self.add_plot(pr, 0, 1)
        distinct = len(set(zip(a.roc_fpr.tolist(), a.roc_tpr.tolist(), strict=True)))
        self.set_numbers(
            [
                ("AUCROC", a.auc_roc, "area under the ROC lines (NaN: no ROC for this GT)"),
                ("AUCPR", a.auc_pr, "area under the PR lines"),
                (f"AP ({a.interpolation})", a.ap, "average precision"),
                ("distinct ROC points", str(distinct), "binarisations that differ, with (0, 0)"),
            ]
            + [("note", w, "") for w in a.warnings]
        )
