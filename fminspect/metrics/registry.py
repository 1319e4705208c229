"""The measure registry: every measure family, its parameters, keys, curves and references.

A **family** is one measure module's result (one field of
:class:`~fminspect.metrics.SuiteResult`, one record per prediction in the result store): the
F-measure family gives precision, recall and F_β, the E-measure family E, and so on. Each
family is declared once, beside its maths, as a :class:`Family` — its parameters
(:class:`Parameter`, each with its default and range), the score keys it gives
(:class:`MeasureInfo`, each with its variant and how its dataset value is formed), the
per-image curves it stores, whether it needs the image, the paper and equations it
implements, its reference implementation and a teaching note — and registered in
:mod:`fminspect.metrics.suite`. Every command, table, plot, export and window reads the
registry, so a measure is one module and one registry entry.

The views :data:`MEASURES`, :data:`MEASURES_BY_KEY`, :data:`MEASURE_KEYS` and
:data:`CURVES` are live: they show what is registered when they are read, so that a family
registered later (a plug-in, a test) reaches every surface.

How a **dataset value** is formed (:class:`DatasetValue`): the mean of the per-image values
(most measures); a reduction of the image-averaged curve (``maxFm`` = the max of the
mean 256-threshold F curve, as pysodmetrics, PySODEvalToolkit and the MATLAB toolboxes do);
or one confusion matrix summed over the whole dataset (``pooled…``, pysodmetrics'
``sample_based=False``). The image-averaged curves of the confusion-count measures are
derived from each image's stored TP/FP counts (:data:`SWEEP_FAMILY`), so a pair stores 512
counts instead of a dozen curves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np

#: The family whose records hold every image's threshold-sweep counts (TP and FP for the 256
#: thresholds, and the GT's and the adaptive and binary binarisations' counts): the curves
#: and pooled values of every confusion-count measure are derived from them.
SWEEP_FAMILY = "sweep"


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter of a measure family: its name in :class:`~fminspect.metrics.Params`,
    its default (the paper's, or the reference's where the paper gives none) and its range.

    Attributes
    ----------
    name : str
        Field of :class:`~fminspect.metrics.Params` (``'beta2'``).
    default : float
        Default value — defined here and nowhere else.
    symbol : str
        As printed in labels (``'β²'``).
    description : str
        What it is, and where its default comes from.
    low, high : float
        Allowed range (inclusive unless ``open_low``).
    integer : bool
        Whether it takes whole numbers only.
    open_low : bool
        Whether ``low`` itself is excluded (β² > 0).
    choices : tuple of str
        For a parameter that names a variant (AP's interpolation): its possible values.
    """

    name: str
    default: Any
    symbol: str
    description: str
    low: float = -math.inf
    high: float = math.inf
    integer: bool = False
    open_low: bool = False
    choices: tuple[str, ...] = ()

    def check(self, value: Any) -> None:
        """Raise ValueError naming the parameter when ``value`` is outside its range (or not
        one of its ``choices``)."""
        if self.choices:
            if value not in self.choices:
                raise ValueError(
                    f"{self.name} must be one of {', '.join(self.choices)}, got {value!r}"
                )
            return
        below = value <= self.low if self.open_low else value < self.low
        if below or value > self.high or (self.integer and value != int(value)):
            low = f"> {self.low:g}" if self.open_low else f"≥ {self.low:g}"
            kind = "a whole number " if self.integer else ""
            raise ValueError(
                f"{self.name} ({self.symbol}) must be {kind}{low} and ≤ {self.high:g}, "
                f"got {value!r}"
            )


@dataclass(frozen=True, slots=True)
class Pooled:
    """The confusion counts of one binarisation summed over images (``sample_based=False``)."""

    tp: np.int64
    fp: np.int64
    tn: np.int64
    fn: np.int64


@dataclass(frozen=True, slots=True)
class DatasetValue:
    """How a key's dataset value is formed from the images.

    Attributes
    ----------
    text : str
        Said in every output (``results.json``, table tooltips).
    kind : str
        ``'mean'`` (mean of the per-image values, NaN left out), ``'curves'`` (from the
        image-averaged curves), ``'pooled'`` (from the binary counts summed over images) or
        ``'sums'`` (from an array the family stores per image, summed over the images).
    curves : tuple of str
        The curves ``reduce`` reads (kind ``'curves'``), the counts (``'pooled'``, when a
        family stores its own) or the summed array (``'sums'``).
    reduce : callable or None
        ``({curve name: mean curve}, Params) -> float`` (kind ``'curves'``),
        ``(Pooled, Params) -> float`` (kind ``'pooled'``) or ``(summed array, Params) ->
        float`` (kind ``'sums'``).
    empty_gt_nan : bool
        The value is NaN when any image's GT is empty (kind ``'curves'``: an implementation
        whose image-averaged recall is then 0/0, as the classic saliency benchmark's).
    """

    text: str = "mean over images"
    kind: str = "mean"
    curves: tuple[str, ...] = ()
    reduce: Callable[[Any, Any], float] | None = None
    empty_gt_nan: bool = False


MEAN = DatasetValue()


def curve_max(curve: str, points: int = 256) -> DatasetValue:
    """The max over thresholds of the image-averaged curve ``curve``."""
    return DatasetValue(
        f"max of the image-averaged {points}-threshold {curve} curve",
        "curves",
        (curve,),
        lambda c, p: float(c[curve].max()),
    )


def curve_min(curve: str, points: int = 256) -> DatasetValue:
    """The min over thresholds of the image-averaged curve (a lower-is-better measure)."""
    return DatasetValue(
        f"min of the image-averaged {points}-threshold {curve} curve",
        "curves",
        (curve,),
        lambda c, p: float(c[curve].min()),
    )


def curve_mean(curve: str, points: int = 256) -> DatasetValue:
    """The mean over thresholds of the image-averaged curve (= the mean of the per-image
    curve means)."""
    return DatasetValue(
        f"mean of the image-averaged {points}-threshold {curve} curve",
        "curves",
        (curve,),
        lambda c, p: float(c[curve].mean()),
    )


def pooled(
    formula: Callable[[Pooled, Any], float], what: str = "binary (pred > 0.5)"
) -> DatasetValue:
    """``formula`` of the counts of one binarisation summed over every image."""
    return DatasetValue(
        f"one confusion matrix of the {what} maps summed over the dataset "
        "(pysodmetrics sample_based=False)",
        "pooled",
        (),
        formula,
    )


@dataclass(frozen=True, slots=True)
class MeasureInfo:
    """One stable score key: how to read it from a suite, how to name its exact variant and
    how its dataset value is formed.

    Attributes
    ----------
    key : str
        Stable key (``'maxFm'``).
    family : str
        Display name of the measure, for grouping in tables (``'F-measure'``).
    higher_is_better : bool
        Direction.
    field : str
        The family (:class:`SuiteResult` field, store family) it is read from.
    get : callable
        ``SuiteResult -> float``.
    variant : callable
        ``Params -> str``: the exact variant, e.g. ``'β²=0.3'``.
    dataset : DatasetValue
        How the dataset value is formed.
    needs_image : bool
        Whether it needs the image (C^ω_β; set for every measure of a family that needs it).
    default : bool
        Computed and shown unless the user asks for other measures.
    kind : str
        ``'adaptive'``, ``'mean'``, ``'max'``, ``'min'``, ``'binary'``, ``'pooled'`` or
        ``'score'`` (a measure with one value per image).
    scores : callable or None
        ``SuiteResult ->`` what holds the key's 256-threshold ``curve`` (a confusion-count
        measure's ThresholdScores, the E-measure's result): where its max lies, for a view
        opened on it. None for measures without such a curve.
    """

    key: str
    family: str
    higher_is_better: bool
    field: str
    get: Callable[[Any], float]
    variant: Callable[[Any], str]
    dataset: DatasetValue = MEAN
    needs_image: bool = False
    default: bool = True
    kind: str = "score"
    scores: Callable[[Any], Any] | None = None

    @property
    def aggregation(self) -> str:
        """How the dataset value is formed, in words."""
        return self.dataset.text

    def label(self, params: Any) -> str:
        """Column header naming the exact variant under ``params``, e.g. ``'maxFm β²=0.3'``."""
        return f"{self.key} {self.variant(params)}".strip()


@dataclass(frozen=True, slots=True)
class CurveInfo:
    """A per-image curve whose image average a dataset value or a plot uses.

    Attributes
    ----------
    name : str
        ``'Fm'``, ``'Precision'``…
    field : str
        The family whose records hold what it is made from.
    get : callable or None
        ``SuiteResult -> ndarray``: the curve of one scored pair (stored as it is), or None
        for a curve derived from the sweep counts.
    derive : callable or None
        ``(Sweep, Params) -> ndarray`` for a curve of the confusion counts: evaluated on the
        stored counts of many images at once (rows), element by element exactly as the
        measure's module computes one image's curve, so the image average is the same to
        the last bit; it returns None when, under these parameters, the family stores each
        image's curve itself (E-measure with ``em_compare='>'``).
    description : str
        What it is (axis label, ``curves.csv``).
    """

    name: str
    field: str
    get: Callable[[Any], np.ndarray] | None = None
    derive: Callable[[Any, Any], np.ndarray | None] | None = None
    description: str = ""


@dataclass(frozen=True, slots=True)
class Family:
    """One measure module's entry: everything the rest of fminspect needs to know of it.

    Attributes
    ----------
    field : str
        Its name: the :class:`SuiteResult` field and the result store's family.
    name : str
        Display name (``'F-measure'``).
    compute : callable
        ``(Pair, Params, image or None) -> result`` (None when it cannot be computed, e.g.
        C^ω_β without an image).
    measures : tuple of MeasureInfo
        The score keys it gives.
    params : tuple of Parameter
        Its own parameters (besides the normalisation, which every family depends on).
    curves : tuple of CurveInfo
        The per-image curves its records store, or derive from (the sweep).
    needs_image : bool
        Whether it needs the image.
    paper : str
        The paper(s) and equation numbers it implements.
    reference : str
        The reference implementation its values are checked against, with its version.
    teaching : str
        What the measure rewards and what it misses (shown in its explain view).
    view : str
        The explain view that draws its intermediates (a name the GUI maps to a view).
    arrays : callable or None
        ``SuiteResult -> {name: array}``: arrays its records store besides its curves (the
        sweep's counts).
    notes_name : str
        The name its warnings are said under (default: ``field``).
    repeats_notes_of : str
        A family whose warnings this one's repeat (C^ω_β's are the Context-measure's, on
        the same GT): a scored pair's notes give only this one's when both are computed.
    """

    field: str
    name: str
    compute: Callable[[Any, Any, np.ndarray | None], Any]
    measures: tuple[MeasureInfo, ...] = ()
    params: tuple[Parameter, ...] = ()
    curves: tuple[CurveInfo, ...] = ()
    needs_image: bool = False
    paper: str = ""
    reference: str = ""
    teaching: str = ""
    view: str = ""
    arrays: Callable[[Any], Mapping[str, np.ndarray]] | None = None
    notes_name: str = ""
    repeats_notes_of: str = ""


class Registry:
    """The registered families, in registration order (tables list measures in it)."""

    def __init__(self) -> None:
        self._families: dict[str, Family] = {}
        self._measures: dict[str, MeasureInfo] = {}
        self._curves: dict[str, CurveInfo] = {}

    def register(self, family: Family) -> Family:
        """Add a family; its keys and curves must be new."""
        if family.field in self._families:
            raise ValueError(f"a family {family.field!r} is registered already")
        keys = [m.key for m in family.measures]
        clash = sorted(set(keys) & set(self._measures)) or sorted(
            {k for k in keys if keys.count(k) > 1}
        )
        if clash:
            raise ValueError(f"measure key(s) {clash} of {family.field!r} exist already")
        curves = [c.name for c in family.curves if c.derive is not None or c.get is not None]
        taken = sorted(set(curves) & set(self._curves))
        if taken:
            raise ValueError(f"curve(s) {taken} of {family.field!r} exist already")
        wrong = [m.key for m in family.measures if m.field != family.field]
        if wrong:
            raise ValueError(f"measure(s) {wrong} do not name their family {family.field!r}")
        if family.needs_image:  # its measures too, whether they say so or not
            measures = tuple(replace(m, needs_image=True) for m in family.measures)
            family = replace(family, measures=measures)
        self._families[family.field] = family
        self._measures.update({m.key: m for m in family.measures})
        self._curves.update({c.name: c for c in family.curves})
        return family

    def unregister(self, field: str) -> None:
        """Remove a family (tests and plug-ins)."""
        family = self._families.pop(field)
        for m in family.measures:
            self._measures.pop(m.key, None)
        for c in family.curves:
            self._curves.pop(c.name, None)

    @property
    def families(self) -> Mapping[str, Family]:
        """Every family by field, in registration order."""
        return self._families

    @property
    def measures(self) -> Mapping[str, MeasureInfo]:
        """Every measure by key, in registration order."""
        return self._measures

    @property
    def curves(self) -> Mapping[str, CurveInfo]:
        """Every curve by name."""
        return self._curves


#: The one registry (filled by :mod:`fminspect.metrics.suite`).
REGISTRY = Registry()


class _Measures(Sequence[MeasureInfo]):
    """Every registered measure, in registration order (a live view)."""

    @overload
    def __getitem__(self, i: int) -> MeasureInfo: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[MeasureInfo]: ...
    def __getitem__(self, i: int | slice) -> MeasureInfo | Sequence[MeasureInfo]:
        return list(REGISTRY.measures.values())[i]

    def __len__(self) -> int:
        return len(REGISTRY.measures)

    def __iter__(self) -> Iterator[MeasureInfo]:
        return iter(list(REGISTRY.measures.values()))


class _Keys(Sequence[str]):
    """Every registered key, in registration order (a live view)."""

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        return list(REGISTRY.measures)[i]

    def __len__(self) -> int:
        return len(REGISTRY.measures)

    def __iter__(self) -> Iterator[str]:
        return iter(list(REGISTRY.measures))

    def __contains__(self, key: object) -> bool:
        return key in REGISTRY.measures


class _ByKey(Mapping[str, MeasureInfo]):
    """Every registered measure by key (a live view)."""

    def __getitem__(self, key: str) -> MeasureInfo:
        return REGISTRY.measures[key]

    def __len__(self) -> int:
        return len(REGISTRY.measures)

    def __iter__(self) -> Iterator[str]:
        return iter(list(REGISTRY.measures))


class _Curves(Mapping[str, CurveInfo]):
    """Every registered curve by name (a live view)."""

    def __getitem__(self, name: str) -> CurveInfo:
        return REGISTRY.curves[name]

    def __len__(self) -> int:
        return len(REGISTRY.curves)

    def __iter__(self) -> Iterator[str]:
        return iter(list(REGISTRY.curves))


MEASURES: Sequence[MeasureInfo] = _Measures()
MEASURE_KEYS: Sequence[str] = _Keys()
MEASURES_BY_KEY: Mapping[str, MeasureInfo] = _ByKey()
CURVES: Mapping[str, CurveInfo] = _Curves()


def family_of(key: str) -> Family:
    """The family giving ``key``."""
    return REGISTRY.families[REGISTRY.measures[key].field]
