"""Areas under the ROC and PR curves, and average precision, of the 256 binarisations.

Margolin et al. (CVPR 2014, §2 and §3, Figs. 2–3) describe both as the measures of non-binary
maps of their time, and show their *interpolation flaw*: they score the curve drawn between
the binarisations, not where the binarisations lie on it, so a fuzzy map whose thresholds all
land on a perfect curve scores as well as the GT itself. They are offered here so that numbers
of older papers can be reproduced and the flaw shown (the teaching playground's Margolin
demonstration) — with every interpolation choice explicit, because that choice is exactly
what the flaw is about.

Points: the binarisations ``floor(255·p) >= t``, t = 0..255 (the shared sweep), with the
pysodmetrics conventions (precision 0 when nothing is predicted).

* **ROC** (hit rate TPR = Eq. (1) against false alarm FPR = Eq. (2) of Margolin et al.): the
  256 points and (0, 0), the empty map, joined by straight lines; **AUCROC** is the area
  under them (trapezoids). With ties in the map this equals the Mann–Whitney probability
  P(q_fg > q_bg) + ½·P(q_fg = q_bg) (tested). An empty or full GT has no ROC of its own:
  NaN, with a warning. The dataset value comes from the image-averaged curves, like every
  curve measure's: such an image is in them as its curves are (recall 0 at every threshold
  for an empty GT, FPR 0 for a full one), as in the toolkits' dataset curves.
* **PR** (precision Eq. (3) against recall): the binarisations that predict any pixel and
  (R = 0, P = 1), the limit of predicting nothing, as scikit-learn's
  ``precision_recall_curve`` appends; **AUCPR** is the trapezoidal area under them, ordered
  by recall — equal to scikit-learn's ``auc(recall, precision)`` of that curve (run in the
  parity tests). A binarisation that predicts nothing is not a point of the curve (its
  precision 0 is a convention), so it is left out. An empty GT has no PR curve: AUCPR and AP
  are NaN, with a warning, as scikit-learn's recall is undefined there.
* **AP** with ``ap_interpolation``:

  - ``"all"`` (default; PASCAL VOC 2010 onwards): AP = Σ (R_k − R_{k−1}) · p̂(R_k) over the
    recall levels, with the interpolated precision p̂(r) = max_{r' ≥ r} P(r') — the envelope
    Margolin et al. describe ("the maximum precision measured at higher recall levels");
  - ``"11pt"`` (PASCAL VOC 2007, the one Margolin et al. cite: "averaging the precision
    values at evenly spaced recall levels"): the mean of p̂(r) at r = 0, 0.1, …, 1;
  - ``"none"`` (scikit-learn's ``average_precision_score``): Σ (R_k − R_{k−1}) · P_k, the
    precision at each threshold, not interpolated.

A dataset's value is formed from the image-averaged P, R and FPR curves, as the toolkits draw
dataset PR curves (:mod:`fminspect.metrics.dataset`).

References
----------
.. [1] R. Margolin, L. Zelnik-Manor, A. Tal, "How to Evaluate Foreground Maps?", CVPR 2014.
   doi:10.1109/CVPR.2014.39
.. [2] M. Everingham et al., "The PASCAL Visual Object Classes (VOC) Challenge", IJCV 88(2),
   2010. doi:10.1007/s11263-009-0275-4
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fminspect.metrics._confusion import ConfusionSweep, confusion_sweep
from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
)
from fminspect.metrics._numerics import readonly
from fminspect.metrics.classification import fpr_formula
from fminspect.metrics.equations import cite
from fminspect.metrics.fmeasure import precision_formula, recall_formula
from fminspect.metrics.registry import DatasetValue, Family, MeasureInfo, Parameter

INTERPOLATIONS = ("all", "11pt", "none")

#: How average precision interpolates the PR points (see the module notes).
AP_INTERPOLATION = Parameter(
    "ap_interpolation",
    "all",
    "interp",
    "how AP interpolates precision: all (VOC 2010+ envelope, default), 11pt (VOC 2007, as "
    "Margolin et al. describe), none (scikit-learn's average_precision_score)",
    choices=INTERPOLATIONS,
)


def roc_points(tpr: np.ndarray, fpr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) from the empty map (0, 0) through the 256 binarisations, highest
    threshold first (both coordinates then never decrease)."""
    return np.concatenate(([0.0], fpr[::-1])), np.concatenate(([0.0], tpr[::-1]))


def pr_points(
    precision: np.ndarray, recall: np.ndarray, predicted: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(R, P) from the limit of predicting nothing (0, 1) through the 256 binarisations,
    highest threshold first (recall then never decreases). With ``predicted`` (per
    threshold: does the binarisation predict any pixel?), those that predict nothing are
    left out: their precision is 0 only by convention, they are not points of the curve
    (scikit-learn's ``precision_recall_curve`` has none) and their (0, 0) after the (0, 1)
    would halve the first trapezoid."""
    if predicted is not None:
        precision, recall = precision[predicted], recall[predicted]
    return np.concatenate(([0.0], recall[::-1])), np.concatenate(([1.0], precision[::-1]))


def _trapezoid(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2))


def envelope(recall: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """The interpolated precision p̂ at each PR point: the max precision at this or any
    higher recall (points in non-decreasing recall)."""
    order = np.argsort(recall, kind="stable")
    best = np.maximum.accumulate(precision[order][::-1])[::-1]
    out = np.empty_like(best)
    out[order] = best
    return out


#: VOC 2007's recall levels (``ap_interpolation="11pt"``).
ELEVEN_LEVELS = np.linspace(0, 1, 11)


def eleven_point(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """VOC 2007's interpolated precision at recall 0, 0.1, …, 1: the largest precision of the
    binarisations themselves at recall ≥ each level, 0 where none reaches it (curves in any
    order; the (0, 1) the PR points begin with is not a binarisation: it would make p̂(0) = 1
    for every map)."""
    return np.array(
        [
            float(precision[recall >= level].max()) if np.any(recall >= level) else 0.0
            for level in ELEVEN_LEVELS
        ]
    )


def average_precision(precision: np.ndarray, recall: np.ndarray, interpolation: str) -> float:
    """AP of 256-threshold precision and recall curves (ascending threshold) under
    ``interpolation`` (see the module notes)."""
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}")
    if interpolation == "11pt":
        return float(np.mean(eleven_point(precision, recall)))
    r, p = pr_points(precision, recall)
    used = envelope(r, p) if interpolation == "all" else p
    return float(np.sum((r[1:] - r[:-1]) * used[1:]))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class AUCResult:
    """ROC and PR curves of one map, their areas and its average precision.

    Attributes
    ----------
    auc_roc, auc_pr, ap : float
        AUCROC (NaN for an empty or full GT), AUCPR and AP (NaN for an empty GT).
    interpolation : str
        AP's interpolation.
    roc_fpr, roc_tpr : ndarray, shape (257,)
        The ROC points, (0, 0) first.
    pr_recall, pr_precision, pr_envelope : ndarray, shape (≤ 257,)
        The PR points, (0, 1) first, then the binarisations that predict any pixel, and the
        interpolated precision at each.
    pr_eleven : ndarray, shape (11,)
        VOC 2007's interpolated precision at :data:`ELEVEN_LEVELS` (:func:`eleven_point`).
    sweep : ConfusionSweep
        The counts behind every point.
    """

    NAME: ClassVar[str] = "AUC / AP"

    auc_roc: float
    auc_pr: float
    ap: float
    interpolation: str
    roc_fpr: np.ndarray
    roc_tpr: np.ndarray
    pr_recall: np.ndarray
    pr_precision: np.ndarray
    pr_envelope: np.ndarray
    pr_eleven: np.ndarray
    sweep: ConfusionSweep
    warnings: tuple[str, ...] = ()


def _curves(sweep: ConfusionSweep) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    args = (sweep.tp, sweep.fp, sweep.tn, sweep.fn)
    return precision_formula(*args), recall_formula(*args), fpr_formula(*args)


def auc_from_pair(pair: Pair, *, interpolation: str = AP_INTERPOLATION.default) -> AUCResult:
    """ROC/PR areas and AP of a prepared pair (see :func:`auc`)."""
    sweep = confusion_sweep(pair)
    precision, recall, fpr = _curves(sweep)
    fx, ty = roc_points(recall, fpr)
    rx, py = pr_points(precision, recall, (sweep.tp + sweep.fp) > 0)
    warnings: tuple[str, ...] = ()
    auc_roc = auc_pr = ap = float("nan")
    if sweep.n_fg == 0:
        warnings = (
            "the GT has no foreground: no ROC or PR curve, AUCROC, AUCPR and AP not defined (NaN)",
        )
    elif sweep.n_bg == 0:
        warnings = ("the GT has no background: no ROC curve, AUCROC not defined (NaN)",)
    if sweep.n_fg and sweep.n_bg:
        auc_roc = _trapezoid(fx, ty)
    if sweep.n_fg:
        auc_pr = _trapezoid(rx, py)
        ap = average_precision(precision, recall, interpolation)
    return AUCResult(
        auc_roc=auc_roc,
        auc_pr=auc_pr,
        ap=ap,
        interpolation=interpolation,
        roc_fpr=readonly(fx),
        roc_tpr=readonly(ty),
        pr_recall=readonly(rx),
        pr_precision=readonly(py),
        pr_envelope=readonly(envelope(rx, py)),
        pr_eleven=readonly(eleven_point(precision, recall)),
        sweep=sweep,
        warnings=warnings,
    )


def auc(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    interpolation: str = AP_INTERPOLATION.default,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> AUCResult:
    """Areas under the ROC and PR curves and average precision of a prediction.

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((8, 8), np.uint8); gt[2:6, 2:6] = 255
    >>> r = auc(gt.copy(), gt)
    >>> r.auc_roc, r.auc_pr, r.ap
    (1.0, 1.0, 1.0)
    """
    return auc_from_pair(prepare(pred, gt, norm), interpolation=interpolation)


def _dataset_roc(c: dict[str, np.ndarray], p: Any) -> float:
    fx, ty = roc_points(c["Recall"], c["FPR"])
    return _trapezoid(fx, ty)


def _dataset_pr(c: dict[str, np.ndarray], p: Any) -> float:
    rx, py = pr_points(c["Precision"], c["Recall"])
    return _trapezoid(rx, py)


def _dataset_ap(c: dict[str, np.ndarray], p: Any) -> float:
    return average_precision(c["Precision"], c["Recall"], p.ap_interpolation)


_FROM_MEAN = "of the image-averaged 256-threshold"

FAMILY = Family(
    field="auc",
    name="AUC / AP",
    compute=lambda pair, p, img: auc_from_pair(pair, interpolation=p.ap_interpolation),
    params=(AP_INTERPOLATION,),
    measures=(
        MeasureInfo(
            "AUCROC",
            "ROC area",
            True,
            "auc",
            lambda s: s.auc.auc_roc,
            lambda p: "trapezoids, (0,0) added",
            DatasetValue(
                f"trapezoidal area under the ROC {_FROM_MEAN} TPR and FPR curves",
                "curves",
                ("Recall", "FPR"),
                _dataset_roc,
            ),
            default=False,
        ),
        MeasureInfo(
            "AUCPR",
            "PR area",
            True,
            "auc",
            lambda s: s.auc.auc_pr,
            lambda p: "trapezoids, (R=0,P=1) added",
            DatasetValue(
                f"trapezoidal area under the PR {_FROM_MEAN} P and R curves",
                "curves",
                ("Precision", "Recall"),
                _dataset_pr,
            ),
            default=False,
        ),
        MeasureInfo(
            "AP",
            "average precision",
            True,
            "auc",
            lambda s: s.auc.ap,
            lambda p: f"interp={p.ap_interpolation}",
            DatasetValue(
                f"AP {_FROM_MEAN} P and R curves",
                "curves",
                ("Precision", "Recall"),
                _dataset_ap,
            ),
            default=False,
        ),
    ),
    paper=(
        cite("auc") + "; §2–3 of the same (AUC and AP; the interpolation flaw, Figs. 2–3); "
        "AP: Everingham et al., IJCV 2010"
    ),
    reference=(
        "scikit-learn roc_auc_score / average_precision_score (interp=none) / auc of "
        "precision_recall_curve on floor(255·p); none in pysodmetrics"
    ),
    teaching=(
        "Rewards a map that ranks object pixels above background pixels, whatever its "
        "values: only the order matters. Blind to where the binarisations lie on the curve "
        "(Margolin's interpolation flaw): a fuzzy map whose thresholds trace a perfect curve "
        "scores as well as the GT itself."
    ),
    view="auc",
)
