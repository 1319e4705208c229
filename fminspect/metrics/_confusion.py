"""The shared 256-threshold confusion sweep (one histogram per image).

For the quantised prediction ``q = floor(255 * pred)`` and every threshold ``t`` in 0..255,
the binary map ``q >= t`` is compared with the GT. Two 256-bin histograms of ``q`` (inside
and outside the GT) and a reversed cumulative sum give TP, FP, TN and FN for all thresholds
at once (the idea of pysodmetrics' ``FmeasureV2``). Every threshold-based measure — P/R,
F-measure, IoU, Dice, specificity, FPR, BER, accuracy, kappa, E-measure — is a formula
over these counts.

Curves here are indexed by threshold **ascending**: element ``t`` is the binarisation
``q >= t`` (element 0 = every pixel is foreground). pysodmetrics stores them descending
(255 → 0); the tests flip theirs, the core never does. The empty map is never a curve point.

Besides the curve, two single binarisations are counted: the *adaptive* one
``pred >= min(2·mean(pred), 1)`` on the continuous map and the *binary* one ``pred > 0.5``
(pysodmetrics' ``with_binary`` mode, "simulating argmax").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from fminspect.metrics._inputs import Pair
from fminspect.metrics._numerics import CurveSummary, readonly
from fminspect.metrics.registry import (
    MEAN,
    SWEEP_FAMILY,
    DatasetValue,
    Family,
    MeasureInfo,
    Pooled,
    curve_max,
    curve_mean,
    curve_min,
    pooled,
)

N_THRESHOLDS = 256

#: A count argument of a formula: the (256,) int64 curve counts or one int64 count.
CountArg = npt.NDArray[np.int64] | np.int64

#: ``formula(tp, fp, tn, fn)``: a confusion-count measure, element-wise over its arguments.
Formula = Callable[[CountArg, CountArg, CountArg, CountArg], npt.NDArray[np.float64]]


@dataclass(frozen=True, slots=True)
class Counts:
    """TP, FP, TN, FN of one binarisation (Python ints)."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def n(self) -> int:
        """Total number of pixels."""
        return self.tp + self.fp + self.tn + self.fn

    def arrays(self) -> tuple[np.int64, np.int64, np.int64, np.int64]:
        """The four counts as int64 scalars (so scalar and curve formulas share code)."""
        return (np.int64(self.tp), np.int64(self.fp), np.int64(self.tn), np.int64(self.fn))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ConfusionSweep:
    """TP/FP/TN/FN for the 256 thresholds and for the adaptive and binary rules.

    Attributes
    ----------
    tp, fp, tn, fn : ndarray of int64, shape (256,)
        Counts of ``q >= t`` for ``t = 0..255`` (ascending).
    n_fg, n_bg : int
        GT foreground and background pixel counts.
    adaptive_threshold : float
        ``min(2·mean(pred), 1)`` on the continuous map.
    adaptive, binary : Counts
        Counts of ``pred >= adaptive_threshold`` and of ``pred > 0.5``.
    """

    tp: np.ndarray
    fp: np.ndarray
    tn: np.ndarray
    fn: np.ndarray
    n_fg: int
    n_bg: int
    adaptive_threshold: float
    adaptive: Counts
    binary: Counts

    @property
    def n(self) -> int:
        """Number of pixels."""
        return self.n_fg + self.n_bg

    def at(self, t: int) -> Counts:
        """Counts of the binarisation ``q >= t`` (``t`` in 0..255)."""
        if not 0 <= t < N_THRESHOLDS:
            raise ValueError(f"threshold index must be in 0..255, got {t}")
        return Counts(int(self.tp[t]), int(self.fp[t]), int(self.tn[t]), int(self.fn[t]))


def _counts(binary: np.ndarray, mask: np.ndarray, n_fg: int, n_bg: int) -> Counts:
    tp = int(np.count_nonzero(binary & mask))
    fp = int(np.count_nonzero(binary)) - tp
    return Counts(tp, fp, n_bg - fp, n_fg - tp)


def _from_histograms(
    pair: Pair, hist: np.ndarray, fg_hist: np.ndarray, adaptive: Counts, binary: Counts
) -> ConfusionSweep:
    """The sweep of per-threshold-bin pixel counts (all pixels, GT foreground): element t
    of the curves counts the pixels in bins t and above; ``adaptive`` and ``binary`` are
    the counts of the two single binarisations."""
    gt = pair.gt
    bg_hist = hist - fg_hist
    # reversed cumulative sums: element t counts pixels with q >= t
    tp = np.cumsum(fg_hist[::-1])[::-1].astype(np.int64)
    fp = np.cumsum(bg_hist[::-1])[::-1].astype(np.int64)
    return ConfusionSweep(
        tp=readonly(tp),
        fp=readonly(fp),
        tn=readonly(gt.n_bg - fp),
        fn=readonly(gt.n_fg - tp),
        n_fg=gt.n_fg,
        n_bg=gt.n_bg,
        adaptive_threshold=pair.adaptive_threshold,
        adaptive=adaptive,
        binary=binary,
    )


def _level_sweep(pair: Pair, grid: np.ndarray, adaptive: np.ndarray) -> ConfusionSweep:
    """The sweep of a uint8 map from its two level histograms (issue #50): each level's
    pixels go to the threshold bin ``grid[level]`` of its value (``pred`` is
    ``table[levels]`` exactly, so the counts are those of the pixel-wise sweep, bit for
    bit; a bin of −1 is below every threshold), and the adaptive and binary rules keep or
    drop whole levels (``adaptive``: the levels the adaptive rule keeps)."""
    table, gt = pair.table, pair.gt
    assert table is not None
    every, fg = pair.level_counts()
    hist = np.zeros(N_THRESHOLDS + 1, np.int64)  # bin 0: never foreground
    fg_hist = np.zeros(N_THRESHOLDS + 1, np.int64)
    np.add.at(hist, grid.astype(np.intp) + 1, every)
    np.add.at(fg_hist, grid.astype(np.intp) + 1, fg)

    def counts(kept: np.ndarray) -> Counts:
        tp, fp = int(fg[kept].sum()), int((every - fg)[kept].sum())
        return Counts(tp, fp, gt.n_bg - fp, gt.n_fg - tp)

    return _from_histograms(pair, hist[1:], fg_hist[1:], counts(adaptive), counts(table > 0.5))


def _pixel_counts(pair: Pair, adaptive: np.ndarray) -> tuple[Counts, Counts]:
    """Counts of the adaptive binary map ``adaptive`` and of ``pred > 0.5``."""
    gt = pair.gt
    return (
        _counts(adaptive, gt.mask, gt.n_fg, gt.n_bg),
        _counts(pair.pred > 0.5, gt.mask, gt.n_fg, gt.n_bg),
    )


def _sweep(pair: Pair) -> ConfusionSweep:
    if pair.table is not None:
        return _level_sweep(pair, pair.grid_of(pair.table), pair.table >= pair.adaptive_threshold)
    gt = pair.gt
    q = pair.quantized
    hist = np.bincount(q.ravel(), minlength=N_THRESHOLDS)
    fg_hist = np.bincount(q[gt.mask], minlength=N_THRESHOLDS) if gt.n_fg else np.zeros_like(hist)
    return _from_histograms(
        pair, hist, fg_hist, *_pixel_counts(pair, pair.pred >= pair.adaptive_threshold)
    )


def confusion_sweep(pair: Pair) -> ConfusionSweep:
    """The (memoised) confusion sweep of a prepared pair."""
    return pair.memo("confusion_sweep", lambda: _sweep(pair))


def _strict_grid(pair: Pair, values: np.ndarray) -> np.ndarray:
    # the largest t with T_t < p (−1 when p = 0: never foreground), so that element t
    # counts the pixels with p > T_t — compared on the continuous map, as MATLAB does
    grid: np.ndarray = np.searchsorted(pair.norm.curve_thresholds, values, side="left") - 1
    return grid


def _strict_sweep(pair: Pair) -> ConfusionSweep:
    if pair.table is not None:  # per level, as the sweep above (issue #50, item 7)
        table = pair.table
        return _level_sweep(pair, _strict_grid(pair, table), table > pair.adaptive_threshold)
    gt = pair.gt
    q = _strict_grid(pair, pair.pred)
    hist = np.bincount(q.ravel() + 1, minlength=N_THRESHOLDS + 1)[1:]
    fg_hist = (
        np.bincount(q[gt.mask] + 1, minlength=N_THRESHOLDS + 1)[1:]
        if gt.n_fg
        else np.zeros_like(hist)
    )
    return _from_histograms(
        pair, hist, fg_hist, *_pixel_counts(pair, pair.pred > pair.adaptive_threshold)
    )


def strict_sweep(pair: Pair) -> ConfusionSweep:
    """The (memoised) sweep of the strict rule: element ``t`` counts ``pred > t/255`` on the
    continuous map, and the adaptive binarisation is ``pred > min(2·mean, 1)`` (the MATLAB
    toolbox's E-measure, METRICS §9.1)."""
    return pair.memo("confusion_sweep.strict", lambda: _strict_sweep(pair))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ThresholdScores(CurveSummary):
    """One confusion-count measure under every binarisation rule.

    Attributes
    ----------
    curve : ndarray of float64, shape (256,)
        Value for ``q >= t``, ``t = 0..255`` ascending.
    adaptive : float
        Value for ``pred >= min(2·mean, 1)``.
    binary : float
        Value for ``pred > 0.5``.
    """

    curve: np.ndarray
    adaptive: float
    binary: float


def threshold_scores(sweep: ConfusionSweep, formula: Formula) -> ThresholdScores:
    """Apply ``formula(tp, fp, tn, fn)`` to the curve and to both single binarisations."""
    curve = np.asarray(formula(sweep.tp, sweep.fp, sweep.tn, sweep.fn), dtype=np.float64)
    return ThresholdScores(
        curve=readonly(curve),
        adaptive=float(formula(*sweep.adaptive.arrays())),
        binary=float(formula(*sweep.binary.arrays())),
    )


# ---------------------------------------------------------------------------------------
# The sweep as stored (one record per pair) and the dataset values made from it

#: Order of the scalar counts stored with the sweep (``counts`` array of its record).
COUNT_NAMES = ("n_fg", "n_bg", "adaptive_tp", "adaptive_fp", "binary_tp", "binary_fp")


@dataclass(frozen=True, slots=True, eq=False)
class SweepRows:
    """The sweep counts of several images, one row each (int64): what the dataset curves of
    every confusion-count measure are derived from.

    Attributes
    ----------
    tp, fp, tn, fn : ndarray of int64, shape (images, 256)
        Counts of ``q >= t`` per image (ascending threshold).
    n_fg, n_bg, n : ndarray of int64, shape (images, 1)
        GT foreground, background and all pixels.
    """

    tp: np.ndarray
    fp: np.ndarray
    tn: np.ndarray
    fn: np.ndarray
    n_fg: np.ndarray
    n_bg: np.ndarray

    @property
    def n(self) -> np.ndarray:
        """Pixels per image (column)."""
        return np.asarray(self.n_fg + self.n_bg)


def sweep_arrays(sweep: ConfusionSweep) -> dict[str, np.ndarray]:
    """What a sweep record stores: ``tp``, ``fp`` (256 each) and ``counts``
    (:data:`COUNT_NAMES`), as float64 (exact: counts below 2**53)."""
    counts = (
        sweep.n_fg,
        sweep.n_bg,
        sweep.adaptive.tp,
        sweep.adaptive.fp,
        sweep.binary.tp,
        sweep.binary.fp,
    )
    return {
        "tp": np.asarray(sweep.tp, dtype=np.float64),
        "fp": np.asarray(sweep.fp, dtype=np.float64),
        "counts": np.asarray(counts, dtype=np.float64),
    }


def sweep_rows(tp: np.ndarray, fp: np.ndarray, counts: np.ndarray) -> tuple[SweepRows, np.ndarray]:
    """Stacked stored sweeps (rows of ``tp``, ``fp`` and ``counts``) as int64 rows, and the
    binary counts (TP, FP, TN, FN) of each image, shape (images, 4)."""
    counts = np.asarray(counts).astype(np.int64)
    column = {name: counts[:, i : i + 1] for i, name in enumerate(COUNT_NAMES)}
    n_fg, n_bg = column["n_fg"], column["n_bg"]
    tp = np.asarray(tp).astype(np.int64)
    fp = np.asarray(fp).astype(np.int64)
    rows = SweepRows(tp=tp, fp=fp, tn=n_bg - fp, fn=n_fg - tp, n_fg=n_fg, n_bg=n_bg)
    b_tp, b_fp = column["binary_tp"], column["binary_fp"]
    binary = np.concatenate([b_tp, b_fp, n_bg - b_fp, n_fg - b_tp], axis=1)
    return rows, binary


def confusion_measures(
    field: str,
    symbol: str,
    name: str,
    scores: Callable[[Any], ThresholdScores],
    formula: Callable[[Any], Formula],
    *,
    higher_is_better: bool = True,
    variant: Callable[[Any], str] = lambda p: "",
    curve: str,
    default: Iterable[str] = (),
) -> tuple[MeasureInfo, ...]:
    """The five keys of one confusion-count measure: ``adp…`` (pred ≥ min(2·mean, 1)),
    ``mean…`` and ``max…`` (``min…`` when lower is better) of the 256-threshold curve,
    ``bin…`` (pred > 0.5, mean over images) and ``pooled…`` (pred > 0.5, one confusion
    matrix summed over the dataset). ``formula(params)`` gives ``f(tp, fp, tn, fn)``;
    ``default``: the kinds shown unless other measures are asked for."""
    best = "max" if higher_is_better else "min"
    chosen = set(default)

    def label(extra: str) -> Callable[[Any], str]:
        return lambda p: " ".join(x for x in (variant(p), extra) if x)

    def info(
        kind: str, key: str, get: Callable[[Any], float], text: str, ds: DatasetValue
    ) -> MeasureInfo:
        return MeasureInfo(
            key,
            name,
            higher_is_better,
            field,
            get,
            label(text),
            ds,
            default=kind in chosen,
            kind=kind,
            scores=scores,
        )

    def pooled_value(c: Pooled, params: Any) -> float:
        return float(formula(params)(c.tp, c.fp, c.tn, c.fn))

    return (
        info("adaptive", f"adp{symbol}", lambda s: scores(s).adaptive, "thr=2·mean", MEAN),
        info("mean", f"mean{symbol}", lambda s: scores(s).mean, "", curve_mean(curve)),
        info(
            best,
            f"{best}{symbol}",
            (lambda s: scores(s).max) if higher_is_better else (lambda s: scores(s).min),
            "",
            curve_max(curve) if higher_is_better else curve_min(curve),
        ),
        info("binary", f"bin{symbol}", lambda s: scores(s).binary, "thr=0.5", MEAN),
        info(
            "pooled",
            f"pooled{symbol}",
            lambda s: scores(s).binary,
            "thr=0.5 pooled",
            pooled(pooled_value),
        ),
    )


#: The sweep's registry entry: no score of its own; its records hold every image's counts,
#: from which the dataset curves and pooled values of the confusion-count measures come.
FAMILY = Family(
    field=SWEEP_FAMILY,
    name="threshold-sweep counts",
    compute=lambda pair, params, img: confusion_sweep(pair),
    arrays=lambda suite: sweep_arrays(suite.sweep),
    paper="the 256-threshold histogram sweep of pysodmetrics' FmeasureV2",
    reference="pysodmetrics 1.6.2 FmeasureV2.dynamically_binarizing / adaptively_binarizing",
)
