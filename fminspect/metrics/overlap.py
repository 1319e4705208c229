"""Region overlap: IoU (Jaccard) and Dice over every binarisation of a map.

.. math:: \\mathrm{IoU} = \\frac{TP}{TP+FP+FN}, \\qquad
          \\mathrm{Dice} = \\frac{2\\,TP}{2\\,TP+FP+FN}

IoU is Margolin et al.'s PASCAL measure (CVPR 2014, Eq. (5)) and the E-measure paper's
Jaccard index (IJCAI 2018, Eq. (2)). Both are 0 when the denominator is 0 (empty GT and
empty binarised map), as pysodmetrics 1.6.2 ``IOUHandler`` / ``DICEHandler``. Variants per
image: adaptive (``>= min(2·mean, 1)``), the 256-value curve with its mean and max, and
binary (``> 0.5``). Dice equals F_β with β² = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from fminspect.metrics._confusion import (
    ConfusionSweep,
    CountArg,
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


def iou_formula(tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg) -> npt.NDArray[np.float64]:
    """TP / (TP + FP + FN)."""
    return safe_divide(tp, tp + fp + fn)


def dice_formula(tp: CountArg, fp: CountArg, tn: CountArg, fn: CountArg) -> npt.NDArray[np.float64]:
    """2·TP / (2·TP + FN + FP) (pysodmetrics' operand order)."""
    return safe_divide(2 * tp, tp + fn + tp + fp)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class OverlapResult:
    """IoU and Dice under every binarisation.

    Attributes
    ----------
    iou, dice : ThresholdScores
        ``curve`` (256, ascending threshold), ``adaptive``, ``binary``; ``mean``/``max``.
    sweep : ConfusionSweep
        The counts behind them.
    """

    NAME: ClassVar[str] = "IoU / Dice"
    HIGHER_IS_BETTER: ClassVar[bool] = True
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)

    iou: ThresholdScores
    dice: ThresholdScores
    sweep: ConfusionSweep


def overlap_from_pair(pair: Pair) -> OverlapResult:
    """IoU and Dice of a prepared pair."""
    sweep = confusion_sweep(pair)
    return OverlapResult(
        iou=threshold_scores(sweep, iou_formula),
        dice=threshold_scores(sweep, dice_formula),
        sweep=sweep,
    )


def overlap(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> OverlapResult:
    """IoU and Dice of a prediction against a GT.

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.array([[0, 255], [0, 255]], np.uint8)
    >>> r = overlap(np.array([[0, 255], [255, 0]], np.uint8), gt)
    >>> r.iou.binary, round(r.dice.binary, 4)
    (0.3333333333333333, 0.5)
    """
    return overlap_from_pair(prepare(pred, gt, norm))


FAMILY = Family(
    field="overlap",
    name="IoU / Dice",
    compute=lambda pair, p, img: overlap_from_pair(pair),
    measures=(
        *confusion_measures(
            "overlap",
            "IoU",
            "IoU (Jaccard, PASCAL)",
            lambda s: s.overlap.iou,
            lambda p: iou_formula,
            curve="IoU",
            default=("adaptive", "mean", "max"),
        ),
        *confusion_measures(
            "overlap",
            "Dice",
            "Dice",
            lambda s: s.overlap.dice,
            lambda p: dice_formula,
            curve="Dice",
            default=("adaptive", "mean", "max"),
        ),
    ),
    curves=(
        CurveInfo(
            "IoU",
            "overlap",
            derive=lambda r, p: iou_formula(r.tp, r.fp, r.tn, r.fn),
            description="IoU",
        ),
        CurveInfo(
            "Dice",
            "overlap",
            derive=lambda r, p: dice_formula(r.tp, r.fp, r.tn, r.fn),
            description="Dice",
        ),
    ),
    paper=cite("overlap") + "; Dice = F_β with β² = 1",
    reference="pysodmetrics 1.6.2 FmeasureV2 + IOUHandler / DICEHandler",
    teaching=(
        "Rewards overlap of the binarised map with the object, symmetric in misses and false "
        "alarms. Misses the errors' location and shape and, for a small object, barely "
        "notices the background; like every thresholded measure it ignores what the "
        "threshold throws away."
    ),
    view="fmeasure",
)
