"""Dataset-level values from per-image results, exactly as the community computes them.

pysodmetrics accumulates one value (or one 256-value curve) per image and averages; then
PySODEvalToolkit, the MATLAB one-key toolbox and the papers report (METRICS §0.4):

* ``maxFm``, ``maxEm``, ``maxIoU``, ``maxDice`` = **max over thresholds of the
  image-averaged curve** — *not* the mean of per-image maxima (which is larger);
* ``meanFm``, ``meanEm``, ``meanIoU``, ``meanDice`` = mean of the image-averaged curve
  (equal to the mean of per-image curve means);
* every adaptive and scalar measure (``adp*``, ``Sm``, ``wFm``, ``MAE``, ``relaxFm``,
  ``*MSIoU``, ``Cm``, ``CCm``) = mean over images.

:class:`DatasetAccumulator` keeps the per-image values too, for failure-case inspection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

#: key -> (curve name, reduction) for the curve-derived dataset values.
CURVE_KEYS: dict[str, tuple[str, str]] = {
    "maxFm": ("Fm", "max"),
    "meanFm": ("Fm", "mean"),
    "maxEm": ("Em", "max"),
    "meanEm": ("Em", "mean"),
    "maxIoU": ("IoU", "max"),
    "meanIoU": ("IoU", "mean"),
    "maxDice": ("Dice", "max"),
    "meanDice": ("Dice", "mean"),
}


@dataclass(slots=True)
class DatasetAccumulator:
    """Accumulates per-image scores and curves; :meth:`results` gives dataset values.

    Images are kept in insertion order; results do not depend on anything else, so the same
    images in the same order give bit-identical values. Curves are summed as they come (the
    memory does not grow with the number of images): adding the rows one by one in order and
    dividing by their number is exactly what ``np.mean(rows, axis=0)`` computes for a
    C-ordered stack of rows, so the result is the same to the last bit (tested).
    """

    names: list[str] = field(default_factory=list)
    scores: dict[str, list[float]] = field(default_factory=dict)
    curve_sums: dict[str, np.ndarray] = field(default_factory=dict)

    def add(self, name: str, scores: Mapping[str, float], curves: Mapping[str, np.ndarray]) -> None:
        """Record one image."""
        if self.names and set(scores) != set(self.scores):
            raise ValueError(
                f"image {name!r} has scores {sorted(scores)}, earlier images {sorted(self.scores)}"
            )
        if self.names and set(curves) != set(self.curve_sums):
            raise ValueError(
                f"image {name!r} has curves {sorted(curves)}, earlier images "
                f"{sorted(self.curve_sums)}"
            )
        self.names.append(name)
        for key, value in scores.items():
            self.scores.setdefault(key, []).append(float(value))
        for key, curve in curves.items():
            if key in self.curve_sums:
                self.curve_sums[key] += curve
            else:
                self.curve_sums[key] = np.array(curve, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.names)

    def mean_curves(self) -> dict[str, np.ndarray]:
        """Image-averaged curves (256 values, ascending threshold)."""
        return {k: v / len(self.names) for k, v in self.curve_sums.items()}

    def counts(self) -> dict[str, int]:
        """Number of images with a (non-NaN) value, per key."""
        return {k: int(np.count_nonzero(~np.isnan(np.array(v)))) for k, v in self.scores.items()}

    def results(self) -> dict[str, float]:
        """Dataset-level values under the same keys as the per-image scores.

        A NaN per-image value (a measure that could not be computed for that image, e.g.
        ``CCm`` without its image) is left out of that key's mean; :meth:`counts` says how
        many images each value averages. Without NaNs the mean is exactly ``np.mean``.
        """
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
        curves = self.mean_curves()
        for key, (curve, how) in CURVE_KEYS.items():
            if key in out and curve in curves:
                c = curves[curve]
                out[key] = float(c.max() if how == "max" else c.mean())
        return out


def aggregate(
    records: Iterable[tuple[str, Mapping[str, float], Mapping[str, np.ndarray]]],
) -> dict[str, float]:
    """Dataset values from ``(name, scores, curves)`` records (see the module notes)."""
    acc = DatasetAccumulator()
    for name, scores, curves in records:
        acc.add(name, scores, curves)
    return acc.results()
