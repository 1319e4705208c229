"""F-measure, IoU and Dice explained: the confusion maps at the threshold and the PR curve."""

from __future__ import annotations

import pyqtgraph as pg

from fminspect.gui.views.base import CONFUSION_COLOURS, CONFUSION_NAMES, ThresholdView
from fminspect.metrics import MEASURES_BY_KEY
from fminspect.metrics.equations import tag


def _higher(symbol: str) -> bool:
    """Whether a larger ``symbol`` (TNR, FPR, …) is better, as its registry keys say."""
    return MEASURES_BY_KEY[f"adp{symbol}"].higher_is_better


class FmeasureView(ThresholdView):
    """TP/FP/FN/TN at a threshold, and where the adaptive and maximum points lie."""

    TITLE = "confusion counts: F, IoU, Dice and the rates"
    NEEDS = ("fmeasure", "overlap")

    def build(self) -> None:
        f = self.result.fmeasure
        assert f is not None  # the inspector computes every measure
        self.set_header(
            f"β² = {f.beta2:g}; curve points floor(255·p) ≥ t; adaptive p ≥ {f.adaptive_threshold:.4f}",
            f"P = TP/(TP + FP) ({tag('fmeasure', 'precision')}), R = TP/(TP + FN) "
            f"({tag('fmeasure', 'recall')}), F<sub>β</sub> = (1 + β²)PR/(β²P + R) "
            f"({tag('fmeasure', 'F_β')}); IoU = TP/(TP + FP + FN) "
            f"({tag('overlap', 'IoU (PASCAL)')}); Dice = 2TP/(2TP + FP + FN). maxF / meanF = max / mean over "
            "the 256 thresholds; adpF at 2·mean(p). Zero denominators give 0.",
        )
        self.add_threshold_controls(f.adaptive_threshold, "adpF, adpIoU and adpDice")
        self.pr = pg.PlotWidget(title="PR: ● t, ★ max F, ◆ adaptive")
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
        self.pr.setRange(xRange=(0, 1), yRange=(0, 1), padding=0.04)  # every point in view
        self.add_plot(self.pr, 0, 2, 2, 2)
        self.set_threshold(self.threshold)

    def show_at(self, index: int | None) -> None:
        """Curve point ``index``, or the adaptive binarisation when None."""
        r = self.result
        f, o = r.fmeasure, r.overlap
        assert f is not None and o is not None
        if index is None:
            thr = f.adaptive_threshold
            codes = r.pair.confusion_codes(threshold=thr)
            where, c = f"adaptive p ≥ {thr:.4f}", f.sweep.adaptive
            p, rec, fv = f.precision.adaptive, f.recall.adaptive, f.adaptive
            iou, dice = o.iou.adaptive, o.dice.adaptive
        else:
            codes = r.pair.confusion_codes(index)
            where, c = f"t = {index}", f.sweep.at(index)
            p, rec, fv = f.precision.curve[index], f.recall.curve[index], f.fmeasure.curve[index]
            iou, dice = o.iou.curve[index], o.dice.curve[index]
        self.panel(
            "conf", f"TP yellow, FP vermillion, FN blue, TN dark — {where}", 0, 0
        ).show_categories(codes, CONFUSION_COLOURS, CONFUSION_NAMES)
        self.panel("map", "map", 0, 1).show_matrix(r.pair.pred)
        self.panel("tp", "TP", 1, 0).show_matrix((codes == 3).astype(float), cmap="gray")
        self.panel("fpfn", "FP (1) and FN (−1)", 1, 1).show_matrix(
            (codes == 1).astype(float) - (codes == 2), levels=(-1, 1), cmap="CET-D1"
        )
        self.pr_marker.setData([rec], [p])
        self.slider_label.setText(f"{where}: F = {float(fv):.4f}")
        at = "at t" if index is not None else "adaptive"
        rule = (
            f"binarisation floor(255·p) ≥ {index}"
            if index is not None
            else f"binarisation p ≥ {f.adaptive_threshold:.4f} (2·mean)"
        )
        self.set_numbers(
            [
                (f"TP, FP, FN, TN {at}", f"{c.tp}, {c.fp}, {c.fn}, {c.tn}", rule),
                (f"P, R {at}", f"{p:.4f}, {rec:.4f}", ""),
                (f"F {at}", float(fv), f"β² = {f.beta2:g}"),
                (f"IoU, Dice {at}", f"{iou:.4f}, {dice:.4f}", ""),
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
                (
                    "bin P, R, F, IoU, Dice",
                    self._binary(),
                    "p > 0.5 (bin…, pooled… over a dataset)",
                ),
                *self._rates(index),
            ]
        )

    def _binary(self) -> str:
        f, o = self.result.fmeasure, self.result.overlap
        assert f is not None and o is not None
        values = (f.precision, f.recall, f.fmeasure, o.iou, o.dice)
        return ", ".join(f"{v.binary:.4f}" for v in values)

    def _rates(self, index: int | None) -> list[tuple[str, object, str]]:
        """TNR, FPR, BER, accuracy and both kappas at this binarisation, when the window
        computed them (the classification rates)."""
        k = self.result.classification
        if k is None:
            return []
        rates = (
            ("TNR", k.specificity, "TN/(TN + FP)"),
            (
                "FPR",
                k.fpr,
                f"FP/(TN + FP), the false-alarm rate "
                f"({tag('classification', 'false alarm (FPR)')}, Margolin et al.)",
            ),
            ("BER", k.ber, "1 − (TPR + TNR)/2"),
            ("OA", k.accuracy, "(TP + TN)/N"),
            ("Kappa", k.kappa_pysodmetrics, "pysodmetrics' KappaHandler (not Cohen's)"),
            ("CKappa", k.cohen_kappa, "Cohen's κ"),
        )
        at = "at t" if index is not None else "adaptive"
        return [
            (
                f"{name} {at}",
                float(s.adaptive if index is None else s.curve[index]),
                f"{what}; best over t {s.max if _higher(name) else s.min:.4f}",
            )
            for name, s, what in rates
        ]
