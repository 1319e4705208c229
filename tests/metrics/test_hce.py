"""Human correction effort: hand cases and parity with pysodmetrics 1.6.2
``HumanCorrectionEffortMeasure`` on the demo's real maps and on synthetic ones with thin
structures, speckles and holes."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from fminspect.io.resources import resource
from fminspect.metrics import hce

DEMO = resource("demo")


def test_perfect_empty_and_full() -> None:
    gt = np.zeros((40, 40), np.uint8)
    gt[10:30, 10:30] = 255
    assert hce(gt.copy(), gt).score == 0.0
    empty = np.zeros_like(gt)
    assert hce(empty, empty).score == 0.0
    assert hce(empty, np.full_like(gt, 255)).score == 1.0  # one region to fill


def test_a_missing_square_costs_its_corners() -> None:
    gt = np.zeros((60, 60), np.uint8)
    gt[10:50, 10:50] = 255
    pred = gt.copy()
    pred[30:50, 30:50] = 0  # a quarter missing: its two inner edges need a polyline
    r = hce(pred, gt)
    assert r.fp.effort == 0 and r.fn.control_points >= 3 and r.fn.independent == 0
    assert r.score == r.fn.effort


def _synthetic(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    h, w = int(rng.integers(60, 200)), int(rng.integers(60, 200))
    gt = np.zeros((h, w), np.uint8)
    for _ in range(int(rng.integers(1, 4))):
        cv2.ellipse(
            gt,
            (int(rng.integers(0, w)), int(rng.integers(0, h))),
            (int(rng.integers(5, w // 2)), int(rng.integers(5, h // 2))),
            float(rng.uniform(0, 180)),
            0,
            360,
            255,
            -1,
        )
    for _ in range(int(rng.integers(0, 4))):  # thin structures
        p1 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        p2 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        cv2.line(gt, p1, p2, 255, int(rng.integers(1, 3)))
    pred = cv2.GaussianBlur(np.roll(gt, int(rng.integers(-4, 5)), axis=1), (0, 0), 2)
    speckle = rng.random((h, w)) < rng.uniform(0, 0.01)
    pred[speckle] = 255 - pred[speckle]
    if rng.random() < 0.3:
        pred[h // 3 : h // 2, w // 3 : w // 2] = 0  # a hole
    return pred, gt


@pytest.mark.slow
@pytest.mark.reference
def test_parity_with_pysodmetrics(pysod) -> None:  # type: ignore[no-untyped-def]
    cases = []
    for gt_path in sorted((DEMO / "GT").glob("*.png")):
        gt = cv2.imread(str(gt_path), cv2.IMREAD_GRAYSCALE)
        for method in ("RC", "FT", "GTnoise", "GTshift", "GrabCut"):
            pred = cv2.imread(str(DEMO / "Pred" / method / gt_path.name), cv2.IMREAD_GRAYSCALE)
            cases.append({"id": f"{gt_path.stem}-{method}", "pred": pred, "gt": gt})
    for i in range(30):
        pred, gt = _synthetic(i)
        cases.append({"id": f"synthetic-{i}", "pred": pred, "gt": gt})
    for c in cases:
        c["normalize"] = True
    results = pysod(cases, [{"groups": ["hce"], "normalize": True} for _ in cases])["results"]
    nonzero = 0
    for case, ref in zip(cases, results, strict=True):
        assert "hce_error" not in ref, (case["id"], ref)
        ours = hce(case["pred"], case["gt"]).score
        assert ours == ref["hce"], case["id"]
        nonzero += ours > 0
    assert nonzero >= 40  # the cases really exercise corrections
