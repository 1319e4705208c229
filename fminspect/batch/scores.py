"""Per-image scores of a whole dataset in one array: samples × methods × measures.

What the window's browser and dataset view hold for thousands of images × dozens of methods:
scores, never pixels. 5,019 images × 40 methods × 20 measures take 32 MB.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fminspect.io.discovery import Dataset
from fminspect.pipeline.config import EvalConfig


@dataclass(frozen=True, slots=True)
class ScoreBlock:
    """Scores of some (sample, method) pairs, as arrays: compact to send between processes.

    ``values[r]`` holds the scores (in the matrix's key order) of sample ``samples[r]`` and
    method ``methods[r]`` (indices into the matrix's lists)."""

    samples: np.ndarray  # (n,) sample indices
    methods: np.ndarray  # (n,) method indices
    values: np.ndarray  # (n, n_keys)

    def __len__(self) -> int:
        return len(self.samples)


class ScoreMatrix:
    """Scores by (sample, method, measure key); NaN where not (yet) known.

    One thread may write while another reads (the window's background evaluation fills it,
    the GUI thread draws from it): a cell is a float64, written and read whole.
    """

    def __init__(self, samples: Sequence[str], methods: Sequence[str], keys: Sequence[str]) -> None:
        self.samples = list(samples)
        self.methods = list(methods)
        self.keys = tuple(keys)
        self.sample_index = {s: i for i, s in enumerate(self.samples)}
        self.method_index = {m: j for j, m in enumerate(self.methods)}
        self.key_index = {k: c for c, k in enumerate(self.keys)}
        self.values = np.full((len(self.samples), len(self.methods), len(self.keys)), np.nan)
        self.filled = np.zeros((len(self.samples), len(self.methods)), bool)

    def block(self, rows: Iterable[tuple[str, str, Mapping[str, float]]]) -> ScoreBlock:
        """Rows ``(sample, method, scores)`` as a :class:`ScoreBlock` of this matrix's
        indices (rows of samples or methods it does not know are left out)."""
        si, mi, vals = [], [], []
        nan = math.nan
        for sample, method, scores in rows:
            i, j = self.sample_index.get(sample), self.method_index.get(method)
            if i is None or j is None:
                continue
            si.append(i)
            mi.append(j)
            vals.append([scores.get(k, nan) for k in self.keys])
        return ScoreBlock(
            np.array(si, np.intp),
            np.array(mi, np.intp),
            np.array(vals, np.float64).reshape(len(si), len(self.keys)),
        )

    def put(self, block: ScoreBlock) -> None:
        """Write a block's scores (whole pairs) into the matrix."""
        self.values[block.samples, block.methods] = block.values
        self.filled[block.samples, block.methods] = True

    def get(self, sample: str, method: str) -> dict[str, float] | None:
        """One pair's scores, or None if it has none."""
        i, j = self.sample_index.get(sample), self.method_index.get(method)
        if i is None or j is None or not self.filled[i, j]:
            return None
        return dict(zip(self.keys, self.values[i, j].tolist(), strict=True))

    def column(self, method: str, key: str) -> np.ndarray:
        """One method's values of one measure for every sample (a view)."""
        return self.values[:, self.method_index[method], self.key_index[key]]

    def per_model(self, i: int) -> dict[str, dict[str, float]]:
        """Sample ``i``'s scores by model (the models that have any)."""
        return {
            m: dict(zip(self.keys, self.values[i, j].tolist(), strict=True))
            for j, m in enumerate(self.methods)
            if self.filled[i, j]
        }

    @property
    def done(self) -> int:
        """Number of (sample, method) pairs with scores."""
        return int(self.filled.sum())

    def value(self, sample: str, method: str, key: str) -> float:
        """One score (NaN when unknown)."""
        i, j = self.sample_index.get(sample), self.method_index.get(method)
        c = self.key_index.get(key)
        if i is None or j is None or c is None:
            return math.nan
        return float(self.values[i, j, c])


def score_matrix(
    dataset: Dataset, config: EvalConfig, made: ScoreMatrix | None = None
) -> ScoreMatrix:
    """An empty score matrix of ``dataset``'s samples × methods × ``config``'s measures, or
    ``made`` if it is one. At 5,019 × 40 its first allocation took 80–150 ms (the pages are
    touched as it is filled with NaN): the window makes it on the thread that reads the
    folder (:meth:`fminspect.inspector.scoring.ScoringService.start`)."""
    with_images = dataset.image is not None and any(s.image for s in dataset.samples)
    keys = tuple(config.keys_for(with_images))
    if (
        made is not None
        and made.keys == keys
        and made.methods == dataset.method_names
        and len(made.samples) == len(dataset.samples)
        and not made.filled.any()
    ):
        return made
    return ScoreMatrix([s.name for s in dataset.samples], dataset.method_names, keys)
