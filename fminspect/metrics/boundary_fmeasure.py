"""Relaxed boundary F-measure relaxF_β of the BASNet paper (Qin et al., CVPR 2019).

Definition followed (the paper's, not the only public code's; METRICS §9.5):

1. binarise the prediction at 0.5 (``pred >= 0.5``); the GT is binarised by the
   normalisation rule (``> 128`` by default);
2. boundary of a mask = mask XOR its erosion by a 3×3 square (a one-pixel inner contour;
   pixels outside the image count as background, so an object cut by the image frame has a
   boundary along the frame — as in the TF Model Garden code);
3. relaxed precision = fraction of predicted-boundary pixels within ρ = 3 px (Euclidean
   distance ≤ ρ, i.e. inside a disk of radius ρ) of a GT-boundary pixel; relaxed recall =
   fraction of GT-boundary pixels within ρ of a predicted-boundary pixel;
4. relaxF = (1 + β²)·P·R / (β²·P + R), β² = 0.3 (0 when P = R = 0).

Edge cases: no boundary in either map (both masks empty) → P = R = F = 1, recorded in
``warnings``; a boundary in only one of them → P = R = F = 0.

Deliberate differences from the TensorFlow Model Garden BASNet code (the only public
implementation; pysodmetrics has no relaxF): that code uses a (2ρ−1)² square tolerance
(Chebyshev ≤ ρ−1 = 2 px) instead of "within ρ pixels", normalises maps by their maximum
rather than the min–max stretch, swaps the precision and recall numerators (so its values
can exceed 1; METRICS §9.5 measured precision 1.364 on two concentric discs) and divides by
zero on an empty prediction. The dataset value here is the mean of per-image relaxF.

References
----------
.. [1] X. Qin, Z. Zhang, C. Huang, C. Gao, M. Dehghan, M. Jagersand, "BASNet:
   Boundary-Aware Salient Object Detection", CVPR 2019. doi:10.1109/CVPR.2019.00766
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
from fminspect.metrics.registry import Family, MeasureInfo, Parameter

#: The tolerance ρ in pixels (3, the BASNet paper) and β² (0.3) of relaxF_β.
RHO = Parameter(
    "relax_rho",
    3,
    "ρ",
    "tolerance of the relaxed boundary F in pixels (3, Qin et al. 2019)",
    low=0,
    high=50,
    integer=True,
)
BETA2 = Parameter(
    "relax_beta2",
    0.3,
    "β²",
    "β² of the relaxed boundary F (0.3, Qin et al. 2019)",
    low=0.0,
    high=100.0,
    open_low=True,
)

_SQUARE3 = np.ones((3, 3), np.uint8)


def _disk(radius: int) -> np.ndarray:
    r = np.arange(-radius, radius + 1)
    return (r[:, None] ** 2 + r[None, :] ** 2 <= radius * radius).astype(np.uint8)


def boundary(mask: np.ndarray) -> np.ndarray:
    """One-pixel inner contour: ``mask XOR erode(mask, 3×3)`` (outside = background)."""
    m = np.ascontiguousarray(mask, dtype=bool).view(np.uint8)  # 0/1
    eroded = cv2.erode(m, _SQUARE3, borderType=cv2.BORDER_CONSTANT, borderValue=0)
    # eroded ≤ m, both 0/1: their difference is 1 exactly on the contour
    return readonly(cv2.subtract(m, eroded).view(bool))


def tolerance_band(edge: np.ndarray, rho: int) -> np.ndarray:
    """Pixels within Euclidean distance ρ of ``edge`` (dilation by a disk of radius ρ)."""
    if rho == 0:
        return edge
    band = cv2.dilate(
        np.ascontiguousarray(edge, dtype=bool).view(np.uint8),
        _disk(rho),
        borderType=cv2.BORDER_CONSTANT,
        borderValue=0,
    )
    return readonly(band.view(bool))  # the dilation of a 0/1 map is 0/1


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RelaxedFmeasureResult:
    """Relaxed boundary F-measure with everything that makes it up.

    Attributes
    ----------
    score, precision, recall : float
        relaxF_β, relaxed precision and recall.
    rho : int
        Tolerance radius in pixels.
    beta2 : float
        β².
    pred_boundary, gt_boundary : ndarray of bool
        One-pixel boundaries of the binarised prediction and of the GT.
    pred_band, gt_band : ndarray of bool
        Pixels within ρ of each boundary.
    matched_pred, matched_gt : ndarray of bool
        Predicted-boundary pixels inside ``gt_band``; GT-boundary pixels inside ``pred_band``.
    """

    NAME: ClassVar[str] = "relaxed boundary F-measure"
    SYMBOL: ClassVar[str] = "relaxF_β"
    HIGHER_IS_BETTER: ClassVar[bool] = True
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)

    score: float
    precision: float
    recall: float
    rho: int
    beta2: float
    threshold: float
    pred_boundary: np.ndarray
    gt_boundary: np.ndarray
    pred_band: np.ndarray
    gt_band: np.ndarray
    matched_pred: np.ndarray
    matched_gt: np.ndarray
    warnings: tuple[str, ...] = ()


def relaxed_fmeasure_from_pair(
    pair: Pair,
    *,
    rho: int = int(RHO.default),
    beta2: float = BETA2.default,
    threshold: float = 0.5,
) -> RelaxedFmeasureResult:
    """Relaxed boundary F-measure of a prepared pair (see :func:`relaxed_fmeasure`)."""
    if rho < 0 or int(rho) != rho:
        raise ValueError(f"rho must be a non-negative integer, got {rho!r}")
    if beta2 <= 0:
        raise ValueError(f"beta2 must be positive, got {beta2!r}")
    gt_edge, gt_band = pair.gt.memo(
        f"relaxf.{rho}",
        lambda: (lambda e: (e, tolerance_band(e, rho)))(boundary(pair.mask)),
    )
    pred_edge = boundary(np.ascontiguousarray(pair.pred >= threshold))
    pred_band = tolerance_band(pred_edge, rho)
    matched_pred = readonly(pred_edge & gt_band)
    matched_gt = readonly(gt_edge & pred_band)
    n_pred, n_gt = int(np.count_nonzero(pred_edge)), int(np.count_nonzero(gt_edge))
    warnings: tuple[str, ...] = ()
    if n_pred == 0 and n_gt == 0:
        precision = recall = score = 1.0
        warnings = ("neither map has a boundary (both empty): relaxF defined as 1",)
    else:
        precision = np.count_nonzero(matched_pred) / n_pred if n_pred else 0.0
        recall = np.count_nonzero(matched_gt) / n_gt if n_gt else 0.0
        den = beta2 * precision + recall
        score = (1 + beta2) * precision * recall / den if den else 0.0
    return RelaxedFmeasureResult(
        score=float(score),
        precision=float(precision),
        recall=float(recall),
        rho=int(rho),
        beta2=float(beta2),
        threshold=float(threshold),
        pred_boundary=pred_edge,
        gt_boundary=gt_edge,
        pred_band=pred_band,
        gt_band=gt_band,
        matched_pred=matched_pred,
        matched_gt=matched_gt,
        warnings=warnings,
    )


def relaxed_fmeasure(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    rho: int = int(RHO.default),
    beta2: float = BETA2.default,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> RelaxedFmeasureResult:
    """Relaxed boundary F-measure of a prediction against a GT.

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((20, 20), np.uint8); gt[5:15, 5:15] = 255
    >>> pred = np.zeros_like(gt); pred[6:16, 5:15] = 255   # shifted by one pixel
    >>> r = relaxed_fmeasure(pred, gt)
    >>> r.precision, r.recall, r.score
    (1.0, 1.0, 1.0)
    """
    return relaxed_fmeasure_from_pair(prepare(pred, gt, norm), rho=rho, beta2=beta2)


FAMILY = Family(
    field="relaxed_fmeasure",
    name="relaxed boundary F",
    compute=lambda pair, p, img: relaxed_fmeasure_from_pair(
        pair, rho=int(p.relax_rho), beta2=p.relax_beta2
    ),
    params=(RHO, BETA2),
    measures=(
        MeasureInfo(
            "relaxFm",
            "relaxed boundary F",
            True,
            "relaxed_fmeasure",
            lambda s: s.relaxed_fmeasure.score,
            lambda p: f"ρ={int(p.relax_rho)} β²={p.relax_beta2:g} thr=0.5",
        ),
    ),
    paper="Qin et al., BASNet, CVPR 2019 (relaxed boundary F-measure, ρ = 3)",
    reference=(
        "none in pysodmetrics; TF Model Garden's BASNet code differs (its precision can "
        "exceed 1: see the module notes)"
    ),
    teaching=(
        "Rewards a binarised map whose outline follows the object's within ρ pixels, whatever "
        "happens inside. Misses filled holes and interior errors, and a map that is only "
        "an outline scores as well as a filled one."
    ),
    view="relaxed_fmeasure",
)
