"""Every measure of one (prediction, GT) pair in one call, and the families registered.

:func:`evaluate` is the notebook one-liner: a dict of per-image scores under stable keys.
:func:`compute_suite` returns every measure's full result (scores and intermediates) for the
GUI and for batch evaluation; it prepares the pair once and shares the confusion sweep and
the GT-only quantities between measures.

The registry (:mod:`fminspect.metrics.registry`) is filled here: one line per measure
module, in the order tables list them. :class:`Params` holds every family's parameters,
each with the default its module declares (nowhere else).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from fminspect.metrics._confusion import FAMILY as _SWEEP
from fminspect.metrics._inputs import GroundTruth, Normalization, Pair, prepare
from fminspect.metrics.auc import AP_INTERPOLATION as _AP_INTERPOLATION
from fminspect.metrics.auc import FAMILY as _AUC
from fminspect.metrics.boundary_accuracy import FAMILY as _BOUNDARY_ACCURACY
from fminspect.metrics.boundary_fmeasure import BETA2 as _RELAX_BETA2
from fminspect.metrics.boundary_fmeasure import FAMILY as _RELAXED
from fminspect.metrics.boundary_fmeasure import RHO as _RELAX_RHO
from fminspect.metrics.boundary_iou import FAMILY as _BOUNDARY_IOU
from fminspect.metrics.boundary_iou import RATIO as _BIOU_RATIO
from fminspect.metrics.camouflage_degree import BAND_SHAPE as _CCM_BAND
from fminspect.metrics.camouflage_degree import GAMMA as _GAMMA
from fminspect.metrics.camouflage_degree import LAMBDA as _LAMBDA
from fminspect.metrics.camouflage_degree import PATCH_STRIDE as _CCM_STRIDE
from fminspect.metrics.classification import FAMILY as _CLASSIFICATION
from fminspect.metrics.context_measure import ALPHA as _CM_ALPHA
from fminspect.metrics.context_measure import BETA2 as _CM_BETA2
from fminspect.metrics.context_measure import CAMO_BETA2 as _CCM_BETA2
from fminspect.metrics.context_measure import CAMOUFLAGE_FAMILY as _CAMOUFLAGE_CONTEXT
from fminspect.metrics.context_measure import FAMILY as _CONTEXT
from fminspect.metrics.emeasure import COMPARE as _EM_COMPARE
from fminspect.metrics.emeasure import FAMILY as _EMEASURE
from fminspect.metrics.fmeasure import BETA2 as _FM_BETA2
from fminspect.metrics.fmeasure import FAMILY as _FMEASURE
from fminspect.metrics.hce import EPSILON as _HCE_EPSILON
from fminspect.metrics.hce import FAMILY as _HCE
from fminspect.metrics.hce import RELAX as _HCE_RELAX
from fminspect.metrics.mae import FAMILY as _MAE
from fminspect.metrics.mae import MAP as _MAE_MAP
from fminspect.metrics.msiou import COUNTING as _MSIOU_COUNTING
from fminspect.metrics.msiou import CURVE_FAMILY as _MSIOU_CURVE
from fminspect.metrics.msiou import FAMILY as _MSIOU
from fminspect.metrics.overlap import FAMILY as _OVERLAP
from fminspect.metrics.registry import (
    CURVES,
    MEASURE_KEYS,
    MEASURES,
    MEASURES_BY_KEY,
    REGISTRY,
    SWEEP_FAMILY,
    DatasetValue,
    MeasureInfo,
    Parameter,
)
from fminspect.metrics.size_invariance import CURVE_FAMILY as _SI_CURVE
from fminspect.metrics.size_invariance import FAMILY as _SIZE_INVARIANCE
from fminspect.metrics.size_invariance import MIN_AREA as _SI_MIN_AREA
from fminspect.metrics.smeasure import ALPHA as _ALPHA
from fminspect.metrics.smeasure import CENTROID as _S_CENTROID
from fminspect.metrics.smeasure import DENOMINATOR as _S_DENOMINATOR
from fminspect.metrics.smeasure import FAMILY as _SMEASURE
from fminspect.metrics.smeasure import REGION_WEIGHTS as _S_WEIGHTS
from fminspect.metrics.thresholds255 import FAMILY as _CURVES255
from fminspect.metrics.weighted_fmeasure import BETA2 as _WFM_BETA2
from fminspect.metrics.weighted_fmeasure import EMPTY as _WFM_EMPTY
from fminspect.metrics.weighted_fmeasure import FAMILY as _WFMEASURE
from fminspect.metrics.weighted_fmeasure import KERNEL as _WFM_KERNEL

# One registry entry per measure module, in the order tables list the measures.
for _family in (
    _MAE,
    _SMEASURE,
    _WFMEASURE,
    _EMEASURE,
    _FMEASURE,
    _OVERLAP,
    _RELAXED,
    _MSIOU,
    _MSIOU_CURVE,
    _CONTEXT,
    _CAMOUFLAGE_CONTEXT,
    _CLASSIFICATION,
    _AUC,
    _SIZE_INVARIANCE,
    _SI_CURVE,
    _HCE,
    _BOUNDARY_IOU,
    _BOUNDARY_ACCURACY,
    _CURVES255,
    _SWEEP,
):
    REGISTRY.register(_family)

#: Names a process imports measure families from (``module:attribute``, comma-separated),
#: besides the ``fminspect.measures`` entry points of installed packages: a family defined
#: outside fminspect then reaches every surface, the worker processes included.
PLUGINS_VARIABLE = "FMINSPECT_MEASURE_MODULES"


def load_plugins() -> None:
    """Register the families of the ``fminspect.measures`` entry points and of
    :data:`PLUGINS_VARIABLE` (called once, when :mod:`fminspect.metrics` has been imported:
    a plug-in imports from it freely; it cannot add parameters to :class:`Params`)."""
    import importlib
    import os
    from importlib.metadata import entry_points

    named = [n.strip() for n in os.environ.get(PLUGINS_VARIABLE, "").split(",") if n.strip()]
    found = [ep.load() for ep in entry_points(group="fminspect.measures")]
    for name in named:
        module, _, attribute = name.partition(":")
        found.append(getattr(importlib.import_module(module), attribute or "FAMILY"))
    for family in found:
        if family.field not in REGISTRY.families:
            REGISTRY.register(family)


@dataclass(frozen=True, slots=True, kw_only=True)
class Params:
    """Every parameter of every measure, with the defaults their modules declare.

    The normalisation fields (``gt_threshold``, ``gt_inclusive``, ``stretch``, ``thresholds``,
    ``stretch_rule``)
    are those of :class:`~fminspect.metrics.Normalization`; the others are checked against
    their :class:`~fminspect.metrics.registry.Parameter`'s range.
    """

    gt_threshold: float = 128.0
    gt_inclusive: bool = False
    stretch: bool = True
    thresholds: str = "t/255"
    stretch_rule: str = "min-max"
    beta2: float = _FM_BETA2.default
    wfm_beta2: float = _WFM_BETA2.default
    wfm_kernel: str = _WFM_KERNEL.default
    wfm_empty: str = _WFM_EMPTY.default
    alpha: float = _ALPHA.default
    em_compare: str = _EM_COMPARE.default
    s_weights: str = _S_WEIGHTS.default
    s_centroid: str = _S_CENTROID.default
    s_denominator: str = _S_DENOMINATOR.default
    relax_rho: int = int(_RELAX_RHO.default)
    relax_beta2: float = _RELAX_BETA2.default
    cm_alpha: float = _CM_ALPHA.default
    cm_beta2: float = _CM_BETA2.default
    ccm_beta2: float = _CCM_BETA2.default
    ccm_gamma: float = _GAMMA.default
    ccm_lambda: float = _LAMBDA.default
    ccm_band: str = _CCM_BAND.default
    ccm_stride: int = int(_CCM_STRIDE.default)
    ap_interpolation: str = _AP_INTERPOLATION.default
    mae_map: str = _MAE_MAP.default
    msiou_counting: str = _MSIOU_COUNTING.default
    si_min_area: int = int(_SI_MIN_AREA.default)
    hce_relax: int = int(_HCE_RELAX.default)
    hce_epsilon: float = _HCE_EPSILON.default
    biou_ratio: float = _BIOU_RATIO.default

    def __post_init__(self) -> None:
        for p in parameters().values():
            p.check(getattr(self, p.name))
        self.norm  # noqa: B018  (the normalisation's fields checked by Normalization)

    @property
    def norm(self) -> Normalization:
        """The normalisation part."""
        return Normalization(
            self.gt_threshold, self.gt_inclusive, self.stretch, self.thresholds, self.stretch_rule
        )

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


def parameters() -> dict[str, Parameter]:
    """Every registered family's parameters by name (a parameter shared by two families,
    α of both Context-measures, once)."""
    return {p.name: p for fam in REGISTRY.families.values() for p in fam.params}


DEFAULT_PARAMS = Params()

#: The parameters each family depends on (besides the normalisation, which they all
#: depend on): a live view of the registry.
FIELD_PARAMS: Mapping[str, tuple[str, ...]]


class _FieldParams(Mapping[str, tuple[str, ...]]):
    def __getitem__(self, field: str) -> tuple[str, ...]:
        return tuple(p.name for p in REGISTRY.families[field].params)

    def __len__(self) -> int:
        return len(REGISTRY.families)

    def __iter__(self) -> Any:
        return iter(list(REGISTRY.families))


FIELD_PARAMS = _FieldParams()


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SuiteResult:
    """Every computed measure family's result for one pair (the GUI draws these).

    A family's result is an attribute named after it (``suite.emeasure``), ``None`` when it
    was not computed (``compute_suite(keys=...)``) or, for ``camouflage_context``, when no
    image was given.
    """

    params: Params
    pair: Pair
    results: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        if name in REGISTRY.families:
            return self.results.get(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def has(self, family: str) -> bool:
        """Whether ``family`` was computed (and could be: C^ω_β needs the image)."""
        return self.results.get(family) is not None

    def scores(self) -> dict[str, float]:
        """Per-image scores under the stable keys of :data:`MEASURES`, for every family
        that was computed (``CCm`` only when the image was given)."""
        results = self.results  # (per pair in a batch: the registry's dict, not its view)
        return {
            m.key: float(m.get(self))
            for m in REGISTRY.measures.values()
            if results.get(m.field) is not None
        }

    def curves(self) -> dict[str, np.ndarray]:
        """The per-image arrays the computed families store: their curves (ascending
        threshold) and the sweep's counts."""
        out: dict[str, np.ndarray] = {}
        for name in REGISTRY.families:
            out.update(self.arrays(name))
        return out

    def arrays(self, family: str) -> dict[str, np.ndarray]:
        """The per-image arrays one family's record stores (none if it was not computed)."""
        if not self.has(family):
            return {}
        fam = REGISTRY.families[family]
        out = {c.name: c.get(self) for c in fam.curves if c.get is not None}
        if fam.arrays is not None:
            out.update(fam.arrays(self))
        return out


def update_suite(
    previous: SuiteResult,
    params: Params,
    *,
    img: np.ndarray | None = None,
    families: Iterable[str] | None = None,
) -> SuiteResult:
    """``previous`` under new ``params``, recomputing only the measures they affect; with
    ``families``, exactly those families (the ones ``previous`` lacks are computed, those it
    has and are not named are dropped).

    A change of β² recomputes the F-measure family only, a change of α the S-measure only;
    a change of the normalisation (GT rule, stretch) recomputes everything. Used by the GUI
    so that moving one parameter updates every model within milliseconds.
    """
    old = previous.params
    if params.norm != old.norm:
        raise ValueError("the normalisation changed: prepare the pair again (compute_suite)")
    changed = {f.name for f in fields(Params) if getattr(params, f.name) != getattr(old, f.name)}
    wanted = list(previous.results) if families is None else list(families)
    results = {}
    for name in REGISTRY.families:
        if name not in wanted:
            continue
        fam = REGISTRY.families[name]
        if name in previous.results and not changed.intersection(p.name for p in fam.params):
            results[name] = previous.results[name]
        else:
            results[name] = fam.compute(previous.pair, params, img)
    return SuiteResult(params=params, pair=previous.pair, results=results)


def compute_suite(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    params: Params = DEFAULT_PARAMS,
    *,
    img: np.ndarray | None = None,
    keys: Iterable[str] | str | None = None,
    families: Iterable[str] | None = None,
) -> SuiteResult:
    """The measures behind ``keys`` (default: the default measures, see
    :func:`measure_keys`) and the ``families`` named, of one pair, sharing all common work.

    Pass a :class:`~fminspect.metrics.GroundTruth` from :func:`~fminspect.metrics.prepare_gt`
    as ``gt`` to reuse GT-only work (distance transform, centroid, kernel, camouflage degree)
    across several predictions. The camouflage Context-measure needs ``img`` (RGB uint8).
    ``keys="all"`` computes every registered measure.
    """
    pair = prepare(pred, gt, params.norm)
    wanted = set(families or ())
    if keys is not None or not wanted:
        wanted.update(_families_of(keys if keys is None or isinstance(keys, str) else tuple(keys)))
    return SuiteResult(
        params=params,
        pair=pair,
        results={
            name: fam.compute(pair, params, img)
            for name, fam in REGISTRY.families.items()
            if name in wanted
        },
    )


def _families_of(keys: tuple[str, ...] | str | None) -> tuple[str, ...]:
    """:func:`families_for` the :func:`measure_keys` of ``keys``, remembered for the last
    few: a batch asks for the same keys at every pair (~30 µs each to work out again)."""
    if len(REGISTRY.families) != _FAMILIES_SEEN[0]:  # a plug-in registered since
        _families_cached.cache_clear()
        _FAMILIES_SEEN[0] = len(REGISTRY.families)
    return _families_cached(keys)


@functools.lru_cache(maxsize=32)
def _families_cached(keys: tuple[str, ...] | str | None) -> tuple[str, ...]:
    return families_for(measure_keys(keys))


_FAMILIES_SEEN = [0]


def families_for(keys: Iterable[str]) -> tuple[str, ...]:
    """The families (SuiteResult fields, store families) behind ``keys``, in registry
    order: the families giving them, and the sweep when a dataset value is formed from
    curves or pooled counts."""
    keys = list(keys)
    wanted = {MEASURES_BY_KEY[k].field for k in keys}
    if any(_needs_sweep(MEASURES_BY_KEY[k].dataset) for k in keys):
        wanted.add(SWEEP_FAMILY)
    return tuple(f for f in REGISTRY.families if f in wanted)


def _needs_sweep(value: DatasetValue) -> bool:
    """Whether a dataset value is made from the sweep counts: curves derived from them, or
    pooled counts the family does not store itself."""
    if value.kind == "curves":
        return any(CURVES[c].derive is not None for c in value.curves)
    return value.kind == "pooled" and not value.curves


#: Words ``--measures`` and :func:`measure_keys` take besides keys and family names.
GROUPS = ("default", "all")


def measure_keys(
    keys: Iterable[str] | str | None = None, *, with_images: bool = True
) -> tuple[str, ...]:
    """``keys`` expanded and checked, in registry order, without the measures that need
    the image (CCm) when there is none.

    ``keys`` may hold measure keys (``'maxFm'``), family names (``'classification'``: every
    key of that family), ``'default'`` (the measures computed and shown unless others are
    asked for) and ``'all'``; ``None`` means ``'default'``.

    Raises
    ------
    ValueError
        For a word that is none of those (the message lists the valid ones).
    """
    words = ["default"] if keys is None else [keys] if isinstance(keys, str) else list(keys)
    chosen: set[str] = set()
    unknown = []
    for word in words:
        if word == "all":  # the GROUPS
            chosen.update(MEASURE_KEYS)
        elif word == "default":
            chosen.update(m.key for m in MEASURES if m.default)
        elif word in MEASURES_BY_KEY:
            chosen.add(word)
        elif word in REGISTRY.families and word != SWEEP_FAMILY:
            chosen.update(m.key for m in REGISTRY.families[word].measures)
        else:
            unknown.append(word)
    if unknown:
        fams = ", ".join(f for f in REGISTRY.families if f != SWEEP_FAMILY)
        raise ValueError(
            f"unknown measure(s) {unknown}; valid: a key ({', '.join(MEASURE_KEYS)}), a "
            f"family ({fams}) or {' or '.join(map(repr, GROUPS))}"
        )
    return tuple(m.key for m in MEASURES if m.key in chosen and (with_images or not m.needs_image))


def default_keys(*, with_images: bool = True) -> tuple[str, ...]:
    """The keys computed and shown unless others are asked for."""
    return measure_keys(None, with_images=with_images)


def evaluate(
    pred: np.ndarray,
    gt: np.ndarray | GroundTruth,
    *,
    img: np.ndarray | None = None,
    keys: Iterable[str] | str | None = None,
    **params: Any,
) -> dict[str, float]:
    """Per-image scores of one pair, under stable keys.

    Parameters
    ----------
    pred, gt : ndarray
        Prediction and GT maps (uint8 0–255, float in [0, 1] or bool).
    img : ndarray, optional
        RGB image (needed by the camouflage Context-measure).
    keys : str or iterable of str, optional
        Which measures (see :func:`measure_keys`); default: the default ones, ``"all"``:
        every registered one.
    **params
        Any field of :class:`Params` (``beta2=0.3``, ``alpha=0.5``, ``gt_inclusive=False``,
        ``stretch=True``, ...).

    Returns
    -------
    dict
        By default ``MAE, Sm, wFm, adpEm, meanEm, maxEm, adpFm, meanFm, maxFm, adpIoU,
        meanIoU, maxIoU, adpDice, meanDice, maxDice, relaxFm, adpMSIoU, binMSIoU, Cm`` and,
        with ``img``, ``CCm`` — ``mean*``/``max*`` are the mean/max of this image's
        256-value curve, ``adp*`` use the adaptive threshold; with ``keys="all"`` also the
        precision, recall, TNR, FPR, BER, accuracy and kappas in every variant.

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((16, 16), np.uint8); gt[4:12, 4:12] = 255
    >>> scores = evaluate(gt.copy(), gt)
    >>> scores["MAE"], round(scores["Sm"], 12), scores["maxFm"]
    (0.0, 1.0, 1.0)
    """
    wanted = measure_keys(keys, with_images=img is not None)
    scores = compute_suite(pred, gt, Params.from_kwargs(**params), img=img, keys=wanted).scores()
    return {k: scores[k] for k in wanted}


__all__ = [
    "CURVES",
    "DEFAULT_PARAMS",
    "FIELD_PARAMS",
    "GROUPS",
    "MEASURES",
    "MEASURES_BY_KEY",
    "MEASURE_KEYS",
    "MeasureInfo",
    "Params",
    "SuiteResult",
    "compute_suite",
    "default_keys",
    "evaluate",
    "families_for",
    "measure_keys",
    "parameters",
    "update_suite",
]
