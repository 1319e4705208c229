"""Context-measure explained: kernel, forward and reverse maps, and the camouflage degree."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from fminspect.gui.views.base import ExplainView


class ContextView(ExplainView):
    """C_β (the Cm column): kernel, forward and reverse maps."""

    TITLE = "Context-measure"
    NEEDS = ("context",)
    CAMOUFLAGE = False

    def build(self) -> None:
        cc = self.result.camouflage_context if self.CAMOUFLAGE else None
        camo = cc is not None
        c = cc if cc is not None else self.result.context
        assert c is not None  # the inspector computes every measure
        variant = (
            f"C<sup>ω</sup><sub>β</sub>: β² = {cc.beta2:g}, α = {cc.alpha:g}, "
            f"γ = {cc.degree.gamma:g}, "
            f"λ = {cc.degree.lambda_spatial:g}"
            if cc is not None
            else f"C<sub>β</sub>: β² = {c.beta2:g}, α = {c.alpha:g}"
        )
        self.set_header(
            variant,
            "Kernel K: the GT-foreground covariance scaled to trace α², 3σ extent, sum 1. "
            "Forward inference F(Y|X) ≈ [X > 0]⊙(K∗Y), F<sub>m</sub> = ΣF·X/ΣX; reverse "
            "deduction R(X|Y) ≈ e/(e − 1)·Y⊙(1 − exp(−K∗X)), R<sub>m</sub> = ΣR·Y/ΣY; "
            "C<sub>β</sub> = (1 + β²)F<sub>m</sub>R<sub>m</sub>/(β²F<sub>m</sub> + R<sub>m</sub>) "
            "(Eqs. 2–7). Camouflage degree D (Sec. 3.3, Eq. 8): the object is repainted from "
            "its surrounding band (7×7 patches, exact nearest neighbour in Lab + λ·position), "
            "S = 1 − ΔE<sub>2000</sub>/100, D = (e<sup>γS</sup> − 1)/(e<sup>γ</sup> − 1); "
            "R<sub>w</sub> = ΣR·(Y + D)/(ΣY + ΣD) (Eq. 9), C<sup>ω</sup><sub>β</sub> with β² = 1.2 "
            "(Eq. 10). Wang, Ji, Shao, Cheng and Fan, arXiv:2512.07076.",
        )
        pair = self.result.pair
        k = c.kernel
        p = self.panel
        gt_panel = p("gt", "GT, K's 1σ/3σ ellipses", 0, 0)
        gt_panel.show_matrix(pair.mask.astype(float), cmap="gray")
        for n_sigma, style in ((1, QtCore.Qt.PenStyle.SolidLine), (3, QtCore.Qt.PenStyle.DashLine)):
            outline = k.ellipse(n_sigma)
            gt_panel.add_item(
                pg.PlotCurveItem(
                    outline[:, 1], outline[:, 0], pen=pg.mkPen((255, 120, 0), width=2, style=style)
                )
            )
        p("k", f"kernel K ({k.kernel.shape[0]}×{k.kernel.shape[1]})", 0, 1).show_matrix(
            k.kernel, levels=(0, float(k.kernel.max())), cmap="inferno"
        )
        p("ky", "K ∗ Y (relevance)", 0, 2).show_matrix(c.relevance_map)
        p("fwd", "forward map F", 0, 3).show_matrix(c.forward_map)
        p("comp", "completeness 1 − exp(−K∗X)", 1, 0).show_matrix(
            c.completeness_map, levels=(0, 1 - np.exp(-1))
        )
        p("rev", "reverse map R", 1, 1).show_matrix(c.reverse_map)
        rows: list[tuple[str, object, str]] = [
            ("C^ω_β" if camo else "C_β", c.score, variant.split(": ", 1)[1]),
            (
                "F_m",
                c.forward,
                "forward inference (how much of the prediction the GT context supports)",
            ),
            ("R_m", c.reverse, "reverse deduction (how completely the GT is covered)"),
        ]
        if cc is not None:
            d = cc.degree
            image = d.image
            band = image.copy()
            band[d.band_mask] = (0.5 * band[d.band_mask] + [0, 90, 160]).astype(np.uint8)
            p("band", "context band over the image", 1, 2).show_matrix(band)
            p("orig", "original", 1, 3).show_matrix(image)
            p("rep", "object repainted from its band", 2, 0).show_matrix(d.repainted_composite)
            p("de", "ΔE₂₀₀₀ (object)", 2, 1).show_matrix(
                d.delta_e_map, levels=(0, 100), cmap="inferno"
            )
            self.cd_panel = p("cd", "camouflage degree D", 2, 2)
            self.cd_panel.show_matrix(d.cd_map)
            self.cd_base = pg.ImageItem(image, levels=(0, 255))
            self.cd_base.setZValue(-1)
            self.cd_panel.add_item(self.cd_base)
            self.opacity = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
            self.opacity.setRange(0, 100)
            self.opacity.setValue(60)
            self.opacity.valueChanged.connect(lambda v: self.cd_panel.image.setOpacity(v / 100))
            self.cd_panel.image.setOpacity(0.6)
            self.controls.insertWidget(0, QtWidgets.QLabel("D opacity"))
            self.controls.insertWidget(1, self.opacity)
            p("wrev", "weighted reverse R⊙(Y + D)", 2, 3).show_matrix(
                cc.weighted_reverse_map, levels=(0, 2)
            )
            rows += [
                ("R_w", cc.weighted_reverse, "GT pixels weighted by 1 + D"),
                (
                    "mean D on the object",
                    d.mean_degree,
                    "1 = the band repaints the object perfectly",
                ),
                (
                    "object / band patches",
                    f"{len(d.object_patches)} / {len(d.band_patches)}",
                    "7×7, stride 3",
                ),
                (
                    "uncovered object pixels",
                    d.uncovered,
                    "no whole patch covers them: repainted black",
                ),
            ]
        rows += [("note", w, "") for w in c.warnings]
        self.set_numbers(rows)


class CamouflageContextView(ContextView):
    """C^ω_β (the CCm column): the same, with the camouflage degree and the weighted reverse
    map."""

    TITLE = "camouflage Context-measure"
    NEEDS = ("camouflage_context",)
    CAMOUFLAGE = True
