"""Multiscale IoU at real sizes and over every threshold, against pysodmetrics 1.6.2.

pysodmetrics counts the GT's occupied cells in float16 (``np.hypot`` of boolean Sobel
responses makes its edge maps float16): past 2048 cells the count is rounded (8625 → 8624).
fminspect's default ``msiou_counting="float16"`` reproduces that, to 1e-10 at ≥ 1000 × 1000
with large objects; ``"exact"`` counts in integers and differs there, by the rounding alone.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from fminspect.metrics import Params, evaluate, msiou
from fminspect.metrics._inputs import prepare
from fminspect.metrics.msiou import denominators, msiou_curve

pytestmark = pytest.mark.reference


def _large(seed: int, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """A GT with large, ragged objects (thousands of edge pixels) and a blurred, shifted,
    noisy prediction of it."""
    rng = np.random.default_rng(seed)
    h, w = shape
    gt = np.zeros(shape, np.uint8)
    for _ in range(4):
        centre = (int(rng.integers(w // 5, 4 * w // 5)), int(rng.integers(h // 5, 4 * h // 5)))
        axes = (int(rng.integers(h // 8, h // 3)), int(rng.integers(h // 10, h // 4)))
        cv2.ellipse(gt, centre, axes, float(rng.uniform(0, 180)), 0, 360, 255, -1)
    noise = (rng.random(shape) < 0.002).astype(np.uint8) * 255  # specks: thin structures
    gt = np.maximum(gt, cv2.dilate(noise, np.ones((3, 3), np.uint8)))
    pred = cv2.GaussianBlur(np.roll(gt, 7, axis=1), (0, 0), 6)
    pred = np.clip(pred.astype(np.int16) + rng.integers(-30, 30, shape), 0, 255).astype(np.uint8)
    return pred, gt


@pytest.mark.slow
def test_adaptive_and_binary_equal_the_reference_at_real_sizes(pysod) -> None:  # type: ignore[no-untyped-def]
    cases = []
    for i, shape in enumerate([(1100, 1300), (1024, 1024), (1200, 900)]):
        pred, gt = _large(i, shape)
        cases.append({"id": f"large-{i}", "pred": pred, "gt": gt, "normalize": True})
    meta = [{"groups": ["msiou"], "normalize": True} for _ in cases]
    results = pysod(cases, meta)["results"]
    rounded = 0
    for case, ref in zip(cases, results, strict=True):
        r = msiou(case["pred"], case["gt"])
        gt_cells = r.binary.gt_cells
        assert gt_cells[0] > 2048, "not a real-size case: the GT's edge count is small"
        assert r.adaptive.score == pytest.approx(ref["msiou_adp"], abs=1e-10), case["id"]
        assert r.binary.score == pytest.approx(ref["msiou_bin"], abs=1e-10), case["id"]
        exact = msiou(case["pred"], case["gt"], counting="exact")
        if not np.array_equal(denominators(gt_cells, "exact"), denominators(gt_cells, "float16")):
            rounded += 1
            assert exact.binary.score != r.binary.score
            assert abs(exact.binary.score - ref["msiou_bin"]) < 1e-3  # the rounding alone
    assert rounded >= 2  # the float16 rounding was really exercised


@pytest.mark.slow
def test_the_257_threshold_curve_equals_the_dynamic_mode(pysod) -> None:  # type: ignore[no-untyped-def]
    cases = []
    rng = np.random.default_rng(4)
    for i in range(5):
        pred, gt = _large(10 + i, (150, 200))
        levels = int(rng.integers(6, 40))  # few grey levels: the reference is slow per level
        pred = (pred // (256 // levels) * (256 // levels)).astype(np.uint8)
        if i == 0:
            pred[:] = 0
            pred[40:80, 50:120] = 255  # a binary map
        cases.append({"id": f"dyn-{i}", "pred": pred, "gt": gt, "normalize": True})
    # a real size, where the GT's cells pass 2048 (float16 counts) — at 5 grey levels
    pred, gt = _large(20, (1024, 1100))
    pred = (pred // 52 * 52).astype(np.uint8)
    cases.append({"id": "dyn-real", "pred": pred, "gt": gt, "normalize": True})
    meta = [{"groups": ["msiou_dynamic"], "normalize": True} for _ in cases]
    results = pysod(cases, meta)["results"]
    for case, ref in zip(cases, results, strict=True):
        curve = msiou_curve(prepare(case["pred"], case["gt"])).curve
        np.testing.assert_allclose(curve, ref["msiou_curve"], rtol=0, atol=1e-10)
        scores = evaluate(case["pred"], case["gt"], keys=["meanMSIoU", "maxMSIoU"])
        assert scores["maxMSIoU"] == pytest.approx(max(ref["msiou_curve"]), abs=1e-10)


def test_float16_counting_rounds_and_overflows_as_numpy_does() -> None:
    counts = np.array([0, 2047, 2048, 2049, 8625, 8627, 65503, 65520])
    den = denominators(counts, "float16")
    assert den.tolist()[:6] == [1.0, 2048.0, 2048.0, 2048.0, 8624.0, 8624.0]
    assert den[6] == 65504.0 and np.isinf(den[7])  # the reference's ratio is then 0
    assert denominators(counts, "exact").tolist() == (counts + 1).tolist()
    with pytest.raises(ValueError, match="counting"):
        denominators(counts, "float32")
    with pytest.raises(ValueError, match="msiou_counting"):
        Params(msiou_counting="float32")
