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


@dataclass(frozen=True)
class ToyImageResult:
    """The toy measure that needs the image: the image's mean grey level in [0, 1]."""

    score: float


IMAGE_FAMILY = Family(
    field="toy_image",
    name="toy image measure",
    compute=lambda pair, params, img: (
        None if img is None else ToyImageResult(float(np.asarray(img, np.float64).mean() / 255))
    ),
    measures=(
        # needs_image is not said here: the family's needs_image gives it to its measures
        MeasureInfo(
            "ToyImg",
            "toy image",
            True,
            "toy_image",
            lambda s: s.toy_image.score,
            lambda p: "",
            default=False,
        ),
    ),
    needs_image=True,
    paper="none (a test of the registry)",
    reference="none",
    teaching="The image's brightness: what a measure that reads the image is given.",
    view="mae",
)
