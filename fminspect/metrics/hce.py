"""Human correction effort (HCE) of Qin et al., *Highly Accurate Dichotomous Image
Segmentation* (DIS, ECCV 2022): how many mouse clicks a person would need to correct the
binarised map — polygon control points along the wrong boundaries plus one click per wrong
region that needs no boundary edit. Lower is better; a count per image, averaged over a
dataset.

As pysodmetrics 1.6.2 ``HumanCorrectionEffortMeasure(relax=5, epsilon=2.0)`` (itself the DIS
authors' code), step by step:

1. the map is binarised ``p > 0.5``; TP, FP and FN against the GT; the GT's skeleton
   (scikit-image ``skeletonize``);
2. *relaxation*: the union of GT and map is eroded ``relax`` times with a 3×3 cross; the FP
   pixels inside it grow back ``relax`` times (3×3 cross dilations kept off the GT) — FP
   strands thinner than ~2·relax px, which a brush fixes, are dropped; likewise the FN
   pixels (kept off the map), plus every GT-skeleton pixel the map misses (thin structures
   are never relaxed away);
3. the contours of the relaxed FP (and FN) regions (OpenCV ``findContours``, RETR_TREE, no
   approximation); a contour point counts only where it touches the *condition* region
   (TP or relaxed FN for FP; the rest of the image for FN), dilated by the cross, and only
   once; consecutive counted points form boundary segments (the first and last segments of
   a contour are joined when they touch);
4. each segment is simplified by Ramer–Douglas–Peucker (``approxPolyDP``, ε = 2 px): its
   vertices are the control points; a relaxed region none of whose points counted is an
   *independent* region (one click);
5. HCE = control points (FP) + independent regions (FP) + control points (FN) + independent
   regions (FN).

Edge cases: an empty GT and an empty map give 0; a full GT with an empty map gives 1 (one
region to fill).

References
----------
.. [1] X. Qin, H. Dai, X. Hu, D.-P. Fan, L. Shao, L. Van Gool, "Highly Accurate Dichotomous
   Image Segmentation", ECCV 2022. arXiv:2203.03041
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

RELAX = Parameter(
    "hce_relax",
    5,
    "relax",
    "HCE's relaxation: erosions/dilations that drop strands a brush fixes (5, the DIS code)",
    low=0,
    high=50,
    integer=True,
)
EPSILON = Parameter(
    "hce_epsilon",
    2.0,
    "ε",
    "HCE's Ramer–Douglas–Peucker tolerance in px (2, the DIS code)",
    low=0.0,
    high=100.0,
)
_CROSS = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], np.uint8)  # skimage disk(1)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Correction:
    """What correcting one kind of error (FP or FN) takes."""

    region: np.ndarray  # the relaxed error pixels
    segments: tuple[np.ndarray, ...]  # counted boundary runs, (n, 1, 2) (col, row) points
    polygons: tuple[np.ndarray, ...]  # their RDP simplifications: the control points
    independent: int  # regions with no counted boundary point: one click each

    @property
    def control_points(self) -> int:
        """Vertices of the simplified boundary segments."""
        return int(sum(len(p) for p in self.polygons))

    @property
    def effort(self) -> int:
        """Control points plus independent regions."""
        return self.control_points + self.independent


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class HCEResult:
    """HCE of one map and what it consists of.

    Attributes
    ----------
    score : float
        HCE (an integer count).
    fp, fn : Correction
        The relaxed false positives / negatives, their counted boundary segments, the
        control points and the independent regions.
    tp_map, fp_map, fn_map : ndarray of bool
        TP, FP, FN of the binarised map (p > 0.5).
    skeleton : ndarray of bool
        The GT's skeleton.
    """

    NAME: ClassVar[str] = "human correction effort"

    score: float
    fp: Correction
    fn: Correction
    tp_map: np.ndarray
    fp_map: np.ndarray
    fn_map: np.ndarray
    skeleton: np.ndarray
    relax: int
    epsilon: float


def _dilate(mask: np.ndarray) -> np.ndarray:
    return cv2.dilate(mask.astype(np.uint8), _CROSS).astype(bool)


def _segments(
    contours: tuple[np.ndarray, ...], region: np.ndarray, condition: np.ndarray
) -> tuple[list[np.ndarray], int]:
    """The counted boundary segments of ``region``'s contours and the number of its regions
    (8-connected, as scikit-image labels by default) none of whose points counted."""
    touch = _dilate(condition)
    from skimage import measure  # imported when needed: it costs a process ~0.3 s

    labels = measure.label(region)  # type: ignore[no-untyped-call]
    independent = np.ones(int(labels.max()) + 1, bool)
    independent[0] = False
    visited = np.zeros(region.shape, bool)
    width = region.shape[1]
    segments: list[np.ndarray] = []
    for contour in contours:
        pts = contour[:, 0, :]  # (col, row)
        flat = pts[:, 1].astype(np.int64) * width + pts[:, 0]
        # a point counts where it touches the condition and was not counted before (by an
        # earlier contour, or earlier in this one: only its first occurrence can count)
        first = np.zeros(len(flat), bool)
        first[np.unique(flat, return_index=True)[1]] = True
        taken = touch.ravel()[flat] & ~visited.ravel()[flat] & first
        if not taken.any():
            continue
        visited.ravel()[flat[taken]] = True
        independent[labels.ravel()[flat[taken]]] = False
        # runs of consecutive counted points
        edges = np.flatnonzero(np.diff(np.concatenate(([0], taken.astype(np.int8), [0]))))
        runs = [pts[a:b] for a, b in zip(edges[::2], edges[1::2], strict=True)]
        if len(runs) > 1:
            (fx, fy), (lx, ly) = runs[0][0], runs[-1][-1]
            if max(abs(int(fx) - int(lx)), abs(int(fy) - int(ly))) == 1:
                runs[-1] = np.concatenate([runs[-1], runs[0][::-1]])
                del runs[0]
        segments += [r[:, np.newaxis, :].astype(np.int32) for r in runs]
    return segments, int(independent.sum())


def _correction(region: np.ndarray, condition: np.ndarray, epsilon: float) -> Correction:
    contours, _ = cv2.findContours(region.astype(np.uint8), cv2.RETR_TREE, cv2.CHAIN_APPROX_NONE)
    segments, independent = _segments(tuple(contours), region, condition)
    polygons = tuple(cv2.approxPolyDP(s, epsilon, False) for s in segments)
    return Correction(
        region=readonly(region),
        segments=tuple(segments),
        polygons=polygons,
        independent=independent,
    )


def hce_from_pair(
    pair: Pair, *, relax: int = int(RELAX.default), epsilon: float = EPSILON.default
) -> HCEResult:
    """HCE of a prepared pair (see :func:`hce`)."""
    from skimage import morphology

    gt = pair.mask
    skeleton = pair.gt.memo(
        "hce.skeleton",
        lambda: readonly(morphology.skeletonize(np.array(gt)).astype(bool)),  # type: ignore[no-untyped-call]
    )
    pred = pair.pred > 0.5
    tp = gt & pred
    fp = pred & ~tp
    fn = gt & ~tp
    union = (gt | pred).astype(np.uint8)
    eroded = cv2.erode(union, _CROSS, iterations=relax).astype(bool)
    fp_relaxed = fp & eroded
    for _ in range(relax):
        fp_relaxed = _dilate(fp_relaxed) & ~gt
    fp_relaxed &= fp
    fn_relaxed = fn & eroded
    for _ in range(relax):
        fn_relaxed = _dilate(fn_relaxed) & ~pred
    fn_relaxed &= fn
    fn_relaxed |= skeleton & ~(tp & skeleton)  # thin structures are kept
    fp_fix = _correction(fp_relaxed, tp | fn_relaxed, epsilon)
    fn_fix = _correction(fn_relaxed, ~(tp | fp_relaxed | fn_relaxed), epsilon)
    return HCEResult(
        score=float(fp_fix.effort + fn_fix.effort),
        fp=fp_fix,
        fn=fn_fix,
        tp_map=readonly(tp),
        fp_map=readonly(fp),
        fn_map=readonly(fn),
        skeleton=skeleton,
        relax=int(relax),
        epsilon=float(epsilon),
    )


def hce(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    relax: int = int(RELAX.default),
    epsilon: float = EPSILON.default,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> HCEResult:
    """Human correction effort of a prediction against a GT.

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((40, 40), np.uint8); gt[10:30, 10:30] = 255
    >>> hce(gt.copy(), gt).score
    0.0
    """
    return hce_from_pair(prepare(pred, gt, norm), relax=relax, epsilon=epsilon)


FAMILY = Family(
    field="hce",
    name="human correction effort",
    compute=lambda pair, p, img: hce_from_pair(pair, relax=int(p.hce_relax), epsilon=p.hce_epsilon),
    params=(RELAX, EPSILON),
    measures=(
        MeasureInfo(
            "HCE",
            "human correction effort",
            False,
            "hce",
            lambda s: s.hce.score,
            lambda p: f"relax={int(p.hce_relax)} ε={p.hce_epsilon:g} thr=0.5",
            default=False,
        ),
    ),
    paper="Qin et al., DIS, ECCV 2022 (human correction effort, HCE_γ with γ = relax)",
    reference="pysodmetrics 1.6.2 HumanCorrectionEffortMeasure(relax=5, epsilon=2.0)",
    teaching=(
        "Rewards a binarised map that a person could fix with few clicks: long smooth wrong "
        "boundaries cost few control points, many small wrong regions cost many. Thin "
        "mistakes a brush fixes are forgiven; how large an error is matters less than how "
        "ragged it is."
    ),
    view="hce",
)
