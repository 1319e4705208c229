"""E-measure explained: bias, alignment and enhanced alignment matrices at a threshold."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from fminspect.gui.colours import confusion_colour
from fminspect.gui.views.base import SmallTable, ThresholdView
from fminspect.metrics import EmeasureAt, emeasure_at
from fminspect.metrics.emeasure import REGIONS, enhancement
from fminspect.metrics.equations import tag

REGION_COLOURS = {
    "TP": confusion_colour("TP"),
    "FP": confusion_colour("FP"),
    "FN": confusion_colour("FN"),
    "TN": (150, 150, 150),  # lighter than the maps' TN: a point on a dark plot
}
#: Where each region's label sits relative to its point (pyqtgraph anchors: (1, 1) puts the
#: text left of and above the point).
LABEL_ANCHORS = {"TP": (1.1, 1), "TN": (1.1, 0), "FP": (-0.1, 1), "FN": (-0.1, 0)}
#: Columns of the region table: what each region adds to the score.
REGION_COLUMNS = ("region", "pixels", "φ_FM", "φ_GT", "ξ", "f(ξ)", "adds to E")


def _fixed(value: float) -> str:
    """Four decimals, without a minus sign on a value that rounds to zero."""
    text = f"{value:.4f}"
    return "0.0000" if text == "-0.0000" else text


class EmeasureView(ThresholdView):
    """Scrub the threshold and watch φ, ξ and f(ξ) change region by region."""

    TITLE = "E-measure"
    NEEDS = ("emeasure",)

    def build(self) -> None:
        e = self.result.emeasure
        assert e is not None  # the inspector computes every measure
        self.set_header(
            f"curve point floor(255·p) ≥ t; adpEm uses p ≥ {e.adaptive_threshold:.4f}",
            "Bias matrices φ<sub>I</sub> = I − μ<sub>I</sub>·A for the binarised map and the GT "
            f"({tag('emeasure', 'bias φ')}); alignment ξ = 2 φ<sub>GT</sub>∘φ<sub>FM</sub> / "
            "(φ<sub>GT</sub>∘φ<sub>GT</sub> + φ<sub>FM</sub>∘φ<sub>FM</sub>) "
            f"({tag('emeasure', 'alignment ξ')}); enhanced alignment φ = f(ξ) = (1 + ξ)²/4 "
            f"({tag('emeasure', 'enhanced alignment ϕ')}); E = Σφ / (N − 1 + eps) — the "
            f"reference's denominator; the paper's {tag('emeasure', 'E')} divides by N = w × h. "
            "Every pixel is in one of four regions, so each matrix takes four values.",
        )
        self.add_threshold_controls(e.adaptive_threshold, "adpEm")
        self.mapping = pg.PlotWidget()
        xi = np.linspace(-1, 1, 201)
        self.mapping.plot(xi, enhancement(xi), pen=pg.mkPen((120, 120, 120), width=2))
        self.mapping.setLabel("bottom", "ξ (alignment)")
        self.mapping.setLabel("left", "f(ξ) = (1 + ξ)²/4")
        self.region_points = pg.ScatterPlotItem(size=12)
        # one brush object per region: the scatter's symbol atlas keys on the object
        self.region_brushes = [pg.mkBrush(*REGION_COLOURS[r]) for r in REGIONS]
        # each region's label on its own side of its point: TP and TN often share ξ = 1 (and
        # FP and FN share a negative ξ), and labels at x = 1 must not run off the plot
        self.region_labels = [
            pg.TextItem(r, anchor=LABEL_ANCHORS[r], color=pg.getConfigOption("foreground"))
            for r in REGIONS
        ]
        self.mapping.addItem(self.region_points)
        for label in self.region_labels:
            self.mapping.addItem(label, ignoreBounds=True)
        self.mapping.setXRange(-1.05, 1.05)
        self.mapping.setYRange(-0.05, 1.1)
        self.curve = pg.PlotWidget()
        self.curve.plot(np.arange(256) / 255, e.curve, pen=pg.mkPen((31, 119, 180), width=2))
        self.curve_marker = pg.ScatterPlotItem(size=10, brush=pg.mkBrush(235, 60, 50))
        self.curve.addItem(self.curve_marker)
        self.curve.setLabel("bottom", "threshold t/255")
        self.curve.setLabel("left", "E (● current t)")
        self.regions = SmallTable(
            REGION_COLUMNS,
            tooltip="Every pixel falls in one of four regions (binarised map vs GT); all pixels of a "
            "region share φ_FM, φ_GT, ξ and f(ξ). contribution = f(ξ)·pixels / (N − 1 + eps); "
            "the four contributions add up to E.",
        )
        self.region_rows: list[tuple[str, str, str]] = []
        self.add_plot(self.curve, 2, 0)
        self.add_plot(self.mapping, 2, 1)
        self.grid.addWidget(self.regions, 2, 2, 1, 2)
        self.set_threshold(self.threshold)

    def maps_at(self, index: int) -> EmeasureAt:
        """The E-measure of curve point ``index`` (what the panels show)."""
        return emeasure_at(self.result.pair, index=index)

    def show_at(self, index: int | None) -> None:
        """Curve point ``index``, or the adaptive binarisation when None."""
        e = self.result.emeasure
        assert e is not None
        if index is None:
            at = e.at  # computed by the core at the adaptive threshold
            where = f"adaptive p ≥ {e.adaptive_threshold:.4f}"
            self.slider_label.setText(f"{where}: E = {at.score:.4f} (adpEm)")
        else:
            at = self.maps_at(index)
            where = f"t = {index}"
            self.slider_label.setText(f"t = {index} (p ≥ {index / 255:.3f}): E = {at.score:.4f}")
        self.at = at
        gt = self.result.pair.mask.astype(float)
        self.panel("gt", "GT", 0, 0).show_matrix(gt, cmap="gray")
        self.panel("bin", f"binarised map, {where}", 0, 1).show_matrix(
            at.binary_map.astype(float), cmap="gray"
        )
        self.panel(
            "mu_f", f"mean-value map μ<sub>FM</sub>·A = {at.pred_mean:.3f}", 0, 2
        ).show_matrix(at.pred_mean_map)
        self.panel("mu_g", f"mean-value map μ<sub>GT</sub>·A = {at.gt_mean:.3f}", 0, 3).show_matrix(
            at.gt_mean_map
        )
        self.panel("phi_g", "bias φ<sub>GT</sub>", 1, 0).show_matrix(at.bias_gt_map, diverging=True)
        self.panel("phi_f", "bias φ<sub>FM</sub>", 1, 1).show_matrix(
            at.bias_pred_map, diverging=True
        )
        self.panel("xi", "alignment ξ", 1, 2).show_matrix(
            at.alignment_map, levels=(-1, 1), cmap="CET-D1"
        )
        self.panel("enh", "enhanced alignment φ = f(ξ)", 1, 3).show_matrix(at.enhanced_map)
        counts = (at.counts.tp, at.counts.fp, at.counts.fn, at.counts.tn)
        present = [i for i, n in enumerate(counts) if n]  # an empty region has no point
        self.region_points.setData(
            x=[at.region_alignment[i] for i in present],
            y=[at.region_enhanced[i] for i in present],
            brush=[self.region_brushes[i] for i in present],
        )
        for label, r, x, y, n in zip(
            self.region_labels,
            REGIONS,
            at.region_alignment,
            at.region_enhanced,
            counts,
            strict=True,
        ):
            label.setText(f"{r} ({n})")
            label.setPos(x, y)
            label.setVisible(n > 0)
        if index is None:  # the adaptive E is not a point of the curve: mark it at its p
            self.curve_marker.setData([e.adaptive_threshold], [e.adaptive])
        else:
            self.curve_marker.setData([index / 255], [e.curve[index]])
        rows: list[tuple[str, object, str]] = [
            (
                "E at t" if index is not None else "E, adaptive",
                at.score,
                at.degenerate or "Σφ / (N − 1 + eps)",
            ),
            ("adpEm", e.adaptive, f"p ≥ {e.adaptive_threshold:.4f}"),
            ("meanEm", e.mean, "mean of the 256-value curve"),
            ("maxEm", e.max, "max of the 256-value curve"),
        ]
        self.region_rows = []
        table: list[tuple[str, ...]] = []
        for r, n, bf, bg, xi, f, contrib in zip(
            REGIONS,
            counts,
            at.region_bias_pred,
            at.region_bias_gt,
            at.region_alignment,
            at.region_enhanced,
            at.region_contribution,
            strict=True,
        ):
            # a degenerate GT (empty or full) scores f directly, not through φ and ξ; an
            # empty region has no pixel to take its values
            terms = ["—"] * 3 if at.degenerate or not n else [_fixed(v) for v in (bf, bg, xi)]
            table.append((r, str(n), *terms, _fixed(f) if n else "—", f"{contrib:.4g}"))
            self.region_rows += [
                (f"{r}: pixels", str(n), "region size"),
                (f"{r}: φ_FM, φ_GT", f"{bf:.4f}, {bg:.4f}", "bias values of the region"),
                (f"{r}: ξ → f(ξ)", f"{xi:.4f} → {f:.4f}", "alignment and enhanced alignment"),
                (f"{r}: contribution", f"{contrib:.6g}", "f(ξ)·pixels / (N − 1 + eps)"),
            ]
        table.append(("all: E", str(sum(counts)), "", "", "", "", f"{at.score:.4g}"))
        self.regions.set_rows(table)
        self.set_numbers(rows)

    def extra_csv_rows(self) -> list[tuple[str, str, str]]:
        """The region table, one quantity per row."""
        return self.region_rows
