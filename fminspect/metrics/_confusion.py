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

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fminspect.metrics._inputs import Pair
from fminspect.metrics._numerics import readonly

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


def _sweep(pair: Pair) -> ConfusionSweep:
    gt = pair.gt
    q = pair.quantized
    mask = gt.mask
    hist = np.bincount(q.ravel(), minlength=N_THRESHOLDS)
    fg_hist = np.bincount(q[mask], minlength=N_THRESHOLDS) if gt.n_fg else np.zeros_like(hist)
    bg_hist = hist - fg_hist
    # reversed cumulative sums: element t counts pixels with q >= t
    tp = np.cumsum(fg_hist[::-1])[::-1].astype(np.int64)
    fp = np.cumsum(bg_hist[::-1])[::-1].astype(np.int64)
    thr = pair.adaptive_threshold
    return ConfusionSweep(
        tp=readonly(tp),
        fp=readonly(fp),
        tn=readonly(gt.n_bg - fp),
        fn=readonly(gt.n_fg - tp),
        n_fg=gt.n_fg,
        n_bg=gt.n_bg,
        adaptive_threshold=thr,
        adaptive=_counts(pair.pred >= thr, mask, gt.n_fg, gt.n_bg),
        binary=_counts(pair.pred > 0.5, mask, gt.n_fg, gt.n_bg),
    )


def confusion_sweep(pair: Pair) -> ConfusionSweep:
    """The (memoised) confusion sweep of a prepared pair."""
    return pair.memo("confusion_sweep", lambda: _sweep(pair))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ThresholdScores:
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

    @property
    def mean(self) -> float:
        """Mean of the 256-value curve (the per-image "mean" variant)."""
        return float(self.curve.mean())

    @property
    def max(self) -> float:
        """Max of the 256-value curve (the per-image "max" variant)."""
        return float(self.curve.max())

    @property
    def argmax(self) -> int:
        """Threshold index (0..255) of the first maximum of the curve."""
        return int(self.curve.argmax())


def threshold_scores(sweep: ConfusionSweep, formula: Formula) -> ThresholdScores:
    """Apply ``formula(tp, fp, tn, fn)`` to the curve and to both single binarisations."""
    curve = np.asarray(formula(sweep.tp, sweep.fp, sweep.tn, sweep.fn), dtype=np.float64)
    return ThresholdScores(
        curve=readonly(curve),
        adaptive=float(formula(*sweep.adaptive.arrays())),
        binary=float(formula(*sweep.binary.arrays())),
    )
