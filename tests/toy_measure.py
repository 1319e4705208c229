"""A measure family defined outside fminspect, for the registry's surface tests
(tests/test_registry_surfaces.py, tests/gui/test_registry_surfaces.py): registered in the test
process, and in worker processes through ``FMINSPECT_MEASURE_MODULES=tests.toy_measure``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fminspect.metrics import Family, MeasureInfo


@dataclass(frozen=True)
class ToyResult:
    """The toy measure: the share of predicted pixels (p ≥ 0.5) inside the GT."""

    score: float


def _toy(pair: Any, params: Any, img: Any) -> ToyResult:
    hit = pair.pred >= 0.5
    n = int(np.count_nonzero(hit))
    return ToyResult(float(np.count_nonzero(hit & pair.mask)) / n if n else 0.0)


FAMILY = Family(
    field="toy",
    name="toy measure",
    compute=_toy,
    measures=(
        MeasureInfo(
            "Toy", "toy", True, "toy", lambda s: s.toy.score, lambda p: "thr=0.5", default=False
        ),
    ),
    paper="none (a test of the registry)",
    reference="none",
    teaching="Rewards predicted pixels inside the object; misses everything else.",
    view="mae",
)
