"""F- and E-measure curves over 255 thresholds, as other tools sweep them.

pysodmetrics, the MATLAB toolbox and fminspect's own curves binarise ``floor(255·p) >= t``
for the 256 thresholds ``t = 0..255`` (METRICS §0.3). eval-co-sod (zzhanghub/eval-co-sod,
the co-SOD toolbox) binarises ``p >= θ`` for the 255 thresholds
``θ = linspace(0, 1 − 1e-10, 255)`` instead (METRICS §9.3, §11.5), which other sets of
binary maps make: max and mean F and E differ slightly. This family gives those values,
so that ``fminspect compare`` can tell when a paper's numbers come from such a sweep, and a
user can report them on purpose. The F- and E-measure formulas over the counts are
fminspect's (pysodmetrics'): only the thresholds change — eval-co-sod's other departures
(its 1e-20 epsilons, no special case of an empty or full GT in its E-measure) are not
reproduced.

Keys: ``maxFm255``, ``meanFm255`` (β² of the F-measure family), ``maxEm255``,
``meanEm255``; their dataset values are the max and mean of the image-averaged 255-point
curve, as for the 256-threshold keys. Not computed unless asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from fminspect.metrics._inputs import Pair
from fminspect.metrics._numerics import readonly
from fminspect.metrics.emeasure import emeasure_from_counts
from fminspect.metrics.fmeasure import BETA2, fmeasure_formula
from fminspect.metrics.registry import CurveInfo, Family, MeasureInfo, curve_max, curve_mean

#: eval-co-sod's thresholds: ``torch.linspace(0, 1 - 1e-10, 255)``.
THRESHOLDS = np.linspace(0.0, 1.0 - 1e-10, 255)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Curves255Result:
    """The F- and E-measure curves of ``pred >= θ`` for the 255 thresholds θ (ascending)."""

    NAME: ClassVar[str] = "255-threshold curves"
    SYMBOL: ClassVar[str] = "F/E (255 thr.)"
    HIGHER_IS_BETTER: ClassVar[bool] = True
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)

    fmeasure: np.ndarray
    emeasure: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    beta2: float


def counts255(pair: Pair) -> tuple[np.ndarray, np.ndarray]:
    """TP and FP of ``pred >= θ_k`` for the 255 thresholds (ascending)."""
    mask = pair.gt.mask
    # the largest k with θ_k <= p: the pixel is foreground for thresholds 0..k
    q = np.searchsorted(THRESHOLDS, pair.pred, side="right") - 1
    hist = np.bincount(q.ravel(), minlength=THRESHOLDS.size)
    fg = np.bincount(q[mask], minlength=THRESHOLDS.size) if pair.gt.n_fg else np.zeros_like(hist)
    tp = np.cumsum(fg[::-1])[::-1].astype(np.int64)
    fp = np.cumsum((hist - fg)[::-1])[::-1].astype(np.int64)
    return tp, fp


def curves255_from_pair(pair: Pair, *, beta2: float = BETA2.default) -> Curves255Result:
    """The 255-threshold curves of a prepared pair (see the module notes)."""
    tp, fp = counts255(pair)
    gt = pair.gt
    fn, tn = gt.n_fg - tp, gt.n_bg - fp
    f = np.asarray(fmeasure_formula(beta2)(tp, fp, tn, fn), dtype=np.float64)
    e = np.asarray(emeasure_from_counts(tp, fp, gt.n_fg, gt.size), dtype=np.float64)
    return Curves255Result(
        fmeasure=readonly(f), emeasure=readonly(e), tp=readonly(tp), fp=readonly(fp), beta2=beta2
    )


def _label(p: object) -> str:
    return f"β²={getattr(p, 'beta2', BETA2.default):g} 255 thr"


FAMILY = Family(
    field="curves255",
    name="F/E over 255 thresholds",
    compute=lambda pair, p, img: curves255_from_pair(pair, beta2=p.beta2),
    params=(BETA2,),
    measures=(
        MeasureInfo(
            "maxFm255",
            "F-measure",
            True,
            "curves255",
            lambda s: float(s.curves255.fmeasure.max()),
            _label,
            curve_max("Fm255", 255),
            default=False,
            kind="max",
        ),
        MeasureInfo(
            "meanFm255",
            "F-measure",
            True,
            "curves255",
            lambda s: float(s.curves255.fmeasure.mean()),
            _label,
            curve_mean("Fm255", 255),
            default=False,
            kind="mean",
        ),
        MeasureInfo(
            "maxEm255",
            "E-measure",
            True,
            "curves255",
            lambda s: float(s.curves255.emeasure.max()),
            lambda p: "255 thr",
            curve_max("Em255", 255),
            default=False,
            kind="max",
        ),
        MeasureInfo(
            "meanEm255",
            "E-measure",
            True,
            "curves255",
            lambda s: float(s.curves255.emeasure.mean()),
            lambda p: "255 thr",
            curve_mean("Em255", 255),
            default=False,
            kind="mean",
        ),
    ),
    curves=(
        CurveInfo(
            "Fm255",
            "curves255",
            get=lambda s: s.curves255.fmeasure,
            description="F-measure over eval-co-sod's 255 thresholds",
        ),
        CurveInfo(
            "Em255",
            "curves255",
            get=lambda s: s.curves255.emeasure,
            description="E-measure over eval-co-sod's 255 thresholds",
        ),
    ),
    paper=(
        "as the F-measure and E-measure families; the thresholds of eval-co-sod "
        "(zzhanghub/eval-co-sod: linspace(0, 1 − 1e-10, 255))"
    ),
    reference="pysodmetrics 1.6.2 formulas over zzhanghub/eval-co-sod's 255 thresholds "
    "(eval-co-sod not run: checked against its definition)",
    teaching=(
        "The same F- and E-measure over another set of thresholds: a reminder that max and "
        "mean over a curve depend on where the curve is sampled."
    ),
    view="curves255",
)
