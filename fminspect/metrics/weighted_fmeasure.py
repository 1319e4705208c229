"""Weighted F-measure F^w_β of Margolin, Zelnik-Manor and Tal, CVPR 2014.

The absolute error E = |p − g| (Eq. 7) is corrected for two flaws of the plain F-measure
(weighted error E^w = min(E, EA)·B, Eq. 9):

* **dependency**: on the background, the error is copied from the nearest foreground pixel
  (Et), smoothed with a 7×7 Gaussian (σ = 5, zero padding: MATLAB ``imfilter``) to give EA,
  and on the foreground the smaller of E and EA is kept (MIN_E_EA, the min of Eq. 9; the
  smoothing stands for the Gaussian dependency A of Eq. 11);
* **importance**: background errors are weighted by B = 2 − exp(ln(0.5)/5 · Δ), Δ the
  distance to the nearest foreground pixel (1 near the object, → 2 far away); B = 1 on the
  foreground (Eq. 12).

With Ew = MIN_E_EA · B: TP^w = |G| − Σ_fg Ew, FP^w = Σ_bg Ew (Eq. 10), R^w = 1 − mean_fg(Ew),
P^w = TP^w / (TP^w + FP^w + eps) (Eq. 13) and F^w = (1 + β²)·R^w·P^w / (R^w + β²·P^w + eps),
β² = 1 (Eq. 14).

Parity: pysodmetrics 1.6.2 ``WeightedFmeasure`` (its ``beta`` is β²) and the authors'
``WFb.m``. Empty GT → 0 (pysodmetrics; the authors' MATLAB stops with an error). Zero
padding makes a wrong map score > 0 on an all-foreground GT (0.0967 on 64×64, all-zero
prediction) — a documented quirk of the reference, reproduced.

Speed. Only what the score needs is computed per prediction: the exact Euclidean distance
map Δ and the weights B depend on the GT alone and are memoised on the
:class:`~fminspect.metrics.GroundTruth`; EA is needed only on the foreground, so the error is
copied only onto background pixels within 3 px (Chebyshev) of the object — the only ones the
7×7 kernel reaches from a foreground pixel. Their nearest foreground pixel is found among
offsets ordered by (distance², column, row), which is exactly SciPy's
``distance_transform_edt`` tie-breaking (lowest column, then lowest row; checked against SciPy
in tests/metrics/test_weighted_fmeasure.py). Δ comes from OpenCV's exact (Felzenszwalb)
distance transform; its float32 output is turned back into the integer squared distance,
exact to 700 px (see :data:`EXACT_RECOVERY_LIMIT`: single-threaded, OpenCV's float32 square
roots are not correctly rounded), and B is a table lookup by that integer — B rounds to
exactly 2.0 beyond Δ ≈ 265, so the table is short and farther pixels need no exact Δ. B is
kept as a full-size map that is 0 on the object: per prediction FP^w is one dot product, and
the foreground sums are dot products with the 0/1 GT crop. The dot products are NumPy's
``einsum`` (not BLAS, whose result depends on its thread count); they add in another order
than the reference's masked sums, so results may differ from pysodmetrics in the last bits
(< 1e-15 relative; the parity bar is 1e-10).

The full-size maps (E, Et, EA, MIN_E_EA, Δ, B, Ew and the weighted TP/FP/FN maps) are built
on first access for the explain view, with SciPy's feature transform.

Paper vs code — the smoothing. §4.2 sets σ² = 5 for the dependency kernel A (Eq. 11), a
Gaussian over every pair of foreground pixels, and names no window; the authors' ``WFb.m``
(and pysodmetrics) smooth with ``fspecial('gaussian', 7, 5)``, a normalised 7×7 window with
σ = 5 — nearly a box filter. The default follows the code (every published F^w_β does);
``wfm_kernel='paper'`` uses σ = √5 on the same normalised 7×7 window. Neither form applies
Eq. 11's unnormalised 1/√(2πσ²) factor, which the code drops too.

References
----------
.. [1] R. Margolin, L. Zelnik-Manor, A. Tal, "How to Evaluate Foreground Maps?", CVPR 2014,
   pp. 248–255. doi:10.1109/CVPR.2014.39
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import cv2
import numpy as np
import numpy.typing as npt

from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
)
from fminspect.metrics._numerics import EPS, l2_distance, lazy_field, matlab_gauss2d
from fminspect.metrics.equations import cite
from fminspect.metrics.registry import Family, MeasureInfo, Parameter

#: β² of the weighted F-measure, Eq. (14) (1: Margolin et al.; pysodmetrics'
#: ``WeightedFmeasure(beta=1)``, whose ``beta`` is β²).
BETA2 = Parameter(
    "wfm_beta2",
    1.0,
    "β²",
    "β² of the weighted F-measure (Eq. (14); 1, Margolin et al. 2014)",
    low=0.0,
    high=100.0,
    open_low=True,
)

KERNEL_SIZE = 7
KERNEL_SIGMA = 5.0
#: σ of the dependency kernel A, Eq. (11), under each form of :data:`KERNEL`.
KERNEL_SIGMAS = {"code": KERNEL_SIGMA, "paper": float(np.sqrt(5.0))}
#: Which Gaussian smooths the error (module notes, "Paper vs code").
KERNEL = Parameter(
    "wfm_kernel",
    "code",
    "A",
    "weighted F's dependency kernel A, Eq. (11): code (7×7, σ = 5: the authors' WFb.m "
    "fspecial('gaussian', 7, 5) and pysodmetrics; default) or paper (σ² = 5 as §4.2 sets it, "
    "σ ≈ 2.24, on the same 7×7 window)",
    choices=tuple(KERNEL_SIGMAS),
)
#: What an empty GT scores (METRICS §11.9).
EMPTY = Parameter(
    "wfm_empty",
    "zero",
    "∅",
    "weighted F of an image whose GT is empty: zero (pysodmetrics; default) or nan (not "
    "defined: left out of the dataset mean, and counted; the authors' MATLAB original_WFb.m "
    "stops with an index error there, so their toolbox's tables never hold such an image)",
    choices=("zero", "nan"),
)
_RADIUS = KERNEL_SIZE // 2
# B = 2 - exp(ln(1 - 0.5) / 5 * Δ)
_IMPORTANCE_RATE = np.log(0.5) / 5


def _gauss_1d(sigma: float) -> npt.NDArray[np.float64]:
    # fspecial('gaussian', 7, sigma) is the outer product of this normalised 1-D kernel (no
    # value of a 7-wide kernel with σ ≥ 1 is below MATLAB's eps·max cut)
    m = (KERNEL_SIZE - 1) / 2
    x = np.arange(-m, m + 1)
    g = np.exp(-(x * x) / (2 * sigma * sigma))
    kernel: npt.NDArray[np.float64] = g / g.sum()
    return kernel


_GAUSS_1D = {form: _gauss_1d(sigma) for form, sigma in KERNEL_SIGMAS.items()}


#: Largest distance to which ``rint(d32²)`` recovers Δ² exactly from OpenCV's transform.
#: With several threads OpenCV's float32 distances are correctly rounded square roots;
#: single-threaded (as fminspect's workers run it) they err by up to ~1e-7·Δ, and rint(d32²)
#: first fails at Δ ≈ 886 (n = 784997, measured). 700 px keeps a margin.
EXACT_RECOVERY_LIMIT = 700.0


def _opencv_distance(mask: np.ndarray) -> np.ndarray:
    """OpenCV's exact (Felzenszwalb) Euclidean distance to ``mask``, float32."""
    return l2_distance((~mask).view(np.uint8))


def exact_distance_map(mask: np.ndarray) -> np.ndarray:
    """Euclidean distance of every pixel to the nearest ``mask`` pixel (0 on the mask).

    Equal to ``scipy.ndimage.distance_transform_edt(~mask)`` bit for bit: recovered from
    OpenCV's transform while every distance is below :data:`EXACT_RECOVERY_LIMIT`, from
    SciPy's otherwise.
    """
    if not mask.any():
        raise ValueError("distance to an empty mask is undefined")
    mask = np.ascontiguousarray(mask, dtype=bool)
    d32 = _opencv_distance(mask)
    if cv2.minMaxLoc(d32)[1] > EXACT_RECOVERY_LIMIT:
        from scipy import ndimage  # only here: importing it costs ~0.35 s per process

        return np.asarray(ndimage.distance_transform_edt(~mask), dtype=np.float64)
    d = d32.astype(np.float64)
    np.square(d, out=d)
    np.rint(d, out=d)
    return np.sqrt(d, out=d)  # float64 sqrt of the exact integer, as SciPy


def _squared_distances(d32: np.ndarray) -> np.ndarray:
    """The integers n = Δ² (int32) from OpenCV's float32 distances: d32², rounded to the
    nearest integer by OpenCV (saturating at the int32 range).

    Exact while Δ ≤ :data:`EXACT_RECOVERY_LIMIT` (the error of d32² stays far below 0.5);
    farther distances may be off by one — which B does not see: it is 2.0 from Δ ≈ 265 on.
    """
    return cv2.multiply(d32, d32, dtype=cv2.CV_32S)


def _background_weight_table() -> np.ndarray:
    """``table[n]`` = B = 2 − exp(ln(0.5)/5 · √n) for n = Δ² > 0, and ``table[0]`` = 0.

    Entry 0 (n = 0 exactly on the object) holds 0, so a lookup of every pixel gives the
    background weights with the object masked out. The entries go through the same float
    operations as the direct formula, hence the same bits. B rounds to exactly 2.0 from
    Δ ≈ 265 on (exp(…) below half an ulp of 2), so the table ends at the first such n and
    a clipped lookup gives 2.0 for every farther pixel.
    """
    n = np.arange(1 << 17, dtype=np.float64)  # √(2¹⁷) ≈ 362 > 265
    table = 2 - np.exp(_IMPORTANCE_RATE * np.sqrt(n))
    last = int(np.argmax(table == 2.0))
    if last == 0 or not np.all(table[last:] == 2.0):
        raise AssertionError("B never reaches 2.0 within the table")  # IEEE 754: it does
    table = np.ascontiguousarray(table[: last + 1])
    table[0] = 0.0
    return table


_WEIGHT_TABLE = _background_weight_table()


def _background_weights(mask: np.ndarray, n: np.ndarray | None = None) -> np.ndarray:
    """B = 2 − exp(ln(0.5)/5 · Δ) on the background, 0 on the object (full size, float64).

    Δ² is an integer n, so B comes from :data:`_WEIGHT_TABLE` (bit-identical to the direct
    formula); ``n`` (:func:`_squared_distances`) is computed when not given.
    """
    if n is None:
        n = _squared_distances(_opencv_distance(mask))
    return np.take(_WEIGHT_TABLE, n, mode="clip")


def _offset_rings(radius: int) -> list[np.ndarray]:
    """Offsets (dr, dc) with 0 < dr² + dc² ≤ 2·radius², grouped by distance² (nearest first).

    Within a ring, offsets are ordered by column then row: SciPy's tie-break among
    equidistant nearest pixels is the lowest column, then the lowest row.
    """
    offs = [
        (dr, dc)
        for dr in range(-radius, radius + 1)
        for dc in range(-radius, radius + 1)
        if 0 < dr * dr + dc * dc <= radius * radius * 2
    ]
    rings: dict[int, list[tuple[int, int]]] = {}
    for dr, dc in sorted(offs, key=lambda o: (o[0] ** 2 + o[1] ** 2, o[1], o[0])):
        rings.setdefault(dr * dr + dc * dc, []).append((dr, dc))
    return [np.array(rings[d2]) for d2 in sorted(rings)]


_BAND_RINGS = _offset_rings(_RADIUS + 1)


def _ring_table() -> np.ndarray:
    """``table[n]``: the (at most 8) offsets at squared distance n in tie-break order,
    padded by repeating the last one; rows for impossible n stay zero."""
    n_max = 2 * _RADIUS * _RADIUS  # a band pixel is within a 7×7 window of the object
    table = np.zeros((n_max + 1, 8, 2), dtype=np.intp)
    for ring in _BAND_RINGS:
        n = int(ring[0, 0] ** 2 + ring[0, 1] ** 2)
        if n <= n_max:
            table[n, : len(ring)] = ring
            table[n, len(ring) :] = ring[-1]
    return table


_RING_TABLE = _ring_table()


@dataclass(frozen=True, slots=True, eq=False)
class _GtPart:
    """GT-only quantities of the weighted F-measure (memoised per GT)."""

    crop: tuple[slice, slice]  # fg bounding box grown by the kernel radius
    object_crop: np.ndarray  # the GT in the crop as float64 0/1 (C-contiguous)
    band_index: np.ndarray  # flat indices (in the crop) of bg pixels within 3 px
    band_source: np.ndarray  # flat indices (in the crop) of their nearest fg pixel
    bg_weights: np.ndarray  # B on the background, 0 on the object (full size)


def _band_sources(mask: np.ndarray, band_index: np.ndarray, band_n: np.ndarray) -> np.ndarray:
    """Nearest-foreground flat index for the pixels ``band_index`` (SciPy tie-break).

    ``band_n`` are their exact squared distances to the object: only the ring at that
    distance is searched, all pixels at once, and its first object pixel in tie-break order
    is the source.
    """
    w = mask.shape[1]
    pad = _RADIUS + 1
    wp = w + 2 * pad
    padded = cv2.copyMakeBorder(
        np.ascontiguousarray(mask).view(np.uint8), pad, pad, pad, pad, cv2.BORDER_CONSTANT
    ).ravel()
    rows = band_index // w
    flat = band_index + rows * (2 * pad) + (pad * wp + pad)  # positions in the padded image
    # (k, 8) offsets of the ring in tie-break order, in the padded and the crop image
    padded_offsets = (_RING_TABLE[..., 0] * wp + _RING_TABLE[..., 1])[band_n]
    hits = padded[flat[:, None] + padded_offsets]
    first = hits.argmax(axis=1)
    k = np.arange(band_index.size)
    if not hits[k, first].all():  # cannot happen when band_n are the exact distances
        raise AssertionError("band pixel without an object pixel at its distance")
    offsets = _RING_TABLE[..., 0] * w + _RING_TABLE[..., 1]
    sources: npt.NDArray[np.intp] = band_index + offsets[band_n, first]
    return sources


def _gt_part(gt: GroundTruth) -> _GtPart:
    mask = gt.mask
    top, bottom, left, right = gt.bounds
    h, w = gt.shape
    crop = (
        slice(max(top - _RADIUS, 0), min(bottom + _RADIUS + 1, h)),
        slice(max(left - _RADIUS, 0), min(right + _RADIUS + 1, w)),
    )
    local = np.ascontiguousarray(mask[crop])
    grown = cv2.dilate(local.view(np.uint8), np.ones((KERNEL_SIZE, KERNEL_SIZE), np.uint8))
    band_index = np.flatnonzero(grown > local.view(np.uint8))  # grown minus the object
    n = _squared_distances(_opencv_distance(mask))
    band_n = np.ascontiguousarray(n[crop]).ravel()[band_index]  # exact: at most 3√2 px
    return _GtPart(
        crop=crop,
        object_crop=local.astype(np.float64),
        band_index=band_index,
        band_source=_band_sources(local, band_index, band_n),
        # B(~GT) = 2 - exp(log(1 - 0.5) / 5 .* Dst(~GT))
        bg_weights=_background_weights(mask, n),
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class WeightedFmeasureResult:
    """Weighted F-measure, its weighted precision/recall, and (lazily) its maps.

    Attributes
    ----------
    score : float
        F^w_β (0 for an empty GT).
    precision, recall : float
        P^w and R^w.
    tp, fp : float
        TP^w and FP^w.
    beta2 : float
        β².
    kernel : str
        The dependency kernel's form (:data:`KERNEL`: ``'code'``, σ = 5, or ``'paper'``,
        σ² = 5), on a 7×7 window.
    """

    NAME: ClassVar[str] = "weighted F-measure"
    SYMBOL: ClassVar[str] = "F^w_β"
    HIGHER_IS_BETTER: ClassVar[bool] = True
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)

    score: float
    precision: float
    recall: float
    tp: float
    fp: float
    beta2: float
    kernel: str = KERNEL.default
    warnings: tuple[str, ...] = ()
    _pair: Pair = field(repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    # ---- full-size maps for the explain view (computed on first access) ----
    @lazy_field
    def error_map(self) -> np.ndarray:
        """E = ``|p − g|``."""
        error: npt.NDArray[np.float64] = np.abs(self._pair.pred - self._pair.mask)
        return error

    @lazy_field
    def distance_map(self) -> np.ndarray:
        """Δ: Euclidean distance to the nearest GT foreground pixel (0 on it)."""
        mask = self._pair.mask
        if not mask.any():
            return np.zeros(mask.shape)
        return exact_distance_map(mask)

    @lazy_field
    def dependency_error_map(self) -> np.ndarray:
        """Et: E, with each background pixel taking the error of its nearest fg pixel."""
        mask = self._pair.mask
        error = self.error_map
        if not mask.any():
            return error.copy()
        # MATLAB: [Dst, IDXT] = bwdist(GT); Et(~GT) = Et(IDXT(~GT))
        from scipy import ndimage

        idx = ndimage.distance_transform_edt(~mask, return_distances=False, return_indices=True)
        return np.where(mask, error, error[idx[0], idx[1]])

    @lazy_field
    def smoothed_error_map(self) -> np.ndarray:
        """EA: Et filtered with the 7×7 Gaussian (σ = 5, or √5 for the paper's form), zero
        padding."""
        kernel = matlab_gauss2d(KERNEL_SIZE, KERNEL_SIGMAS[self.kernel])
        # MATLAB: EA = imfilter(Et, K)  (correlation, zero padding)
        from scipy import ndimage

        smoothed: npt.NDArray[np.float64] = ndimage.correlate(
            self.dependency_error_map, kernel, mode="constant", cval=0
        )
        return smoothed

    @lazy_field
    def min_error_map(self) -> np.ndarray:
        """MIN_E_EA: EA on foreground pixels where EA < E, E elsewhere."""
        ea, e = self.smoothed_error_map, self.error_map
        return np.where(self._pair.mask & (ea < e), ea, e)

    @lazy_field
    def importance_map(self) -> np.ndarray:
        """B: 1 on the foreground, 2 − exp(ln(0.5)/5·Δ) on the background."""
        return np.where(self._pair.mask, 1.0, 2 - np.exp(_IMPORTANCE_RATE * self.distance_map))

    @lazy_field
    def weighted_error_map(self) -> np.ndarray:
        """Ew = MIN_E_EA · B."""
        weighted: npt.NDArray[np.float64] = self.min_error_map * self.importance_map
        return weighted

    @lazy_field
    def weighted_tp_map(self) -> np.ndarray:
        """1 − Ew on the foreground (its sum is TP^w), 0 elsewhere."""
        return np.where(self._pair.mask, 1 - self.weighted_error_map, 0.0)

    @lazy_field
    def weighted_fn_map(self) -> np.ndarray:
        """Ew on the foreground (its mean is 1 − R^w), 0 elsewhere."""
        return np.where(self._pair.mask, self.weighted_error_map, 0.0)

    @lazy_field
    def weighted_fp_map(self) -> np.ndarray:
        """Ew on the background (its sum is FP^w), 0 elsewhere."""
        return np.where(self._pair.mask, 0.0, self.weighted_error_map)


def _fg_min_error_sum(pair: Pair, part: _GtPart, kernel: str) -> float:
    """Σ MIN_E_EA over the foreground, from a crop around the object."""
    local = part.object_crop
    # E = |p - g| is 1 - p on the object; only the object and the 3-px band reach an object
    # pixel's kernel, so Et starts as max(g - p, 0): E on the object, 0 on the background
    et = cv2.subtract(local, pair.pred[part.crop])
    np.maximum(et, 0.0, out=et)
    flat = et.ravel()
    flat[part.band_index] = flat[part.band_source]  # Et(~GT) = Et(IDXT(~GT)): sources are fg
    # EA = imfilter(Et, K): fspecial('gaussian', 7, 5) is separable; zero padding
    g = _GAUSS_1D[kernel]
    ea = cv2.sepFilter2D(et, cv2.CV_64F, g, g, borderType=cv2.BORDER_CONSTANT)
    # MIN_E_EA(GT & EA < E) = EA(GT & EA < E); summed over the object (weights 1 there),
    # where E = Et; the band's values are weighted 0
    np.minimum(ea, et, out=ea)
    return float(np.einsum("i,i->", ea.ravel(), local.ravel()))


def weighted_fmeasure_from_pair(
    pair: Pair,
    *,
    beta2: float = BETA2.default,
    kernel: str = KERNEL.default,
    empty: str = EMPTY.default,
) -> WeightedFmeasureResult:
    """Weighted F-measure of a prepared pair (see :func:`weighted_fmeasure`)."""
    if beta2 <= 0:
        raise ValueError(f"beta2 must be positive, got {beta2!r}")
    KERNEL.check(kernel)
    EMPTY.check(empty)
    gt = pair.gt
    if gt.is_empty and empty == "nan":
        nan = float("nan")
        return WeightedFmeasureResult(
            score=nan,
            precision=nan,
            recall=nan,
            tp=0.0,
            fp=nan,
            beta2=beta2,
            kernel=kernel,
            warnings=(
                "empty GT: F^w is NaN (wfm_empty=nan: not defined; the authors' original_WFb.m "
                "stops with an error here)",
            ),
            _pair=pair,
        )
    if gt.is_empty:
        return WeightedFmeasureResult(
            score=0.0,
            precision=0.0,
            recall=0.0,
            tp=0.0,
            fp=0.0,
            beta2=beta2,
            kernel=kernel,
            warnings=(
                "empty GT: F^w is defined as 0 (pysodmetrics; the authors' MATLAB stops with "
                "an error)",
            ),
            _pair=pair,
        )
    part = gt.memo("weighted_fmeasure", lambda: _gt_part(gt))
    ew_fg_sum = _fg_min_error_sum(pair, part, kernel)  # Ew = MIN_E_EA: B = 1 on the foreground
    # TPw = sum(dGT(:)) - sum(sum(Ew(GT)));  FPw = sum(sum(Ew(~GT)));
    # on the background MIN_E_EA = E = p (p ≥ 0), so FPw = Σ p·B with B = 0 on the object
    tp_w = gt.n_fg - ew_fg_sum
    fp_w = np.einsum("i,i->", pair.pred.ravel(), part.bg_weights.ravel())
    # R = 1 - mean2(Ew(GT));  P = TPw ./ (eps + TPw + FPw);
    recall = 1 - ew_fg_sum / gt.n_fg
    precision = tp_w / (tp_w + fp_w + EPS)
    # Q = (1 + Beta^2) * (R * P) ./ (eps + R + (Beta .* P));
    score = (1 + beta2) * recall * precision / (recall + beta2 * precision + EPS)
    return WeightedFmeasureResult(
        score=float(score),
        precision=float(precision),
        recall=float(recall),
        tp=float(tp_w),
        fp=float(fp_w),
        beta2=float(beta2),
        kernel=kernel,
        _pair=pair,
    )


def weighted_fmeasure(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    beta2: float = BETA2.default,
    kernel: str = KERNEL.default,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> WeightedFmeasureResult:
    """Weighted F-measure of a prediction against a GT (``kernel``: :data:`KERNEL`).

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((8, 8), np.uint8); gt[2:6, 2:6] = 255
    >>> round(weighted_fmeasure(gt.copy(), gt).score, 6)
    1.0
    """
    return weighted_fmeasure_from_pair(prepare(pred, gt, norm), beta2=beta2, kernel=kernel)


FAMILY = Family(
    field="weighted_fmeasure",
    name="weighted F-measure",
    compute=lambda pair, p, img: weighted_fmeasure_from_pair(
        pair, beta2=p.wfm_beta2, kernel=p.wfm_kernel, empty=p.wfm_empty
    ),
    params=(BETA2, KERNEL, EMPTY),
    measures=(
        MeasureInfo(
            "wFm",
            "weighted F",
            True,
            "weighted_fmeasure",
            lambda s: s.weighted_fmeasure.score,
            lambda p: (
                f"β²={p.wfm_beta2:g}"
                + (" σ²=5" if p.wfm_kernel == "paper" else "")
                + (" ∅=NaN" if p.wfm_empty == "nan" else "")
            ),
        ),
    ),
    paper=cite("weighted_fmeasure"),
    reference="pysodmetrics 1.6.2 WeightedFmeasure; the authors' WFb.m",
    teaching=(
        "Rewards a continuous map whose errors are few, near the object and spatially "
        "coherent: errors far from the object cost up to twice as much, and a false alarm "
        "next to a miss is forgiven in part. No threshold. Misses structure, and its zero "
        "padding lets a wrong map score above 0 on an all-foreground GT."
    ),
    view="weighted_fmeasure",
)
