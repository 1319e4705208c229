"""Confusion-count rates beyond P/R/F/IoU/Dice: specificity, FPR, BER, accuracy, kappa.

All come from the shared 256-threshold sweep (adaptive, curve and binary variants), each
under the keys ``adp…``, ``mean…``, ``max…`` (``min…`` for FPR and BER, where lower is
better), ``bin…`` and ``pooled…`` (:func:`~fminspect.metrics._confusion.confusion_measures`):
TNR (specificity), FPR (the false-alarm rate of Margolin et al., CVPR 2014, Eq. (2); the hit
rate TPR is their Eq. (1)), BER,
OA (overall accuracy), Kappa (pysodmetrics' KappaHandler) and CKappa (Cohen's).

* specificity (TNR) = TN / (TN + FP); FPR = FP / (TN + FP);
* BER = 1 − ½ (TPR + TNR), with TPR := 0 for an empty GT and TNR := 0 for a full GT
  (pysodmetrics ``BERHandler``);
* overall accuracy = (TP + TN) / N;
* **two kappas, deliberately both**:

  - ``kappa_pysodmetrics`` reproduces pysodmetrics 1.6.2 ``KappaHandler``, whose chance term
    is p_e = [(TP+FP)(TP+FN) + (TN+FN)(TN+TP)] / N² — **not** Cohen's (its second product
    uses TN+TP where Cohen has TN+FP). Use it to compare with numbers computed by
    pysodmetrics or PySODEvalToolkit.
  - ``cohen_kappa`` is Cohen's kappa (1960): p_e = [(TP+FP)(TP+FN) + (TN+FN)(TN+FP)] / N²,
    equal to ``sklearn.metrics.cohen_kappa_score`` on the binarised map (run in the parity
    tests) wherever κ is defined.

Zero denominators give 0, as the reference. For the kappas this is a choice: where the
binarised map and the GT are both wholly one and the same class, p_e = 1 and κ is 0/0 —
scikit-learn's ``cohen_kappa_score`` gives NaN there; fminspect gives 0, as pysodmetrics'
``KappaHandler`` does, so that every threshold has a value and the 256-point curve a mean
and a maximum.

References
----------
.. [1] J. Cohen, "A coefficient of agreement for nominal scales", Educational and
   Psychological Measurement 20(1), 1960. doi:10.1177/001316446002000104
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
from fminspect.metrics.registry import CurveInfo, Family


def specificity_formula(
    tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg
) -> npt.NDArray[np.float64]:
    """TN / (TN + FP)."""
    return safe_divide(tn, tn + fp)


def fpr_formula(tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg) -> npt.NDArray[np.float64]:
    """FP / (TN + FP)."""
    return safe_divide(fp, tn + fp)


def ber_formula(tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg) -> npt.NDArray[np.float64]:
    """1 − ½(TPR + TNR), each rate 0 when its class is absent."""
    return 1 - 0.5 * (safe_divide(tp, tp + fn) + safe_divide(tn, tn + fp))


def accuracy_formula(
    tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg
) -> npt.NDArray[np.float64]:
    """(TP + TN) / N."""
    return safe_divide(tp + tn, tp + fp + tn + fn)


def _kappa(
    tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg, chance_second_term: CountArg
) -> npt.NDArray[np.float64]:
    oa = accuracy_formula(tp, fp, tn, fn)
    n = tp + fp + tn + fn
    p_e = safe_divide((tp + fp) * (tp + fn) + chance_second_term, n * n)
    return safe_divide(oa - p_e, 1 - p_e)


def kappa_pysodmetrics_formula(
    tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg
) -> npt.NDArray[np.float64]:
    """pysodmetrics 1.6.2 ``KappaHandler``: chance term (TN+FN)(TN+TP) (not Cohen's)."""
    return _kappa(tp, fp, tn, fn, (tn + fn) * (tn + tp))


def cohen_kappa_formula(
    tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg
) -> npt.NDArray[np.float64]:
    """Cohen's kappa: chance term (TN+FN)(TN+FP)."""
    return _kappa(tp, fp, tn, fn, (tn + fn) * (tn + fp))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ClassificationResult:
    """Specificity, FPR, BER, accuracy and both kappas under every binarisation."""

    NAME: ClassVar[str] = "classification rates"

    specificity: ThresholdScores
    fpr: ThresholdScores
    ber: ThresholdScores
    accuracy: ThresholdScores
    kappa_pysodmetrics: ThresholdScores
    cohen_kappa: ThresholdScores
    sweep: ConfusionSweep


def classification_from_pair(pair: Pair) -> ClassificationResult:
    """All rates of a prepared pair."""
    sweep = confusion_sweep(pair)
    return ClassificationResult(
        specificity=threshold_scores(sweep, specificity_formula),
        fpr=threshold_scores(sweep, fpr_formula),
        ber=threshold_scores(sweep, ber_formula),
        accuracy=threshold_scores(sweep, accuracy_formula),
        kappa_pysodmetrics=threshold_scores(sweep, kappa_pysodmetrics_formula),
        cohen_kappa=threshold_scores(sweep, cohen_kappa_formula),
        sweep=sweep,
    )


def classification(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> ClassificationResult:
    """Specificity, FPR, BER, overall accuracy and both kappas of a prediction."""
    return classification_from_pair(prepare(pred, gt, norm))


def _formula(f: Formula) -> Callable[[Any], Formula]:
    return lambda p: f


_RATES: tuple[tuple[str, str, Callable[[Any], ThresholdScores], Formula, bool], ...] = (
    ("TNR", "specificity (TNR)", lambda s: s.classification.specificity, specificity_formula, True),
    ("FPR", "false-alarm rate (FPR)", lambda s: s.classification.fpr, fpr_formula, False),
    ("BER", "balanced error rate", lambda s: s.classification.ber, ber_formula, False),
    ("OA", "overall accuracy", lambda s: s.classification.accuracy, accuracy_formula, True),
    (
        "Kappa",
        "kappa (pysodmetrics)",
        lambda s: s.classification.kappa_pysodmetrics,
        kappa_pysodmetrics_formula,
        True,
    ),
    ("CKappa", "Cohen's kappa", lambda s: s.classification.cohen_kappa, cohen_kappa_formula, True),
)


def _curve(f: Formula) -> Callable[[SweepRows, Any], npt.NDArray[np.float64]]:
    return lambda r, p: f(r.tp, r.fp, r.tn, r.fn)


FAMILY = Family(
    field="classification",
    name="classification rates",
    compute=lambda pair, p, img: classification_from_pair(pair),
    measures=tuple(
        m
        for symbol, name, get, formula, higher in _RATES
        for m in confusion_measures(
            "classification",
            symbol,
            name,
            get,
            _formula(formula),
            higher_is_better=higher,
            curve=symbol,
        )
    ),
    curves=tuple(
        CurveInfo(symbol, "classification", derive=_curve(formula), description=name)
        for symbol, name, _, formula, _ in _RATES
    ),
    paper=cite("classification") + "; Cohen, Educational and Psychological Measurement 1960 (κ)",
    reference=(
        "pysodmetrics 1.6.2 FmeasureV2 + SpecificityHandler, FPRHandler, BERHandler, "
        "OverallAccuracyHandler, KappaHandler (CKappa: sklearn's cohen_kappa_score)"
    ),
    teaching=(
        "Rates that count the background too: on a small object TNR and accuracy are near 1 "
        "for almost any map, which is why SOD papers rarely report them; BER and the kappas "
        "balance the two classes. Like every thresholded measure they ignore where the "
        "errors are."
    ),
    view="fmeasure",
)
