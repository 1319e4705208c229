"""Size-invariant measures explained: the objects (targets) and their boxes, each object's own
scores, and how SI-MAE weighs the boxes and the background."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore

from fminspect.gui.views.base import ExplainView

#: distinguishable box colours (tab10)
_BOX_COLOURS = (
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (188, 189, 34),
    (23, 190, 207),
)


class SizeInvarianceView(ExplainView):
    """The GT's targets with their boxes, the map with the same boxes, each target's values
    and SI-MAE's weights."""

    TITLE = "size-invariant measures"
    NEEDS = ("size_invariance", "mae")

    def build(self) -> None:
        si = self.result.size_invariance
        assert si is not None
        k = len(si.targets)
        self.set_header(
            f"targets: 4-connected GT components of ≥ {si.min_area} px (else the largest), "
            f"{k} here; each in its bounding box",
            "Per target M: the confusion measures of pred·M against GT∧M over the image; SI "
            "values are their means over the targets (max/mean: of each target's 256-threshold "
            "curve). SI-MAE = [r·Σ<sub>bg</sub>|p − g|/A<sub>bg</sub> + Σ<sub>k</sub> "
            "Σ<sub>box</sub>|p − g|/A<sub>box</sub>] / (k + r), r = A<sub>bg</sub>/(N − "
            "A<sub>bg</sub>). Li et al., ICML 2024.",
        )
        gt = self.result.pair.mask.astype(float)
        self.panel("gt", f"GT with the {k} target boxes (overlaps darker)", 0, 0).show_matrix(
            gt * 0.6 + np.minimum(si.box_map, 3) * 0.13, cmap="gray"
        )
        self.panel("map", "map p with the boxes", 0, 1).show_matrix(self.result.pair.pred)
        err = self.result.mae.error_map  # the MAE's |p − g|, which SI-MAE averages
        self.panel("err", "|p − g| (SI-MAE averages it per box and outside)", 0, 2).show_matrix(
            err, cmap="inferno"
        )
        for key in ("gt", "map", "err"):
            for i, t in enumerate(si.targets):
                colour = _BOX_COLOURS[i % len(_BOX_COLOURS)]
                rect = QtCore.QRectF(t.left, t.top, t.right - t.left, t.bottom - t.top)
                box = pg.QtWidgets.QGraphicsRectItem(rect)
                box.setPen(pg.mkPen(colour, width=2))
                self.panels[key].add_item(box)
        rows: list[tuple[str, object, str]] = [
            (
                "SI-MAE",
                si.mae,
                f"factor 1/(k + r) = {si.factor:.4g}, r = {si.background_ratio:.4g}",
            ),
            ("background term", si.background_mae, "mean |p − g| outside every box"),
            ("siBinIoU", si.iou.binary, "mean over targets (p > 0.5)"),
            ("siMaxFm", si.fmeasure.max, "mean over targets of each target's max F"),
            (
                "siTgtMaxFm",
                si.fmeasure.target_max,
                "max of the F curve averaged over the targets (sample_based=False); over a "
                "dataset every target of every image is averaged",
            ),
        ]
        for i, t in enumerate(si.targets):
            rows.append(
                (
                    f"target {i + 1} ({t.area} px)",
                    si.target_mae[i],
                    f"box rows {t.top}–{t.bottom - 1}, cols {t.left}–{t.right - 1}: mean |p − g| "
                    f"{si.target_mae[i]:.4g}; IoU (p > 0.5) {si.iou.per_target[i].binary:.4g}; "
                    f"max F {si.fmeasure.per_target[i].max:.4g}",
                )
            )
        self.set_numbers(rows + [("note", w, "") for w in si.warnings])
