"""Dataset-level values from per-image results, exactly as the community computes them.

pysodmetrics accumulates one value (or one 256-value curve) per image and averages; then
PySODEvalToolkit, the MATLAB one-key toolbox and the papers report (METRICS §0.4):

* ``maxFm``, ``maxEm``, ``maxIoU``, ``maxDice``… = **max over thresholds of the
  image-averaged curve** — *not* the mean of per-image maxima (which is larger);
* ``meanFm``, ``meanEm``, ``meanIoU``, ``meanDice``… = mean of the image-averaged curve
  (equal to the mean of per-image curve means);
* ``pooled…`` = the measure of one confusion matrix summed over every image's binary map
  (pysodmetrics' ``sample_based=False``, the form segmentation papers report);
* every adaptive, binary and scalar measure (``adp*``, ``bin*``, ``Sm``, ``wFm``, ``MAE``,
  ``relaxFm``, ``*MSIoU``, ``Cm``, ``CCm``) = mean over images.

How each key is formed is its registry entry's :class:`~fminspect.metrics.registry.DatasetValue`.
The image-averaged curves of the confusion-count measures are derived from every image's
sweep counts (TP and FP at the 256 thresholds), all images of a method at once, element by
element as each image's own curve is computed, then added image after image: the same
numbers, to the last bit, as averaging the images' curves (tested).

:class:`DatasetAccumulator` keeps the per-image values too, for failure-case inspection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fminspect.metrics._confusion import sweep_rows
from fminspect.metrics.registry import CURVES, MEASURES_BY_KEY, Pooled

#: The arrays of a sweep record (see :func:`fminspect.metrics._confusion.sweep_arrays`).
SWEEP_ARRAYS = ("tp", "fp", "counts")


@dataclass(slots=True)
class DatasetAccumulator:
    """Accumulates per-image scores, curves and sweep counts; :meth:`results` gives the
    dataset values.

    Images are kept in insertion order; results do not depend on anything else, so the same
    images in the same order give bit-identical values. Stored curves are summed as they
    come; sweep counts (512 numbers an image) are kept and turned into curves when the
    results are asked for. Adding rows one by one in order and dividing by their number is
    exactly what ``np.mean(rows, axis=0)`` computes for a C-ordered stack of rows, so both
    give the same result to the last bit (tested).
    """

    names: list[str] = field(default_factory=list)
    scores: dict[str, list[float]] = field(default_factory=dict)
    curve_sums: dict[str, np.ndarray] = field(default_factory=dict)
    sweeps: dict[str, list[np.ndarray]] = field(default_factory=dict)
    #: keep every image's stored curves too (for :meth:`replicates`; off: only their sums)
    keep_rows: bool = False
    curve_rows: dict[str, list[np.ndarray]] = field(default_factory=dict)
    #: the stacked sweep counts and the mean curves per parameters, until the next image
    _derived: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def add(self, name: str, scores: Mapping[str, float], curves: Mapping[str, np.ndarray]) -> None:
        """Record one image: its scores and its stored arrays (curves, sweep counts)."""
        sweep = {k: v for k, v in curves.items() if k in SWEEP_ARRAYS}
        curves = {k: v for k, v in curves.items() if k not in SWEEP_ARRAYS}
        if self.names and set(scores) != set(self.scores):
            raise ValueError(
                f"image {name!r} has scores {sorted(scores)}, earlier images {sorted(self.scores)}"
            )
        if self.names and set(curves) != set(self.curve_sums):
            raise ValueError(
                f"image {name!r} has curves {sorted(curves)}, earlier images "
                f"{sorted(self.curve_sums)}"
            )
        if self.names and set(sweep) != set(self.sweeps):
            raise ValueError(f"image {name!r} has sweep counts and earlier images not, or back")
        self._derived.clear()
        self.names.append(name)
        for key, value in scores.items():
            self.scores.setdefault(key, []).append(float(value))
        for key, curve in curves.items():
            if key in self.curve_sums:
                self.curve_sums[key] += curve
            else:
                self.curve_sums[key] = np.array(curve, dtype=np.float64)
            if self.keep_rows:
                self.curve_rows.setdefault(key, []).append(np.asarray(curve, dtype=np.float64))
        for key, arr in sweep.items():
            self.sweeps.setdefault(key, []).append(np.asarray(arr))

    def __len__(self) -> int:
        return len(self.names)

    def _sweep(self) -> tuple[Any, np.ndarray] | None:
        if not self.sweeps:
            return None
        if "sweep" not in self._derived:  # stacked once for the curves and the pooled counts
            self._derived["sweep"] = sweep_rows(*(np.stack(self.sweeps[k]) for k in SWEEP_ARRAYS))
        return self._derived["sweep"]  # type: ignore[no-any-return]

    def mean_curves(self, params: Any = None) -> dict[str, np.ndarray]:
        """Image-averaged curves (256 values, ascending threshold): the stored ones and every
        registered curve derived from the sweep counts (under ``params``: β² for Fm). Made
        once per parameters until the next image is added (callers get their own dict)."""
        from fminspect.metrics.suite import DEFAULT_PARAMS

        params = DEFAULT_PARAMS if params is None else params
        key = ("curves", params)
        if key not in self._derived:
            self._derived[key] = self._mean_curves(params)
        return dict(self._derived[key])

    def _mean_curves(self, params: Any) -> dict[str, np.ndarray]:
        n = len(self.names)
        out = {k: v / n for k, v in self.curve_sums.items()}
        swept = self._sweep()
        if swept is not None:
            rows = swept[0]
            for name, info in CURVES.items():
                derived = info.derive(rows, params) if info.derive is not None else None
                if derived is not None:  # None: stored by its family under these params
                    per_image = np.ascontiguousarray(derived, dtype=np.float64)
                    out[name] = np.add.reduce(per_image, axis=0) / n
        for curve in out.values():
            curve.flags.writeable = False  # shared by every caller until the next image
        return out

    def _empty_gt(self) -> np.ndarray:
        """Which images' GT is empty (bool per image; all False without sweep counts)."""
        swept = self._sweep()
        if swept is None:
            return np.zeros(len(self.names), dtype=bool)
        return np.asarray(np.asarray(swept[0].n_fg).ravel() == 0, dtype=bool)

    def pooled(self) -> Pooled | None:
        """The binary (pred > 0.5) counts summed over the images (None without sweeps)."""
        swept = self._sweep()
        if swept is None:
            return None
        tp, fp, tn, fn = swept[1].sum(axis=0)
        return Pooled(tp=tp, fp=fp, tn=tn, fn=fn)

    def counts(self) -> dict[str, int]:
        """Number of images each key's dataset value rests on: those with a (non-NaN) value
        for a mean over images; every image for a value formed from curves or summed counts
        (an image whose own value is NaN — AUCROC of an empty GT — is still in them)."""
        out = {}
        for k, v in self.scores.items():
            info = MEASURES_BY_KEY.get(k)
            if info is not None and info.dataset.kind != "mean":
                out[k] = len(self.names)
            else:
                out[k] = int(np.count_nonzero(~np.isnan(np.array(v))))
        return out

    def results(self, params: Any = None) -> dict[str, float]:
        """Dataset-level values under the same keys as the per-image scores.

        A NaN per-image value (a measure that could not be computed for that image, e.g.
        ``CCm`` without its image) is left out of that key's mean; :meth:`counts` says how
        many images each value averages. Without NaNs the mean is exactly ``np.mean``.

        Raises
        ------
        ValueError
            No image was added, or a key formed from curves or pooled counts has neither.
        """
        from fminspect.metrics.suite import DEFAULT_PARAMS

        params = DEFAULT_PARAMS if params is None else params
        if not self.names:
            raise ValueError("no image was added")
        out = {}
        for k, v in self.scores.items():
            arr = np.array(v, dtype=np.float64)
            nan = np.isnan(arr)
            if nan.all():
                out[k] = float("nan")
            else:
                out[k] = float(np.mean(arr[~nan]) if nan.any() else np.mean(arr))
        curves = self.mean_curves(params)
        pooled = None
        for k in list(out):
            info = MEASURES_BY_KEY.get(k)
            if info is None or info.dataset.reduce is None:
                continue
            if info.dataset.kind == "curves":
                missing = [c for c in info.dataset.curves if c not in curves]
                if missing:
                    raise ValueError(f"{k} needs the curves {missing}, which were not recorded")
                out[k] = info.dataset.reduce(curves, params)
                if info.dataset.empty_gt_nan and self._empty_gt().any():
                    out[k] = float("nan")
            elif info.dataset.kind == "sums":
                # arrays a family sums over the images itself (e.g. curves over targets)
                name = info.dataset.curves[0]
                if name not in self.curve_sums:
                    raise ValueError(f"{k} needs the sums {name!r}, which were not recorded")
                out[k] = info.dataset.reduce(self.curve_sums[name], params)
            elif info.dataset.kind == "pooled" and info.dataset.curves:
                # counts a family summed itself (TP, FP, TN, FN): their sums over the images
                name = info.dataset.curves[0]
                if name not in self.curve_sums:
                    raise ValueError(f"{k} needs the counts {name!r}, which were not recorded")
                tp, fp, tn, fn = self.curve_sums[name].astype(np.int64)
                out[k] = info.dataset.reduce(Pooled(tp=tp, fp=fp, tn=tn, fn=fn), params)
            elif info.dataset.kind == "pooled":
                pooled = pooled or self.pooled()
                if pooled is None:
                    raise ValueError(f"{k} needs the sweep counts, which were not recorded")
                out[k] = info.dataset.reduce(pooled, params)
        return out

    def replicates(
        self, weights: np.ndarray, keys: Iterable[str], params: Any = None
    ) -> dict[str, np.ndarray]:
        """Each key's dataset value under every row of ``weights`` (shape (B, images): how
        many times each image counts, e.g. bootstrap resampling counts), formed exactly as
        :meth:`results` forms it — a mean over images becomes the weighted mean, an
        image-averaged curve the weighted average curve (then its max or mean), pooled
        counts the weighted sums. With a row of ones it is :meth:`results` (to rounding).

        Needs ``keep_rows=True`` for keys formed from stored curves or summed arrays.
        Returns ``{key: values of shape (B,)}``.
        """
        from fminspect.metrics.suite import DEFAULT_PARAMS

        params = DEFAULT_PARAMS if params is None else params
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 2 or w.shape[1] != len(self.names):
            raise ValueError(f"weights must be (B, {len(self.names)}), got {w.shape}")
        total = w.sum(axis=1)
        keys = list(keys)
        out: dict[str, np.ndarray] = {}
        curve_cache: dict[str, np.ndarray] = {}
        swept = self._sweep()

        def weighted_curve(name: str) -> np.ndarray:  # (B, L): the weighted image average
            if name not in curve_cache:
                if name in self.curve_rows:
                    rows = np.stack(self.curve_rows[name])
                elif swept is not None and name in CURVES and CURVES[name].derive is not None:
                    derive = CURVES[name].derive
                    assert derive is not None
                    rows = np.asarray(derive(swept[0], params), dtype=np.float64)
                else:
                    raise ValueError(f"the curve {name!r} was not recorded image by image")
                curve_cache[name] = (w @ rows) / total[:, None]
            return curve_cache[name]

        for k in keys:
            info = MEASURES_BY_KEY.get(k)
            kind = "mean" if info is None or info.dataset.reduce is None else info.dataset.kind
            if kind == "mean":
                v = np.array(self.scores[k], dtype=np.float64)
                ok = ~np.isnan(v)
                den = w[:, ok].sum(axis=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[k] = (w[:, ok] @ v[ok]) / den
                continue
            assert info is not None and info.dataset.reduce is not None
            reduce = info.dataset.reduce
            if kind == "curves":
                curves = {c: weighted_curve(c) for c in info.dataset.curves}
                out[k] = np.array(
                    [reduce({c: m[b] for c, m in curves.items()}, params) for b in range(len(w))]
                )
                if info.dataset.empty_gt_nan:
                    out[k][(w[:, self._empty_gt()] > 0).any(axis=1)] = np.nan
            elif kind == "sums":
                summed = w @ np.stack(self.curve_rows[info.dataset.curves[0]])
                out[k] = np.array([reduce(row, params) for row in summed])
            else:  # pooled: counts summed over the images, each counted its weight
                if info.dataset.curves:
                    counts = np.stack(self.curve_rows[info.dataset.curves[0]])
                elif swept is not None:
                    counts = swept[1]
                else:
                    raise ValueError(f"{k} needs the sweep counts, which were not recorded")
                summed = w @ counts.astype(np.float64)
                out[k] = np.array(
                    [reduce(Pooled(tp=r[0], fp=r[1], tn=r[2], fn=r[3]), params) for r in summed]
                )
        return out

    # ------------------------------------------------------------------ groups
    def weighted_mean_curves(
        self, weights: np.ndarray, params: Any = None
    ) -> dict[str, np.ndarray]:
        """:meth:`mean_curves` with image ``i`` counted ``weights[i]`` times (needs
        ``keep_rows=True`` for stored curves)."""
        from fminspect.metrics.suite import DEFAULT_PARAMS

        params = DEFAULT_PARAMS if params is None else params
        w = np.asarray(weights, dtype=np.float64)
        total = w.sum()
        out = {name: (w @ np.stack(rows)) / total for name, rows in self.curve_rows.items()}
        swept = self._sweep()
        if swept is not None:
            for name, info in CURVES.items():
                derived = info.derive(swept[0], params) if info.derive is not None else None
                if derived is not None:
                    out[name] = (w @ np.asarray(derived, dtype=np.float64)) / total
        return out

    def grouped_results(self, groups: Iterable[str], params: Any = None) -> dict[str, float]:
        """Dataset values of a grouped dataset (co-SOD groups, video sequences), as
        PySODEvalToolkit's ``GroupedMetricRecorder`` forms them: every group's values, then
        their plain mean over the groups — so a mean over images becomes the mean of the
        groups' means, and a max (or mean) of the curve is taken on the mean of the groups'
        mean curves. ``groups`` gives each image's group, in the order the images were
        added. Needs ``keep_rows=True``.

        A mean over images is the weighted mean with weights 1/|group| (NaN values left out
        with their weight); a key formed from pooled counts or summed arrays is computed per
        group and averaged over the groups.
        """
        labels = list(groups)
        if not labels:
            raise ValueError("no image was added")
        names = list(dict.fromkeys(labels))
        ones = np.ones((1, len(names)))
        return {
            k: float(v[0])
            for k, v in self.grouped_replicates(labels, names, ones, self.scores, params).items()
        }

    def grouped_replicates(
        self,
        groups: Sequence[str],
        names: Sequence[str],
        counts: np.ndarray,
        keys: Iterable[str],
        params: Any = None,
    ) -> dict[str, np.ndarray]:
        """:meth:`grouped_results` under every row of ``counts`` (shape (B, G): how many times
        each of the groups ``names`` counts, e.g. the draws of a bootstrap that resamples whole
        groups), formed exactly as :meth:`grouped_results` forms the value — so a row of ones
        gives it. ``groups``: each image's group, in the order the images were added.

        A group drawn c times counts as c groups: its images weigh c/|group| in a mean over
        images and in the mean curve; a key formed from pooled counts or summed arrays takes
        each group's own value, weighted by c. Needs ``keep_rows=True``.
        """
        labels = list(groups)
        if len(labels) != len(self.names):
            raise ValueError(f"{len(labels)} groups for {len(self.names)} images")
        c = np.asarray(counts, dtype=np.float64)
        index = {g: i for i, g in enumerate(names)}
        if c.ndim != 2 or c.shape[1] != len(index):
            raise ValueError(f"counts must be (B, {len(index)}), got {c.shape}")
        of = np.array([index[g] for g in labels], dtype=np.intp)
        size = np.bincount(of, minlength=len(index)).astype(np.float64)
        keys = list(keys)
        per_group = [
            k
            for k in keys
            if (info := MEASURES_BY_KEY.get(k)) is not None
            and info.dataset.reduce is not None
            and info.dataset.kind in ("pooled", "sums")
        ]
        out = self.replicates(c[:, of] / size[of], [k for k in keys if k not in per_group], params)
        if per_group:
            present = np.flatnonzero(size)  # groups with none of these images: no value
            indicator = (of[None, :] == present[:, None]).astype(np.float64)
            drawn = c[:, present]
            with np.errstate(invalid="ignore", divide="ignore"):
                for k, values in self.replicates(indicator, per_group, params).items():
                    out[k] = (drawn @ values) / drawn.sum(axis=1)
        return out


def group_weights(groups: Iterable[str]) -> np.ndarray:
    """Each image's weight 1/|its group| (see :meth:`DatasetAccumulator.grouped_results`)."""
    _, inverse, counts = np.unique(
        np.array(list(groups), dtype=object), return_inverse=True, return_counts=True
    )
    return np.asarray(1.0 / counts[inverse], dtype=np.float64)


def aggregate(
    records: Iterable[tuple[str, Mapping[str, float], Mapping[str, np.ndarray]]],
    params: Any = None,
) -> dict[str, float]:
    """Dataset values from ``(name, scores, curves)`` records (see the module notes)."""
    acc = DatasetAccumulator()
    for name, scores, curves in records:
        acc.add(name, scores, curves)
    return acc.results(params)
