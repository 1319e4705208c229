"""The one gate every input passes: validation and normalisation of (prediction, GT).

Conventions (pysodmetrics 1.6.2 ``utils.prepare_data``, itself MATLAB's
``mapminmax(im2double(pred))`` and ``gt > 128``):

* **GT**: ``gt > 128`` on the 0–255 scale by default; ``gt >= 128`` (the original
  Context-measure code) is selectable. uint16 GTs are compared on the same scale
  (value / 257), float GTs in [0, 1] as value × 255, bool GTs are used as they are.
* **Prediction**: uint8 is divided by 255 (uint16 by 65535), then min–max stretched to [0, 1]
  unless it is constant (a constant map keeps its value / 255). The stretch can be switched
  off, or made a division by the maximum (the classic saliency benchmark's
  ``readSaliencyMap``: an all-zero map stays zero). float predictions in [0, 1] and bool
  predictions are used as they are (no division, no stretch), like pysodmetrics'
  ``normalize=False``.

GT-only quantities (distance transforms, centroids, kernels, the camouflage degree) are
memoised on :class:`GroundTruth`, and prediction-level shared quantities (the quantised map,
the 256-threshold confusion sweep) on :class:`Pair`, so a sample scored for ten models
computes each of them once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import cv2
import numpy as np

from fminspect.metrics._numerics import matlab_colon, readonly

T = TypeVar("T")
_LOCKS_GUARD = threading.Lock()


#: How the 256 curve thresholds are made (:attr:`Normalization.thresholds`).
THRESHOLD_RULES = ("t/255", "matlab")
#: How integer predictions are stretched to [0, 1] (:attr:`Normalization.stretch_rule`).
STRETCH_RULES = ("min-max", "max")
#: t/255, t = 0..255.
CURVE_THRESHOLDS = readonly(np.arange(256) / 255)
#: MATLAB's ``1:-1/255:0``, ascending.
MATLAB_THRESHOLDS = readonly(matlab_colon(1.0, -1 / 255, 0.0)[::-1].copy())


@dataclass(frozen=True, slots=True)
class Normalization:
    """How raw maps are turned into a [0, 1] prediction and a binary GT.

    Parameters
    ----------
    gt_threshold : float
        Threshold on the 0–255 scale. Default 128.
    gt_inclusive : bool
        ``False`` (default): foreground is ``gt > gt_threshold`` (pysodmetrics, MATLAB
        toolboxes). ``True``: ``gt >= gt_threshold`` (original Context-measure code).
    stretch : bool
        Stretch integer predictions to [0, 1] (default ``True``, as pysodmetrics and MATLAB
        ``mapminmax``).
    thresholds : str
        The 256 thresholds of the curves. ``"t/255"`` (default, pysodmetrics): curve point t
        is ``floor(255·pred) >= t``. ``"matlab"``: the MATLAB toolboxes' ``1:-1/255:0`` as
        MATLAB's colon builds them (:func:`~fminspect.metrics._numerics.matlab_colon`),
        compared with the continuous map — point t is ``pred >= T_t``, T ascending. (The
        classic saliency benchmark's ``pred >= [255:-1:0]/255`` is ``"t/255"`` exactly: for
        every double, ``fl(255·p) >= t`` iff ``p >= fl(t/255)``, as rounding is monotonic
        and both sides of each ``fl(t/255)`` fall where they should — tested.)
    stretch_rule : str
        How ``stretch`` stretches: ``"min-max"`` (default; ``(p − min)/(max − min)``, a
        constant map kept as it is) or ``"max"`` (``p / max``, an all-zero map kept zero: the
        classic saliency benchmark's ``readSaliencyMap``).
    """

    gt_threshold: float = 128.0
    gt_inclusive: bool = False
    stretch: bool = True
    thresholds: str = "t/255"
    stretch_rule: str = "min-max"

    def __post_init__(self) -> None:
        if not 0 <= self.gt_threshold <= 255:
            raise ValueError(f"gt_threshold must lie in [0, 255], got {self.gt_threshold!r}")
        if self.thresholds not in THRESHOLD_RULES:
            raise ValueError(
                f"thresholds must be one of {', '.join(THRESHOLD_RULES)}, got {self.thresholds!r}"
            )
        if self.stretch_rule not in STRETCH_RULES:
            raise ValueError(
                f"stretch_rule must be one of {', '.join(STRETCH_RULES)}, got {self.stretch_rule!r}"
            )

    @property
    def curve_thresholds(self) -> np.ndarray:
        """The 256 thresholds of the curves, ascending."""
        return MATLAB_THRESHOLDS if self.thresholds == "matlab" else CURVE_THRESHOLDS

    @property
    def stretch_label(self) -> str:
        """``'stretch'``, ``'stretch /max'`` or ``'no stretch'``."""
        if not self.stretch:
            return "no stretch"
        return "stretch /max" if self.stretch_rule == "max" else "stretch"

    @property
    def gt_rule(self) -> str:
        """The GT binarisation rule as text, e.g. ``'GT>128'``."""
        op = ">=" if self.gt_inclusive else ">"
        return f"GT{op}{self.gt_threshold:g}"

    @property
    def label(self) -> str:
        """Short, exact description used next to every number, e.g. ``'GT>128, stretch'``."""
        label = f"{self.gt_rule}, {self.stretch_label}"
        return label + (", MATLAB thresholds" if self.thresholds == "matlab" else "")

    def as_dict(self) -> dict[str, Any]:
        """Plain-JSON form (recorded in every output file)."""
        return {
            "gt_threshold": self.gt_threshold,
            "gt_inclusive": self.gt_inclusive,
            "gt_rule": self.gt_rule,
            "stretch": self.stretch,
            "thresholds": self.thresholds,
            "stretch_rule": self.stretch_rule,
        }


#: pysodmetrics / MATLAB conventions.
DEFAULT_NORMALIZATION = Normalization()
#: The original Context-measure code's conventions (``gt >= 128``, prediction / 255 only).
ORIGINAL_CONTEXT_NORMALIZATION = Normalization(gt_inclusive=True, stretch=False)


def _check_2d(name: str, array: np.ndarray) -> None:
    if array.ndim != 2:
        hint = (
            " Convert colour maps to grey first (fminspect.io.load_map does this)."
            if array.ndim == 3
            else ""
        )
        raise ValueError(f"{name} must be a 2-D map, got an array of shape {array.shape}.{hint}")
    if array.size == 0:
        raise ValueError(f"{name} is empty (shape {array.shape})")


def _integer_scale(name: str, array: np.ndarray) -> float:
    """Full-scale value of an integer map (255 for uint8, 65535 for uint16)."""
    if array.dtype == np.uint8:
        return 255.0
    if array.dtype == np.uint16:
        return 65535.0
    lo, hi = int(array.min()), int(array.max())
    if lo < 0 or hi > 255:
        raise ValueError(
            f"{name} has dtype {array.dtype} with values in [{lo}, {hi}]; integer maps other "
            "than uint16 must hold 8-bit values in [0, 255]"
        )
    return 255.0


def _check_float_range(name: str, array: np.ndarray) -> None:
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values")
    lo, hi = float(array.min()), float(array.max())
    if lo < 0 or hi > 1:
        raise ValueError(
            f"{name} is floating point with values in [{lo:g}, {hi:g}]; float maps must lie in "
            "[0, 1] (divide 8-bit values by 255, or pass the uint8 array)"
        )


def binarize_gt(gt: np.ndarray, norm: Normalization = DEFAULT_NORMALIZATION) -> np.ndarray:
    """Binary foreground mask of a GT map under ``norm`` (see the module notes)."""
    gt = np.asarray(gt)
    _check_2d("GT", gt)
    if gt.dtype == bool:
        return np.ascontiguousarray(gt)
    if np.issubdtype(gt.dtype, np.integer):
        scale = _integer_scale("GT", gt)
        # uint16: value / 257 maps 65535 to exactly 255
        values = gt if scale == 255.0 else gt.astype(np.float64) / (scale / 255.0)
    elif np.issubdtype(gt.dtype, np.floating):
        _check_float_range("GT", gt)
        values = gt.astype(np.float64) * 255.0
    else:
        raise TypeError(f"GT must be bool, integer or float, got dtype {gt.dtype}")
    mask = values >= norm.gt_threshold if norm.gt_inclusive else values > norm.gt_threshold
    return np.ascontiguousarray(mask)


def normalize_pred(
    pred: np.ndarray, norm: Normalization = DEFAULT_NORMALIZATION
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Prediction as C-contiguous float64 in [0, 1], plus notes on what was done."""
    pred = np.asarray(pred)
    _check_2d("prediction", pred)
    notes: list[str] = []
    if pred.dtype == bool:
        return np.ascontiguousarray(pred, dtype=np.float64), ()
    if np.issubdtype(pred.dtype, np.floating):
        _check_float_range("prediction", pred)
        return np.ascontiguousarray(pred, dtype=np.float64), ()
    if not np.issubdtype(pred.dtype, np.integer):
        raise TypeError(f"prediction must be bool, integer or float, got dtype {pred.dtype}")
    if pred.dtype == np.uint8:
        table, notes8 = level_table(pred, norm)
        return cv2.LUT(np.ascontiguousarray(pred), table), notes8
    scale = _integer_scale("prediction", pred)
    # MATLAB im2double: pred / 255 (the exact operation order matters for bit parity)
    out = pred / scale
    if norm.stretch and norm.stretch_rule == "max":
        hi = out.max()
        if hi > 0:  # sMap./maxnum; an all-zero map stays zero
            out /= hi
    elif norm.stretch:
        lo, hi = out.min(), out.max()
        if hi != lo:
            # MATLAB mapminmax(pred, 0, 1): (pred - lo) / (hi - lo), in place
            out -= lo
            out /= hi - lo
        else:
            notes.append(f"constant prediction ({float(hi):.4g}): not stretched")
    return np.ascontiguousarray(out, dtype=np.float64), tuple(notes)


def level_table(pred: np.ndarray, norm: Normalization) -> tuple[np.ndarray, tuple[str, ...]]:
    """The normalised value of each of a uint8 map's 256 levels, and the notes:
    :func:`normalize_pred` of a uint8 map is this table looked up.

    Each table entry goes through the same float64 operations as the array form
    (v / 255, then − lo and / (hi − lo), or / max), so the result is bit-identical; the
    lookup (OpenCV's LUT) is ~3× faster than dividing every pixel, and the measures that
    count pixels per threshold count them per level (:class:`Pair`'s ``levels``).
    """
    table = np.arange(256) / 255.0
    notes: tuple[str, ...] = ()
    if norm.stretch:
        lo_v, hi_v, _, _ = cv2.minMaxLoc(pred)
        lo, hi = lo_v / 255.0, hi_v / 255.0  # = min and max of pred / 255
        if norm.stretch_rule == "max":
            if hi > 0:
                table /= hi
        elif hi != lo:
            table -= lo
            table /= hi - lo
        else:
            notes = (f"constant prediction ({hi:.4g}): not stretched",)
    return table, notes


def unit_map(array: np.ndarray) -> np.ndarray:
    """A map's values in [0, 1] as stored, without the min–max stretch (for drawing and
    editing maps): integers divided by their full scale (255, or 65535 for uint16), booleans
    as 0/1, floats in [0, 1] as they are. Always a new float64 array."""
    out = normalize_pred(array, Normalization(stretch=False))[0]
    return out.copy() if np.shares_memory(out, array) else out


class GroundTruth:
    """A binarised GT plus memoised GT-only quantities.

    Build it once per sample with :func:`prepare_gt` and pass it in place of the raw GT to
    every measure and every model: distance transforms, centroids, kernels and the
    camouflage degree are then computed once.
    """

    __slots__ = ("_locks", "_memo", "mask", "n_fg", "norm", "shape", "size")

    def __init__(self, mask: np.ndarray, norm: Normalization) -> None:
        self.mask: np.ndarray = readonly(np.ascontiguousarray(mask, dtype=bool))
        self.norm = norm
        self.shape: tuple[int, int] = (int(mask.shape[0]), int(mask.shape[1]))
        self.size = int(mask.size)
        self.n_fg = int(np.count_nonzero(mask))
        self._memo: dict[str, Any] = {}
        self._locks: dict[str, threading.Lock] = {}

    @property
    def n_bg(self) -> int:
        """Number of background pixels."""
        return self.size - self.n_fg

    @property
    def is_empty(self) -> bool:
        """No foreground pixel."""
        return self.n_fg == 0

    @property
    def is_full(self) -> bool:
        """Every pixel is foreground."""
        return self.n_fg == self.size

    @property
    def bounds(self) -> tuple[int, int, int, int]:
        """(first row, last row, first column, last column) of the foreground, inclusive;
        computed once. ValueError for an empty GT."""
        if self.is_empty:
            raise ValueError("an empty GT has no foreground bounds")

        def compute() -> tuple[int, int, int, int]:
            per_row, per_col = self.profiles
            rows, cols = np.flatnonzero(per_row), np.flatnonzero(per_col)
            return int(rows[0]), int(rows[-1]), int(cols[0]), int(cols[-1])

        return self.memo("bounds", compute)

    @property
    def profiles(self) -> tuple[np.ndarray, np.ndarray]:
        """Foreground pixels in each row and in each column (int64), computed once: the
        bounds and the S-measure's centroid read them (OpenCV's row and column sums: a
        twelfth of ``np.count_nonzero(mask, axis=…)``'s time)."""

        def compute() -> tuple[np.ndarray, np.ndarray]:
            u8 = self.mask.view(np.uint8)
            per_row = cv2.reduce(u8, 1, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel()
            per_col = cv2.reduce(u8, 0, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel()
            return readonly(per_row.astype(np.int64)), readonly(per_col.astype(np.int64))

        return self.memo("profiles", compute)

    def memo(self, key: str, func: Callable[[], T]) -> T:
        """Return ``func()`` computed once per GT under ``key``.

        Thread-safe: when several threads ask for the same missing key (several models of
        one sample scored in parallel), one computes it and the others wait for it.
        """
        try:
            return cast(T, self._memo[key])  # each key holds what its func returns
        except KeyError:
            pass
        with _LOCKS_GUARD:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._memo:
                self._memo[key] = func()
            return cast(T, self._memo[key])

    def __repr__(self) -> str:
        return f"GroundTruth(shape={self.shape}, n_fg={self.n_fg}, {self.norm.gt_rule})"


#: calcHist counts in float32: exact up to 2²⁴ pixels in a bin (larger blocks: NumPy)
_FLOAT32_EXACT = 1 << 24


#: Finer labellings of a GT whose labels keep the GT foreground in their lowest bit
#: (label = 2·k + foreground), each ``gt → (labels, number of labels, memo key)`` or None
#: (no such labelling of this GT: the S-measure's of an empty one). When one
#: is registered, :meth:`Pair.level_counts` counts a uint8 map's levels under the first one
#: and sums its labels pairwise: the measure that registered it (the S-measure, its
#: quadrants) then finds its own histogram made, and a map is counted once for both.
FG_PARITY_LABELS: list[Callable[[GroundTruth], tuple[np.ndarray, int, str] | None]] = []


@dataclass(frozen=True, slots=True, eq=False)
class Pair:
    """A validated (prediction, GT) pair ready for every measure.

    ``pred`` is C-contiguous float64 in [0, 1], read-only; ``gt`` a :class:`GroundTruth`.
    Shared prediction-level quantities are memoised in ``_memo``.
    """

    pred: np.ndarray
    gt: GroundTruth
    norm: Normalization
    notes: tuple[str, ...] = ()
    #: a uint8 map's own levels (a copy) and the value of each (``pred`` is
    #: ``table[levels]`` exactly), or None: pixel counts per threshold are then counted
    #: per level, in two histograms of 256 bins
    levels: np.ndarray | None = field(default=None, repr=False)
    table: np.ndarray | None = field(default=None, repr=False)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def mask(self) -> np.ndarray:
        """The binary GT mask."""
        return self.gt.mask

    def memo(self, key: str, func: Callable[[], T]) -> T:
        """Return ``func()`` computed once per pair under ``key``."""
        try:
            return cast(T, self._memo[key])
        except KeyError:
            value = func()
            self._memo[key] = value
            return value

    def level_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Pixels of each of a uint8 map's 256 levels (int64): all of them, and on the GT
        foreground (memoised). Counted under the first of :data:`FG_PARITY_LABELS` when one
        is registered (its labels summed pairwise), else under the GT mask."""

        def count() -> tuple[np.ndarray, np.ndarray]:
            gt = self.gt
            finer = FG_PARITY_LABELS[0](gt) if FG_PARITY_LABELS else None
            if finer is not None:
                labels, n, key = finer
            else:
                labels = gt.memo("mask.u8", lambda: np.ascontiguousarray(gt.mask, np.uint8))
                n, key = 2, "fg"
            counts = self.labelled_counts(labels, n, key)
            return readonly(counts.sum(axis=1)), readonly(counts[:, 1::2].sum(axis=1))

        return self.memo("level_counts", count)

    def labelled_counts(self, labels: np.ndarray, n: int, key: str) -> np.ndarray:
        """Pixels of each of a uint8 map's 256 levels under each label (``labels``: uint8
        below ``n``, the GT's shape), as a (256, n) int64 array memoised under ``key``:
        one pass over the map, however many regions are counted."""
        levels = self.levels
        if levels is None:
            raise ValueError("not a uint8 map: no levels to count")

        def count() -> np.ndarray:
            if levels.size < _FLOAT32_EXACT:  # OpenCV's 2-D histogram, in float32
                h = cv2.calcHist([levels, labels], [0, 1], None, [256, n], [0, 256, 0, n])
            else:
                joint = levels.astype(np.intp) * n + labels
                h = np.bincount(joint.ravel(), minlength=256 * n).reshape(256, n)
            return readonly(h.astype(np.int64))

        return self.memo(f"level_counts.{key}", count)

    @property
    def quantized(self) -> np.ndarray:
        """The grid of the 256-threshold curves as uint8, so that curve point t is
        ``quantized >= t``: ``floor(255 * pred)``, or with MATLAB's thresholds T the number
        of T_t ≤ pred, less one."""
        return self.memo("quantized", self._quantize)

    def _quantize(self) -> np.ndarray:
        return readonly(self.grid_of(self.pred))

    def grid_of(self, values: np.ndarray) -> np.ndarray:
        """The curves' grid index (uint8) of normalised values: what :attr:`quantized` is
        of every pixel, and of every level of :attr:`table`."""
        if self.norm.thresholds == "matlab":  # compared with the continuous map
            grid = np.searchsorted(MATLAB_THRESHOLDS, values, side="right") - 1
            return grid.astype(np.uint8)
        return (values * 255).astype(np.uint8)

    @property
    def pred_sum(self) -> Any:
        """Σ pred, summed as ``pred.mean()`` sums it (NumPy's pairwise ``add.reduce``):
        the adaptive threshold and both Context-measures' F_m share one pass (issue #50)."""
        return self.memo("pred_sum", lambda: np.sum(self.pred))

    @property
    def adaptive_threshold(self) -> float:
        """``min(2 * mean(pred), 1)``; the mean is ``pred.mean()``'s own: its sum over the
        pixels' count."""
        return self.memo(
            "adaptive_threshold", lambda: float(min(2 * (self.pred_sum / self.pred.size), 1))
        )

    def binary_at(self, index: int) -> np.ndarray:
        """The binarisation behind curve point ``index``: ``quantized >= index``."""
        return self.quantized >= index

    def confusion_codes(
        self, index: int | None = None, *, threshold: float | None = None
    ) -> np.ndarray:
        """Per-pixel outcome 0 TN, 1 FP, 2 FN, 3 TP (uint8) of curve point ``index``
        (``floor(255·pred) >= index``) or of ``pred >= threshold``."""
        binary = self.binary_at(index) if index is not None else self.pred >= threshold
        return binary.astype(np.uint8) | (self.mask.astype(np.uint8) << 1)


def prepare_gt(
    gt: np.ndarray | GroundTruth, norm: Normalization = DEFAULT_NORMALIZATION
) -> GroundTruth:
    """Binarise a GT map once (see :class:`GroundTruth`).

    Raises
    ------
    ValueError
        If the GT was already prepared under a different normalisation, or is not 2-D.
    """
    if isinstance(gt, GroundTruth):
        if gt.norm.gt_rule != norm.gt_rule:
            raise ValueError(
                f"the GroundTruth was prepared with {gt.norm.gt_rule}, but {norm.gt_rule} was "
                "requested"
            )
        return gt
    return GroundTruth(binarize_gt(gt, norm), norm)


def prepare(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> Pair:
    """Validate and normalise a (prediction, GT) pair.

    Parameters
    ----------
    pred : array or Pair
        Prediction map (uint8/uint16/int in [0, 255], float in [0, 1] or bool), or an already
        prepared :class:`Pair` (then ``gt`` must be ``None``).
    gt : array or GroundTruth
        GT map, or a :class:`GroundTruth` from :func:`prepare_gt`.
    norm : Normalization
        Binarisation and stretch rules.

    Raises
    ------
    ValueError
        Mismatched shapes, maps that are not 2-D, values out of range.
    TypeError
        Unsupported dtypes.
    """
    if isinstance(pred, Pair):
        if gt is not None:
            raise TypeError("pass either a prepared Pair or (pred, gt), not both")
        return pred
    if gt is None:
        raise TypeError("a ground truth is required")
    gt_prepared = prepare_gt(gt, norm)
    pred = np.asarray(pred)
    _check_2d("prediction", pred)
    if pred.shape != gt_prepared.shape:
        raise ValueError(
            f"prediction shape {pred.shape} does not match GT shape {gt_prepared.shape}; resize "
            "the prediction to the GT size first (fminspect.io.load_pair does this, bilinear "
            "by default)"
        )
    if pred.dtype == np.uint8:
        levels = np.array(pred, order="C")  # a copy: the caller may change its array
        table, notes = level_table(levels, norm)
        return Pair(
            pred=readonly(cv2.LUT(levels, table)),
            gt=gt_prepared,
            norm=norm,
            notes=notes,
            levels=readonly(levels),
            table=readonly(table),
        )
    pred_norm, notes = normalize_pred(pred, norm)
    return Pair(pred=readonly(pred_norm), gt=gt_prepared, norm=norm, notes=notes)
