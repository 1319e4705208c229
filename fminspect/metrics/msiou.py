"""Multiscale IoU (MSIoU) of Ahmadzadeh et al., ICIP 2021.

1. Edge map of a binary mask: the pixels where the Sobel gradient is nonzero (a two-pixel
   wide band across every contour; zero outside the image).
2. For cell sizes s = 2^k, k = 0..9: pad the edge map with zeros at the **top and left** to a
   multiple of s and mark each s×s cell that holds an edge pixel (box counting).
3. Per scale, ratio_s = (|cells(pred) ∧ cells(GT)| + 1) / (|cells(GT)| + 1) — a recall-like
   quantity with +1 smoothing.
4. Score = trapezoidal area under the 10 ratios with dx = 1/9 (in [0, 1]).

Binarisations per image: adaptive (``pred >= min(2·mean, 1)``, adpMSIoU) and binary
(``pred > 0.5``, binMSIoU); any other through :func:`msiou_at`. The 257-threshold curve
(``floor(255·pred) >= t``, t = 0..256, the last one empty) of pysodmetrics' dynamic mode is
its own family (:func:`msiou_curve`: meanMSIoU, maxMSIoU): it costs ~150 ms per 400×550 map
here (4.6 s per 400×400 in pysodmetrics), so it is computed only when asked for. Empty GT and
empty prediction → 1.

**Counting** (``msiou_counting``). pysodmetrics holds the edge maps and the occupancy grids as
float16 (``np.hypot`` of boolean Sobel responses), so the GT's cell count in each denominator
is a float16 sum — rounded to float16 once it passes 2048 (8625 becomes 8624), and infinite
past 65504 (every ratio then 0) — and the ``+ 1`` is float16 arithmetic too (checked against
NumPy's float16 sums on 3,000 random grids: exactly ``float16(float16(n) + 1)``). The default
``"float16"`` reproduces that, so that values equal the reference at every size; ``"exact"``
counts in integers (the paper's definition). The difference is below 1e-4 in all but huge
objects.

Parity: pysodmetrics 1.6.2 ``MSIoU`` to 1e-10, at real sizes too (tests). Its Sobel runs on
boolean arrays, whose bytes SciPy fills with the unsigned-char cast of each pass (−1 → 255,
sums mod 256); since the true responses lie in [−4, 4], "nonzero mod 256" is "nonzero", so
the edge map is the ordinary Sobel support, computed here with OpenCV's Sobel in int16 (tests
compare it with SciPy on random masks).

References
----------
.. [1] A. Ahmadzadeh, D. J. Kempton, Y. Chen, R. A. Angryk, "Multiscale IOU: A Metric for
   Evaluation of Salient Object Detection with Fine Structures", ICIP 2021.
   doi:10.1109/ICIP42928.2021.9506337, arXiv:2105.14572
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
from fminspect.metrics._numerics import CurveSummary, readonly
from fminspect.metrics.registry import (
    CurveInfo,
    Family,
    MeasureInfo,
    Parameter,
    curve_max,
    curve_mean,
)

#: How the GT's occupied cells are counted in the ratios' denominators (module notes).
COUNTING = Parameter(
    "msiou_counting",
    "float16",
    "counting",
    "MSIoU's GT cell counts: float16 (pysodmetrics' arithmetic, default) or exact",
    choices=("float16", "exact"),
)
N_DYNAMIC = 257  # thresholds t = 0..256 of the dynamic mode

NUM_LEVELS = 10
CELL_SIZES = tuple(int(s) for s in 2 ** np.arange(NUM_LEVELS))

# numpy < 2.0 has only np.trapz, which the stubs of numpy >= 2.4 no longer declare (older stubs
# do: hence unused-ignore, for a mypy run against any supported numpy)
_trapezoid = getattr(np, "trapezoid", None) or np.trapz  # type: ignore[attr-defined, unused-ignore]  # noqa: NPY201


def edge_map(mask: np.ndarray) -> np.ndarray:
    """Pixels with a nonzero Sobel response (pysodmetrics ``MSIoU.get_edge``).

    Sobel along each axis = central difference ``[-1, 0, 1]`` along it, then ``[1, 2, 1]``
    smoothing along the other axis, zero outside the image; the edge map is where either
    response is nonzero. OpenCV's 3×3 Sobel is that filter; on a 0/1 map its responses are
    small integers, exact in int16 (issue #50: half the time of the same sums in NumPy).
    """
    m = np.ascontiguousarray(mask, dtype=bool).view(np.uint8)
    s0 = cv2.Sobel(m, cv2.CV_16S, 0, 1, ksize=3, borderType=cv2.BORDER_CONSTANT)
    s1 = cv2.Sobel(m, cv2.CV_16S, 1, 0, ksize=3, borderType=cv2.BORDER_CONSTANT)
    return readonly(cv2.bitwise_or(s0, s1) != 0)


def cell_maps(edge: np.ndarray) -> tuple[np.ndarray, ...]:
    """Box-counting occupancy grids of ``edge`` for every cell size (top/left zero padding).

    Grid 2s is built from grid s by 2×2 "any" pooling: zero padding at the top/left to a
    multiple of 2s puts the cell boundaries of grid 2s on those of grid s, with one empty
    s-cell prepended when grid s has an odd number of rows (columns).
    """
    # (an edge map of edge_map is already a read-only array of its own: not copied again)
    grids = [edge if not edge.flags.writeable else readonly(edge.copy())]
    for _ in CELL_SIZES[1:]:
        g = grids[-1]
        pad_h, pad_w = g.shape[0] % 2, g.shape[1] % 2
        if pad_h or pad_w:  # np.pad's own cost was 16 calls × 20 µs a pair
            padded = np.zeros((g.shape[0] + pad_h, g.shape[1] + pad_w), dtype=g.dtype)
            padded[pad_h:, pad_w:] = g
            g = padded
        # "any" over each column pair: the pair's two bool bytes read as one uint16, then
        # over each row pair of that
        columns = np.ascontiguousarray(g).view(np.uint16) != 0
        grids.append(readonly(columns[0::2] | columns[1::2]))
    return tuple(grids)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MSIoUScore:
    """MSIoU of one binarisation, with its per-scale cells and ratios.

    Attributes
    ----------
    rule : str
        The binarisation.
    score : float
        Area under ``ratios``.
    ratios : ndarray, shape (10,)
        (|pred ∧ GT cells| + 1) / (|GT cells| + 1) per cell size.
    intersections, gt_cells, pred_cells : ndarray of int, shape (10,)
        Occupied-cell counts per cell size.
    pred_edge, gt_edge : ndarray of bool
        Edge maps.
    pred_grids, gt_grids : tuple of ndarray of bool
        Occupancy grids per cell size (``CELL_SIZES``).
    """

    rule: str
    score: float
    ratios: np.ndarray
    intersections: np.ndarray
    gt_cells: np.ndarray
    pred_cells: np.ndarray
    pred_edge: np.ndarray
    gt_edge: np.ndarray
    pred_grids: tuple[np.ndarray, ...]
    gt_grids: tuple[np.ndarray, ...]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MSIoUResult:
    """Adaptive and binary MSIoU."""

    NAME: ClassVar[str] = "multiscale IoU"
    SYMBOL: ClassVar[str] = "MSIoU"
    HIGHER_IS_BETTER: ClassVar[bool] = True
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)

    adaptive: MSIoUScore
    binary: MSIoUScore
    cell_sizes: tuple[int, ...] = CELL_SIZES
    counting: str = COUNTING.default
    warnings: tuple[str, ...] = ()


def denominators(gt_cells: np.ndarray, counting: str) -> np.ndarray:
    """|GT cells| + 1 per scale, counted as ``counting`` says (see the module notes)."""
    if counting == "exact":
        return np.asarray(gt_cells + 1, dtype=np.float64)
    if counting != "float16":
        raise ValueError(f"counting must be 'float16' or 'exact', got {counting!r}")
    with np.errstate(over="ignore"):  # past 65504 the reference's count is infinite
        sums = np.asarray(gt_cells, dtype=np.float64).astype(np.float16)
        return (sums + np.float16(1)).astype(np.float64)


def _gt_grids(gt: GroundTruth) -> tuple[np.ndarray, tuple[np.ndarray, ...], np.ndarray]:
    def compute() -> tuple[np.ndarray, tuple[np.ndarray, ...], np.ndarray]:
        edge = edge_map(gt.mask)
        grids = cell_maps(edge)
        return edge, grids, np.array([int(np.count_nonzero(g)) for g in grids])

    return gt.memo("msiou.gt", compute)


def _area(ratios: np.ndarray) -> float:
    return float(_trapezoid(y=list(ratios), dx=1 / (NUM_LEVELS - 1)))


def _score(binary: np.ndarray, gt: GroundTruth, rule: str, counting: str) -> MSIoUScore:
    gt_edge, gt_grids, gt_cells = _gt_grids(gt)
    pred_edge = edge_map(binary)
    pred_grids = cell_maps(pred_edge)
    inter = np.array(
        [int(np.count_nonzero(p & g)) for p, g in zip(pred_grids, gt_grids, strict=True)]
    )
    ratios = (inter + 1) / denominators(gt_cells, counting)
    score = _area(ratios)
    return MSIoUScore(
        rule=rule,
        score=float(score),
        ratios=readonly(ratios),
        intersections=readonly(inter),
        gt_cells=gt_cells,
        pred_cells=readonly(np.array([int(np.count_nonzero(p)) for p in pred_grids])),
        pred_edge=pred_edge,
        gt_edge=gt_edge,
        pred_grids=pred_grids,
        gt_grids=gt_grids,
    )


def msiou_at(
    pair: Pair,
    *,
    threshold: float | None = None,
    index: int | None = None,
    counting: str = COUNTING.default,
) -> MSIoUScore:
    """MSIoU of ``pred >= threshold`` or of the curve point ``floor(255·pred) >= index``."""
    if index is not None:
        return _score(pair.quantized >= index, pair.gt, f"q≥{index}", counting)
    if threshold is None:
        raise TypeError("give threshold or index")
    return _score(pair.pred >= threshold, pair.gt, f"pred≥{threshold:.4f}", counting)


def msiou_from_pair(pair: Pair, *, counting: str = COUNTING.default) -> MSIoUResult:
    """Adaptive and binary MSIoU of a prepared pair."""
    thr = pair.adaptive_threshold
    warnings: tuple[str, ...] = ()
    if pair.gt.is_empty:
        warnings = (
            "empty GT: it has no edge cells, so every ratio is (0 + 1)/(0 + 1) and MSIoU = 1 "
            "whatever the prediction (as pysodmetrics)",
        )
    return MSIoUResult(
        adaptive=_score(pair.pred >= thr, pair.gt, f"adaptive: pred≥{thr:.4f}", counting),
        binary=_score(pair.pred > 0.5, pair.gt, "binary: pred>0.5", counting),
        counting=counting,
        warnings=warnings,
    )


def msiou(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    counting: str = COUNTING.default,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> MSIoUResult:
    """Multiscale IoU of a prediction against a GT (adaptive and binary).

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((32, 32), np.uint8); gt[8:24, 8:24] = 255
    >>> msiou(gt.copy(), gt).binary.score
    1.0
    """
    return msiou_from_pair(prepare(pred, gt, norm), counting=counting)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MSIoUCurveResult(CurveSummary):
    """MSIoU of every threshold t = 0..256 (pysodmetrics' dynamic mode).

    Attributes
    ----------
    curve : ndarray, shape (257,)
        MSIoU of ``floor(255·pred) >= t`` (t = 256: the empty map).
    counting : str
        How the GT's cells were counted.
    """

    NAME: ClassVar[str] = "multiscale IoU curve"

    curve: np.ndarray
    counting: str


def msiou_curve(pair: Pair, *, counting: str = COUNTING.default) -> MSIoUCurveResult:
    """MSIoU of ``floor(255·pred) >= t`` for t = 0..256, computed once per distinct mask
    (a threshold between two grey levels of the map gives the previous mask)."""
    _, gt_grids, gt_cells = _gt_grids(pair.gt)
    den = denominators(gt_cells, counting)
    q = pair.quantized
    present = np.zeros(N_DYNAMIC, bool)
    present[np.unique(q).astype(np.intp) + 1] = True  # t = v + 1 drops the pixels of value v
    present[0] = True
    curve = np.empty(N_DYNAMIC)
    for t in range(N_DYNAMIC):
        if not present[t]:
            curve[t] = curve[t - 1]
            continue
        grids = cell_maps(edge_map(q >= t))
        inter = np.array(
            [int(np.count_nonzero(p & g)) for p, g in zip(grids, gt_grids, strict=True)]
        )
        curve[t] = _area((inter + 1) / den)
    return MSIoUCurveResult(curve=readonly(curve), counting=counting)


_TEACHING = (
    "Rewards a binarised map whose outline passes through the same cells as the GT's at "
    "every scale from 1 to 512 px: fine structures count. Recall-like (the GT's cells "
    "only), so extra outline elsewhere costs nothing; an empty GT scores 1 whatever the "
    "map."
)

FAMILY = Family(
    field="msiou",
    name="multiscale IoU",
    compute=lambda pair, p, img: msiou_from_pair(pair, counting=p.msiou_counting),
    params=(COUNTING,),
    measures=(
        MeasureInfo(
            "adpMSIoU",
            "MSIoU",
            True,
            "msiou",
            lambda s: s.msiou.adaptive.score,
            lambda p: f"thr=2·mean {p.msiou_counting}",
            kind="adaptive",
        ),
        MeasureInfo(
            "binMSIoU",
            "MSIoU",
            True,
            "msiou",
            lambda s: s.msiou.binary.score,
            lambda p: f"thr=0.5 {p.msiou_counting}",
            kind="binary",
        ),
    ),
    paper="Ahmadzadeh et al., ICIP 2021 (multiscale IoU)",
    reference="pysodmetrics 1.6.2 MSIoU (with_adaptive, with_binary)",
    teaching=_TEACHING,
    view="msiou",
)

CURVE_FAMILY = Family(
    field="msiou_curve",
    name="multiscale IoU curve",
    compute=lambda pair, p, img: msiou_curve(pair, counting=p.msiou_counting),
    params=(COUNTING,),
    measures=(
        MeasureInfo(
            "meanMSIoU",
            "MSIoU",
            True,
            "msiou_curve",
            lambda s: s.msiou_curve.mean,
            lambda p: p.msiou_counting,
            curve_mean("MSIoU", N_DYNAMIC),
            default=False,
            kind="mean",
        ),
        MeasureInfo(
            "maxMSIoU",
            "MSIoU",
            True,
            "msiou_curve",
            lambda s: s.msiou_curve.max,
            lambda p: p.msiou_counting,
            curve_max("MSIoU", N_DYNAMIC),
            default=False,
            kind="max",
        ),
    ),
    curves=(
        CurveInfo(
            "MSIoU",
            "msiou_curve",
            get=lambda s: s.msiou_curve.curve,
            description="MSIoU against the threshold (257 points, t = 256 the empty map)",
        ),
    ),
    paper="Ahmadzadeh et al., ICIP 2021 (multiscale IoU), over every threshold",
    reference="pysodmetrics 1.6.2 MSIoU (with_dynamic)",
    teaching=_TEACHING + " The curve's mean and max rank maps over every threshold.",
    view="msiou",
)
