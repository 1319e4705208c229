"""Boundary IoU and mean boundary accuracy explained: the bands along the contours they look
at, and what the map gets right there."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from fminspect.gui.views.base import ExplainView

#: neither, GT band only, map band only, both (intersection)
_BAND_COLOURS = np.array([(25, 25, 30), (0, 114, 178), (213, 94, 0), (240, 228, 66)], np.uint8)
_BAND_NAMES = ["neither", "GT band only", "map band only", "both"]
#: outside the region, right in it, wrong in it
_REGION_COLOURS = np.array([(25, 25, 30), (0, 158, 115), (213, 94, 0)], np.uint8)
_REGION_NAMES = ["outside the region", "right", "wrong"]


class BoundaryIoUView(ExplainView):
    """The inner bands of the GT and of the binarised map, their intersection and union."""

    TITLE = "Boundary IoU"
    NEEDS = ("boundary_iou",)

    def build(self) -> None:
        b = self.result.boundary_iou
        assert b is not None
        self.set_header(
            f"band width d = {b.width} px = round({b.ratio:g} × image diagonal); the map at "
            "p > 0.5 (binBIoU) and p ≥ 2·mean (adpBIoU)",
            "B(X) = X minus its erosion by d pixels (3×3 square, the frame counts as "
            "background): the pixels of X within d of its contour. Boundary IoU = |B(G) ∩ "
            "B(P)| / |B(G) ∪ B(P)|. Cheng et al., CVPR 2021.",
        )
        self.mode = QtWidgets.QComboBox()
        self.mode.addItems(["binary (p > 0.5)", "adaptive (p ≥ 2·mean)"])
        self.controls.insertWidget(0, self.mode)
        self.mode.currentIndexChanged.connect(lambda _: self.refresh())
        self.refresh()

    def refresh(self) -> None:
        b = self.result.boundary_iou
        assert b is not None
        s = b.binary if self.mode.currentIndex() == 0 else b.adaptive
        codes = s.gt_band.astype(np.intp) + 2 * s.pred_band
        self.panel(
            "bands", f"bands: GT blue, map orange, both yellow ({s.rule})", 0, 0
        ).show_categories(codes, _BAND_COLOURS, _BAND_NAMES)
        self.panel("map", "map p", 0, 1).show_matrix(self.result.pair.pred)
        self.set_numbers(
            [
                ("Boundary IoU", s.score, s.rule),
                ("|B(G) ∩ B(P)|", float(s.intersection), "pixels in both bands"),
                ("|B(G) ∪ B(P)|", float(s.union), "pixels in either band"),
                ("d", float(b.width), "band width in pixels"),
            ]
            + [("note", w, "") for w in b.warnings]
        )


class BoundaryAccuracyView(ExplainView):
    """The five boundary regions of the GT and where the binarised map is right in them."""

    TITLE = "mean boundary accuracy"
    NEEDS = ("boundary_accuracy",)

    def build(self) -> None:
        a = self.result.boundary_accuracy
        assert a is not None
        self.set_header(
            f"radii {', '.join(map(str, a.radii))} px (1 to (h + w)/300); the map at p > 0.5",
            "Region r = the GT's dilation minus its erosion with an r-disk; accuracy r = share "
            "of its pixels where the map equals the GT; mBA = mean of the five accuracies. "
            "Cheng et al. (CascadePSP), CVPR 2020.",
        )
        self.radius = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.radius.setRange(0, len(a.radii) - 1)
        self.radius.setValue(len(a.radii) - 1)
        self.controls.insertWidget(0, QtWidgets.QLabel("radius"))
        self.controls.insertWidget(1, self.radius)
        self.radius.valueChanged.connect(lambda _: self.refresh())
        self.refresh()

    def refresh(self) -> None:
        a = self.result.boundary_accuracy
        assert a is not None
        i = self.radius.value()
        region = a.regions[i]
        right = a.binary_map == self.result.pair.mask
        codes = np.where(region, np.where(right, 1, 2), 0)
        self.panel(
            "region", f"step {i + 1}, radius {a.radii[i]}: right green, wrong vermillion", 0, 0
        ).show_categories(codes, _REGION_COLOURS, _REGION_NAMES)
        self.panel("map", "map at p > 0.5", 0, 1).show_matrix(
            a.binary_map.astype(float), cmap="gray"
        )
        rows: list[tuple[str, object, str]] = [("mBA", a.score, "mean of the five accuracies")]
        steps = zip(a.radii, a.accuracies, a.regions, strict=True)
        for k, (r, acc, reg) in enumerate(steps, 1):
            # on a small image several steps round to the same radius (the authors' int())
            what = f"{int(np.count_nonzero(reg))} px in the region"
            rows.append((f"step {k}: radius {r}", acc, what))
        self.set_numbers(rows + [("note", w, "") for w in a.warnings])
