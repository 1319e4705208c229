"""Context-measure C_β and its camouflage form C^ω_β (Wang, Ji, Shao, Cheng, Fan 2025).

With X the prediction in [0, 1] and Y the binary GT:

* **Kernel** K (GT shape prior, the paper's P_Y of Eq. 1): the sample covariance Σ of the
  GT-foreground pixel coordinates, normalised so its trace is α² (α = 6): Σ' = α²·Σ / tr Σ;
  half-sizes d = round(3·σ') per axis (Python round, half to even); K(z) = exp(−½ zᵀΣ'⁻¹z),
  normalised to sum 1; filtering with reflect-101 borders (OpenCV ``filter2D``).
* **Forward inference** F(Y|X) ≈ [X > 0] ⊙ (K ∗ Y); F_m = Σ F·X / Σ X — how much of what
  the prediction marks is supported by GT context.
* **Reverse deduction** R(X|Y) ≈ e/(e−1) · Y ⊙ (1 − exp(−K ∗ X)); R_m = Σ R·Y / Σ Y — how
  completely the GT is covered (a GT pixel whose neighbourhood is fully predicted scores 1).
* C_β = (1 + β²)·F_m·R_m / (β²·F_m + R_m), β² = 1 (Eqs. 2–7 of the paper).
* **Camouflage form**: the camouflage degree D (see :mod:`camouflage_degree`, Sec. 3.3, Eq. 8)
  weights GT pixels by 1 + D: R_w = Σ R·(Y + D) / (Σ Y + Σ D) (Eq. 9), and
  C^ω_β = (1 + β²)·F_m·R_w / (β²·F_m + R_w) with β² = 1.2 (Eq. 10; the code's 1.2 is β²,
  §4.1 of the paper sets β = 1.2, i.e. β² = 1.44: ``ccm_beta2=1.44``).

The kernel's spatial extent is fixed (trace α² = 36 px², whatever the object's size), so a
perfect prediction of a small object scores well below 1 (C_β ≈ 0.72 for a disc of radius
10 px, 0.96 for 80 px, 0.98 for 150 px) — a property of the measure, shared by both
references.

Conventions (``convention=``):

* ``"pysodmetrics"`` (default): as pysodmetrics 1.6.2 ``ContextMeasure`` /
  ``CamouflageContextMeasure`` — GT ``> 128``, prediction min–max stretched, RGB image,
  eps = 2.2e-16 in the denominators. Parity (tests/metrics/test_parity_context.py): C_β to
  5.2e-9 and C^ω_β to 6.3e-8 on 140 random cases with real textures (issue bars: 1e-8 and
  1e-5); see below for thin objects.
* ``"original"``: the authors' code (github pursuitxi/Context-measure @ 8348b4a) — GT
  ``>= 128``, prediction / 255 without stretch, **BGR** image, eps = 1e-8 (also in the
  repainting average, so an exact .5 average rounds down).

One deliberate difference in arithmetic, not in definition: both references store K ∗ Y as
float32 (``cv2.filter2D(..., CV_32F, K)``); fminspect computes F_m in float64, within 1e-13
of the exact value. The references' float32 K ∗ Y errs by up to ~4e-7; on most maps the
errors cancel in F_m (≤ 5.2e-9 in C_β on the parity cases), but on thin straight objects
they lean one way: a 2-px-wide bar scored against itself differs from pysodmetrics by
1.1e-7 in C_β (tested, with the float32 K ∗ Y shown to account for all of it).

Speed: K is point-symmetric, so Σ X·(K ∗ Y) = Σ Y·(K ∗ X) unless the border's mirroring
reaches the object: for an object more than the kernel's half-size from every border, one
filtering of X on the object's crop gives both F_m and R_m. Otherwise K ∗ Y is filtered in
float64 over the image (once per GT) and F_m is its X-weighted mean. A crop of 40,000 to
150,000 pixels is filtered as a product of spectra, the kernel's kept per GT (every model of
an image filters a crop of the same shape; the crop padded reflect-101 as filter2D pads it):
within 1e-15 of filter2D's values, in about two thirds of its time; smaller and larger
crops are faster through filter2D (see :data:`FFT_FROM`).

Edge cases (METRICS §10.7): where a reference crashes or silently returns 0, fminspect
returns a defined value and a warning:

=========================  =======================  ===============================================
case                       references               fminspect
=========================  =======================  ===============================================
empty GT                   0 (pysod) / crash (orig)  0/0 taken as 1 in F_m and R_m: C = 1 for an
                                                     empty prediction, 0 for any other
one-pixel GT               3×3 kernel, Σ = I/4       the same (fixed kernel, no α scaling)
GT on one row / column     eps variance (pysod)      the same: the kernel collapses to a line
GT on an exact 45° line    LinAlgError (both)        Σ' + 1e-9·tr(Σ')·I: the kernel collapses to
                                                     the line, as for rows and columns
no 7×7 patch in the        D = 0 silently            D = 0, with a warning
object or in the band
=========================  =======================  ===============================================

References
----------
.. [1] C.-Y. Wang, G.-P. Ji, S. Shao, M.-M. Cheng, D.-P. Fan, "Context-measure:
   Contextualizing Metric for Camouflage", arXiv:2512.07076, 2025.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import cv2
import numpy as np
import numpy.typing as npt

from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    ORIGINAL_CONTEXT_NORMALIZATION,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
)
from fminspect.metrics._numerics import EPS, lazy_field, readonly
from fminspect.metrics.camouflage_degree import (
    BAND_SHAPE,
    GAMMA,
    LAMBDA,
    PATCH_STRIDE,
    STRIDE,
    CamouflageDegreeResult,
    camouflage_degree,
)
from fminspect.metrics.equations import cite
from fminspect.metrics.registry import Family, MeasureInfo, Parameter

#: α, the spatial scale of the kernel K (6: tr Σ' = α² px²; the authors' code).
ALPHA = Parameter(
    "cm_alpha",
    6.0,
    "α",
    "α, the kernel's scale: its covariance is normalised to trace α² (6, the authors' code)",
    low=0.0,
    high=100.0,
    open_low=True,
)
#: β² of C_β (1: pysodmetrics ContextMeasure(beta2=1.0), the authors' GeneralContextMeasure).
BETA2 = Parameter(
    "cm_beta2",
    1.0,
    "β²",
    "β² of C_β, Eq. (2) (1, the authors' code and pysodmetrics)",
    low=0.0,
    high=100.0,
    open_low=True,
)
#: β² of C^ω_β (1.2 in both codes, passed as β²; the paper writes β = 1.2).
CAMO_BETA2 = Parameter(
    "ccm_beta2",
    1.2,
    "β²",
    "β² of C^ω_β, Eq. (10) (1.2, used as β² by the authors' code and pysodmetrics; §4.1 "
    "of the paper sets β = 1.2, i.e. β² = 1.44)",
    low=0.0,
    high=100.0,
    open_low=True,
)

Convention = Literal["pysodmetrics", "original"]
_EXP_FACTOR = math.e / (math.e - 1)
_EPS_BY_CONVENTION = {"pysodmetrics": EPS, "original": 1e-8}
_NORM_BY_CONVENTION = {
    "pysodmetrics": DEFAULT_NORMALIZATION,
    "original": ORIGINAL_CONTEXT_NORMALIZATION,
}


def normalization_for(convention: Convention) -> Normalization:
    """The input normalisation a convention implies."""
    try:
        return _NORM_BY_CONVENTION[convention]
    except KeyError:
        raise ValueError(
            f"convention must be 'pysodmetrics' or 'original', got {convention!r}"
        ) from None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ContextKernel:
    """The GT-shape kernel K and how it was built.

    Attributes
    ----------
    kernel : ndarray
        K, (2·d_r + 1) × (2·d_c + 1), sums to 1.
    covariance : ndarray, 2×2
        Σ' (trace α², or the fixed I/4 for ≤ 1 GT pixel), in (row, col) order.
    raw_covariance : ndarray, 2×2
        Σ of the GT-foreground coordinates (zero variances replaced by eps).
    half_size : (int, int)
        (d_r, d_c).
    centroid : (float, float)
        Mean (row, col) of the GT foreground (for drawing K as an ellipse).
    alpha : float
        α.
    warnings : tuple of str
        Degenerate-GT notes.
    """

    kernel: np.ndarray
    covariance: np.ndarray
    raw_covariance: np.ndarray
    half_size: tuple[int, int]
    centroid: tuple[float, float]
    alpha: float
    warnings: tuple[str, ...] = ()

    def ellipse(self, n_sigma: float = 1.0, points: int = 72) -> np.ndarray:
        """(points, 2) (row, col) outline of the n-σ ellipse of Σ' around the GT centroid."""
        values, vectors = np.linalg.eigh(self.covariance)
        angle = np.linspace(0, 2 * np.pi, points)
        unit = np.stack([np.cos(angle), np.sin(angle)])
        offsets = vectors @ (np.sqrt(np.maximum(values, 0))[:, None] * unit) * n_sigma
        outline: npt.NDArray[np.float64] = offsets.T + np.asarray(self.centroid)
        return outline


def _kernel_from(cov: np.ndarray, d_r: int, d_c: int) -> tuple[np.ndarray, np.ndarray, str | None]:
    """K(z) ∝ exp(−½ zᵀΣ⁻¹z) on integer offsets, normalised to sum 1."""
    note = None
    try:
        inv = np.linalg.inv(cov)
        det = np.linalg.det(cov)
        if not det > 0:
            raise np.linalg.LinAlgError("not positive definite")
    except np.linalg.LinAlgError:
        cov = cov + 1e-9 * np.trace(cov) * np.eye(2)
        inv, det = np.linalg.inv(cov), np.linalg.det(cov)
        note = (
            "singular GT covariance (the foreground lies on a line): Σ' + 1e-9·tr(Σ')·I, so the "
            "kernel collapses to the line (both references raise LinAlgError here)"
        )
    x, y = np.meshgrid(np.arange(-d_r, d_r + 1), np.arange(-d_c, d_c + 1), indexing="ij")
    z = np.stack([x, y], axis=-1)
    quad = np.einsum("...i,ij,...j->...", z, inv, z)
    kernel = np.exp(-0.5 * quad) / (2 * np.pi * np.sqrt(det))
    return kernel / np.sum(kernel), cov, note


def _moments(mask: np.ndarray) -> tuple[int, int, int, int, int, int]:
    """n, Σr, Σc, Σr², Σc², Σrc of the foreground coordinates, as exact integers.

    OpenCV accumulates binary-image moments exactly (they are integers below 2⁵³ for any
    image OpenCV can hold), so converting them to Python ints loses nothing.
    """
    m = cv2.moments(mask.view(np.uint8), binaryImage=True)
    # OpenCV's x is the column, y the row
    n, sr, sc, srr, scc, src = (round(m[k]) for k in ("m00", "m01", "m10", "m02", "m20", "m11"))
    return n, sr, sc, srr, scc, src


def _coordinate_covariance(moments: tuple[int, int, int, int, int, int]) -> np.ndarray:
    """Sample covariance (N − 1) of the foreground (row, col) coordinates.

    Computed from exact integer moments and rounded once, so it is the correctly rounded
    value of what ``np.cov(np.argwhere(mask), rowvar=False)`` approximates (they agree to
    ~1e-16 relative), at a fraction of the cost.
    """
    n, sr, sc, srr, scc, src = moments
    den = n * (n - 1)
    return np.array(
        [
            [(n * srr - sr * sr) / den, (n * src - sr * sc) / den],
            [(n * src - sr * sc) / den, (n * scc - sc * sc) / den],
        ]
    )


def _centroid(gt: GroundTruth) -> tuple[float, float]:
    n, sr, sc, *_ = _gt_moments(gt)
    return (sr / n, sc / n)


def _gt_moments(gt: GroundTruth) -> tuple[int, int, int, int, int, int]:
    """:func:`_moments` of the GT foreground, computed once per GT."""
    return gt.memo("context.moments", lambda: _moments(gt.mask))


def context_kernel(gt: GroundTruth, *, alpha: float = ALPHA.default) -> ContextKernel:
    """The kernel K of a GT (memoised per GT and α)."""
    if alpha <= 0:
        raise ValueError(f"alpha must be positive, got {alpha!r}")

    def compute() -> ContextKernel:
        warnings: list[str] = []
        if gt.n_fg <= 1:
            points = np.argwhere(gt.mask)
            cov = np.diag([0.25, 0.25])
            kernel, _, _ = _kernel_from(cov, 1, 1)
            centroid = (
                (float(points[0][0]), float(points[0][1])) if len(points) else (np.nan, np.nan)
            )
            if len(points) == 1:
                warnings.append("one-pixel GT: fixed 3×3 kernel with Σ = I/4 (as both references)")
            return ContextKernel(
                kernel=readonly(kernel),
                covariance=readonly(cov),
                raw_covariance=readonly(cov),
                half_size=(1, 1),
                centroid=centroid,
                alpha=alpha,
                warnings=tuple(warnings),
            )
        cov = _coordinate_covariance(_gt_moments(gt))
        for axis, name in ((0, "row"), (1, "column")):
            if cov[axis, axis] == 0:
                cov[axis, axis] = EPS
                warnings.append(
                    f"GT foreground on a single {name}: zero variance replaced by eps, the "
                    "kernel collapses to a line (as pysodmetrics; the original code crashes)"
                )
        sigma_r, sigma_c = np.sqrt(cov[0, 0]), np.sqrt(cov[1, 1])
        total = np.sqrt(cov[0, 0] + cov[1, 1])
        scaled = alpha**2 * cov / (total**2)  # trace α²
        d_r = round(3 * (alpha * sigma_r / total))  # Python round: half to even
        d_c = round(3 * (alpha * sigma_c / total))
        kernel, used, note = _kernel_from(scaled, d_r, d_c)
        if note:
            warnings.append(note)
        return ContextKernel(
            kernel=readonly(kernel),
            covariance=readonly(used),
            raw_covariance=readonly(cov),
            half_size=(int(d_r), int(d_c)),
            centroid=_centroid(gt),
            alpha=float(alpha),
            warnings=tuple(warnings),
        )

    return gt.memo(f"context.kernel.{alpha!r}", compute)


def _relevance(gt: GroundTruth, kernel: ContextKernel) -> np.ndarray:
    """K ∗ Y (float64, reflect-101 borders), memoised per GT and kernel."""
    return gt.memo(
        f"context.relevance.{kernel.alpha!r}",
        lambda: readonly(cv2.filter2D(gt.mask.astype(np.float64), cv2.CV_64F, kernel.kernel)),
    )


def _full_completeness(pair: Pair, kernel: ContextKernel) -> np.ndarray:
    """1 − exp(−K ∗ X) on the whole image (reflect-101 borders)."""
    return 1 - np.exp(-1 * cv2.filter2D(pair.pred, -1, kernel.kernel))


def _smoothed_on_fg(pair: Pair, kernel: ContextKernel) -> tuple[np.ndarray, bool]:
    """K ∗ X on the GT-foreground pixels (row-major), filtering only the foreground's
    bounding box grown by the kernel half-size d; and whether that also gives F_m.

    Every foreground pixel's kernel window lies inside that crop, or crosses the image
    border where the crop's own reflect-101 padding equals the image's.

    Σ X·(K ∗ Y) = Σ Y·(K ∗ X) (K is point-symmetric) unless a mirrored read of K ∗ Y lands
    on the object: reflect-101 mirrors the pixels 1 … d rows (columns) inside each border,
    so the identity holds when every object pixel is more than d from every border — the
    second value returned.
    """
    mask = pair.mask
    d_r, d_c = kernel.half_size
    top, bottom, left, right = pair.gt.bounds
    h, w = mask.shape
    r0, r1 = top - d_r, bottom + d_r + 1
    c0, c1 = left - d_c, right + d_c + 1
    clear = r0 > 0 and c0 > 0 and r1 < h and c1 < w  # every object pixel > d inside
    r0, r1, c0, c1 = max(r0, 0), min(r1, h), max(c0, 0), min(c1, w)
    if r1 - r0 <= 2 * d_r + 1 or c1 - c0 <= 2 * d_c + 1:
        return cv2.filter2D(pair.pred, -1, kernel.kernel)[mask], clear
    crop = np.ascontiguousarray(pair.pred[r0:r1, c0:c1])
    if not FFT_FROM <= crop.size <= FFT_UP_TO:
        smoothed = cv2.filter2D(crop, -1, kernel.kernel)
    else:
        smoothed = _correlate(crop, _spectrum(pair.gt, kernel, crop.shape))
    return smoothed[mask[r0:r1, c0:c1]], clear


#: Crops of this many pixels … (issue #50; measured single-threaded on a 2-core VM, float64,
#: kernels of 27 × 25 and 37 × 13, the kernel's spectrum already kept): below ~50,000 pixels
#: OpenCV's filter2D is as fast or faster (0.23 against 0.33 ms at 21,000); at 103,000 (a
#: 400 × 400 image's two objects) the product of spectra took 1.5 ms against 2.2; from
#: ~180,000 filter2D, which transforms in tiles, wins again (2.5 against 3.7 ms, 14 against
#: 25 ms at 1 million).
FFT_FROM = 40_000
#: … to this many are filtered through the kernel's spectrum; others by filter2D.
FFT_UP_TO = 150_000


@dataclass(frozen=True, slots=True)
class _Spectrum:
    """K's spectrum for correlating crops of one shape: the crop padded by the kernel's
    half-size as filter2D pads it (reflect-101), then K ⋆ crop as a product of spectra."""

    half: tuple[int, int]
    shape: tuple[int, int]  # the transform's size (fast for pocketfft)
    spectrum: np.ndarray


def _spectrum(gt: GroundTruth, kernel: ContextKernel, crop: tuple[int, ...]) -> _Spectrum:
    """The kernel's spectrum for crops of shape ``crop`` (memoised on the GT: every model of
    an image filters a crop of the same shape)."""
    from scipy import fft

    def compute() -> _Spectrum:
        k = kernel.kernel
        d_r, d_c = kernel.half_size
        rows = fft.next_fast_len(crop[0] + 2 * d_r + k.shape[0] - 1, real=True)
        cols = fft.next_fast_len(crop[1] + 2 * d_c + k.shape[1] - 1, real=True)
        # correlation with K is convolution with K flipped
        spectrum = fft.rfft2(k[::-1, ::-1], (rows, cols), workers=1)
        return _Spectrum((d_r, d_c), (rows, cols), readonly(spectrum))

    return gt.memo(f"context.spectrum.{kernel.alpha!r}.{crop[0]}x{crop[1]}", compute)


def _correlate(crop: np.ndarray, spec: _Spectrum) -> np.ndarray:
    """``cv2.filter2D(crop, -1, K)`` (reflect-101 borders) through the kernel's spectrum."""
    from scipy import fft

    d_r, d_c = spec.half
    padded = cv2.copyMakeBorder(crop, d_r, d_r, d_c, d_c, cv2.BORDER_REFLECT_101)
    product = fft.rfft2(padded, spec.shape, workers=1) * spec.spectrum
    full = fft.irfft2(product, spec.shape, workers=1)
    out: np.ndarray = full[2 * d_r : 2 * d_r + crop.shape[0], 2 * d_c : 2 * d_c + crop.shape[1]]
    return out


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class _ContextResult:
    """What both Context-measure forms hold: the score, its forward and reverse parts, the
    kernel, and the maps behind them computed on first access.

    Attributes
    ----------
    score : float
        C_β (or C^ω_β).
    forward, reverse : float
        F_m and R_m.
    beta2, alpha : float
        β² and α.
    convention : str
        ``'pysodmetrics'`` or ``'original'``.
    kernel : ContextKernel
        K and its covariance.
    relevance_map : ndarray
        K ∗ Y (float64).
    forward_map : ndarray
        [X > 0] ⊙ (K ∗ Y): the forward inference map.
    completeness_map : ndarray
        1 − exp(−K ∗ X).
    reverse_map : ndarray
        e/(e−1) · Y ⊙ completeness: the reverse deduction map.
    warnings : tuple of str
        Degenerate-GT notes.
    """

    HIGHER_IS_BETTER: ClassVar[bool] = True
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)

    score: float
    forward: float
    reverse: float
    beta2: float
    alpha: float
    convention: str
    kernel: ContextKernel
    warnings: tuple[str, ...] = ()
    _pair: Pair = field(repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @lazy_field
    def relevance_map(self) -> np.ndarray:
        """K ∗ Y."""
        return _relevance(self._pair.gt, self.kernel)

    @lazy_field
    def forward_map(self) -> np.ndarray:
        """[X > 0] ⊙ (K ∗ Y): the forward inference map."""
        forward: np.ndarray = (self._pair.pred > 0) * self.relevance_map
        return forward

    @lazy_field
    def completeness_map(self) -> np.ndarray:
        """1 − exp(−K ∗ X)."""
        return _full_completeness(self._pair, self.kernel)

    @lazy_field
    def reverse_map(self) -> np.ndarray:
        """e/(e−1) · Y ⊙ (1 − exp(−K ∗ X)): the reverse deduction map."""
        reverse: np.ndarray = _EXP_FACTOR * self._pair.mask * self.completeness_map
        return reverse


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ContextMeasureResult(_ContextResult):
    """C_β with its forward and reverse parts and every map behind them (the attributes of
    :class:`_ContextResult`)."""

    NAME: ClassVar[str] = "Context-measure"
    SYMBOL: ClassVar[str] = "C_β"


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CamouflageContextMeasureResult(_ContextResult):
    """C^ω_β: the Context-measure with GT pixels weighted by the camouflage degree.

    Attributes (besides those of :class:`ContextMeasureResult`)
    ----------------------------------------------------------
    weighted_reverse : float
        R_w.
    weighted_reverse_map : ndarray
        R ⊙ (Y + D): the numerator of R_w per pixel.
    degree : CamouflageDegreeResult
        D and every intermediate behind it.
    """

    NAME: ClassVar[str] = "camouflage Context-measure"
    SYMBOL: ClassVar[str] = "C^ω_β"

    weighted_reverse: float
    degree: CamouflageDegreeResult

    @lazy_field
    def weighted_reverse_map(self) -> np.ndarray:
        """R ⊙ (Y + D): the per-pixel numerator of R_w."""
        weighted: np.ndarray = self.reverse_map * (self._pair.mask + self.degree.cd_map)
        return weighted


def _parts(
    pair: Pair, alpha: float, eps: float
) -> tuple[ContextKernel, float, np.ndarray, list[str]]:
    """Kernel, F_m and the completeness on the GT foreground, shared by both forms."""
    gt = pair.gt
    kernel = context_kernel(gt, alpha=alpha)
    x = pair.pred
    sum_x = pair.pred_sum  # (shared with the other form and the adaptive threshold)
    warnings = list(kernel.warnings)
    if gt.is_empty:
        warnings.append(
            "empty GT: 0/0 in F_m and R_m taken as 1, so C = 1 for an empty prediction and 0 "
            "otherwise (pysodmetrics returns 0 always; the original code crashes)"
        )
        forward = 1.0 if sum_x == 0 else 0.0  # K ∗ Y = 0 everywhere
        return kernel, forward, np.zeros(0), warnings

    def filtered() -> tuple[Any, np.ndarray]:
        smoothed, clear = _smoothed_on_fg(pair, kernel)
        # F_m = Σ([X > 0]·(K ∗ Y)·X) / Σ X; the indicator changes nothing in the product
        if clear:
            numerator = np.sum(smoothed)  # = Σ Y·(K ∗ X) = Σ X·(K ∗ Y) (see _smoothed_on_fg)
        else:
            numerator = np.einsum("i,i->", _relevance(gt, kernel).ravel(), x.ravel())
        return numerator, readonly(1 - np.exp(-1 * smoothed))

    # K ∗ X once per pair and α: C_β and C^ω_β of one pair share it (issue #50)
    numerator, completeness = pair.memo(f"context.filtered.{alpha!r}", filtered)
    forward = float(numerator / (sum_x + eps))
    return kernel, forward, completeness, warnings


def _combine(forward: float, reverse: float, beta2: float, eps: float) -> float:
    # C = (1 + β²)·F·R / (β²·F + R)
    return float((1 + beta2) * forward * reverse / (beta2 * forward + reverse + eps))


def context_measure_from_pair(
    pair: Pair,
    *,
    beta2: float = BETA2.default,
    alpha: float = ALPHA.default,
    convention: Convention = "pysodmetrics",
) -> ContextMeasureResult:
    """C_β of a prepared pair (see :func:`context_measure`)."""
    eps = _EPS_BY_CONVENTION[convention]
    kernel, forward, completeness, warnings = _parts(pair, alpha, eps)
    if pair.gt.is_empty:
        reverse = 1.0
    else:
        # R_m = Σ(R ⊙ Y) / Σ Y with R = e/(e−1)·Y·completeness
        reverse = float(np.sum(_EXP_FACTOR * completeness) / (pair.gt.n_fg + eps))
    return ContextMeasureResult(
        score=_combine(forward, reverse, beta2, eps),
        forward=forward,
        reverse=reverse,
        beta2=float(beta2),
        alpha=float(alpha),
        convention=convention,
        kernel=kernel,
        warnings=tuple(warnings),
        _pair=pair,
    )


def camouflage_context_measure_from_pair(
    pair: Pair,
    img: np.ndarray,
    *,
    beta2: float = CAMO_BETA2.default,
    alpha: float = ALPHA.default,
    gamma: float = GAMMA.default,
    lambda_spatial: float = LAMBDA.default,
    convention: Convention = "pysodmetrics",
    band_shape: str = BAND_SHAPE.default,
    stride: int = STRIDE,
) -> CamouflageContextMeasureResult:
    """C^ω_β of a prepared pair and its image (see :func:`camouflage_context_measure`)."""
    eps = _EPS_BY_CONVENTION[convention]
    kernel, forward, completeness, warnings = _parts(pair, alpha, eps)
    degree = camouflage_degree(
        img,
        pair.gt,
        gamma=gamma,
        lambda_spatial=lambda_spatial,
        convention=convention,
        band_shape=band_shape,
        stride=stride,
    )
    if pair.gt.is_empty:
        reverse = weighted = 1.0
    else:
        reverse_fg = _EXP_FACTOR * completeness
        # D on the object: the degree's object is this GT's foreground (the same pixels, in
        # the same order), kept on the degree for every model of the image
        cd_fg = degree.object_degrees
        reverse = float(np.sum(reverse_fg) / (pair.gt.n_fg + eps))
        # R_w = Σ R ⊙ (Y + D) / (Σ Y + Σ D)   (D is 0 off the object)
        weighted = float(
            np.sum(reverse_fg * (1 + cd_fg)) / (pair.gt.n_fg + degree.object_degree_sum + eps)
        )
    return CamouflageContextMeasureResult(
        score=_combine(forward, weighted, beta2, eps),
        forward=forward,
        reverse=reverse,
        weighted_reverse=weighted,
        beta2=float(beta2),
        alpha=float(alpha),
        convention=convention,
        kernel=kernel,
        degree=degree,
        warnings=tuple(warnings) + degree.warnings,
        _pair=pair,
    )


def context_measure(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    beta2: float = BETA2.default,
    alpha: float = ALPHA.default,
    convention: Convention = "pysodmetrics",
) -> ContextMeasureResult:
    """Context-measure C_β of a prediction against a GT.

    Parameters
    ----------
    pred, gt : ndarray
        Prediction and GT maps.
    beta2 : float
        β² (1.0).
    alpha : float
        Kernel scale α (6.0).
    convention : {'pysodmetrics', 'original'}
        Input conventions (see the module notes).

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((40, 40), np.uint8); gt[10:30, 12:28] = 255
    >>> round(context_measure(gt.copy(), gt).score, 4)
    0.9612
    """
    return context_measure_from_pair(
        prepare(pred, gt, normalization_for(convention)),
        beta2=beta2,
        alpha=alpha,
        convention=convention,
    )


def camouflage_context_measure(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    img: np.ndarray,
    beta2: float = CAMO_BETA2.default,
    alpha: float = ALPHA.default,
    gamma: float = GAMMA.default,
    lambda_spatial: float = LAMBDA.default,
    convention: Convention = "pysodmetrics",
    band_shape: str = BAND_SHAPE.default,
    stride: int = STRIDE,
) -> CamouflageContextMeasureResult:
    """Camouflage Context-measure C^ω_β of a prediction, given the image.

    Parameters
    ----------
    img : ndarray, (H, W, 3) uint8
        The image: RGB for ``convention='pysodmetrics'``, BGR for ``'original'``.
    beta2 : float
        β² (1.2).
    gamma, lambda_spatial : float
        Camouflage-degree parameters (8 and 20).
    band_shape, stride :
        The context band (``'square'``, the code's, or ``'disk'``, the paper's) and the
        patches' step (3); see :mod:`~fminspect.metrics.camouflage_degree`.

    Pass a :class:`~fminspect.metrics.GroundTruth` to compute the camouflage degree once
    for several predictions of the same image.
    """
    return camouflage_context_measure_from_pair(
        prepare(pred, gt, normalization_for(convention)),
        img,
        beta2=beta2,
        alpha=alpha,
        gamma=gamma,
        lambda_spatial=lambda_spatial,
        convention=convention,
        band_shape=band_shape,
        stride=stride,
    )


def _camouflage_variant(p: Any) -> str:
    text = f"β²={p.ccm_beta2:g} α={p.cm_alpha:g} γ={p.ccm_gamma:g} λ={p.ccm_lambda:g}"
    if p.ccm_band != BAND_SHAPE.default:
        text += f" band={p.ccm_band}"
    if p.ccm_stride != STRIDE:
        text += f" stride={p.ccm_stride}"
    return text


_TEACHING = (
    "Rewards a map whose foreground is supported by the object's neighbourhood (forward "
    "inference) and that covers the object's context (reverse deduction), through a kernel "
    "shaped by the GT; no threshold. Its fixed kernel size caps a perfect small object well "
    "below 1, and it says nothing of how sharp the boundary is."
)

FAMILY = Family(
    field="context",
    name="Context-measure",
    compute=lambda pair, p, img: context_measure_from_pair(
        pair, beta2=p.cm_beta2, alpha=p.cm_alpha
    ),
    params=(ALPHA, BETA2),
    measures=(
        MeasureInfo(
            "Cm",
            "Context-measure",
            True,
            "context",
            lambda s: s.context.score,
            lambda p: f"β²={p.cm_beta2:g} α={p.cm_alpha:g}",
        ),
    ),
    paper=cite("context"),
    reference="pysodmetrics 1.6.2 ContextMeasure; github pursuitxi/Context-measure @ 8348b4a",
    teaching=_TEACHING,
    view="context",
    notes_name="context measure",
)

CAMOUFLAGE_FAMILY = Family(
    field="camouflage_context",
    name="camouflage Context-measure",
    compute=lambda pair, p, img: (
        None
        if img is None
        else camouflage_context_measure_from_pair(
            pair,
            img,
            beta2=p.ccm_beta2,
            alpha=p.cm_alpha,
            gamma=p.ccm_gamma,
            lambda_spatial=p.ccm_lambda,
            band_shape=p.ccm_band,
            stride=p.ccm_stride,
        )
    ),
    params=(ALPHA, CAMO_BETA2, GAMMA, LAMBDA, BAND_SHAPE, PATCH_STRIDE),
    measures=(
        MeasureInfo(
            "CCm",
            "Context-measure",
            True,
            "camouflage_context",
            lambda s: s.camouflage_context.score,
            _camouflage_variant,
            needs_image=True,
        ),
    ),
    needs_image=True,
    paper=cite("camouflage_context"),
    reference=(
        "pysodmetrics 1.6.2 CamouflageContextMeasure; github pursuitxi/Context-measure @ 8348b4a"
    ),
    teaching=_TEACHING
    + " The camouflage form weighs the object's pixels by how well the surroundings "
    "repaint them (the camouflage degree): a miss where the object blends in costs more.",
    view="camouflage_context",
    notes_name="context measure",
    repeats_notes_of="context",  # both forms warn about the same GT
)
