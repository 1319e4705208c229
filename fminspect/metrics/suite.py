"""Every measure of one (prediction, GT) pair in one call, and the measure registry.

:func:`evaluate` is the notebook one-liner: a dict of per-image scores under stable keys.
:func:`compute_suite` returns every measure's full result (scores and intermediates) for the
GUI and for batch evaluation; it prepares the pair once and shares the confusion sweep and
the GT-only quantities between measures. The registry :data:`MEASURES` names each key's
exact variant for tables and file headers ("maxFm β²=0.3, GT>128, stretch").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from fminspect.metrics._inputs import GroundTruth, Normalization, Pair, prepare
from fminspect.metrics.boundary_fmeasure import RelaxedFmeasureResult, relaxed_fmeasure_from_pair
from fminspect.metrics.classification import ClassificationResult, classification_from_pair
from fminspect.metrics.context_measure import (
    CamouflageContextMeasureResult,
    ContextMeasureResult,
    camouflage_context_measure_from_pair,
    context_measure_from_pair,
)
from fminspect.metrics.emeasure import EmeasureResult, emeasure_from_pair
from fminspect.metrics.fmeasure import FmeasureResult, fmeasure_from_pair
from fminspect.metrics.mae import MAEResult, mae_from_pair
from fminspect.metrics.msiou import MSIoUResult, msiou_from_pair
from fminspect.metrics.overlap import OverlapResult, overlap_from_pair
from fminspect.metrics.smeasure import SmeasureResult, smeasure_from_pair
from fminspect.metrics.weighted_fmeasure import WeightedFmeasureResult, weighted_fmeasure_from_pair


@dataclass(frozen=True, slots=True, kw_only=True)
class Params:
    """Every parameter of every measure, with the papers' defaults.

    The normalisation fields (``gt_threshold``, ``gt_inclusive``, ``stretch``) are those of
    :class:`~fminspect.metrics.Normalization`.
    """

    gt_threshold: float = 128.0
    gt_inclusive: bool = False
    stretch: bool = True
    beta2: float = 0.3  # F-measure family (Fm, and P/R behind it)
    wfm_beta2: float = 1.0  # weighted F-measure
    alpha: float = 0.5  # S-measure
    relax_rho: int = 3  # relaxed boundary F
    relax_beta2: float = 0.3
    cm_alpha: float = 6.0  # Context-measure kernel scale
    cm_beta2: float = 1.0  # C_β
    ccm_beta2: float = 1.2  # C^ω_β
    ccm_gamma: float = 8.0
    ccm_lambda: float = 20.0

    @property
    def norm(self) -> Normalization:
        """The normalisation part."""
        return Normalization(self.gt_threshold, self.gt_inclusive, self.stretch)

    def as_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return asdict(self)

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> Params:
        """Build from keyword arguments, rejecting unknown names with the valid ones listed."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - names)
        if unknown:
            raise TypeError(f"unknown parameter(s) {unknown}; valid: {sorted(names)}")
        return cls(**kwargs)


DEFAULT_PARAMS = Params()


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SuiteResult:
    """Every measure's result for one pair (the GUI draws these).

    A field is ``None`` when its measure was not requested (``compute_suite(keys=...)``) or,
    for ``camouflage_context``, when no image was given.
    """

    params: Params
    pair: Pair
    mae: MAEResult | None = None
    fmeasure: FmeasureResult | None = None
    overlap: OverlapResult | None = None
    classification: ClassificationResult | None = None
    weighted_fmeasure: WeightedFmeasureResult | None = None
    smeasure: SmeasureResult | None = None
    emeasure: EmeasureResult | None = None
    relaxed_fmeasure: RelaxedFmeasureResult | None = None
    msiou: MSIoUResult | None = None
    context: ContextMeasureResult | None = None
    camouflage_context: CamouflageContextMeasureResult | None = None

    def scores(self) -> dict[str, float]:
        """Per-image scores under the stable keys of :data:`MEASURES`, for every measure
        that was computed (``CCm`` only when the image was given)."""
        return {m.key: float(m.get(self)) for m in MEASURES if getattr(self, m.field) is not None}

    def curves(self) -> dict[str, np.ndarray]:
        """Per-image 256-value curves (ascending threshold) used for dataset aggregation."""
        return {
            name: get(self) for name, (fld, get) in CURVES.items() if getattr(self, fld) is not None
        }


#: How each SuiteResult field is computed from a prepared pair (and the image for CCm).
_FIELDS: dict[str, Callable[[Pair, Params, np.ndarray | None], Any]] = {
    "mae": lambda pair, p, img: mae_from_pair(pair),
    "fmeasure": lambda pair, p, img: fmeasure_from_pair(pair, beta2=p.beta2),
    "overlap": lambda pair, p, img: overlap_from_pair(pair),
    "classification": lambda pair, p, img: classification_from_pair(pair),
    "weighted_fmeasure": lambda pair, p, img: weighted_fmeasure_from_pair(pair, beta2=p.wfm_beta2),
    "smeasure": lambda pair, p, img: smeasure_from_pair(pair, alpha=p.alpha),
    "emeasure": lambda pair, p, img: emeasure_from_pair(pair),
    "relaxed_fmeasure": lambda pair, p, img: relaxed_fmeasure_from_pair(
        pair, rho=p.relax_rho, beta2=p.relax_beta2
    ),
    "msiou": lambda pair, p, img: msiou_from_pair(pair),
    "context": lambda pair, p, img: context_measure_from_pair(
        pair, beta2=p.cm_beta2, alpha=p.cm_alpha
    ),
    "camouflage_context": lambda pair, p, img: (
        None
        if img is None
        else camouflage_context_measure_from_pair(
            pair,
            img,
            beta2=p.ccm_beta2,
            alpha=p.cm_alpha,
            gamma=p.ccm_gamma,
            lambda_spatial=p.ccm_lambda,
        )
    ),
}


#: The parameters each SuiteResult field depends on (besides the normalisation, which they
#: all depend on).
FIELD_PARAMS: dict[str, tuple[str, ...]] = {
    "fmeasure": ("beta2",),
    "smeasure": ("alpha",),
    "weighted_fmeasure": ("wfm_beta2",),
    "relaxed_fmeasure": ("relax_rho", "relax_beta2"),
    "context": ("cm_alpha", "cm_beta2"),
    "camouflage_context": ("cm_alpha", "ccm_beta2", "ccm_gamma", "ccm_lambda"),
}


def update_suite(
    previous: SuiteResult, params: Params, *, img: np.ndarray | None = None
) -> SuiteResult:
    """``previous`` under new ``params``, recomputing only the measures they affect.

    A change of β² recomputes the F-measure family only, a change of α the S-measure only;
    a change of the normalisation (GT rule, stretch) recomputes everything. Used by the GUI
    so that moving one parameter updates every model within milliseconds.
    """
    old = previous.params
    if params.norm != old.norm:
        raise ValueError("the normalisation changed: prepare the pair again (compute_suite)")
    changed = {f.name for f in fields(Params) if getattr(params, f.name) != getattr(old, f.name)}
    updates = {
        name: _FIELDS[name](previous.pair, params, img)
        for name, deps in FIELD_PARAMS.items()
        if getattr(previous, name) is not None and changed.intersection(deps)
    }
    return replace(previous, params=params, **updates)


def compute_suite(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    params: Params = DEFAULT_PARAMS,
    *,
    img: np.ndarray | None = None,
    keys: Iterable[str] | None = None,
) -> SuiteResult:
    """Every measure of one pair (or those behind ``keys``), sharing all common work.

    Pass a :class:`~fminspect.metrics.GroundTruth` from :func:`~fminspect.metrics.prepare_gt`
    as ``gt`` to reuse GT-only work (distance transform, centroid, kernel, camouflage degree)
    across several predictions. The camouflage Context-measure needs ``img`` (RGB uint8).
    ``keys`` (e.g. ``["MAE", "maxFm"]``) limits the work to the measures behind them; the
    classification rates are computed only when ``keys`` is ``None``.
    """
    pair = prepare(pred, gt, params.norm)
    if keys is None:
        fields_needed = set(_FIELDS)
    else:
        keys = list(keys)
        unknown = [k for k in keys if k not in MEASURES_BY_KEY]
        if unknown:
            raise ValueError(f"unknown measure key(s) {unknown}; valid: {list(MEASURE_KEYS)}")
        fields_needed = {MEASURES_BY_KEY[k].field for k in keys}
    return SuiteResult(
        params=params,
        pair=pair,
        **{f: make(pair, params, img) for f, make in _FIELDS.items() if f in fields_needed},
    )


@dataclass(frozen=True, slots=True)
class MeasureInfo:
    """One stable score key: how to read it from a suite and how to name its variant.

    Attributes
    ----------
    key : str
        Stable key (``'maxFm'``).
    family : str
        Measure family, for grouping in tables (``'F-measure'``).
    higher_is_better : bool
        Direction.
    field : str
        The :class:`SuiteResult` field it is read from.
    get : callable
        ``SuiteResult -> float``.
    variant : callable
        ``Params -> str``: the exact variant, e.g. ``'max of 256-thr curve, β²=0.3'``.
    aggregation : str
        How the dataset value is formed from the images.
    """

    key: str
    family: str
    higher_is_better: bool
    field: str
    get: Callable[[Any], float]
    variant: Callable[[Params], str]
    aggregation: str = "mean over images"
    needs_image: bool = False

    def label(self, params: Params = DEFAULT_PARAMS) -> str:
        """Column header naming the exact variant, e.g. ``'maxFm β²=0.3'``."""
        return f"{self.key} {self.variant(params)}".strip()


def _fm(p: Params) -> str:
    return f"β²={p.beta2:g}"


_CURVE_MAX = "max of the image-averaged 256-threshold curve"
_CURVE_MEAN = "mean of the image-averaged 256-threshold curve"

MEASURES: tuple[MeasureInfo, ...] = (
    MeasureInfo("MAE", "MAE", False, "mae", lambda s: s.mae.score, lambda p: ""),
    MeasureInfo(
        "Sm", "S-measure", True, "smeasure", lambda s: s.smeasure.score, lambda p: f"α={p.alpha:g}"
    ),
    MeasureInfo(
        "wFm",
        "weighted F",
        True,
        "weighted_fmeasure",
        lambda s: s.weighted_fmeasure.score,
        lambda p: f"β²={p.wfm_beta2:g}",
    ),
    MeasureInfo(
        "adpEm",
        "E-measure",
        True,
        "emeasure",
        lambda s: s.emeasure.adaptive,
        lambda p: "thr=2·mean",
    ),
    MeasureInfo(
        "meanEm",
        "E-measure",
        True,
        "emeasure",
        lambda s: s.emeasure.mean,
        lambda p: "",
        _CURVE_MEAN,
    ),
    MeasureInfo(
        "maxEm", "E-measure", True, "emeasure", lambda s: s.emeasure.max, lambda p: "", _CURVE_MAX
    ),
    MeasureInfo(
        "adpFm",
        "F-measure",
        True,
        "fmeasure",
        lambda s: s.fmeasure.adaptive,
        lambda p: f"{_fm(p)} thr=2·mean",
    ),
    MeasureInfo(
        "meanFm", "F-measure", True, "fmeasure", lambda s: s.fmeasure.mean, _fm, _CURVE_MEAN
    ),
    MeasureInfo("maxFm", "F-measure", True, "fmeasure", lambda s: s.fmeasure.max, _fm, _CURVE_MAX),
    MeasureInfo(
        "adpIoU", "IoU", True, "overlap", lambda s: s.overlap.iou.adaptive, lambda p: "thr=2·mean"
    ),
    MeasureInfo(
        "meanIoU", "IoU", True, "overlap", lambda s: s.overlap.iou.mean, lambda p: "", _CURVE_MEAN
    ),
    MeasureInfo(
        "maxIoU", "IoU", True, "overlap", lambda s: s.overlap.iou.max, lambda p: "", _CURVE_MAX
    ),
    MeasureInfo(
        "adpDice",
        "Dice",
        True,
        "overlap",
        lambda s: s.overlap.dice.adaptive,
        lambda p: "thr=2·mean",
    ),
    MeasureInfo(
        "meanDice",
        "Dice",
        True,
        "overlap",
        lambda s: s.overlap.dice.mean,
        lambda p: "",
        _CURVE_MEAN,
    ),
    MeasureInfo(
        "maxDice", "Dice", True, "overlap", lambda s: s.overlap.dice.max, lambda p: "", _CURVE_MAX
    ),
    MeasureInfo(
        "relaxFm",
        "relaxed boundary F",
        True,
        "relaxed_fmeasure",
        lambda s: s.relaxed_fmeasure.score,
        lambda p: f"ρ={p.relax_rho} β²={p.relax_beta2:g} thr=0.5",
    ),
    MeasureInfo(
        "adpMSIoU", "MSIoU", True, "msiou", lambda s: s.msiou.adaptive.score, lambda p: "thr=2·mean"
    ),
    MeasureInfo(
        "binMSIoU", "MSIoU", True, "msiou", lambda s: s.msiou.binary.score, lambda p: "thr=0.5"
    ),
    MeasureInfo(
        "Cm",
        "Context-measure",
        True,
        "context",
        lambda s: s.context.score,
        lambda p: f"β²={p.cm_beta2:g} α={p.cm_alpha:g}",
    ),
    MeasureInfo(
        "CCm",
        "Context-measure",
        True,
        "camouflage_context",
        lambda s: s.camouflage_context.score,
        lambda p: f"β²={p.ccm_beta2:g} α={p.cm_alpha:g} γ={p.ccm_gamma:g} λ={p.ccm_lambda:g}",
        needs_image=True,
    ),
)

MEASURE_KEYS: tuple[str, ...] = tuple(m.key for m in MEASURES)
MEASURES_BY_KEY: dict[str, MeasureInfo] = {m.key: m for m in MEASURES}


def measure_keys(keys: Iterable[str] | None = None, *, with_images: bool = True) -> tuple[str, ...]:
    """``keys`` (default: every measure key) checked, without the measures that need the
    image (CCm) when there is none.

    Raises
    ------
    ValueError
        For a key that is not a measure key (the message lists the valid ones).
    """
    keys = MEASURE_KEYS if keys is None else tuple(keys)
    unknown = [k for k in keys if k not in MEASURES_BY_KEY]
    if unknown:
        raise ValueError(f"unknown measure(s) {unknown}; valid: {', '.join(MEASURE_KEYS)}")
    return tuple(k for k in keys if with_images or not MEASURES_BY_KEY[k].needs_image)


#: Per-image curves kept for dataset aggregation (ascending threshold, 256 values each):
#: name -> (SuiteResult field, getter). Like ``MeasureInfo.get``, a getter takes the
#: SuiteResult and is only called when that field is set, hence ``Any``.
CURVES: dict[str, tuple[str, Callable[[Any], np.ndarray]]] = {
    "Fm": ("fmeasure", lambda s: s.fmeasure.fmeasure.curve),
    "Precision": ("fmeasure", lambda s: s.fmeasure.precision.curve),
    "Recall": ("fmeasure", lambda s: s.fmeasure.recall.curve),
    "Em": ("emeasure", lambda s: s.emeasure.curve),
    "IoU": ("overlap", lambda s: s.overlap.iou.curve),
    "Dice": ("overlap", lambda s: s.overlap.dice.curve),
}


def evaluate(
    pred: np.ndarray,
    gt: np.ndarray | GroundTruth,
    *,
    img: np.ndarray | None = None,
    **params: Any,
) -> dict[str, float]:
    """Every per-image score of one pair, under stable keys.

    Parameters
    ----------
    pred, gt : ndarray
        Prediction and GT maps (uint8 0–255, float in [0, 1] or bool).
    img : ndarray, optional
        RGB image (needed by the camouflage Context-measure).
    **params
        Any field of :class:`Params` (``beta2=0.3``, ``alpha=0.5``, ``gt_inclusive=False``,
        ``stretch=True``, ...).

    Returns
    -------
    dict
        ``MAE, Sm, wFm, adpEm, meanEm, maxEm, adpFm, meanFm, maxFm, adpIoU, meanIoU, maxIoU,
        adpDice, meanDice, maxDice, relaxFm, adpMSIoU, binMSIoU, Cm`` and, with ``img``,
        ``CCm`` — ``mean*``/``max*`` are the mean/max of this image's 256-value curve,
        ``adp*`` use the adaptive threshold.

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((16, 16), np.uint8); gt[4:12, 4:12] = 255
    >>> scores = evaluate(gt.copy(), gt)
    >>> scores["MAE"], round(scores["Sm"], 12), scores["maxFm"]
    (0.0, 1.0, 1.0)
    """
    return compute_suite(pred, gt, Params.from_kwargs(**params), img=img).scores()
