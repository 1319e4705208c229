"""Mean absolute error between the normalised prediction and the binary GT.

.. math:: \\mathrm{MAE} = \\frac{1}{N}\\sum_x |p(x) - g(x)|

(Perazzi et al. 2012; the Context-measure paper's appendix Eq. (1)). Lower is better.
Identical to pysodmetrics 1.6.2 ``MAE`` and to the MATLAB toolbox's ``main.m`` (both
stretch the prediction first; the CODToolbox's ``CalMAE.m`` and the BASNet tool do not, so
their numbers differ whenever the stretch changes the map).

``mae_map="min-max"`` measures the prediction min–max stretched once more, as the classic
saliency benchmark's ``CalMAE.m`` (sal_eval_toolbox) does after its own division by the
maximum; a constant map then gives 0/0 = NaN there, and so here (left out of the dataset
mean, as that benchmark leaves it out).

References
----------
.. [1] F. Perazzi, P. Krähenbühl, Y. Pritch, A. Hornung, "Saliency filters: Contrast based
   filtering for salient region detection", CVPR 2012. doi:10.1109/CVPR.2012.6247743
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
)
from fminspect.metrics._numerics import lazy_field
from fminspect.metrics.equations import cite
from fminspect.metrics.registry import Family, MeasureInfo, Parameter

#: Which map MAE measures (the classic saliency benchmark stretches it once more).
MAP = Parameter(
    "mae_map",
    "prediction",
    "map",
    "the map MAE measures: prediction (as every measure sees it; default) or min-max (the "
    "prediction min–max stretched again, NaN when constant: the classic saliency "
    "benchmark's CalMAE.m)",
    choices=("prediction", "min-max"),
)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MAEResult:
    """MAE and (lazily) its per-pixel absolute-error map.

    Attributes
    ----------
    score : float
        Mean of ``error_map``.
    error_map : ndarray of float64
        ``|pred - gt|`` per pixel, in [0, 1] (made when first read, for the explain view).
    gt_mask : ndarray of bool
        The binary GT the error was measured against.
    foreground_error, background_error : float
        Mean of ``error_map`` on the GT foreground (the missed object) and on the background
        (false alarms); NaN where the region is empty. MAE is their mean weighted by the
        regions' pixel counts. Computed when read (for the explain view), not with the score.
    """

    NAME: ClassVar[str] = "MAE"
    SYMBOL: ClassVar[str] = "MAE"
    HIGHER_IS_BETTER: ClassVar[bool] = False
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)

    score: float
    gt_mask: np.ndarray
    _pair: Pair = field(repr=False)
    #: ``mae_map="min-max"``: the prediction's (min, max) it is stretched by once more
    _stretch: tuple[float, float] | None = field(default=None, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @lazy_field
    def error_map(self) -> np.ndarray:
        """``|pred - gt|`` per pixel (of the map stretched again with ``mae_map="min-max"``;
        NaN everywhere when that map is constant)."""
        pred, mask = self._pair.pred, self._pair.mask
        if self._stretch is None:
            error: np.ndarray = np.abs(pred - mask)
            return error
        lo, hi = self._stretch
        if hi == lo:
            return np.full(pred.shape, np.nan)
        error = np.abs((pred - lo) / (hi - lo) - mask)
        return error

    @property
    def foreground_error(self) -> float:
        """Mean error on the GT foreground (NaN if there is none)."""
        return _region_mean(self.error_map, self.gt_mask)

    @property
    def background_error(self) -> float:
        """Mean error on the GT background (NaN if there is none)."""
        return _region_mean(self.error_map, ~self.gt_mask)


def _region_mean(values: np.ndarray, region: np.ndarray) -> float:
    return float(values[region].mean()) if region.any() else float("nan")


def mae_from_pair(pair: Pair, map_rule: str = "prediction") -> MAEResult:
    """MAE of a prepared pair (``map_rule``: :data:`MAP`).

    A uint8 map's MAE is a sum over its 256 levels, from the pixels of each level on the
    GT's foreground and background (the histogram the threshold sweep counts too): level
    value v counts |v − 1| on the foreground and v on the background. It differs from the
    mean of the pixels' errors only in the order of summation (within 1e-15, tested)."""
    if map_rule == "min-max":
        return _restretched(pair)
    if pair.levels is not None and pair.table is not None:
        total, fg = pair.level_counts()
        v = pair.table
        bg = (total - fg).astype(np.float64)
        score = (bg @ np.abs(v) + fg.astype(np.float64) @ np.abs(v - 1.0)) / pair.mask.size
    else:
        score = np.mean(np.abs(pair.pred - pair.mask))
    return MAEResult(score=float(score), gt_mask=pair.mask, _pair=pair)


def _restretched(pair: Pair) -> MAEResult:
    """CalMAE.m of the classic benchmark: (s − min)/(max − min), then the missed foreground
    and the background's false alarm summed separately, in its order of operations."""
    pred, mask = pair.pred, pair.mask
    lo, hi = float(pred.min()), float(pred.max())
    if hi == lo:  # 0/0 there
        return MAEResult(score=float("nan"), gt_mask=mask, _pair=pair, _stretch=(lo, hi))
    s = (pred - lo) / (hi - lo)
    fg = s[mask]
    score = (fg.size - fg.sum() + s[~mask].sum()) / mask.size
    return MAEResult(score=float(score), gt_mask=mask, _pair=pair, _stretch=(lo, hi))


def mae(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> MAEResult:
    """Mean absolute error of a prediction against a GT.

    Examples
    --------
    >>> import numpy as np
    >>> mae(np.array([[0.0, 0.5], [1.0, 1.0]]), np.array([[0, 0], [255, 0]], np.uint8)).score
    0.375
    """
    return mae_from_pair(prepare(pred, gt, norm))


FAMILY = Family(
    field="mae",
    name="MAE",
    compute=lambda pair, p, img: mae_from_pair(pair, p.mae_map),
    params=(MAP,),
    measures=(
        MeasureInfo(
            "MAE",
            "MAE",
            False,
            "mae",
            lambda s: s.mae.score,
            lambda p: "map re-stretched" if p.mae_map == "min-max" else "",
        ),
    ),
    paper="Perazzi et al., CVPR 2012; " + cite("mae"),
    reference="pysodmetrics 1.6.2 MAE; MATLAB main.m (CODToolbox d3a5cec)",
    teaching=(
        "Rewards a map close to the GT pixel by pixel, continuous values included, with no "
        "threshold. Misses structure and where the errors are, and on a small object a map "
        "of zeros already scores well."
    ),
    view="mae",
)
