"""Structure measure (S-measure) of Fan et al., ICCV 2017 (journal version IJCV 2021).

.. math:: S = \\alpha\\,S_o + (1-\\alpha)\\,S_r, \\qquad \\alpha = 0.5

(equation numbers of the IJCV paper: SSIM Eq. 7, S_r Eq. 8, S_FG Eq. 12, S_BG Eq. 13, S_o
Eq. 14, S Eq. 15)

**Region-aware part** S_r: the GT foreground centroid splits both maps into four quadrants
(LT, RT, LB, RB); each quadrant k gets an SSIM-like score and a weight equal to its share of
the image area, and S_r = Σ w_k·ssim_k (Eq. 8). The SSIM of a quadrant with N_k pixels is

.. math:: \\mathrm{ssim} = \\frac{4\\bar x\\bar y\\sigma_{xy}}
          {(\\bar x^2+\\bar y^2)(\\sigma_x^2+\\sigma_y^2)}
        = \\underbrace{\\frac{2\\bar x\\bar y}{\\bar x^2+\\bar y^2}}_{\\text{luminance}}
          \\cdot\\underbrace{\\frac{2\\sigma_x\\sigma_y}{\\sigma_x^2+\\sigma_y^2}}_{\\text{contrast}}
          \\cdot\\underbrace{\\frac{\\sigma_{xy}}{\\sigma_x\\sigma_y}}_{\\text{structure}}

with (co)variances divided by N_k − 1 + eps; ssim = 1 if numerator and denominator are both 0
and 0 if only the numerator is.

**Object-aware part** S_o: O(x) = 2·x̄ / (x̄² + 1 + σ_x + eps) (σ_x the sample standard
deviation, 0 for a single pixel) is computed on the prediction inside the GT foreground
(O_FG) and on 1 − prediction inside the background (O_BG);
S_o = μ·O_FG + (1 − μ)·O_BG with μ the GT foreground fraction (O is the paper's S_FG,
Eq. 12, and S_BG, Eq. 13, with λ = ½; S_o is Eq. 14).

Special cases: empty GT → S = 1 − mean(pred); full GT → S = mean(pred). The final score is
clipped below at 0.

Parity with pysodmetrics 1.6.2 ``Smeasure`` (to 1e-10): centroid = round-half-even of the
0-based mean row/column **plus 1** (MATLAB's inclusive ``1:X`` end index; MATLAB itself
rounds half away from zero on the 1-based mean, which differs when the 0-based mean is
k + 0.5 with k even — METRICS §4); SSIM denominators N − 1 + eps (pysodmetrics ≥ 1.6.1).

**Paper vs code — the quadrant weights.** The IJCV paper (§4.1, Eq. 8) gives each block "a
different weight (w_k) … proportional to the GT foreground region that this block covers";
the authors' MATLAB (``StructureMeasure.m``) and pysodmetrics weigh each quadrant by its
share of the *image area*. fminspect follows the code by default (every published number
uses it) and takes the paper's wording with ``s_weights='foreground'`` (w_k = the quadrant's
share of the GT foreground pixels; a quadrant without foreground then counts for nothing).

**Deliberate difference:** when the GT foreground lies only in the last row or column, the
centroid index equals the image height or width and one or two quadrants are empty. Their
area weight is 0 (Fan et al. weight quadrants by area), but pysodmetrics and MATLAB
multiply that 0 by the NaN mean of an empty array and return **NaN**. fminspect gives the
empty quadrants no contribution, returns the finite score and records a warning.

References
----------
.. [1] D.-P. Fan, M.-M. Cheng, Y. Liu, T. Li, A. Borji, "Structure-measure: A New Way to
   Evaluate Foreground Maps", ICCV 2017, pp. 4548–4557. doi:10.1109/ICCV.2017.487,
   arXiv:1708.00786
.. [2] M.-M. Cheng, D.-P. Fan, "Structure-Measure: A New Way to Evaluate Foreground Maps",
   IJCV 129, 2021. doi:10.1007/s11263-021-01490-8
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    FG_PARITY_LABELS,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
)
from fminspect.metrics._numerics import EPS, readonly
from fminspect.metrics.equations import cite
from fminspect.metrics.registry import Family, MeasureInfo, Parameter

#: α of the S-measure, Eq. (15) (0.5, Cheng & Fan, IJCV 2021).
ALPHA = Parameter(
    "alpha",
    0.5,
    "α",
    "α of the S-measure, S = α·S_o + (1 − α)·S_r (Eq. (15); 0.5)",
    low=0.0,
    high=1.0,
)

#: How the quadrants of the region part are weighted in S_r = Σ w_k·ssim(k), Eq. (8).
REGION_WEIGHTS = Parameter(
    "s_weights",
    "area",
    "w_k",
    "S-measure quadrant weights w_k of Eq. (8): area (each quadrant's share of the image: "
    "pysodmetrics and the authors' MATLAB; default) or foreground (its share of the GT "
    "foreground, as §4.1 of the paper words it)",
    choices=("area", "foreground"),
)

#: How the GT foreground centroid that splits the quadrants is rounded (METRICS §4, §11.7).
CENTROID = Parameter(
    "s_centroid",
    "pysod",
    "c",
    "S-measure centroid rounding: pysod (round-half-even of the 0-based mean, + 1: "
    "pysodmetrics; default), matlab (round half away from zero of the 1-based mean: "
    "StructureMeasure.m's centroid) or co-sod (round-half-even of the 0-based mean, no + 1: "
    "eval-co-sod); they split differently when a mean is exactly k + 0.5",
    choices=("pysod", "matlab", "co-sod"),
)

#: The denominators of the sample (co)variances and the standard deviation (METRICS §11.8).
DENOMINATOR = Parameter(
    "s_denominator",
    "n-1+eps",
    "N",
    "S-measure (co)variance denominators: n-1+eps (StructureMeasure.m, pysodmetrics ≥ 1.6.1; "
    "a one-pixel set has standard deviation 0; default) or n-1 (pysodmetrics ≤ 1.6.0, which "
    "PySODEvalToolkit pins: a one-pixel set or quadrant gives NaN)",
    choices=("n-1+eps", "n-1"),
)

QUADRANTS = ("LT", "RT", "LB", "RB")


@dataclass(frozen=True, slots=True, kw_only=True)
class QuadrantSSIM:
    """One quadrant of the region-aware part.

    ``rows``/``cols`` are half-open index ranges. ``luminance``, ``contrast`` and
    ``structure`` multiply to ``ssim`` (up to the eps terms); a term that is 0/0 is NaN.
    """

    name: str
    rows: tuple[int, int]
    cols: tuple[int, int]
    weight: float
    n: int
    pred_mean: float
    gt_mean: float
    pred_var: float
    gt_var: float
    covariance: float
    ssim: float
    luminance: float
    contrast: float
    structure: float

    @property
    def contribution(self) -> float:
        """weight × ssim (0 for an empty quadrant)."""
        return self.weight * self.ssim if self.n else 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectStats:
    """Object-aware statistics of one region (GT foreground or background)."""

    mean: float
    std: float
    score: float
    n: int


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SmeasureResult:
    """S-measure with its object- and region-aware parts.

    Attributes
    ----------
    score : float
        max(0, α·S_o + (1−α)·S_r), or the empty/full-GT special case.
    alpha : float
        α used.
    object_score, region_score : float
        S_o and S_r (NaN for a degenerate GT, where neither is used).
    foreground, background : ObjectStats or None
        Mean, std and O of pred on the GT foreground and of 1 − pred on the background.
    fg_fraction : float
        μ, the GT foreground fraction.
    centroid : tuple of int
        (row, col) split indices (rounded centroid + 1, as MATLAB's inclusive indexing).
    quadrants : tuple of QuadrantSSIM
        LT, RT, LB, RB (empty for a degenerate GT).
    degenerate : str or None
        ``'empty GT'`` or ``'full GT'``.
    weights : str
        How the quadrants were weighted (``'area'`` or ``'foreground'``, :data:`REGION_WEIGHTS`).
    warnings : tuple of str
        Deliberate differences from the reference that applied to this input.
    """

    NAME: ClassVar[str] = "S-measure"
    SYMBOL: ClassVar[str] = "S_α"
    HIGHER_IS_BETTER: ClassVar[bool] = True
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)

    score: float
    alpha: float
    object_score: float
    region_score: float
    foreground: ObjectStats | None
    background: ObjectStats | None
    fg_fraction: float
    centroid: tuple[int, int]
    quadrants: tuple[QuadrantSSIM, ...]
    degenerate: str | None
    weights: str = REGION_WEIGHTS.default
    warnings: tuple[str, ...] = ()


def _object_stats(x: np.ndarray, denominator: str = DENOMINATOR.default) -> ObjectStats:
    n = x.size
    mean = float(np.mean(x))
    if n > 1:
        d = x - mean
        std = float(np.sqrt(np.dot(d, d) / (n - 1)))  # sample std (ddof = 1)
    elif denominator == "n-1":
        std = float("nan")  # np.std(x, ddof=1) of one value (pysodmetrics ≤ 1.6.0)
    else:
        std = 0.0  # MATLAB std of a scalar is 0
    score = 2 * mean / (mean**2 + 1 + std + EPS)  # eps: MATLAB parity
    return ObjectStats(mean=mean, std=std, score=score, n=int(n))


def _level_object_stats(
    counts: np.ndarray, values: np.ndarray, denominator: str = DENOMINATOR.default
) -> ObjectStats:
    """:func:`_object_stats` of a region of a uint8 map from its level counts: the same
    mean and two-pass sample deviation, summed over the 256 levels (equal to the pixel
    form within a few units of the last place)."""
    n = int(counts.sum())
    mean = float(counts @ values / n)
    if n > 1:
        d = values - mean
        std = float(np.sqrt(counts @ (d * d) / (n - 1)))
    elif denominator == "n-1":
        std = float("nan")
    else:
        std = 0.0
    score = 2 * mean / (mean**2 + 1 + std + EPS)
    return ObjectStats(mean=mean, std=std, score=score, n=n)


def _ratio(num: float, den: float) -> float:
    return num / den if den != 0 else (np.nan if num == 0 else np.inf)


@dataclass(frozen=True, slots=True)
class _GtQuadrant:
    """GT-only statistics of one quadrant (memoised per GT)."""

    name: str
    rows: tuple[int, int]
    cols: tuple[int, int]
    weight: float
    n: int
    gt_mean: float
    gt_var: float
    constant: bool  # g − ȳ is exactly 0 everywhere (all foreground or all background)


def _denominator(n: int, rule: str) -> float:
    """N − 1 + eps, or N − 1 (:data:`DENOMINATOR`)."""
    return n - 1 + EPS if rule == "n-1+eps" else float(n - 1)


def _gt_quadrants(
    gt: GroundTruth,
    weights: str = "area",
    centroid: str = CENTROID.default,
    denominator: str = DENOMINATOR.default,
) -> tuple[_GtQuadrant, ...]:
    def compute() -> tuple[_GtQuadrant, ...]:
        h, w = gt.shape
        cy, cx = _centroid(gt, centroid)
        if weights == "foreground":
            # §4.1: "a different weight (w_k) to each block proportional to the GT
            # foreground region that this block covers"
            m = gt.mask
            counts = (
                np.count_nonzero(m[:cy, :cx]),
                np.count_nonzero(m[:cy, cx:]),
                np.count_nonzero(m[cy:, :cx]),
                np.count_nonzero(m[cy:, cx:]),
            )
            w_lt, w_rt, w_lb, w_rb = (float(c / gt.n_fg) for c in counts)
        else:  # the block's share of the image: pysodmetrics and StructureMeasure.m
            area = h * w
            w_lt = float(cx * cy / area)
            w_rt = float(cy * (w - cx) / area)
            w_lb = float((h - cy) * cx / area)
            w_rb = 1 - w_lt - w_rt - w_lb
        spec = (
            ("LT", (0, cy), (0, cx), w_lt),
            ("RT", (0, cy), (cx, w), w_rt),
            ("LB", (cy, h), (0, cx), w_lb),
            ("RB", (cy, h), (cx, w), w_rb),
        )
        out = []
        for name, rows, cols, weight in spec:
            g = gt.mask[rows[0] : rows[1], cols[0] : cols[1]]
            n = g.size
            if n == 0:
                out.append(_GtQuadrant(name, rows, cols, weight, 0, np.nan, np.nan, True))
                continue
            ones = np.count_nonzero(g)
            y = ones / n  # np.mean of the 0/1 map: its exact integer sum over n
            # Σ (g − ȳ)² in closed form, g being 0 or 1 (the references sum it pixel by
            # pixel: the same value within a few ulps; a full-size pass per quadrant saved)
            squares = ones * (1 - y) ** 2 + (n - ones) * y**2
            with np.errstate(invalid="ignore", divide="ignore"):  # N − 1 = 0: NaN, as there
                var = np.float64(squares) / _denominator(n, denominator)
            constant = y in (0.0, 1.0) and n > 1  # then g − ȳ is exactly 0 everywhere
            out.append(_GtQuadrant(name, rows, cols, weight, n, y, float(var), constant))
        return tuple(out)

    return gt.memo(f"smeasure.quadrants.{weights}.{centroid}.{denominator}", compute)


def _quadrant_labels(gt: GroundTruth, centroid: str) -> np.ndarray:
    """2·k + [GT foreground] for the pixels of quadrant k (memoised per GT and split rule):
    one labelled histogram of a uint8 map then holds every quadrant's level counts."""

    def compute() -> np.ndarray:
        cy, cx = _centroid(gt, centroid)
        labels = gt.mask.astype(np.uint8)
        labels[:cy, cx:] += 2
        labels[cy:, :cx] += 4
        labels[cy:, cx:] += 6
        return readonly(labels)

    return gt.memo(f"smeasure.labels.{centroid}", compute)


# the threshold sweep and MAE count a uint8 map's levels under the default split's labels,
# so that the S-measure's quadrant histogram is the same single pass (issue #50)
FG_PARITY_LABELS.append(
    lambda gt: (
        None
        if gt.is_empty  # no centroid
        else (_quadrant_labels(gt, CENTROID.default), 8, f"smeasure.{CENTROID.default}")
    )
)


def _level_counts(
    pair: Pair, q: _GtQuadrant, centroid: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A uint8 map's level counts in quadrant ``q`` (all, foreground) and the levels'
    values; None for other maps, and where the quadrant holds one level only: its exact
    variance 0 then meets the references' rounding noise (their mean of n equal values is
    not always that value, and whether a ≠ 0 decides the SSIM), so such a quadrant is
    computed pixel by pixel, as they do."""
    if pair.table is None:
        return None
    counts = pair.labelled_counts(_quadrant_labels(pair.gt, centroid), 8, f"smeasure.{centroid}")
    k = 2 * QUADRANTS.index(q.name)  # the order of _gt_quadrants and _quadrant_labels
    every, fg = counts[:, k] + counts[:, k + 1], counts[:, k + 1]
    return (every, fg, pair.table) if np.count_nonzero(every) > 1 else None


def _centred_gt(gt: GroundTruth, q: _GtQuadrant, centroid: str) -> np.ndarray:
    """g − ȳ in quadrant ``q``, flattened (memoised per GT: the maps that are not uint8
    compute the covariance pixel by pixel)."""
    r, c = q.rows, q.cols
    return gt.memo(
        f"smeasure.centred.{centroid}.{q.name}.{r}.{c}",
        lambda: readonly((gt.mask[r[0] : r[1], c[0] : c[1]] - q.gt_mean).ravel()),
    )


def _quadrant(
    pair: Pair,
    q: _GtQuadrant,
    denominator: str = DENOMINATOR.default,
    centroid: str = CENTROID.default,
) -> QuadrantSSIM:
    nan = float("nan")
    if q.n == 0:
        return QuadrantSSIM(
            name=q.name,
            rows=q.rows,
            cols=q.cols,
            weight=q.weight,
            n=0,
            pred_mean=nan,
            gt_mean=nan,
            pred_var=nan,
            gt_var=nan,
            covariance=nan,
            ssim=nan,
            luminance=nan,
            contrast=nan,
            structure=nan,
        )
    n = q.n
    y = q.gt_mean
    # sample (co)variances with N - 1 + eps: MATLAB parity, and no 0/0 for one pixel (with
    # N - 1 alone, as pysodmetrics ≤ 1.6.0, one pixel gives 0/0 = NaN)
    den = _denominator(n, denominator)
    counted = _level_counts(pair, q, centroid)
    if counted is not None:  # a uint8 map: sums over its 256 levels (issue #50)
        every, fg, table = counted
        x = every @ table / n
        d = table - x
        with np.errstate(invalid="ignore", divide="ignore"):
            sigma_x = every @ (d * d) / den
            # Σ (x − x̄)(g − ȳ): g is 1 on the level's foreground pixels, 0 on the others
            cross = d @ (fg - y * every)
            sigma_xy = 0.0 if q.constant else cross / den
    else:
        p = pair.pred[q.rows[0] : q.rows[1], q.cols[0] : q.cols[1]]
        x = np.mean(p)
        dp = (p - x).ravel()
        with np.errstate(invalid="ignore", divide="ignore"):
            sigma_x = np.dot(dp, dp) / den
            sigma_xy = 0.0 if q.constant else np.dot(dp, _centred_gt(pair.gt, q, centroid)) / den
    sigma_y = q.gt_var
    a = 4 * x * y * sigma_xy
    b = (x**2 + y**2) * (sigma_x + sigma_y)
    if a != 0:
        ssim = a / (b + EPS)
    elif b == 0:
        ssim = 1.0
    else:
        ssim = 0.0
    sx, sy = np.sqrt(sigma_x), np.sqrt(sigma_y)
    return QuadrantSSIM(
        name=q.name,
        rows=q.rows,
        cols=q.cols,
        weight=float(q.weight),
        n=int(n),
        pred_mean=float(x),
        gt_mean=float(y),
        pred_var=float(sigma_x),
        gt_var=float(sigma_y),
        covariance=float(sigma_xy),
        ssim=float(ssim),
        luminance=_ratio(2 * x * y, x**2 + y**2),
        contrast=_ratio(2 * sx * sy, sigma_x + sigma_y),
        structure=_ratio(sigma_xy, sx * sy),
    )


def _round_half_away(x: float) -> int:
    """MATLAB's ``round``: halves away from zero (x ≥ 0 here)."""
    return math.floor(x + 0.5)


def _centroid(gt: GroundTruth, rule: str = CENTROID.default) -> tuple[int, int]:
    """Split indices (memoised per GT): by default round-half-even(0-based mean row/col)
    + 1; see :data:`CENTROID` for the other rules."""

    def compute() -> tuple[int, int]:
        rows, cols = gt.profiles  # foreground pixels per row and per column
        # integer sums are exact, so sum / n equals numpy's mean of the coordinates
        my = int(rows @ np.arange(gt.shape[0])) / gt.n_fg
        mx = int(cols @ np.arange(gt.shape[1])) / gt.n_fg
        if rule == "matlab":  # X = round(mean of 1-based columns), then 1:X
            return _round_half_away(my + 1), _round_half_away(mx + 1)
        if rule == "co-sod":  # round(0-based mean) as the end index, with no + 1
            return int(np.round(my)), int(np.round(mx))
        return int(np.round(my)) + 1, int(np.round(mx)) + 1  # MATLAB's 1:X includes X

    return gt.memo(f"smeasure.centroid.{rule}", compute)


def _region(
    pair: Pair,
    gt: GroundTruth,
    weights: str,
    centroid: str = CENTROID.default,
    denominator: str = DENOMINATOR.default,
) -> tuple[float, tuple[QuadrantSSIM, ...], tuple[int, int]]:
    quads = tuple(
        _quadrant(pair, q, denominator, centroid)
        for q in _gt_quadrants(gt, weights, centroid, denominator)
    )
    score = 0.0
    for q in quads:
        if q.n:
            score = score + q.ssim * q.weight
    return score, quads, _centroid(gt, centroid)


def value_histograms(pair: Pair, bins: int = 32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Histograms of the prediction inside the GT foreground and background (the values
    the object-aware part summarises by their mean and standard deviation).

    Returns
    -------
    edges, foreground_counts, background_counts
    """
    edges = np.linspace(0, 1, bins + 1)
    fg, _ = np.histogram(pair.pred[pair.mask], bins=edges)
    bg, _ = np.histogram(pair.pred[~pair.mask], bins=edges)
    return edges, fg, bg


def smeasure_from_pair(
    pair: Pair,
    *,
    alpha: float = ALPHA.default,
    weights: str = REGION_WEIGHTS.default,
    centroid: str = CENTROID.default,
    denominator: str = DENOMINATOR.default,
) -> SmeasureResult:
    """S-measure of a prepared pair (see :func:`smeasure`)."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha!r}")
    REGION_WEIGHTS.check(weights)
    CENTROID.check(centroid)
    DENOMINATOR.check(denominator)
    pred, gt = pair.pred, pair.gt
    y = gt.n_fg / gt.size
    nan = float("nan")
    if gt.is_empty or gt.is_full:
        score = 1 - np.mean(pred) if gt.is_empty else np.mean(pred)
        return SmeasureResult(
            score=float(score),
            alpha=alpha,
            object_score=nan,
            region_score=nan,
            foreground=None,
            background=None,
            fg_fraction=y,
            centroid=(-1, -1),
            quadrants=(),
            degenerate="empty GT" if gt.is_empty else "full GT",
            weights=weights,
        )
    if pair.table is not None:  # a uint8 map: from the counts of its levels (issue #50)
        every, fg_counts = pair.level_counts()
        fg = _level_object_stats(fg_counts, pair.table, denominator)
        bg = _level_object_stats(every - fg_counts, 1 - pair.table, denominator)
    else:
        fg = _object_stats(pred[gt.mask], denominator)
        bg = _object_stats(1 - pred[~gt.mask], denominator)
    object_score = fg.score * y + bg.score * (1 - y)
    region_score, quads, split = _region(pair, gt, weights, centroid, denominator)
    score = max(0.0, object_score * alpha + region_score * (1 - alpha))
    warnings: tuple[str, ...] = ()
    empty = [q.name for q in quads if q.n == 0]
    if empty:
        warnings = (
            f"GT foreground lies only in the last row/column: quadrant(s) {', '.join(empty)} "
            "are empty (weight 0) and contribute nothing; pysodmetrics 1.6.2 and the MATLAB "
            "code return NaN here (0 × NaN mean).",
        )
    return SmeasureResult(
        score=float(score),
        alpha=float(alpha),
        object_score=float(object_score),
        region_score=float(region_score),
        foreground=fg,
        background=bg,
        fg_fraction=y,
        centroid=split,
        quadrants=quads,
        degenerate=None,
        weights=weights,
        warnings=warnings,
    )


def smeasure(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    alpha: float = ALPHA.default,
    weights: str = REGION_WEIGHTS.default,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> SmeasureResult:
    """S-measure of a prediction against a GT (``weights``: :data:`REGION_WEIGHTS`).

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((4, 4), np.uint8); gt[1:3, 1:3] = 255
    >>> round(smeasure(gt.copy(), gt).score, 6)
    1.0
    """
    return smeasure_from_pair(prepare(pred, gt, norm), alpha=alpha, weights=weights)


FAMILY = Family(
    field="smeasure",
    name="S-measure",
    compute=lambda pair, p, img: smeasure_from_pair(
        pair,
        alpha=p.alpha,
        weights=p.s_weights,
        centroid=p.s_centroid,
        denominator=p.s_denominator,
    ),
    params=(ALPHA, REGION_WEIGHTS, CENTROID, DENOMINATOR),
    measures=(
        MeasureInfo(
            "Sm",
            "S-measure",
            True,
            "smeasure",
            lambda s: s.smeasure.score,
            lambda p: (
                f"α={p.alpha:g}"
                + (" w=fg" if p.s_weights == "foreground" else "")
                + (f" c={p.s_centroid}" if p.s_centroid != CENTROID.default else "")
                + (" N−1" if p.s_denominator != DENOMINATOR.default else "")
            ),
        ),
    ),
    paper=cite("smeasure"),
    reference="pysodmetrics 1.6.2 Smeasure; MATLAB StructureMeasure.m (CODToolbox d3a5cec)",
    teaching=(
        "Rewards structure: a map whose four centroid quadrants look like the GT's (SSIM) and "
        "whose values are high and uniform on the object and low and uniform off it. Works "
        "on continuous maps without a threshold; lenient to blur, and a map that keeps the "
        "object's layout but misses detail still scores well."
    ),
    view="smeasure",
)
