"""F-measure, P/R, IoU, Dice and the classification rates: hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from fminspect.metrics import classification, confusion_sweep, fmeasure, overlap, prepare


def _pair():  # type: ignore[no-untyped-def]
    # pred values (uint8, not stretched since min 0 / max 255): 0, 100, 200, 255
    pred = np.array([[0, 100], [200, 255]], np.uint8)
    gt = np.array([[0, 255], [0, 255]], np.uint8)
    return pred, gt


def test_sweep_counts_every_threshold_ascending() -> None:
    pred, gt = _pair()
    sweep = confusion_sweep(prepare(pred, gt))
    # q >= 0: all 4 pixels → TP 2, FP 2; q >= 101: {200, 255} → TP 1 (255), FP 1 (200)
    assert (sweep.tp[0], sweep.fp[0], sweep.tn[0], sweep.fn[0]) == (2, 2, 0, 0)
    assert (sweep.tp[101], sweep.fp[101]) == (1, 1)
    assert (sweep.tp[255], sweep.fp[255], sweep.fn[255], sweep.tn[255]) == (1, 0, 1, 2)
    assert np.all(np.diff(sweep.tp) <= 0)  # ascending threshold: counts never grow
    # adaptive: mean = (0 + 100 + 200 + 255)/255/4 = 0.5137 → thr 1.0 → only 255
    assert sweep.adaptive_threshold == 1.0
    assert (sweep.adaptive.tp, sweep.adaptive.fp) == (1, 0)
    # binary: pred > 0.5 → 200 and 255
    assert (sweep.binary.tp, sweep.binary.fp) == (1, 1)


def test_fmeasure_hand_computed() -> None:
    pred, gt = _pair()
    r = fmeasure(pred, gt)
    # at t = 0: P = 0.5, R = 1 → F = 1.3·0.5/(0.15 + 1) = 0.565217…
    assert r.fmeasure.curve[0] == pytest.approx(1.3 * 0.5 / 1.15)
    # adaptive: P = 1, R = 0.5 → F = 1.3·0.5/(0.3 + 0.5) = 0.8125
    assert r.adaptive == pytest.approx(0.8125)
    # binary (200, 255 predicted): P = 0.5, R = 0.5 → F = 0.5
    assert r.fmeasure.binary == pytest.approx(0.5)
    assert r.max == pytest.approx(0.8125)
    assert r.mean == pytest.approx(r.fmeasure.curve.mean())


def test_fmeasure_curve_end_is_the_all_foreground_value() -> None:
    rng = np.random.default_rng(0)
    gt = (rng.random((30, 30)) < 0.3).astype(np.uint8) * 255
    pi = np.count_nonzero(gt) / gt.size
    r = fmeasure(rng.integers(0, 256, (30, 30), dtype=np.uint8), gt)
    assert r.fmeasure.curve[0] == pytest.approx(1.3 * pi / (0.3 * pi + 1))


def test_perfect_map_scores_one_and_empty_gt_scores_zero() -> None:
    gt = np.zeros((10, 10), np.uint8)
    gt[2:5, 3:8] = 255
    r = fmeasure(gt.copy(), gt)
    assert r.adaptive == r.max == 1.0
    empty = fmeasure(gt, np.zeros_like(gt))
    assert empty.max == empty.adaptive == 0.0


def test_beta2_is_beta_squared() -> None:
    pred, gt = _pair()
    r = fmeasure(pred, gt, beta2=1.0)
    assert r.fmeasure.binary == pytest.approx(0.5)  # F1 with P = R = 0.5
    assert r.fmeasure.curve[0] == pytest.approx(2 * 0.5 / 1.5)
    with pytest.raises(ValueError, match="beta2"):
        fmeasure(pred, gt, beta2=0)


def test_iou_and_dice_hand_computed() -> None:
    pred, gt = _pair()
    o = overlap(pred, gt)
    assert o.iou.binary == pytest.approx(1 / 3)  # TP 1, FP 1, FN 1
    assert o.dice.binary == pytest.approx(0.5)
    assert o.iou.adaptive == pytest.approx(0.5)  # TP 1, FN 1
    # Dice equals F with beta² = 1 at every threshold
    np.testing.assert_allclose(o.dice.curve, fmeasure(pred, gt, beta2=1.0).fmeasure.curve)
    both_empty = overlap(np.zeros((3, 3), np.uint8), np.zeros((3, 3), np.uint8))
    assert both_empty.iou.binary == 0.0 and both_empty.dice.binary == 0.0


def test_two_kappas_differ_and_cohen_is_standard() -> None:
    gt = np.zeros((10, 10), np.uint8)
    gt[:3] = 255  # 30 fg
    pred = np.zeros((10, 10), np.uint8)
    pred[:2] = 255
    pred[5] = 255  # TP 20, FP 10, FN 10, TN 60
    c = classification(pred, gt)
    tp, fp, fn, tn, n = 20, 10, 10, 60, 100
    oa = (tp + tn) / n
    pe_cohen = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / n**2
    pe_pysod = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + tp)) / n**2
    assert c.cohen_kappa.binary == pytest.approx((oa - pe_cohen) / (1 - pe_cohen))
    assert c.kappa_pysodmetrics.binary == pytest.approx((oa - pe_pysod) / (1 - pe_pysod))
    assert c.cohen_kappa.binary != pytest.approx(c.kappa_pysodmetrics.binary)
    assert c.specificity.binary == pytest.approx(60 / 70)
    assert c.fpr.binary == pytest.approx(10 / 70)
    assert c.ber.binary == pytest.approx(1 - 0.5 * (20 / 30 + 60 / 70))
    assert c.accuracy.binary == pytest.approx(0.8)


def test_ber_of_empty_gt_and_empty_pred_is_one_half() -> None:
    z = np.zeros((4, 4), np.uint8)
    assert classification(z, z).ber.binary == 0.5
