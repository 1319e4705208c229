"""Context-measure explained: kernel, forward and reverse maps, and the camouflage degree."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from fminspect.gui.views.base import ExplainView
from fminspect.metrics.equations import tag


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
        band = (
            "every pixel within 20 px of the object (§3.3, ccm_band=disk)"
            if cc is not None and cc.degree.band_shape == "disk"
            else "a 20×20 square dilation of the object (the authors' code; §3.3 says every "
            "pixel within 20 px: ccm_band=disk)"
        )
        stride = cc.degree.stride if cc is not None else 3
        step = (
            f"every {stride} px (the authors' code; §4.1's \"overlap of 3\" is a 4-px step: "
            "ccm_stride=4)"
            if stride == 3
            else f"every {stride} px (ccm_stride={stride}; the authors' code: 3)"
        )
        camouflage = (
            f"Camouflage degree D (§3.3, {tag('camouflage_context', 'camouflage degree D')}): "
            f"the object is repainted from its context band — {band} — with 7×7 patches "
            f"{step}, the exact nearest neighbour in Lab + λ·position (§3.3 asks for an "
            "approximate search and names none; exact search is what any approximates); "
            "S = 1 − ΔE<sub>2000</sub>/100, D = (e<sup>γS</sup> − 1)/(e<sup>γ</sup> − 1); "
            "R<sub>w</sub> = ΣR·(Y + D)/(ΣY + ΣD) "
            f"({tag('camouflage_context', 'weighted reverse R_w')}), "
            "C<sup>ω</sup><sub>β</sub> = (1 + β²)F<sub>m</sub>R<sub>w</sub>/(β²F<sub>m</sub> + "
            f"R<sub>w</sub>) ({tag('camouflage_context', 'C^ω_β')}); the code's 1.2 is β², where "
            "§4.1 of the paper sets β = 1.2 (β² = 1.44: --param ccm_beta2=1.44)."
        )
        self.set_header(
            variant,
            "Kernel K: the GT-foreground covariance scaled to trace α², 3σ extent, sum 1 "
            f"({tag('context', 'kernel P_Y')}). Forward inference F(Y|X) ≈ [X > 0]⊙(K∗Y) "
            f"({tag('context', 'forward inference F')}), F<sub>m</sub> = ΣF·X/ΣX; reverse "
            "deduction R(X|Y) ≈ e/(e − 1)·Y⊙(1 − exp(−K∗X)), R<sub>m</sub> = ΣR·Y/ΣY "
            f"({tag('context', 'reverse deduction R')}–{tag('context', 'R(X|Y)')[4:]}); "
            "C<sub>β</sub> = (1 + β²)F<sub>m</sub>R<sub>m</sub>/(β²F<sub>m</sub> + R<sub>m</sub>) "
            f"({tag('context', 'C_β')}). " + (camouflage if camo else ""),
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
                    f"7×7, stride {d.stride}; band: {d.band_shape}",
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
    CITES = ("context", "camouflage_context")
    CAMOUFLAGE = True
