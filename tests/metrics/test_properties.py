"""Property tests: every score is finite and in range; a perfect map scores the maximum."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fminspect.metrics import MEASURES_BY_KEY, compute_suite

shapes = st.tuples(st.integers(1, 32), st.integers(1, 32))
SETTINGS = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def pairs(draw):  # type: ignore[no-untyped-def]
    shape = draw(shapes)
    gt = draw(arrays(np.uint8, shape, elements=st.sampled_from([0, 255])))
    pred = draw(arrays(np.uint8, shape))
    return pred, gt


@SETTINGS
@given(pairs())
def test_scores_are_finite_and_in_range(pair) -> None:  # type: ignore[no-untyped-def]
    pred, gt = pair
    scores = compute_suite(pred, gt).scores()
    n = pred.size
    for key, value in scores.items():
        if not gt.any() and MEASURES_BY_KEY[key].dataset.empty_gt_nan:
            assert math.isnan(value), key  # the classic benchmark's recall 0/0
            continue
        assert math.isfinite(value), key
        upper = n / (n - 1) if "Em" in key and n > 1 else 1.0
        assert -1e-12 <= value <= upper + 1e-9, (key, value)


@SETTINGS
@given(pairs())
def test_perfect_prediction_scores_the_maximum(pair) -> None:  # type: ignore[no-untyped-def]
    _, gt = pair
    scores = compute_suite(gt.copy(), gt).scores()
    for key in ("maxFm", "maxIoU", "maxDice", "Sm", "relaxFm", "binMSIoU"):
        if gt.any() or key in ("Sm", "relaxFm", "binMSIoU"):
            # the eps terms kept for MATLAB parity leave a perfect S-measure a hair below 1
            # when a quadrant holds a pixel or two (e.g. 0.9999999989)
            assert math.isclose(scores[key], 1.0, rel_tol=0, abs_tol=1e-8), (key, scores[key])
    assert scores["MAE"] == 0.0
    if gt.any() and not gt.all():
        assert scores["wFm"] > 0.999999
        assert MEASURES_BY_KEY["MAE"].higher_is_better is False
