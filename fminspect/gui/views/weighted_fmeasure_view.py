"""Weighted F-measure explained: dependency, importance and the weighted TP/FP/FN maps,
beside the plain F-measure's maps."""

from __future__ import annotations

from fminspect.gui.views.base import CONFUSION_COLOURS, CONFUSION_NAMES, ExplainView
from fminspect.metrics.equations import tag


class WeightedFmeasureView(ExplainView):
    """E → Et → EA → MIN_E_EA → × B = Ew, and what plain F-measure sees."""

    TITLE = "weighted F-measure"
    NEEDS = ("weighted_fmeasure",)

    def build(self) -> None:
        w, f = self.result.weighted_fmeasure, self.result.fmeasure
        assert w is not None and f is not None  # the inspector computes every measure
        kernel = (
            "a 7×7 Gaussian with σ² = 5 (the paper's σ, wfm_kernel=paper)"
            if w.kernel == "paper"
            else "a 7×7, σ = 5 Gaussian (the authors' code; the paper sets σ² = 5)"
        )
        self.set_header(
            f"F<sup>w</sup> with β² = {w.beta2:g}, kernel: {w.kernel}",
            f"E = |p − g| ({tag('weighted_fmeasure', 'error E')}); background pixels take the "
            "error of their nearest foreground pixel (Et, <i>dependency</i>); EA = Et filtered "
            f"with {kernel}, zero padding ({tag('weighted_fmeasure', 'dependency A')}); on the "
            "foreground the smaller of E and EA is kept (MIN_E_EA); background errors are "
            "weighted by B = 2 − exp(ln 0.5 / 5 · Δ), Δ the distance to the object "
            f"(<i>importance</i>, {tag('weighted_fmeasure', 'importance B')}); Ew = MIN_E_EA·B "
            f"({tag('weighted_fmeasure', 'weighted error E^w')}); TP<sup>w</sup> = |G| − "
            "Σ<sub>fg</sub>Ew, FP<sup>w</sup> = Σ<sub>bg</sub>Ew "
            f"({tag('weighted_fmeasure', 'TP^w, FP^w, FN^w')}), R<sup>w</sup> = 1 − "
            "mean<sub>fg</sub>Ew, P<sup>w</sup> = TP<sup>w</sup>/(TP<sup>w</sup> + FP<sup>w</sup>) "
            f"({tag('weighted_fmeasure', 'P^w, R^w')}), F<sup>w</sup> = (1 + β²)P<sup>w</sup>"
            f"R<sup>w</sup>/(β²P<sup>w</sup> + R<sup>w</sup>) ({tag('weighted_fmeasure', 'F^w_β')}).",
        )
        p = self.panel
        p("e", "E = |p − g|", 0, 0).show_matrix(w.error_map)
        p("et", "Et (dependency copy)", 0, 1).show_matrix(w.dependency_error_map)
        p("ea", "EA (Gaussian-smoothed Et)", 0, 2).show_matrix(w.smoothed_error_map)
        p("min", "MIN_E_EA", 0, 3).show_matrix(w.min_error_map)
        dist = w.distance_map
        p("d", "Δ: distance to the object (px)", 1, 0).show_matrix(
            dist, levels=(0, float(dist.max()) or 1.0), cmap="inferno"
        )
        p("b", "importance B", 1, 1).show_matrix(w.importance_map, levels=(1, 2), cmap="inferno")
        p("ew", "weighted error Ew", 1, 2).show_matrix(
            w.weighted_error_map, levels=(0, 2), cmap="inferno"
        )
        p("tpw", "weighted TP (1 − Ew on fg)", 1, 3).show_matrix(w.weighted_tp_map)
        p("fpw", "weighted FP (Ew on bg)", 2, 0).show_matrix(
            w.weighted_fp_map, levels=(0, 2), cmap="inferno"
        )
        p("fnw", "weighted FN (Ew on fg)", 2, 1).show_matrix(w.weighted_fn_map)
        codes = self.result.pair.confusion_codes(threshold=f.adaptive_threshold)
        p("plain", f"plain F: TP/FP/FN at p ≥ {f.adaptive_threshold:.3f}", 2, 2).show_categories(
            codes, CONFUSION_COLOURS, CONFUSION_NAMES
        )
        p("plain_e", "unweighted errors: |p − g| > 0.5", 2, 3).show_matrix(
            (w.error_map > 0.5).astype(float), cmap="gray"
        )
        s = f.sweep.adaptive
        self.set_numbers([
            ("F^w", w.score, f"(1 + β²)P^w R^w / (β² P^w + R^w), β² = {w.beta2:g}"),
            ("P^w", w.precision, "TP^w / (TP^w + FP^w + eps)"),
            ("R^w", w.recall, "1 − mean of Ew over the GT foreground"),
            ("TP^w", w.tp, "|G| − Σ Ew on the foreground"),
            ("FP^w", w.fp, "Σ Ew on the background"),
            ("plain adaptive F", f.adaptive, f"β² = {f.beta2:g}, TP {s.tp}, FP {s.fp}, FN {s.fn}"),
            ("plain adaptive P, R", f"{f.precision.adaptive:.4f}, {f.recall.adaptive:.4f}", "unweighted"),
        ] + [("note", w_, "") for w_ in w.warnings])  # fmt: skip
