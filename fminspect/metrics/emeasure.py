"""Enhanced-alignment measure (E-measure) of Fan et al., IJCAI 2018.

For a binary foreground map F and the GT G on N pixels:

* bias matrices :math:`\\varphi_F = F - \\mu_F`, :math:`\\varphi_G = G - \\mu_G`
  (each pixel minus the image mean; Eq. 4);
* alignment matrix :math:`\\xi = 2\\varphi_G\\circ\\varphi_F /
  (\\varphi_G\\circ\\varphi_G + \\varphi_F\\circ\\varphi_F)` (Eq. 5);
* enhanced alignment matrix :math:`\\phi = f(\\xi) = (1+\\xi)^2/4` (Eq. 6);
* :math:`E = \\sum\\phi / (N - 1)` (Eq. 7 divides by N; see below).

Because F and G are binary, every pixel falls in one of four regions (TP, FP, FN, TN) with
one (φ_F, φ_G) pair each, so the score is a weighted sum of four values; the full-size maps
(for the explain view) are built from those four values on demand.

Parity with pysodmetrics 1.6.2 ``Emeasure`` and the MATLAB ``Enhancedmeasure.m``:

* the denominator is ``N - 1 + eps`` (MATLAB ``w*h - 1 + eps``), so the maximum is
  N/(N−1) > 1 (e.g. 1.000244 on 64×64) — not clipped. **Deliberate difference:** for a
  one-pixel image the reference divides by eps (a score of ~4.5e15); fminspect divides by
  N = 1 as the paper's definition does (Fan confirmed in DengPingFan/E-measure issue #1 that
  the −1 is an implementation detail) and the result carries a warning;
* empty GT: E = #(F = 0)/(N − 1 + eps) (the enhanced map is 1 − F); full GT:
  E = #(F = 1)/(N − 1 + eps) (the enhanced map is F);
* ``eps`` is added to the alignment denominator;
* binarisation is ``>=`` (pysodmetrics; the MATLAB toolbox's ``>`` differs, METRICS §9.1).

Per image: ``adaptive`` (pred ≥ min(2·mean, 1)), the 256-value ``curve`` (q ≥ t, ascending),
its ``mean`` and ``max``.

References
----------
.. [1] D.-P. Fan, C. Gong, Y. Cao, B. Ren, M.-M. Cheng, A. Borji, "Enhanced-alignment
   Measure for Binary Foreground Map Evaluation", IJCAI 2018, pp. 698–704.
   doi:10.24963/ijcai.2018/97, arXiv:1805.10421
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from fminspect.metrics._confusion import (
    N_THRESHOLDS,
    Counts,
    SweepRows,
    confusion_sweep,
    strict_sweep,
)
from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
)
from fminspect.metrics._numerics import EPS, CurveSummary, lazy_field, readonly
from fminspect.metrics.equations import cite
from fminspect.metrics.registry import (
    CurveInfo,
    Family,
    MeasureInfo,
    Parameter,
    curve_max,
    curve_mean,
)

#: How a map is binarised against a threshold (METRICS §9.1, §11.3).
COMPARE = Parameter(
    "em_compare",
    ">=",
    "cmp",
    "E-measure binarisation: >= (pysodmetrics, with the curve on floor(255·p); default) or > "
    "(the authors' MATLAB toolbox, CODToolbox main.m: p > t/255 on the continuous map, and "
    "p > the adaptive threshold)",
    choices=(">=", ">"),
)

#: Region order used everywhere in this module: (pred fg, GT fg), (pred fg, GT bg),
#: (pred bg, GT fg), (pred bg, GT bg).
REGIONS = ("TP", "FP", "FN", "TN")


def enhancement(xi: Any) -> Any:
    """The mapping f(ξ) = (1 + ξ)² / 4 from alignment to enhanced alignment."""
    return (xi + 1) ** 2 / 4


def _region_terms(tp: Any, fp: Any, n_fg: Any, n: Any) -> tuple[Any, ...]:
    """Counts, bias values, alignment and enhanced values of the four regions.

    Works on scalars, on 256-vectors and on rows of them (``n_fg``, ``n`` then columns)
    alike. Operation order follows pysodmetrics so the
    sums agree to the last bit.
    """
    pred_fg = tp + fp
    pred_bg = n - pred_fg
    fn = n_fg - tp
    tn = pred_bg - fn
    mean_pred = pred_fg / n
    mean_gt = n_fg / n
    bias_pred = (1 - mean_pred, 0 - mean_pred)  # φ_F on predicted fg, bg
    bias_gt = (1 - mean_gt, 0 - mean_gt)  # φ_G on GT fg, bg
    pairs = (
        (bias_pred[0], bias_gt[0]),
        (bias_pred[0], bias_gt[1]),
        (bias_pred[1], bias_gt[0]),
        (bias_pred[1], bias_gt[1]),
    )
    # ξ = 2 φ_F φ_G / (φ_F² + φ_G² + eps)   (eps: MATLAB parity)
    align = tuple(2 * (a * b) / (a**2 + b**2 + EPS) for a, b in pairs)
    enhanced = tuple(enhancement(x) for x in align)  # f(ξ) = (1 + ξ)² / 4
    return (tp, fp, fn, tn), pairs, align, enhanced


def _four_floats(values: Iterable[Any]) -> tuple[float, float, float, float]:
    """The values of the four regions (TP, FP, FN, TN order) as floats."""
    tp, fp, fn, tn = (float(v) for v in values)
    return tp, fp, fn, tn


def _enhanced_sum(tp: Any, fp: Any, n_fg: int, n: int) -> Any:
    """Σφ over the image, with the empty-GT and full-GT special cases."""
    if n_fg == 0:
        return n - (tp + fp)  # number of pixels predicted background
    if n_fg == n:
        return tp + fp  # number of pixels predicted foreground
    counts, _, _, enhanced = _region_terms(tp, fp, n_fg, n)
    total = enhanced[0] * counts[0]
    for value, count in zip(enhanced[1:], counts[1:], strict=True):
        total = total + value * count
    return total


def _score(enhanced_sum: Any, n: int) -> Any:
    if n == 1:
        # deliberate difference: the paper divides by w·h; the reference's w·h − 1 + eps
        # would divide a one-pixel image by eps (giving ~4.5e15)
        return enhanced_sum / 1
    return enhanced_sum / (n - 1 + EPS)  # MATLAB: sum(enhanced(:)) / (w*h - 1 + eps)


def emeasure_from_counts(tp: Any, fp: Any, n_fg: int, n: int) -> Any:
    """E-measure of binarisations given by their TP and FP counts (arrays work element by
    element), with the empty- and full-GT special cases and the N − 1 + eps denominator."""
    return _score(_enhanced_sum(tp, fp, n_fg, n), n)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class EmeasureAt:
    """E-measure of one binarisation, with its four region values and its maps.

    Attributes
    ----------
    threshold : float
        The threshold on the continuous map (``pred >= threshold``), or ``t/255`` for a curve
        point (``floor(255·pred) >= t``).
    rule : str
        Human-readable binarisation rule.
    score : float
        E-measure of this binarisation.
    counts : Counts
        Pixel counts of the TP, FP, FN, TN regions.
    region_bias_pred, region_bias_gt, region_alignment, region_enhanced : tuple of 4 floats
        φ_F, φ_G, ξ and f(ξ) on each region, in ``REGIONS`` order (for degenerate GTs the
        enhanced values are those of the special case).
    pred_mean, gt_mean : float
        μ_F and μ_G.
    degenerate : str or None
        ``'empty GT'`` or ``'full GT'`` when the special case applies.
    """

    threshold: float
    rule: str
    score: float
    counts: Counts
    region_bias_pred: tuple[float, float, float, float]
    region_bias_gt: tuple[float, float, float, float]
    region_alignment: tuple[float, float, float, float]
    region_enhanced: tuple[float, float, float, float]
    pred_mean: float
    gt_mean: float
    degenerate: str | None
    binary_map: np.ndarray
    gt_map: np.ndarray
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def _paint(self, values: tuple[float, float, float, float]) -> np.ndarray:
        b, g = self.binary_map, self.gt_map
        return np.select([b & g, b & ~g, ~b & g], values[:3], default=values[3]).astype(np.float64)

    @property
    def region_contribution(self) -> tuple[float, float, float, float]:
        """Each region's share of the score: f(ξ)·count / (N − 1 + eps)."""
        n = self.counts.n
        counts = (self.counts.tp, self.counts.fp, self.counts.fn, self.counts.tn)
        return _four_floats(
            _score(v * c, n) for v, c in zip(self.region_enhanced, counts, strict=True)
        )

    @lazy_field
    def pred_mean_map(self) -> np.ndarray:
        """μ_F·A (the constant mean-value map of the binarised prediction)."""
        return np.full(self.binary_map.shape, self.pred_mean)

    @lazy_field
    def gt_mean_map(self) -> np.ndarray:
        """μ_G·A."""
        return np.full(self.binary_map.shape, self.gt_mean)

    @lazy_field
    def bias_pred_map(self) -> np.ndarray:
        """φ_F = F − μ_F (signed)."""
        return self._paint(self.region_bias_pred)

    @lazy_field
    def bias_gt_map(self) -> np.ndarray:
        """φ_G = G − μ_G (signed)."""
        return self._paint(self.region_bias_gt)

    @lazy_field
    def alignment_map(self) -> np.ndarray:
        """ξ, the alignment matrix, in [−1, 1]."""
        return self._paint(self.region_alignment)

    @lazy_field
    def enhanced_map(self) -> np.ndarray:
        """φ = f(ξ), the enhanced alignment matrix; ``enhanced_map.sum() / (N−1+eps)`` is E."""
        return self._paint(self.region_enhanced)


def _emeasure_binary(
    binary: np.ndarray, gt: GroundTruth, threshold: float, rule: str
) -> EmeasureAt:
    mask = gt.mask
    tp = int(np.count_nonzero(binary & mask))
    fp = int(np.count_nonzero(binary)) - tp
    n, n_fg = gt.size, gt.n_fg
    counts_t, pairs, align, enhanced = _region_terms(tp, fp, n_fg, n)
    degenerate = "empty GT" if n_fg == 0 else "full GT" if n_fg == n else None
    if degenerate == "empty GT":
        enhanced = (0.0, 0.0, 1.0, 1.0)  # 1 where F = 0 (MATLAB: enhanced = 1 - FM)
    elif degenerate == "full GT":
        enhanced = (1.0, 1.0, 0.0, 0.0)  # 1 where F = 1 (MATLAB: enhanced = FM)
    return EmeasureAt(
        threshold=float(threshold),
        rule=rule,
        score=float(_score(_enhanced_sum(tp, fp, n_fg, n), n)),
        counts=Counts(
            tp=int(counts_t[0]), fp=int(counts_t[1]), fn=int(counts_t[2]), tn=int(counts_t[3])
        ),
        region_bias_pred=_four_floats(a for a, _ in pairs),
        region_bias_gt=_four_floats(b for _, b in pairs),
        region_alignment=_four_floats(align),
        region_enhanced=_four_floats(enhanced),
        pred_mean=(tp + fp) / n,
        gt_mean=n_fg / n,
        degenerate=degenerate,
        binary_map=readonly(binary),
        gt_map=mask,
    )


def emeasure_at(
    pair: Pair,
    *,
    threshold: float | None = None,
    index: int | None = None,
    strict: bool = False,
) -> EmeasureAt:
    """E-measure maps of one binarisation of a prepared pair (for threshold scrubbing).

    Parameters
    ----------
    threshold : float, optional
        Binarise the continuous map with ``pred >= threshold``.
    index : int, optional
        Curve point ``t`` in 0..255: binarise ``floor(255·pred) >= t`` (exactly the
        binarisation behind ``curve[t]``).

    With neither, the adaptive threshold is used. ``strict``: binarise with ``>`` on the
    continuous map instead (:data:`COMPARE`).
    """
    if threshold is not None and index is not None:
        raise TypeError("give threshold or index, not both")
    if index is not None:
        if not 0 <= index < N_THRESHOLDS:
            raise ValueError(f"index must be in 0..255, got {index}")
        if strict:
            t = float(pair.norm.curve_thresholds[index])
            return _emeasure_binary(pair.pred > t, pair.gt, t, f"pred>T{index}")
        return _emeasure_binary(pair.quantized >= index, pair.gt, index / 255, f"q≥{index}")
    sign = ">" if strict else "≥"
    if threshold is None:
        threshold = pair.adaptive_threshold
        rule = f"adaptive: pred{sign}{threshold:.4f}"
    else:
        rule = f"pred{sign}{threshold:.4f}"
    binary = pair.pred > threshold if strict else pair.pred >= threshold
    return _emeasure_binary(binary, pair.gt, threshold, rule)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class EmeasureResult(CurveSummary):
    """E-measure of a prediction: adaptive, the 256-value curve and the maps at one threshold.

    Attributes
    ----------
    curve : ndarray of float64, shape (256,)
        E of ``floor(255·pred) >= t``, ``t = 0..255`` ascending.
    adaptive : float
        adpEm.
    adaptive_threshold : float
        min(2·mean(pred), 1).
    at : EmeasureAt
        Region values and maps at the adaptive threshold (or at the requested threshold);
        built on first access.
    """

    NAME: ClassVar[str] = "E-measure"
    SYMBOL: ClassVar[str] = "E_ξ"
    HIGHER_IS_BETTER: ClassVar[bool] = True
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)

    curve: np.ndarray
    adaptive: float
    adaptive_threshold: float
    threshold: float | None = None
    warnings: tuple[str, ...] = ()
    #: binarised with ``>`` (:data:`COMPARE`)
    strict: bool = False
    _pair: Pair = field(repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @lazy_field
    def at(self) -> EmeasureAt:
        """Region values and maps at ``threshold`` (default: the adaptive threshold)."""
        return emeasure_at(self._pair, threshold=self.threshold, strict=self.strict)


def emeasure_curve(pair: Pair, *, strict: bool = False) -> np.ndarray:
    """The 256-value E-measure curve of a prepared pair (ascending threshold; ``strict``:
    of ``pred > t/255``)."""
    sweep = strict_sweep(pair) if strict else confusion_sweep(pair)
    n = pair.gt.size
    total = _enhanced_sum(sweep.tp, sweep.fp, pair.gt.n_fg, n)
    return readonly(np.asarray(_score(total, n), dtype=np.float64))


def emeasure_from_pair(
    pair: Pair, *, threshold: float | None = None, strict: bool = False
) -> EmeasureResult:
    """E-measure of a prepared pair (see :func:`emeasure`)."""
    sweep = strict_sweep(pair) if strict else confusion_sweep(pair)
    n, n_fg = pair.gt.size, pair.gt.n_fg
    adaptive = float(_score(_enhanced_sum(sweep.adaptive.tp, sweep.adaptive.fp, n_fg, n), n))
    curve = emeasure_curve(pair, strict=strict)
    warnings: tuple[str, ...] = ()
    if n == 1:
        warnings = ("one-pixel image: divided by N = 1 (paper), not by N − 1 + eps (reference)",)
    elif max(adaptive, float(curve.max())) > 1:
        top = max(adaptive, float(curve.max()))
        warnings = (
            f"a value above 1 ({top:.7f}): the reference's denominator N − 1 + eps "
            "(pysodmetrics 1.6.2 Emeasure, MATLAB Enhancedmeasure.m) lets a map that agrees "
            f"with the GT on every pixel score N/(N − 1) = {n / (n - 1):.7f}; kept, not clipped",
        )
    return EmeasureResult(
        curve=curve,
        adaptive=adaptive,
        adaptive_threshold=sweep.adaptive_threshold,
        threshold=threshold,
        warnings=warnings,
        strict=strict,
        _pair=pair,
    )


def emeasure(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    threshold: float | None = None,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> EmeasureResult:
    """E-measure of a prediction against a GT.

    Parameters
    ----------
    pred, gt : ndarray
        Prediction and GT (see :func:`fminspect.metrics.prepare`).
    threshold : float, optional
        Threshold for the maps in ``result.at`` (default: the adaptive threshold).
    norm : Normalization
        GT rule and stretch.

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((4, 4), np.uint8); gt[1:3, 1:3] = 255
    >>> r = emeasure(gt.copy(), gt)
    >>> round(r.adaptive, 6), round(float(r.at.enhanced_map.sum()) / 15, 6)
    (1.066667, 1.066667)
    """
    return emeasure_from_pair(prepare(pred, gt, norm), threshold=threshold)


def emeasure_rows(rows: SweepRows) -> np.ndarray:
    """The E-measure curves of several images from their sweep counts (one row each),
    element by element exactly as :func:`emeasure_curve` computes one image's curve (the
    empty- and full-GT rows take their special cases)."""
    n_fg, n = rows.n_fg, rows.n
    counts, _, _, enhanced = _region_terms(rows.tp, rows.fp, n_fg, n)
    general = enhanced[0] * counts[0]
    for value, count in zip(enhanced[1:], counts[1:], strict=True):
        general = general + value * count
    predicted = rows.tp + rows.fp
    total = np.where(n_fg == 0, n - predicted, np.where(n_fg == n, predicted, general))
    # the one-pixel case of _score; np.where computes both sides: no division by zero occurs
    return np.asarray(np.where(n == 1, total / 1, total / (n - 1 + EPS)), dtype=np.float64)


FAMILY = Family(
    field="emeasure",
    name="E-measure",
    compute=lambda pair, p, img: emeasure_from_pair(pair, strict=p.em_compare == ">"),
    params=(COMPARE,),
    # with ">" the records store each image's curve (the sweep's counts are of ">=")
    arrays=lambda s: {"Em": s.emeasure.curve} if s.emeasure.strict else {},
    measures=(
        MeasureInfo(
            "adpEm",
            "E-measure",
            True,
            "emeasure",
            lambda s: s.emeasure.adaptive,
            lambda p: "thr=2·mean" + (" cmp=>" if p.em_compare == ">" else ""),
            kind="adaptive",
        ),
        MeasureInfo(
            "meanEm",
            "E-measure",
            True,
            "emeasure",
            lambda s: s.emeasure.mean,
            lambda p: "cmp=>" if p.em_compare == ">" else "",
            curve_mean("Em"),
            kind="mean",
            scores=lambda s: s.emeasure,  # its curve
        ),
        MeasureInfo(
            "maxEm",
            "E-measure",
            True,
            "emeasure",
            lambda s: s.emeasure.max,
            lambda p: "cmp=>" if p.em_compare == ">" else "",
            curve_max("Em"),
            kind="max",
            scores=lambda s: s.emeasure,  # its curve
        ),
    ),
    curves=(
        CurveInfo(
            "Em",
            "emeasure",
            derive=lambda r, p: emeasure_rows(r) if p.em_compare == ">=" else None,
            description="E-measure",
        ),
    ),
    paper=cite("emeasure"),
    reference="pysodmetrics 1.6.2 Emeasure; MATLAB Enhancedmeasure.m (CODToolbox d3a5cec)",
    teaching=(
        "Rewards a binarised map that agrees with the GT both pixel by pixel and in its "
        "image-level mean (the bias terms). It is lenient to maps that are roughly right "
        "everywhere and, with its N − 1 denominator, can exceed 1; it ignores structure "
        "and, like every thresholded measure, what the threshold throws away."
    ),
    view="emeasure",
)
