"""The scatter view's points (no Qt): one per listed sample, a measure of method A against
method B, against the object's share of the image, or grouped by an attribute.

"Where does A beat B, and is it the small objects?": the points are the samples the browser
lists (its filter applies), A's score on the y axis; on the x axis B's score on the same
measure (the diagonal y = x splits where A is better from where B is), the share of the
image the GT's object covers (:mod:`fminspect.batch.shares`), or one column per value of an
attribute — COD10K's super- or sub-class, or a column of the user's attribute table, the
same rules as ``eval --subsets`` — the points spread across their column by a fixed jitter
(the same place at every drawing). A sample without both values is not drawn.

A rectangle drawn over the points selects their samples: :func:`inside` finds them, and the
model keeps them as the filter's ``selected``.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from fminspect.batch.scores import ScoreMatrix
from fminspect.batch.subsets import Subsets
from fminspect.io.discovery import natural_key

#: What the x axis shows.
AGAINST = ("method", "share", "attribute")
#: Half the width a column of an attribute's points spreads over.
JITTER = 0.32


@dataclass(frozen=True)
class ScatterData:
    """The points: ``rows[i]`` is the sample index (natural order) of point i."""

    rows: np.ndarray
    x: np.ndarray
    y: np.ndarray
    xlabel: str
    ylabel: str
    #: the columns' names when grouped by an attribute (x = column + jitter)
    categories: list[str] = field(default_factory=list)
    #: y = x is meaningful (A against B on one measure)
    diagonal: bool = False

    def __len__(self) -> int:
        return len(self.rows)


def _jitter(name: str, label: str) -> float:
    """A fixed offset in [-JITTER, JITTER] from the sample's name and its column."""
    h = zlib.crc32(f"{label}\0{name}".encode("utf-8", "surrogateescape"))
    return (h / 0xFFFFFFFF * 2 - 1) * JITTER


def scatter_data(
    matrix: ScoreMatrix,
    key: str,
    a: str,
    *,
    against: str = "method",
    b: str | None = None,
    shares: Mapping[str, float] | None = None,
    groups: Subsets | None = None,
    listed: np.ndarray | None = None,
    labels: Mapping[str, str] | None = None,
) -> ScatterData:
    """The points of ``key``: A's score against B's, the share, or an attribute's columns;
    ``listed``: the sample indices drawn (default: all); ``labels``: the models' names shown."""
    if against not in AGAINST:
        raise ValueError(f"against must be one of {', '.join(AGAINST)}, got {against!r}")
    name = dict(labels or {})
    rows = np.arange(len(matrix.samples)) if listed is None else np.asarray(listed, np.intp)
    empty = np.zeros(0)
    if a not in matrix.method_index or key not in matrix.key_index:
        return ScatterData(rows[:0], empty, empty, "", "")
    y_all = np.asarray(matrix.column(a, key), np.float64)
    ylabel = f"{key} of {name.get(a, a)}"
    if against == "method":
        if b is None or b not in matrix.method_index:
            return ScatterData(rows[:0], empty, empty, "", ylabel)
        x_all = np.asarray(matrix.column(b, key), np.float64)
        keep = rows[np.isfinite(x_all[rows]) & np.isfinite(y_all[rows])]
        return ScatterData(
            keep, x_all[keep], y_all[keep], f"{key} of {name.get(b, b)}", ylabel, diagonal=True
        )
    if against == "share":
        known = shares or {}
        x_all = np.array([known.get(n, np.nan) for n in matrix.samples], np.float64)
        keep = rows[np.isfinite(x_all[rows]) & np.isfinite(y_all[rows])]
        return ScatterData(keep, x_all[keep], y_all[keep], "object's share of the image", ylabel)
    if groups is None:
        return ScatterData(rows[:0], empty, empty, "", ylabel)
    points: list[tuple[int, str]] = []
    seen: set[str] = set()
    for i in rows[np.isfinite(y_all[rows])].tolist():
        for label in groups.labels(matrix.samples[i]):
            points.append((i, label))
            seen.add(label)
    categories = sorted(seen, key=natural_key)
    column = {c: k for k, c in enumerate(categories)}
    idx = np.array([i for i, _ in points], np.intp)
    x = np.array([column[c] + _jitter(matrix.samples[i], c) for i, c in points], np.float64)
    source = groups.rule or groups.source
    return ScatterData(idx, x, y_all[idx], source, ylabel, categories)


def inside(data: ScatterData, x0: float, x1: float, y0: float, y1: float) -> np.ndarray:
    """The sample indices (natural order, each once) of the points in the rectangle."""
    lo_x, hi_x = sorted((x0, x1))
    lo_y, hi_y = sorted((y0, y1))
    hit = (data.x >= lo_x) & (data.x <= hi_x) & (data.y >= lo_y) & (data.y <= hi_y)
    return np.unique(data.rows[hit])


def nearest(data: ScatterData, x: float, y: float, sx: float, sy: float) -> int | None:
    """The sample index of the point nearest (x, y), distances scaled by (sx, sy) (the size
    of a screen pixel in data units); None without points."""
    if not len(data):
        return None
    d = ((data.x - x) / sx) ** 2 + ((data.y - y) / sy) ** 2
    return int(data.rows[int(np.argmin(d))])
