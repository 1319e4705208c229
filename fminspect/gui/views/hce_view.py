"""Human correction effort explained: the errors a person would fix, the boundary runs they
would redraw and the control points and clicks it takes."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from fminspect.gui.views.base import ExplainView

_COLOURS = np.array(
    [
        (25, 25, 30),  # TN
        (120, 80, 60),  # FP a brush fixes (relaxed away)
        (60, 80, 120),  # FN a brush fixes
        (230, 230, 230),  # TP
        (213, 94, 0),  # FP to correct (vermillion)
        (0, 114, 178),  # FN to correct (blue)
    ],
    np.uint8,
)
_NAMES = ["TN", "FP (brush)", "FN (brush)", "TP", "FP to correct", "FN to correct"]


class HCEView(ExplainView):
    """The binarised map's errors, which of them need correcting, the boundary runs and the
    polygon control points a person would click."""

    TITLE = "human correction effort"
    NEEDS = ("hce",)

    def build(self) -> None:
        h = self.result.hce
        assert h is not None
        self.set_header(
            f"map binarised p > 0.5; relax = {h.relax}, ε = {h.epsilon:g} px",
            "Errors thinner than the relaxation (erode the union, grow the errors back) are a "
            "brush's work and cost nothing; GT-skeleton pixels the map misses are kept. The "
            "contour points of the remaining FP (FN) regions that touch TP or FN (the rest) "
            "form boundary runs; each run simplified by Ramer–Douglas–Peucker gives its control "
            "points; a region without such a run costs one click. HCE = control points + "
            "independent regions, FP and FN. Qin et al. (DIS), ECCV 2022.",
        )
        codes = np.zeros(h.tp_map.shape, np.intp)
        codes[h.fp_map] = 1
        codes[h.fn_map] = 2
        codes[h.tp_map] = 3
        codes[h.fp.region] = 4
        codes[h.fn.region] = 5
        panel = self.panel("codes", "errors to correct (bright) and a brush's (dim)", 0, 0)
        panel.show_categories(codes, _COLOURS, _NAMES)
        points = self.panel("points", "counted boundary points (·) and control points (●)", 0, 1)
        points.show_categories(np.where(codes >= 4, codes - 3, codes), _COLOURS, _NAMES)
        for fix, colour in ((h.fp, (255, 170, 60)), (h.fn, (90, 190, 255))):
            for seg, poly in zip(fix.segments, fix.polygons, strict=True):
                s, p = seg[:, 0, :], poly[:, 0, :]
                points.add_item(
                    pg.PlotDataItem(s[:, 0] + 0.5, s[:, 1] + 0.5, pen=pg.mkPen(colour, width=1))
                )
                points.add_item(
                    pg.PlotDataItem(
                        p[:, 0] + 0.5,
                        p[:, 1] + 0.5,
                        pen=None,
                        symbol="o",
                        symbolSize=6,
                        symbolBrush=colour,
                    )
                )
        self.panel("skel", "GT skeleton (kept however thin)", 0, 2).show_matrix(
            h.skeleton.astype(float), cmap="gray"
        )
        self.set_numbers(
            [
                ("HCE", h.score, "control points + independent regions"),
                (
                    "FP control points",
                    float(h.fp.control_points),
                    f"{len(h.fp.segments)} boundary runs",
                ),
                ("FP independent regions", float(h.fp.independent), "one click each"),
                (
                    "FN control points",
                    float(h.fn.control_points),
                    f"{len(h.fn.segments)} boundary runs",
                ),
                ("FN independent regions", float(h.fn.independent), "one click each"),
            ]
        )
