"""Precision, recall and the F-measure over every binarisation of a map.

F-measure (Achanta et al. 2009; Eq. (4) of Margolin et al. 2014 for the general form, with
recall Eq. (1) and precision Eq. (3) there):

.. math:: F_\\beta = \\frac{(1+\\beta^2)\\,P\\,R}{\\beta^2 P + R}

with :math:`\\beta^2 = 0.3` by default (the SOD convention; pysodmetrics calls this
argument ``beta`` but it is β²). Variants per image:

* **adaptive** (adpFm): binarise ``pred >= min(2·mean(pred), 1)``;
* **curve**: 256 binarisations ``floor(255·pred) >= t``, ``t = 0..255``; **mean** (meanFm)
  and **max** (maxFm) of that curve;
* **binary**: ``pred > 0.5`` (pysodmetrics' ``with_binary``).

Over a dataset ``maxFm`` is the max of the image-averaged F curve (pysodmetrics, the MATLAB
one-key toolbox). The classic saliency benchmark (Borji et al. 2015's code, and
sal_eval_toolbox's ``performCalcu.m`` derived from it) averages precision and recall over the
images first and takes F of the averages at each threshold: ``maxFm_meanPR`` is the max of
that curve, ``IoU_maxFm_meanPR`` the image-averaged IoU at its threshold (the highest such
threshold on a tie, as MATLAB's ``max`` over thresholds from 1 down picks). Per image both
are the image's own values; over a dataset with an empty GT they are NaN, as there (its
recall 0/0).

Reference: pysodmetrics 1.6.2 ``Fmeasure`` / ``FmeasureV2`` + ``FmeasureHandler``; the two
agree and so does this module to 1e-10 (tests/metrics/test_parity_classic.py). Zero
denominators give 0 (nothing predicted → P = 0; empty GT → R = 0 and every F = 0).

References
----------
.. [1] R. Achanta, S. Hemami, F. Estrada, S. Süsstrunk, "Frequency-tuned salient region
   detection", CVPR 2009. doi:10.1109/CVPR.2009.5206596
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from fminspect.metrics._confusion import (
    ConfusionSweep,
    CountArg,
    Formula,
    SweepRows,
    ThresholdScores,
    confusion_measures,
    confusion_sweep,
    threshold_scores,
)
from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
)
from fminspect.metrics._numerics import safe_divide
from fminspect.metrics.equations import cite
from fminspect.metrics.overlap import iou_formula
from fminspect.metrics.registry import CurveInfo, DatasetValue, Family, MeasureInfo, Parameter

#: β² of the F-measure (0.3: Achanta et al. 2009, the SOD convention; pysodmetrics calls
#: this argument ``beta`` but it is β²).
BETA2 = Parameter(
    "beta2",
    0.3,
    "β²",
    "β² of the F-measure family (0.3, Achanta et al. 2009); F1 is β² = 1",
    low=0.0,
    high=100.0,
    open_low=True,
)


def precision_formula(
    tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg
) -> npt.NDArray[np.float64]:
    """TP / (TP + FP); 0 when nothing is predicted."""
    return safe_divide(tp, tp + fp)


def recall_formula(
    tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg
) -> npt.NDArray[np.float64]:
    """TP / (TP + FN); 0 for an empty GT."""
    return safe_divide(tp, tp + fn)


def fmeasure_formula(beta2: float) -> Formula:
    """Return ``f(tp, fp, tn, fn)`` computing F_β from P and R (0 where P = R = 0)."""

    def formula(tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg) -> npt.NDArray[np.float64]:
        p = precision_formula(tp, fp, tn, fn)
        r = recall_formula(tp, fp, tn, fn)
        return safe_divide((1 + beta2) * p * r, beta2 * p + r)

    return formula


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class FmeasureResult:
    """F-measure with its precision and recall under every binarisation.

    Attributes
    ----------
    beta2 : float
        β² used.
    precision, recall, fmeasure : ThresholdScores
        Each with ``curve`` (256, ascending threshold), ``adaptive`` and ``binary`` values;
        ``mean``/``max`` of the curve as properties.
    sweep : ConfusionSweep
        The TP/FP/TN/FN counts behind every number (the explain view draws them).
    """

    NAME: ClassVar[str] = "F-measure"
    SYMBOL: ClassVar[str] = "F_β"
    HIGHER_IS_BETTER: ClassVar[bool] = True
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)

    beta2: float
    precision: ThresholdScores
    recall: ThresholdScores
    fmeasure: ThresholdScores
    sweep: ConfusionSweep

    @property
    def adaptive(self) -> float:
        """adpFm."""
        return self.fmeasure.adaptive

    @property
    def mean(self) -> float:
        """meanFm (mean of this image's 256-value curve)."""
        return self.fmeasure.mean

    @property
    def max(self) -> float:
        """maxFm (max of this image's 256-value curve)."""
        return self.fmeasure.max

    @property
    def adaptive_threshold(self) -> float:
        """The adaptive threshold used for ``adaptive``."""
        return self.sweep.adaptive_threshold


def fmeasure_from_pair(pair: Pair, *, beta2: float = BETA2.default) -> FmeasureResult:
    """F-measure of a prepared pair (see :func:`fmeasure`)."""
    if beta2 <= 0:
        raise ValueError(f"beta2 must be positive, got {beta2!r}")
    sweep = confusion_sweep(pair)
    return FmeasureResult(
        beta2=float(beta2),
        precision=threshold_scores(sweep, precision_formula),
        recall=threshold_scores(sweep, recall_formula),
        fmeasure=threshold_scores(sweep, fmeasure_formula(beta2)),
        sweep=sweep,
    )


def fmeasure(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    beta2: float = BETA2.default,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> FmeasureResult:
    """F-measure, precision and recall of a prediction against a GT.

    Parameters
    ----------
    pred : ndarray or Pair
        Prediction (uint8 0–255, float in [0, 1] or bool), or a prepared :class:`Pair`.
    gt : ndarray or GroundTruth
        Ground truth (binarised ``> 128`` by default).
    beta2 : float
        β² (default 0.3).
    norm : Normalization
        GT threshold rule and prediction stretch.

    Returns
    -------
    FmeasureResult

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.array([[0, 255], [0, 255]], np.uint8)
    >>> r = fmeasure(np.array([[0, 200], [0, 100]], np.uint8), gt)
    >>> round(r.max, 4), round(r.adaptive, 4)
    (1.0, 0.8125)
    """
    return fmeasure_from_pair(prepare(pred, gt, norm), beta2=beta2)


def _rows(formula: Formula) -> Callable[[SweepRows, Any], npt.NDArray[np.float64]]:
    return lambda r, p: formula(r.tp, r.fp, r.tn, r.fn)


def _fm_label(p: Any) -> str:
    return f"β²={p.beta2:g}"


def _f_of_mean_pr(curves: Any, p: Any) -> npt.NDArray[np.float64]:
    """F_β of the image-averaged precision and recall at each threshold (ascending)."""
    pre, rec = curves["Precision"], curves["Recall"]
    return safe_divide((1 + p.beta2) * pre * rec, p.beta2 * pre + rec)


def _best(curve: npt.NDArray[np.float64]) -> int:
    """The highest threshold where ``curve`` is largest (MATLAB's first max from 1 down)."""
    return int(len(curve) - 1 - np.argmax(curve[::-1]))


def _own_best(s: Any) -> int:
    return _best(s.fmeasure.fmeasure.curve)


def _image_iou_at_max(s: Any) -> float:
    sweep = s.fmeasure.sweep
    if sweep.n_fg == 0:
        return float("nan")
    t = _own_best(s)
    return float(iou_formula(sweep.tp[t], sweep.fp[t], sweep.tn[t], sweep.fn[t]))


_BENCHMARK = "— the classic saliency benchmark's (performCalcu.m); NaN when a GT is empty"
CLASSIC_MEASURES = (
    MeasureInfo(
        "maxFm_meanPR",
        "F-measure",
        True,
        "fmeasure",
        lambda s: float("nan") if s.fmeasure.sweep.n_fg == 0 else s.fmeasure.fmeasure.max,
        lambda p: f"β²={p.beta2:g} F of mean P, R",
        DatasetValue(
            "F of the image-averaged precision and recall at each of the 256 thresholds, max "
            f"over thresholds {_BENCHMARK}",
            "curves",
            ("Precision", "Recall"),
            lambda c, p: float(_f_of_mean_pr(c, p).max()),
            empty_gt_nan=True,
        ),
        default=False,
        kind="max",
        scores=lambda s: s.fmeasure.fmeasure,
    ),
    MeasureInfo(
        "IoU_maxFm_meanPR",
        "IoU",
        True,
        "fmeasure",
        _image_iou_at_max,
        lambda p: f"at maxFm_meanPR β²={p.beta2:g}",
        DatasetValue(
            "the image-averaged IoU at the threshold of maxFm_meanPR (the highest on a tie) "
            + _BENCHMARK,
            "curves",
            ("Precision", "Recall", "IoU"),
            lambda c, p: float(c["IoU"][_best(_f_of_mean_pr(c, p))]),
            empty_gt_nan=True,
        ),
        default=False,
        kind="score",
    ),
)


FAMILY = Family(
    field="fmeasure",
    name="F-measure",
    compute=lambda pair, p, img: fmeasure_from_pair(pair, beta2=p.beta2),
    params=(BETA2,),
    measures=(
        *confusion_measures(
            "fmeasure",
            "Fm",
            "F-measure",
            lambda s: s.fmeasure.fmeasure,
            lambda p: fmeasure_formula(p.beta2),
            variant=_fm_label,
            curve="Fm",
            default=("adaptive", "mean", "max"),
        ),
        *confusion_measures(
            "fmeasure",
            "Pre",
            "precision",
            lambda s: s.fmeasure.precision,
            lambda p: precision_formula,
            curve="Precision",
        ),
        *confusion_measures(
            "fmeasure",
            "Rec",
            "recall (TPR)",
            lambda s: s.fmeasure.recall,
            lambda p: recall_formula,
            curve="Recall",
        ),
        *CLASSIC_MEASURES,
    ),
    curves=(
        CurveInfo(
            "Fm",
            "fmeasure",
            derive=lambda r, p: fmeasure_formula(p.beta2)(r.tp, r.fp, r.tn, r.fn),
            description="F-measure (β² of the run) against the threshold",
        ),
        CurveInfo(
            "Precision", "fmeasure", derive=_rows(precision_formula), description="precision"
        ),
        CurveInfo("Recall", "fmeasure", derive=_rows(recall_formula), description="recall (TPR)"),
    ),
    paper="Achanta et al., CVPR 2009 (adaptive threshold 2·mean); " + cite("fmeasure"),
    reference="pysodmetrics 1.6.2 Fmeasure / FmeasureV2 + Fmeasure-, Precision-, RecallHandler",
    teaching=(
        "Rewards maps whose binarisations cover the object (recall) without spilling "
        "outside it (precision); β² < 1 weighs precision more. Misses everything a "
        "threshold throws away: where the errors are, how confident the map was, the "
        "object's structure."
    ),
    view="fmeasure",
)
