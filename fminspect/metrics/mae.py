"""Mean absolute error between the normalised prediction and the binary GT.

.. math:: \\mathrm{MAE} = \\frac{1}{N}\\sum_x |p(x) - g(x)|

(Perazzi et al. 2012; the Context-measure paper's appendix Eq. (1)). Lower is better.
Identical to pysodmetrics 1.6.2 ``MAE`` and to the MATLAB toolbox's ``main.m`` (both
stretch the prediction first; ``CalMAE.m`` and the BASNet tool do not, so their numbers
differ whenever the stretch changes the map).

References
----------
.. [1] F. Perazzi, P. Krähenbühl, Y. Pritch, A. Hornung, "Saliency filters: Contrast based
   filtering for salient region detection", CVPR 2012. doi:10.1109/CVPR.2012.6247743
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
)
from fminspect.metrics._numerics import readonly
from fminspect.metrics.equations import cite
from fminspect.metrics.registry import Family, MeasureInfo


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MAEResult:
    """MAE and its per-pixel absolute-error map.

    Attributes
    ----------
    score : float
        Mean of ``error_map``.
    error_map : ndarray of float64
        ``|pred - gt|`` per pixel, in [0, 1].
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
    error_map: np.ndarray
    gt_mask: np.ndarray

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


def mae_from_pair(pair: Pair) -> MAEResult:
    """MAE of a prepared pair."""
    error = np.abs(pair.pred - pair.mask)
    return MAEResult(score=float(np.mean(error)), error_map=readonly(error), gt_mask=pair.mask)


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
    compute=lambda pair, p, img: mae_from_pair(pair),
    measures=(MeasureInfo("MAE", "MAE", False, "mae", lambda s: s.mae.score, lambda p: ""),),
    paper="Perazzi et al., CVPR 2012; " + cite("mae"),
    reference="pysodmetrics 1.6.2 MAE; MATLAB main.m (CODToolbox d3a5cec)",
    teaching=(
        "Rewards a map close to the GT pixel by pixel, continuous values included, with no "
        "threshold. Misses structure and where the errors are, and on a small object a map "
        "of zeros already scores well."
    ),
    view="mae",
)
