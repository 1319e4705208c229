"""Mean boundary accuracy (mBA) of CascadePSP (Cheng et al., CVPR 2020), which the
high-resolution and DIS papers report.

For radii r_i = 1 + int((R − 1)/5 · i), i = 0..4, R = (h + w)/300: the boundary region is the
morphological gradient of the GT (dilation minus erosion) with an r_i-disk (OpenCV's
``MORPH_ELLIPSE`` of size 2r_i + 1); the accuracy there is the share of its pixels where the
binarised map (p > 0.5) equals the GT. mBA is the mean of the five accuracies. Larger images
get wider regions; on a 400×550 image the radii are 1, 1, 1, 2, 2.

As the authors' reference code (github hkchengrex/CascadePSP @ be4501c,
``util/compute_boundary_acc.py``, ``compute_boundary_acc``). An empty or full GT has no
boundary region: the reference divides by zero; fminspect returns NaN with a warning (the
dataset value is then the mean over the other images). Checked once against that published
function (2026-11-26, run outside the repository): identical values on 235 random and
real-size cases (up to 2000 × 3000); the tests re-derive the regions independently.

References
----------
.. [1] H. K. Cheng, J. Chung, Y.-W. Tai, C.-K. Tang, "CascadePSP: Toward Class-Agnostic and
   Very High-Resolution Segmentation via Global and Local Refinement", CVPR 2020.
   arXiv:2005.02551
"""

from __future__ import annotations

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
from fminspect.metrics.registry import Family, MeasureInfo

STEPS = 5


def radii(shape: tuple[int, int]) -> tuple[int, ...]:
    """The five radii for an image of ``shape`` (the reference's rule)."""
    h, w = shape
    top = (w + h) / 300
    return tuple(1 + int((top - 1) / STEPS * i) for i in range(STEPS))


def boundary_region(mask: np.ndarray, radius: int) -> np.ndarray:
    """The morphological gradient of ``mask`` with a ``radius``-disk: the pixels within
    ``radius`` of its contour, on both sides."""
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    return cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_GRADIENT, kernel) > 0


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class BoundaryAccuracyResult:
    """mBA and its five regions' accuracies.

    Attributes
    ----------
    score : float
        mBA (NaN for a GT without a boundary).
    radii : tuple of int
    accuracies : tuple of float
        Per radius.
    regions : tuple of ndarray of bool
        The boundary regions.
    binary_map : ndarray of bool
        The map at p > 0.5.
    """

    NAME: ClassVar[str] = "mean boundary accuracy"

    score: float
    radii: tuple[int, ...]
    accuracies: tuple[float, ...]
    regions: tuple[np.ndarray, ...]
    binary_map: np.ndarray
    warnings: tuple[str, ...] = ()


def _region(pair: Pair, radius: int) -> np.ndarray:
    """The GT's boundary region of ``radius`` (memoised with the GT)."""
    return pair.gt.memo(f"mba.{radius}", lambda: readonly(boundary_region(pair.mask, radius)))


def boundary_accuracy_from_pair(pair: Pair) -> BoundaryAccuracyResult:
    """mBA of a prepared pair (see :func:`boundary_accuracy`)."""
    gt = pair.mask
    seg = pair.pred > 0.5
    rs = radii(gt.shape)
    regions = tuple(_region(pair, r) for r in rs)
    right = gt == seg
    accuracies = []
    for region in regions:
        n = int(np.count_nonzero(region))
        accuracies.append(float(np.count_nonzero(right & region)) / n if n else float("nan"))
    warnings: tuple[str, ...] = ()
    if any(not r.any() for r in regions):
        warnings = ("the GT has no boundary (empty or full): mBA not defined (NaN)",)
        score = float("nan")
    else:
        score = sum(accuracies) / STEPS
    return BoundaryAccuracyResult(
        score=score,
        radii=rs,
        accuracies=tuple(accuracies),
        regions=regions,
        binary_map=readonly(seg),
        warnings=warnings,
    )


def boundary_accuracy(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> BoundaryAccuracyResult:
    """Mean boundary accuracy of a prediction against a GT.

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((60, 60), np.uint8); gt[15:45, 15:45] = 255
    >>> boundary_accuracy(gt.copy(), gt).score
    1.0
    """
    return boundary_accuracy_from_pair(prepare(pred, gt, norm))


FAMILY = Family(
    field="boundary_accuracy",
    name="mean boundary accuracy",
    compute=lambda pair, p, img: boundary_accuracy_from_pair(pair),
    measures=(
        MeasureInfo(
            "mBA",
            "mean boundary accuracy",
            True,
            "boundary_accuracy",
            lambda s: s.boundary_accuracy.score,
            lambda p: "5 radii to (h+w)/300 thr=0.5",
            default=False,
        ),
    ),
    paper="Cheng et al., CascadePSP, CVPR 2020 (mean boundary accuracy over 5 radii)",
    reference="github hkchengrex/CascadePSP @ be4501c (util/compute_boundary_acc.py)",
    teaching=(
        "Rewards a binarised map that is right in the bands around the GT's contour, bands "
        "that widen with the image size: made for high-resolution maps. Blind to everything "
        "away from the true contour, false alarms included."
    ),
    view="boundary_accuracy",
)
