"""S-measure explained: the centroid split, each quadrant's SSIM terms, and the object part."""

from __future__ import annotations

import pyqtgraph as pg

from fminspect.gui.views.base import ExplainView, SmallTable
from fminspect.metrics.equations import tag
from fminspect.metrics.smeasure import value_histograms

#: Rows of the quadrant table (one column per quadrant, then "all").
QUADRANT_TERMS = (
    ("pixels", "pixels in the quadrant"),
    (
        "weight",
        f"w_k of {tag('smeasure', 'S_r')}: the quadrant's share of the image area (the last "
        "one is 1 minus the "
        "other three, as both references compute it, so equal areas may differ in the last "
        "digit), or of the GT foreground with s_weights=foreground",
    ),
    ("luminance", "2x̄ȳ/(x̄² + ȳ²)"),
    ("contrast", "2σxσy/(σx² + σy²)"),
    ("structure", "σxy/(σxσy)"),
    ("ssim", "luminance · contrast · structure"),
    ("weight·ssim", "what the quadrant adds to S_r; under all: S_r"),
)


class SmeasureView(ExplainView):
    """Region part (quadrants) and object part (foreground/background value distributions)."""

    TITLE = "S-measure"
    NEEDS = ("smeasure",)

    def build(self) -> None:
        s = self.result.smeasure
        assert s is not None  # the inspector computes every measure
        weights = (
            "its share of the GT foreground (the paper's §4.1 wording, s_weights=foreground)"
            if s.weights == "foreground"
            else "its share of the image (the authors' code; §4.1 says: of the GT foreground)"
        )
        self.set_header(
            f"α = {s.alpha:g}, quadrant weights: {s.weights}",
            f"S = α·S<sub>o</sub> + (1 − α)·S<sub>r</sub> ({tag('smeasure', 'S')}). "
            "<b>Region part</b>: the GT centroid splits both maps into four quadrants, each "
            f"weighted by {weights} and scored by ssim = luminance · contrast · structure = "
            "(2x̄ȳ/(x̄²+ȳ²)) · (2σ<sub>x</sub>σ<sub>y</sub>/(σ<sub>x</sub>²+σ<sub>y</sub>²)) · "
            f"(σ<sub>xy</sub>/(σ<sub>x</sub>σ<sub>y</sub>)) ({tag('smeasure', 'ssim')}); "
            f"S<sub>r</sub> = Σ w<sub>k</sub>·ssim(k) ({tag('smeasure', 'S_r')}). "
            "<b>Object part</b>: O(x) = 2x̄/(x̄² + 1 + σ<sub>x</sub>) on the map inside the GT "
            f"(O<sub>FG</sub>, {tag('smeasure', 'S_FG')} with λ = ½) and on 1 − map outside it "
            f"(O<sub>BG</sub>, {tag('smeasure', 'S_BG')}), S<sub>o</sub> = μ·O<sub>FG</sub> + "
            f"(1 − μ)·O<sub>BG</sub> ({tag('smeasure', 'S_o')}).",
        )
        pair = self.result.pair
        if self.image is not None:
            self.panel("img", "image", 0, 0).show_matrix(self.image)
        self.panel("gt", "GT with the centroid split", 0, 1).show_matrix(
            pair.mask.astype(float), cmap="gray"
        )
        self.panel("map", "map with the centroid split", 0, 2).show_matrix(pair.pred)
        if s.degenerate is None:
            cy, cx = s.centroid
            h, w = pair.mask.shape
            for key in ("gt", "map", "img"):
                if key in self.panels:
                    pen = pg.mkPen((255, 60, 60), width=2)
                    self.panels[key].add_item(pg.PlotCurveItem([cx, cx], [0, h], pen=pen))
                    self.panels[key].add_item(pg.PlotCurveItem([0, w], [cy, cy], pen=pen))
                    for q in s.quadrants:
                        # beside the picture, never over it: the left quadrants' numbers on
                        # its left, the right ones' on its right, each at its own height
                        left = q.name in ("LT", "LB")
                        label = pg.TextItem(
                            f"{q.name}  w {q.weight:.2f}\nssim {q.ssim:.3f}",
                            color=(230, 60, 60),
                            anchor=(1.0, 0.5) if left else (0.0, 0.5),
                        )
                        y = (q.rows[0] + q.rows[1]) / 2
                        label.setPos(-0.02 * w if left else 1.02 * w, y)
                        self.panels[key].add_item(label)
                    # room for them beside the picture (the cells are wider than it)
                    self.panels[key].view.setRange(
                        xRange=(-0.6 * w, 1.6 * w), yRange=(0, h), padding=0.01
                    )
        edges, fg, bg = value_histograms(pair)
        hist = pg.PlotWidget()
        centres = (edges[:-1] + edges[1:]) / 2
        width = edges[1] - edges[0]
        hist.addItem(
            pg.BarGraphItem(
                x=centres, height=fg / max(fg.sum(), 1), width=width, brush=(40, 200, 90, 150)
            )
        )
        hist.addItem(
            pg.BarGraphItem(
                x=centres, height=bg / max(bg.sum(), 1), width=width, brush=(235, 60, 50, 120)
            )
        )
        for stats, colour in ((s.foreground, (40, 200, 90)), (s.background, (235, 60, 50))):
            if stats is not None:
                mean = stats.mean if colour[0] == 40 else 1 - stats.mean
                hist.addItem(pg.InfiniteLine(pos=mean, angle=90, pen=pg.mkPen(colour, width=2)))
        hist.getAxis("left").enableAutoSIPrefix(False)
        hist.setLabel("bottom", "map value inside (green) and outside (red) the GT")
        hist.setLabel("left", "fraction of pixels")
        self.add_plot(hist, 1, 0)
        self.quadrants = SmallTable(
            ("", "LT", "RT", "LB", "RB", "all"),
            tooltip="ssim = luminance · contrast · structure of the map against the GT in each "
            "quadrant; S_r = Σ weight · ssim, the weight being the quadrant's share of the image "
            "area.",
        )
        self.grid.addWidget(self.quadrants, 1, 1, 1, 2)
        self.quadrant_rows: list[tuple[str, str, str]] = []
        rows: list[tuple[str, object, str]] = [
            ("S", s.score, s.degenerate or f"{s.alpha:g}·S_o + {1 - s.alpha:g}·S_r")
        ]
        if s.degenerate is None:
            fg_stats, bg_stats = s.foreground, s.background
            assert fg_stats is not None and bg_stats is not None  # set unless degenerate
            rows += [
                ("S_object", s.object_score, "μ·O_FG + (1 − μ)·O_BG"),
                ("S_region", s.region_score, "Σ weight·ssim over the quadrants"),
                ("μ (GT fraction)", s.fg_fraction, "share of GT-foreground pixels"),
                (
                    "O_FG",
                    fg_stats.score,
                    f"mean {fg_stats.mean:.4f}, std {fg_stats.std:.4f}",
                ),
                (
                    "O_BG",
                    bg_stats.score,
                    f"on 1 − map: mean {bg_stats.mean:.4f}, std {bg_stats.std:.4f}",
                ),
                (
                    "centroid split (row, col)",
                    f"{s.centroid}",
                    "rounded centroid + 1 (MATLAB indexing)",
                ),
            ]
            columns = []
            for q in s.quadrants:
                terms = (q.weight, q.luminance, q.contrast, q.structure, q.ssim, q.contribution)
                # a 0/0 term (a constant quadrant) is undefined: ssim then follows the
                # reference's convention (see fminspect.metrics.smeasure)
                columns.append((str(q.n), *("—" if v != v else f"{v:.4f}" for v in terms)))
                self.quadrant_rows += [
                    (
                        f"{q.name}: weight, ssim",
                        f"{q.weight:.4f}, {q.ssim:.4f}",
                        f"{q.n} px; contributes {q.contribution:.4f}",
                    ),
                    (
                        f"{q.name}: luminance · contrast · structure",
                        f"{q.luminance:.4f} · {q.contrast:.4f} · {q.structure:.4f}",
                        f"x̄ {q.pred_mean:.3f}, ȳ {q.gt_mean:.3f}, σx² {q.pred_var:.4f}, "
                        f"σy² {q.gt_var:.4f}, σxy {q.covariance:.4f}",
                    ),
                ]
            n = sum(q.n for q in s.quadrants)
            columns.append((str(n), "", "", "", "", "", f"{s.region_score:.4f}"))
            table = [
                (name, *(column[i] for column in columns))
                for i, (name, _) in enumerate(QUADRANT_TERMS)
            ]
            self.quadrants.set_rows(table, [help_text for _, help_text in QUADRANT_TERMS])
        else:  # an empty or full GT: no quadrants, the numbers below say why
            self.quadrants.hide()
        rows += [("note", w, "") for w in s.warnings]
        self.set_numbers(rows)

    def extra_csv_rows(self) -> list[tuple[str, str, str]]:
        """The quadrant table with each quadrant's means, variances and covariance."""
        return self.quadrant_rows
