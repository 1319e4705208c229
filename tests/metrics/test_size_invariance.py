"""Size-invariant MAE and F family: hand cases, the targets, and parity with pysodmetrics
1.6.2's SizeInvarianceMAE and SizeInvarianceFmeasureV2 (per image and pooled)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from fminspect.metrics import DatasetAccumulator, compute_suite, evaluate, mae, size_invariance
from fminspect.metrics.size_invariance import targets

SYMBOL = {"fm": "Fm", "pre": "Pre", "rec": "Rec", "iou": "IoU", "dice": "Dice"}
ATTR = {"Fm": "fmeasure", "Pre": "precision", "Rec": "recall", "IoU": "iou", "Dice": "dice"}


def _objects(seed: int, shape: tuple[int, int] = (120, 160)) -> tuple[np.ndarray, np.ndarray]:
    """A GT with objects of very different sizes (some under 50 px, some at the border) and
    a map that finds the large ones better than the small ones."""
    rng = np.random.default_rng(seed)
    gt = np.zeros(shape, np.uint8)
    for _ in range(int(rng.integers(1, 6))):
        r = int(rng.choice([2, 3, 5, 12, 25]))
        centre = (int(rng.integers(0, shape[1])), int(rng.integers(0, shape[0])))
        cv2.circle(gt, centre, r, 255, -1)
    blur = cv2.GaussianBlur(gt, (0, 0), float(rng.uniform(1, 4)))
    pred = np.clip(blur.astype(np.int16) + rng.integers(-40, 60, shape), 0, 255).astype(np.uint8)
    return pred, gt


def test_targets_components_of_fifty_pixels_else_the_largest() -> None:
    gt = np.zeros((30, 40), bool)
    gt[2:12, 2:12] = True  # 100 px
    gt[20:25, 30:35] = True  # 25 px: not a target
    assert [t.area for t in targets(gt)] == [100]
    small = np.zeros((30, 40), bool)
    small[2:5, 2:5] = small[10:13, 10:13] = True  # two 9-px components, both the largest
    small[20, 20] = True
    assert [t.area for t in targets(small)] == [9, 9]
    diagonal = np.zeros((10, 10), bool)
    diagonal[3, 3] = diagonal[4, 4] = True  # 4-connectivity: two components
    assert len(targets(diagonal, min_area=1)) == 2
    assert targets(np.zeros((5, 5), bool)) == ()


def test_one_target_is_the_plain_mae_and_a_missed_small_object_counts() -> None:
    pred, gt = _objects(3)
    one = np.zeros_like(gt)
    cv2.circle(one, (60, 60), 20, 255, -1)
    assert size_invariance(pred, one).mae == pytest.approx(mae(pred, one).score, abs=1e-15)
    gt = np.zeros((100, 100), np.uint8)
    gt[10:60, 10:60] = 255  # a large object
    gt[80:87, 80:87] = 255  # a small one (49 px: the largest-only rule does not apply)
    gt[70:78, 20:28] = 255  # a small target (64 px)
    missed = gt.copy()
    missed[70:78, 20:28] = 0
    plain = evaluate(missed, gt, keys=["binIoU", "siBinIoU"])
    assert plain["binIoU"] > 0.95 and plain["siBinIoU"] < 0.55  # one of two targets missed


def test_empty_gt_and_boxes_covering_the_image() -> None:
    pred, _ = _objects(1)
    empty = size_invariance(pred, np.zeros_like(pred))
    assert empty.targets == () and empty.mae == pytest.approx(mae(pred, np.zeros_like(pred)).score)
    assert "no object" in empty.warnings[0]
    full = size_invariance(pred, np.full_like(pred, 255))
    assert full.background_ratio == 0.0 and "cover the whole image" in full.warnings[0]
    assert np.isfinite(full.mae)  # pysodmetrics fails (an assertion) on an all-foreground GT


@pytest.mark.slow
@pytest.mark.reference
def test_parity_with_pysodmetrics_per_image_and_pooled(pysod) -> None:  # type: ignore[no-untyped-def]
    cases = []
    for i in range(24):
        pred, gt = _objects(100 + i)
        if not gt.any() or gt.all():
            continue
        cases.append({"id": f"si-{i}", "pred": pred, "gt": gt, "normalize": True})
    assert len(cases) >= 20
    # an empty GT: no target, the whole image counts as one (in the pooled curve too)
    cases.append({"id": "si-empty", "pred": pred, "gt": np.zeros_like(gt), "normalize": True})
    results = pysod(cases, [{"groups": ["si"], "normalize": True} for _ in cases])["results"]
    acc = DatasetAccumulator()
    image_curves = []
    for case, ref in zip(cases, results, strict=True):
        assert not any(k.endswith("_error") for k in ref), ref
        ours = evaluate(case["pred"], case["gt"], keys=["size_invariance"])
        assert ours["siMAE"] == pytest.approx(ref["si_mae"], abs=1e-10), case["id"]
        for name, symbol in SYMBOL.items():
            for ref_kind, kind in (
                ("adaptive", "Adp"),
                ("binary", "Bin"),
                ("max", "Max"),
                ("mean", "Mean"),
            ):
                key = f"si{kind}{symbol}"
                assert ours[key] == pytest.approx(ref[f"si_{name}_{ref_kind}"], abs=1e-10), (
                    case["id"],
                    key,
                )
        # sample_based=False on one image: the curve averaged over its targets
        s = compute_suite(case["pred"], case["gt"], keys=["size_invariance", "siTgtMaxFm"])
        for name, symbol in SYMBOL.items():
            curve = np.asarray(ref[f"si_{name}_target_curve"])[::-1]  # ascending thresholds
            ours_curve = getattr(s.size_invariance_curve, ATTR[symbol]).target_curve
            np.testing.assert_allclose(ours_curve, curve, rtol=0, atol=1e-10)
        per_image = s.scores()
        assert per_image["siTgtMaxFm"] == pytest.approx(max(ref["si_fm_target_curve"]), abs=1e-10)
        image_curves.append(s.size_invariance_curve.fmeasure.target_curve)
        s = compute_suite(
            case["pred"], case["gt"], keys=["size_invariance", "size_invariance_curve"]
        )
        acc.add(case["id"], s.scores(), s.curves())
    meta = {"mode": "dataset", "cases": [{"normalize": True, "si": True} for _ in cases]}
    handlers = pysod(cases, meta)["dataset"]["handlers"]
    values = acc.results()
    for name, symbol in SYMBOL.items():
        want = handlers[f"si_{name}_pooled"]
        assert values[f"siPooled{symbol}"] == pytest.approx(want, abs=1e-10), symbol
        # the dynamic curve over every target of every image (sample_based=False)
        curve = np.asarray(handlers[f"si_{name}_target_curve"])
        assert values[f"siTgtMax{symbol}"] == pytest.approx(curve.max(), abs=1e-10), symbol
        assert values[f"siTgtMean{symbol}"] == pytest.approx(curve.mean(), abs=1e-10), symbol
    # weighted by targets, not by images: not the max of the images' averaged curves
    by_images = np.mean(image_curves, axis=0).max()
    assert abs(values["siTgtMaxFm"] - by_images) > 1e-6
