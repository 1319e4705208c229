"""Size-invariant MAE and F-measure family (Li et al., ICML 2024) for multi-object images.

A large object dominates every pixel-counting measure: miss a small object next to a large
one and MAE, F or IoU barely move. The size-invariant forms evaluate each object in its own
bounding box and average over objects.

* **Objects** (*targets*): the 4-connected components of the GT; those of at least
  ``si_min_area`` = 50 px are targets. If none is that large, every component sharing the
  largest area is (pysodmetrics 1.6.2; the authors' code would take the first only). Each
  target is represented by its bounding box.
* **SI-F family** (``siAdpFm``, ``siMaxIoU``…): for each target box M the ordinary
  confusion-count measure of ``pred·M`` against ``GT ∧ M`` over the *whole* image (outside
  the box both are 0, so the box's surroundings count as background the map does not mark;
  the adaptive threshold is 2·mean of the masked map over the image); per image, the mean
  over targets of each target's adaptive, binary (p > 0.5), curve-max and curve-mean values
  (the curve variants as pysodmetrics' example recorder's ``si_sample_max`` /
  ``si_sample_avg``); over a dataset, the mean over images. ``siPooled…`` sums the binary
  counts of every target of every image into one confusion matrix (``sample_based=False``).
* **Curves over targets** (``siTgtMax…``, ``siTgtMean…``; family ``size_invariance_curve``,
  opt-in): the targets' curves averaged into one curve, then its max or mean; over a dataset
  the curve averages every target of every image, as ``SizeInvarianceFmeasureV2``'s dynamic
  mode with ``sample_based=False`` does (an image weighs as much as it has targets). Each
  pair stores the summed curves (5 × 256) and its number of targets.
* **SI-MAE**: with k targets, the background region outside every box (area A_bg) and
  r = A_bg / (N − A_bg): SI-MAE = [r · Σ_bg |p − g| / A_bg + Σ_k Σ_box_k |p − g| / A_box_k]
  / (k + r). With one target this is the plain MAE (METRICS §2.3).

Edge cases (METRICS §2.3): an empty GT (no target) gives the ordinary measures of the whole
image, as the reference. A GT whose boxes cover the whole image (e.g. an all-foreground GT)
makes the reference fail (an assertion, or 0/0 in SI-MAE's background term): fminspect gives
the background term no weight (r = 0) and records a warning.

Reference: pysodmetrics 1.6.2 ``SizeInvarianceMAE`` and ``SizeInvarianceFmeasureV2`` (to
1e-10, tests/metrics/test_size_invariance.py).

References
----------
.. [1] F. Li, Q. Xu, S. Bao, Z. Yang, R. Cong, X. Cao, Q. Huang, "Size-invariance Matters:
   Rethinking Metrics and Losses for Imbalanced Multi-object Salient Object Detection",
   ICML 2024. arXiv:2405.09782
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fminspect.metrics._confusion import (
    N_THRESHOLDS,
    ConfusionSweep,
    Counts,
    Formula,
    ThresholdScores,
    threshold_scores,
)
from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
)
from fminspect.metrics._numerics import readonly
from fminspect.metrics.fmeasure import BETA2, fmeasure_formula, precision_formula, recall_formula
from fminspect.metrics.overlap import dice_formula, iou_formula
from fminspect.metrics.registry import (
    MEAN,
    DatasetValue,
    Family,
    MeasureInfo,
    Parameter,
    Pooled,
)

#: The least area of a component that is a target on its own (50 px, the authors' code).
MIN_AREA = Parameter(
    "si_min_area",
    50,
    "A_min",
    "the least area (px) of a GT component that is a target of the size-invariant measures "
    "(50, Li et al. 2024)",
    low=1,
    high=1e9,
    integer=True,
)


@dataclass(frozen=True, slots=True)
class Target:
    """One object: its component's label, area and bounding box (rows, cols, half-open)."""

    label: int
    area: int
    top: int
    bottom: int
    left: int
    right: int

    @property
    def box_area(self) -> int:
        """Pixels in the bounding box."""
        return (self.bottom - self.top) * (self.right - self.left)


def targets(mask: np.ndarray, min_area: int = int(MIN_AREA.default)) -> tuple[Target, ...]:
    """The targets of a GT mask (see the module notes), in label order (the raster order of
    each component's first pixel)."""
    from scipy import ndimage  # imported when needed: with scikit-image ~0.3 s a process
    from skimage import measure

    labels = measure.label(mask, connectivity=1, background=0)  # type: ignore[no-untyped-call]
    n = int(labels.max())
    if n == 0:
        return ()
    areas = np.bincount(labels.ravel(), minlength=n + 1)[1:]
    boxes = ndimage.find_objects(labels)
    chosen = [i for i in range(n) if areas[i] >= min_area]
    if not chosen:
        largest = areas.max()
        chosen = [i for i in range(n) if areas[i] == largest]
    return tuple(
        Target(
            label=i + 1,
            area=int(areas[i]),
            top=boxes[i][0].start,
            bottom=boxes[i][0].stop,
            left=boxes[i][1].start,
            right=boxes[i][1].stop,
        )
        for i in chosen
    )


def _box_sweep(pair: Pair, t: Target) -> ConfusionSweep:
    """The threshold sweep of ``pred·M`` against ``GT ∧ M`` over the whole image, M the
    target's box: the box's pixels as they are, every pixel outside it a background pixel
    of value 0."""
    box = (slice(t.top, t.bottom), slice(t.left, t.right))
    q, pred, gt = pair.quantized[box], pair.pred[box], pair.mask[box]
    outside = pair.pred.size - t.box_area
    fg_hist = np.bincount(q[gt], minlength=N_THRESHOLDS)
    bg_hist = np.bincount(q[~gt], minlength=N_THRESHOLDS)
    bg_hist[0] += outside
    tp = np.cumsum(fg_hist[::-1])[::-1].astype(np.int64)
    fp = np.cumsum(bg_hist[::-1])[::-1].astype(np.int64)
    n_fg = int(np.count_nonzero(gt))
    n_bg = pair.pred.size - n_fg
    # the adaptive threshold of the masked map: 2·mean over the whole image, capped at 1,
    # computed on the full-size masked map as the reference does (the same rounding)
    inside = np.zeros(pair.pred.shape, bool)
    inside[box] = True
    thr = float(min(2 * (pair.pred * inside).mean(), 1))
    hit = pred >= thr
    a_tp = int(np.count_nonzero(hit & gt))
    a_fp = int(np.count_nonzero(hit)) - a_tp + (outside if thr <= 0 else 0)
    b_hit = pred > 0.5
    b_tp = int(np.count_nonzero(b_hit & gt))
    b_fp = int(np.count_nonzero(b_hit)) - b_tp
    return ConfusionSweep(
        tp=readonly(tp),
        fp=readonly(fp),
        tn=readonly(n_bg - fp),
        fn=readonly(n_fg - tp),
        n_fg=n_fg,
        n_bg=n_bg,
        adaptive_threshold=thr,
        adaptive=Counts(a_tp, a_fp, n_bg - a_fp, n_fg - a_tp),
        binary=Counts(b_tp, b_fp, n_bg - b_fp, n_fg - b_tp),
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SIScores:
    """One confusion-count measure, size-invariant: per target and the image's means."""

    per_target: tuple[ThresholdScores, ...]

    @property
    def adaptive(self) -> float:
        """Mean over targets of the adaptive value."""
        return float(np.mean([s.adaptive for s in self.per_target]))

    @property
    def binary(self) -> float:
        """Mean over targets of the binary (p > 0.5) value."""
        return float(np.mean([s.binary for s in self.per_target]))

    @property
    def max(self) -> float:
        """Mean over targets of each target's curve maximum (``si_sample_max``)."""
        return float(np.mean([s.curve.max() for s in self.per_target]))

    @property
    def mean(self) -> float:
        """Mean over targets of each target's curve mean (``si_sample_avg``)."""
        return float(np.mean([s.curve.mean() for s in self.per_target]))

    @property
    def curve_sum(self) -> np.ndarray:
        """Σ over targets of each target's 256-threshold curve (ascending thresholds),
        added target by target as pysodmetrics' mean over its (targets × 256) rows does."""
        total = np.zeros(N_THRESHOLDS, np.float64)
        for s in self.per_target:
            total = total + s.curve
        return total

    @property
    def target_curve(self) -> np.ndarray:
        """The curve averaged over the targets (``sample_based=False``'s curve of this
        image alone)."""
        return self.curve_sum / len(self.per_target)

    @property
    def target_max(self) -> float:
        """Max of :attr:`target_curve` (``siTgtMax…`` of one image)."""
        return float(self.target_curve.max())

    @property
    def target_mean(self) -> float:
        """Mean of :attr:`target_curve` (``siTgtMean…`` of one image)."""
        return float(self.target_curve.mean())


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SizeInvarianceResult:
    """Size-invariant MAE and F family of one map, with the targets they rest on.

    Attributes
    ----------
    mae : float
        SI-MAE.
    targets : tuple of Target
        The objects (empty for an empty GT: the measures are then the ordinary ones).
    target_mae : tuple of float
        Σ_box |p − g| / A_box per target.
    background_mae, background_ratio, factor : float
        Σ_bg |p − g| / A_bg, r = A_bg / (N − A_bg) and 1 / (k + r).
    fmeasure, precision, recall, iou, dice : SIScores
        Per target, and the image's means.
    sweeps : tuple of ConfusionSweep
        Each target's counts (the pooled values sum their binary counts).
    box_map : ndarray of int
        How many targets' boxes hold each pixel (for display).
    """

    NAME: ClassVar[str] = "size-invariant measures"

    mae: float
    targets: tuple[Target, ...]
    target_mae: tuple[float, ...]
    background_mae: float
    background_ratio: float
    factor: float
    fmeasure: SIScores
    precision: SIScores
    recall: SIScores
    iou: SIScores
    dice: SIScores
    sweeps: tuple[ConfusionSweep, ...]
    box_map: np.ndarray
    min_area: int
    warnings: tuple[str, ...] = ()

    @property
    def target_curve_sums(self) -> np.ndarray:
        """Σ over targets of the F, precision, recall, IoU and Dice curves (256 each, in that
        order), then the number of targets: what the target-averaged dataset curves sum."""
        rows = [getattr(self, attr).curve_sum for _, _, attr, _ in _SI_MEASURES]
        return np.concatenate([*rows, [float(len(self.sweeps))]])

    @property
    def binary_counts(self) -> np.ndarray:
        """TP, FP, TN, FN of the targets' binary maps, summed over the targets."""
        return np.array(
            [sum(getattr(s.binary, k) for s in self.sweeps) for k in ("tp", "fp", "tn", "fn")],
            dtype=np.float64,
        )


def _formulas(beta2: float) -> dict[str, Formula]:
    return {
        "fmeasure": fmeasure_formula(beta2),
        "precision": precision_formula,
        "recall": recall_formula,
        "iou": iou_formula,
        "dice": dice_formula,
    }


def _targets_and_boxes(pair: Pair, min_area: int) -> tuple[tuple[Target, ...], np.ndarray]:
    """The GT's targets and how many of their boxes hold each pixel."""
    found = targets(pair.mask, int(min_area))
    box_map = np.zeros(pair.mask.shape, np.int32)
    for t in found:
        box_map[t.top : t.bottom, t.left : t.right] += 1
    return found, readonly(box_map)


def size_invariance_from_pair(
    pair: Pair, *, beta2: float = BETA2.default, min_area: int = int(MIN_AREA.default)
) -> SizeInvarianceResult:
    """Size-invariant MAE and F family of a prepared pair (see :func:`size_invariance`)."""
    found, box_map = pair.gt.memo(  # GT-only: once per GT, not per model
        f"size_invariance_targets:{int(min_area)}", lambda: _targets_and_boxes(pair, min_area)
    )
    err = np.abs(pair.pred - pair.mask)
    warnings: list[str] = []
    if not found:  # an empty GT: the ordinary measures of the whole image
        from fminspect.metrics._confusion import confusion_sweep

        sweeps: tuple[ConfusionSweep, ...] = (confusion_sweep(pair),)
        target_mae: tuple[float, ...] = ()
        mae, bg_mae, ratio, factor = float(err.mean()), float("nan"), 0.0, 1.0
        warnings.append("the GT has no object: the ordinary measures of the whole image")
    else:
        sweeps = tuple(_box_sweep(pair, t) for t in found)
        target_mae = tuple(
            float(err[t.top : t.bottom, t.left : t.right].sum() / t.box_area) for t in found
        )
        outside = box_map == 0
        bg_area = int(np.count_nonzero(outside))
        if bg_area == 0:
            ratio, bg_mae = 0.0, float("nan")
            warnings.append(
                "the targets' boxes cover the whole image: no background term (r = 0; "
                "pysodmetrics fails here)"
            )
        else:
            ratio = bg_area / (pair.mask.size - bg_area)
            bg_mae = float(err[outside].sum() / bg_area)
        factor = 1 / (len(found) + ratio)
        # SI-MAE = r·Σ_bg|p − g|/A_bg·factor + Σ_k Σ_box|p − g|/A_box·factor (reference order)
        mae = 0.0 if bg_area == 0 else ratio * float(err[outside].sum()) / bg_area * factor
        for value in target_mae:
            mae += value * factor
    scores = {
        name: SIScores(per_target=tuple(threshold_scores(s, f) for s in sweeps))
        for name, f in _formulas(beta2).items()
    }
    return SizeInvarianceResult(
        mae=float(mae),
        targets=found,
        target_mae=target_mae,
        background_mae=bg_mae,
        background_ratio=float(ratio),
        factor=float(factor),
        sweeps=sweeps,
        box_map=box_map,
        min_area=int(min_area),
        warnings=tuple(warnings),
        **scores,
    )


def size_invariance(
    pred: np.ndarray | Pair,
    gt: np.ndarray | GroundTruth | None = None,
    *,
    beta2: float = BETA2.default,
    min_area: int = int(MIN_AREA.default),
    norm: Normalization = DEFAULT_NORMALIZATION,
) -> SizeInvarianceResult:
    """Size-invariant MAE and F-measure family of a prediction against a GT.

    Examples
    --------
    >>> import numpy as np
    >>> gt = np.zeros((40, 40), np.uint8); gt[5:15, 5:15] = 255; gt[25:35, 25:35] = 255
    >>> pred = gt.copy(); pred[25:35, 25:35] = 0          # the second object missed
    >>> r = size_invariance(pred, gt)
    >>> len(r.targets), round(r.iou.binary, 3)             # half the objects found
    (2, 0.5)
    """
    return size_invariance_from_pair(prepare(pred, gt, norm), beta2=beta2, min_area=min_area)


def _si_pooled(formula: Callable[[Any], Formula]) -> Callable[[Pooled, Any], float]:
    return lambda c, p: float(formula(p)(c.tp, c.fp, c.tn, c.fn))


_SI_MEASURES: tuple[tuple[str, str, str, Callable[[Any], Formula]], ...] = (
    ("Fm", "size-invariant F", "fmeasure", lambda p: fmeasure_formula(p.beta2)),
    ("Pre", "size-invariant precision", "precision", lambda p: precision_formula),
    ("Rec", "size-invariant recall", "recall", lambda p: recall_formula),
    ("IoU", "size-invariant IoU", "iou", lambda p: iou_formula),
    ("Dice", "size-invariant Dice", "dice", lambda p: dice_formula),
)


def _si_keys() -> tuple[MeasureInfo, ...]:
    out = [
        MeasureInfo(
            "siMAE",
            "size-invariant MAE",
            False,
            "size_invariance",
            lambda s: s.size_invariance.mae,
            lambda p: f"A_min={int(p.si_min_area)}",
            default=False,
        )
    ]
    for symbol, name, attr, formula in _SI_MEASURES:

        def get(kind: str, attr: str = attr) -> Callable[[Any], float]:
            return lambda s: getattr(getattr(s.size_invariance, attr), kind)

        def label(extra: str, symbol: str = symbol) -> Callable[[Any], str]:
            beta = "β²={:g} " if symbol == "Fm" else ""
            return lambda p: (beta.format(p.beta2) + extra).strip()

        out += [
            MeasureInfo(
                f"siAdp{symbol}",
                name,
                True,
                "size_invariance",
                get("adaptive"),
                label("thr=2·mean per target"),
                MEAN,
                default=False,
                kind="adaptive",
            ),
            MeasureInfo(
                f"siMean{symbol}",
                name,
                True,
                "size_invariance",
                get("mean"),
                label("mean of each target's curve"),
                MEAN,
                default=False,
                kind="mean",
            ),
            MeasureInfo(
                f"siMax{symbol}",
                name,
                True,
                "size_invariance",
                get("max"),
                label("max of each target's curve"),
                MEAN,
                default=False,
                kind="max",
            ),
            MeasureInfo(
                f"siBin{symbol}",
                name,
                True,
                "size_invariance",
                get("binary"),
                label("thr=0.5"),
                MEAN,
                default=False,
                kind="binary",
            ),
            MeasureInfo(
                f"siPooled{symbol}",
                name,
                True,
                "size_invariance",
                get("binary"),
                label("thr=0.5 pooled over targets"),
                DatasetValue(
                    "one confusion matrix of every target's binary (pred > 0.5) map, summed "
                    "over the dataset (pysodmetrics sample_based=False)",
                    "pooled",
                    ("si_binary",),
                    _si_pooled(formula),
                ),
                default=False,
                kind="pooled",
            ),
        ]
    return tuple(out)


def _target_curve(
    row: int, reduce: Callable[[np.ndarray], Any]
) -> Callable[[np.ndarray, Any], float]:
    """The dataset value of a target-averaged curve: ``reduce`` of row ``row`` of the summed
    :attr:`SizeInvarianceResult.target_curve_sums` divided by the summed target count."""

    def value(sums: np.ndarray, params: Any) -> float:
        n = sums[-1]
        return float(reduce(sums[row * N_THRESHOLDS : (row + 1) * N_THRESHOLDS] / n))

    return value


def _si_curve_keys() -> tuple[MeasureInfo, ...]:
    out = []
    for row, (symbol, name, attr, _) in enumerate(_SI_MEASURES):
        beta = "β²={:g} " if symbol == "Fm" else ""
        for kind, word, reduce in (("mean", "Mean", np.mean), ("max", "Max", np.max)):

            def get(s: Any, attr: str = attr, kind: str = kind) -> float:
                scores = getattr(s.size_invariance_curve, attr)
                return float(scores.target_max if kind == "max" else scores.target_mean)

            def label(p: Any, beta: str = beta, kind: str = kind) -> str:
                return f"{beta.format(p.beta2)}{kind} of the curve averaged over targets"

            out.append(
                MeasureInfo(
                    f"siTgt{word}{symbol}",
                    name,
                    True,
                    "size_invariance_curve",
                    get,
                    label,
                    DatasetValue(
                        f"{kind} over thresholds of the curve averaged over every target of "
                        "every image (pysodmetrics sample_based=False, dynamic)",
                        "sums",
                        ("si_target_curves",),
                        _target_curve(row, reduce),
                    ),
                    default=False,
                    kind=kind,
                )
            )
    return tuple(out)


def _shared(pair: Pair, p: Any, img: Any) -> SizeInvarianceResult:
    """The pair's size-invariant result, computed once for both families."""
    beta2, min_area = float(p.beta2), int(p.si_min_area)
    return pair.memo(
        f"size_invariance:{beta2!r}:{min_area}",
        lambda: size_invariance_from_pair(pair, beta2=beta2, min_area=min_area),
    )


FAMILY = Family(
    field="size_invariance",
    name="size-invariant measures",
    compute=_shared,
    params=(MIN_AREA, BETA2),
    measures=_si_keys(),
    arrays=lambda s: {"si_binary": s.size_invariance.binary_counts},
    paper="Li et al., ICML 2024 (size-invariant SI-MAE and SI-F_β over object boxes)",
    reference="pysodmetrics 1.6.2 SizeInvarianceMAE, SizeInvarianceFmeasureV2",
    teaching=(
        "Rewards finding every object, small ones as much as large ones: each object is "
        "scored in its own box and the boxes are averaged. Misses what lies between the "
        "boxes (only SI-MAE weighs the background), and boxes of touching objects overlap."
    ),
    view="size_invariance",
)

CURVE_FAMILY = Family(
    field="size_invariance_curve",
    name="size-invariant curves over targets",
    compute=_shared,
    params=(MIN_AREA, BETA2),
    measures=_si_curve_keys(),
    arrays=lambda s: {"si_target_curves": s.size_invariance_curve.target_curve_sums},
    paper="Li et al., ICML 2024 (size-invariant SI-F_β over object boxes), over every target",
    reference="pysodmetrics 1.6.2 SizeInvarianceFmeasureV2, dynamic, sample_based=False",
    teaching=(
        FAMILY.teaching + " These keys average the targets' curves before taking the max or "
        "mean, over a dataset across every target of every image: an image counts as "
        "many times as it has objects."
    ),
    view="size_invariance",
)
