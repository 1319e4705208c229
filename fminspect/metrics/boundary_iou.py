"""Boundary IoU of Cheng et al., CVPR 2021: IoU restricted to the bands along the contours.

The *inner boundary band* of a mask X is X minus its erosion by d pixels: the pixels of X
within d of its contour (G_d ∩ G in the paper). Boundary IoU = |B(G) ∩ B(P)| / |B(G) ∪ B(P)|
for the GT G and the binarised map P. d = round(ratio · image diagonal), at least 1, with
``biou_ratio`` = 0.02 (the paper's default). Unlike IoU, it is as sensitive to a boundary
error on a large object as on a small one: the interior, which any decent map gets right,
does not count.

As the authors' reference code (github bowenc0221/boundary-iou-api @ 8006aa9,
``boundary_iou/utils/boundary_utils.py``, ``mask_to_boundary``): the mask is padded with one
background pixel on every side (so an object cut by the image frame has a boundary along the
frame) and eroded ``d`` times with a 3×3 square (OpenCV), d = ``int(round(ratio · √(h² + w²)))``
(Python's round: half to even). Binarisations: ``binBIoU`` at p > 0.5, ``adpBIoU`` at
p ≥ min(2·mean, 1). Both bands empty (empty GT and empty map): 1, with a warning (the
reference's 0/0 gives NaN). Checked once against that published function (2026-11-26, run
outside the repository: the code needs pycocotools and a checkout): identical values on 264
random and real-size cases (up to 2000 × 3000); the tests re-derive the bands with distance
transforms.

References
----------
.. [1] B. Cheng, R. Girshick, P. Dollár, A. C. Berg, A. Kirillov, "Boundary IoU: Improving
   Object-Centric Image Segmentation Evaluation", CVPR 2021. arXiv:2103.16562
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import cv2
import numpy as np

from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
)
from fminspect.metrics._numerics import readonly
from fminspect.metrics.registry import Family, MeasureInfo, Parameter

RATIO = Parameter(
    "biou_ratio",
    0.02,
    "d/diag",
    "Boundary IoU's band width as a fraction of the image diagonal (0.02, Cheng et al. 2021)",
    low=0.0,
    high=1.0,
    open_low=True,
)
_SQUARE3 = np.ones((3, 3), np.uint8)


def band_width(shape: tuple[int, int], ratio: float) -> int:
    """d = round(ratio · image diagonal), at least 1 px (the reference's rule)."""
    h, w = shape
    return max(1, round(ratio * math.sqrt(h**2 + w**2)))


def inner_band(mask: np.ndarray, width: int) -> np.ndarray:
    """The pixels of ``mask`` within ``width`` px of its contour (the frame counts as
    background): ``mask`` minus its erosion by a 3×3 square ``width`` times."""
    h, w = mask.shape
    padded = cv2.copyMakeBorder(mask.astype(np.uint8), 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    eroded = cv2.erode(padded, _SQUARE3, iterations=width)[1 : h + 1, 1 : w + 1]
    return np.asarray(mask & ~eroded.astype(bool))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class BoundaryIoUScore:
    """Boundary IoU of one binarisation, with its bands."""

    rule: str
    score: float
    pred_band: np.ndarray
    gt_band: np.ndarray

    @property
    def intersection(self) -> int:
        """|B(G) ∩ B(P)|."""
        return int(np.count_nonzero(self.pred_band & self.gt_band))

    @property
    def union(self) -> int:
        """|B(G) ∪ B(P)|."""
        return int(np.count_nonzero(self.pred_band | self.gt_band))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class BoundaryIoUResult:
    """Adaptive and binary Boundary IoU."""

    NAME: ClassVar[str] = "Boundary IoU"

    adaptive: BoundaryIoUScore
    binary: BoundaryIoUScore
    width: int
    ratio: float
    warnings: tuple[str, ...] = ()


def _score(binary: np.ndarray, gt_band: np.ndarray, width: int, rule: str) -> BoundaryIoUScore:
    band = inner_band(binary, width)
    union = int(np.count_nonzero(band | gt_band))
    inter = int(np.count_nonzero(band & gt_band))
    return BoundaryIoUScore(
        rule=rule,
        score=1.0 if union == 0 else inter / union,
        pred_band=readonly(band),
        gt_band=gt_band,
    )


def boundary_iou_from_pair(pair: Pair, *, ratio: float = RATIO.default) -> BoundaryIoUResult:
    """Boundary IoU of a prepared pair (see :func:`boundary_iou`)."""
    width = band_width(pair.mask.shape, ratio)
    gt_band = pair.gt.memo(f"biou.{width}", lambda: readonly(inner_band(pair.mask, width)))
    thr = pair.adaptive_threshold
    adaptive = _score(pair.pred >= thr, gt_band, width, f"adaptive: pred≥{thr:.4f}")
    binary = _score(pair.pred > 0.5, gt_band, width, "binary: pred>0.5")
    warnings: tuple[str, ...] = ()
    if not gt_band.any():
        warnings = ("the GT has no boundary (empty): Boundary IoU is 1 only for an empty map",)
    return BoundaryIoUResult(
        adaptive=adaptive, binary=binary, width=width, ratio=float(ratio), warnings=warnings
    )


def boundary_iou(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    ratio: float = RATIO.default,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> BoundaryIoUResult:
    """Boundary IoU of a prediction against a GT (adaptive and binary).

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((50, 50), np.uint8); gt[10:40, 10:40] = 255
    >>> boundary_iou(gt.copy(), gt).binary.score
    1.0
    """
    return boundary_iou_from_pair(prepare(pred, gt, norm), ratio=ratio)


FAMILY = Family(
    field="boundary_iou",
    name="Boundary IoU",
    compute=lambda pair, p, img: boundary_iou_from_pair(pair, ratio=p.biou_ratio),
    params=(RATIO,),
    measures=(
        MeasureInfo(
            "adpBIoU",
            "Boundary IoU",
            True,
            "boundary_iou",
            lambda s: s.boundary_iou.adaptive.score,
            lambda p: f"d={p.biou_ratio:g}·diag thr=2·mean",
            default=False,
            kind="adaptive",
        ),
        MeasureInfo(
            "binBIoU",
            "Boundary IoU",
            True,
            "boundary_iou",
            lambda s: s.boundary_iou.binary.score,
            lambda p: f"d={p.biou_ratio:g}·diag thr=0.5",
            default=False,
            kind="binary",
        ),
    ),
    paper="Cheng et al., Boundary IoU, CVPR 2021 (bands G_d ∩ G, d = 0.02 · diagonal)",
    reference="github bowenc0221/boundary-iou-api @ 8006aa9 (mask_to_boundary)",
    teaching=(
        "Rewards a binarised map whose outline matches the object's, within a band of 2 % of "
        "the image diagonal: the interior is ignored, so large objects cannot hide ragged "
        "boundaries. Misses interior holes farther than the band from the outline."
    ),
    view="boundary_iou",
)
