"""S-measure: hand cases, centroid rounding, quadrant decomposition, deliberate NaN fix."""

from __future__ import annotations

import numpy as np
import pytest

from fminspect.metrics import smeasure
from fminspect.metrics._numerics import EPS


def test_perfect_map_scores_one_and_inverse_scores_low() -> None:
    gt = np.zeros((20, 30), np.uint8)
    gt[5:12, 8:20] = 255
    assert smeasure(gt.copy(), gt).score == pytest.approx(1.0)
    assert smeasure(255 - gt, gt).score < 0.1


def test_degenerate_gts_use_the_mean() -> None:
    pred = np.full((4, 4), 128, np.uint8)  # constant: not stretched → 128/255
    assert smeasure(pred, np.zeros((4, 4), np.uint8)).score == pytest.approx(1 - 128 / 255)
    assert smeasure(pred, np.full((4, 4), 255, np.uint8)).score == pytest.approx(128 / 255)
    r = smeasure(pred, np.zeros((4, 4), np.uint8))
    assert r.degenerate == "empty GT" and r.quadrants == ()


def test_centroid_rounds_half_to_even_then_adds_one() -> None:
    # METRICS §4: fg in columns 0–5 (mean 2.5 → 2) and rows 10–13 (mean 11.5 → 12)
    gt = np.zeros((32, 40), np.uint8)
    gt[10:14, 0:6] = 255
    r = smeasure(np.zeros_like(gt) + gt // 2, gt)
    assert r.centroid == (13, 3)  # MATLAB would split at column 4


def test_object_part_hand_computed() -> None:
    gt = np.array([[0, 0, 0], [0, 255, 255], [0, 0, 0]], np.uint8)
    pred = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.5], [0.0, 0.0, 0.0]])
    r = smeasure(pred, gt)
    fg = np.array([1.0, 0.5])
    o_fg = 2 * fg.mean() / (fg.mean() ** 2 + 1 + fg.std(ddof=1) + EPS)
    assert r.foreground.score == pytest.approx(o_fg)
    assert r.background.score == pytest.approx(1.0, abs=1e-12)  # 1 − pred ≡ 1 on background
    assert r.object_score == pytest.approx(2 / 9 * o_fg + 7 / 9 * 1.0)


def test_region_part_is_the_weighted_sum_and_terms_multiply() -> None:
    rng = np.random.default_rng(0)
    gt = np.zeros((40, 50), np.uint8)
    gt[8:30, 12:41] = 255
    pred = np.clip(gt * 0.7 + rng.normal(0, 30, gt.shape), 0, 255).astype(np.uint8)
    r = smeasure(pred, gt)
    assert sum(q.weight for q in r.quadrants) == pytest.approx(1.0)
    assert sum(q.contribution for q in r.quadrants) == pytest.approx(r.region_score)
    assert r.score == pytest.approx(0.5 * r.object_score + 0.5 * r.region_score)
    for q in r.quadrants:
        assert q.luminance * q.contrast * q.structure == pytest.approx(q.ssim, rel=1e-9)
        assert q.n == (q.rows[1] - q.rows[0]) * (q.cols[1] - q.cols[0])


def test_gt_in_last_column_gives_finite_score_and_a_warning() -> None:
    gt = np.zeros((16, 16), np.uint8)
    gt[3:9, -1] = 255
    pred = np.zeros_like(gt)
    pred[2:10, -2:] = 255
    r = smeasure(pred, gt)
    assert np.isfinite(r.score)
    assert r.warnings and "NaN" in r.warnings[0]
    empty = [q for q in r.quadrants if q.n == 0]
    assert empty and all(q.weight == 0 for q in empty)


def test_alpha_mixes_the_parts() -> None:
    gt = np.zeros((10, 10), np.uint8)
    gt[2:6, 3:8] = 255
    pred = np.roll(gt, 2, axis=1)
    r = smeasure(pred, gt, alpha=0.8)
    assert r.score == pytest.approx(max(0.0, 0.8 * r.object_score + 0.2 * r.region_score))
    with pytest.raises(ValueError, match="alpha"):
        smeasure(pred, gt, alpha=1.5)


def test_a_uint8_map_s_smeasure_from_its_level_counts_is_the_pixel_one() -> None:
    """Issue #50: the object and region statistics of a uint8 map summed over its 256
    levels equal the pixel sums within 1e-14 — random, narrow, GT-like and constant maps,
    blobs anywhere (quadrants of one level or one pixel), every weight, split and
    denominator rule, with and without the stretch."""
    import itertools

    from fminspect.metrics import Normalization, prepare
    from fminspect.metrics._inputs import Pair
    from fminspect.metrics.smeasure import smeasure_from_pair

    rng = np.random.default_rng(11)
    compared = 0
    for k in range(40):
        h, w = (int(v) for v in rng.integers(2, 40, 2))
        gt = np.zeros((h, w), np.uint8)
        r0, c0 = int(rng.integers(0, h)), int(rng.integers(0, w))
        gt[r0 : r0 + int(rng.integers(1, h + 1)), c0 : c0 + int(rng.integers(1, w + 1))] = 255
        pred = [
            rng.integers(0, 256, (h, w), dtype=np.uint8),
            rng.integers(100, 104, (h, w)).astype(np.uint8),
            np.clip(gt * 0.9 + rng.integers(0, 30, (h, w)), 0, 255).astype(np.uint8),
            np.full((h, w), int(rng.integers(0, 256)), np.uint8),
        ][k % 4]
        for norm in (Normalization(stretch=k % 8 < 4),):  # stretched and not, each map kind
            pair = prepare(pred, gt, norm)
            plain = Pair(pred=pair.pred, gt=pair.gt, norm=norm)  # no levels: pixel sums
            for weights, centroid, den in itertools.product(
                ("area", "foreground"), ("pysod", "matlab", "co-sod"), ("n-1+eps", "n-1")
            ):
                a = smeasure_from_pair(pair, weights=weights, centroid=centroid, denominator=den)
                b = smeasure_from_pair(plain, weights=weights, centroid=centroid, denominator=den)
                got = [a.score, a.object_score, a.region_score]
                want = [b.score, b.object_score, b.region_score]
                for qa, qb in zip(a.quadrants, b.quadrants, strict=True):
                    got += [qa.pred_mean, qa.pred_var, qa.covariance, qa.ssim]
                    want += [qb.pred_mean, qb.pred_var, qb.covariance, qb.ssim]
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-14, equal_nan=True)
                compared += 1
    assert compared == 40 * 12


def test_the_gt_variance_in_closed_form_is_the_pixel_sum() -> None:
    """Issue #50: a quadrant's σ_y² = Σ (g − ȳ)² / den from its counts of ones and zeros
    (no full-size pass) equals the pixel sum the references compute within 1e-15."""
    from fminspect.metrics import prepare_gt
    from fminspect.metrics.smeasure import _denominator, _gt_quadrants

    rng = np.random.default_rng(12)
    checked = 0
    for _ in range(60):
        h, w = (int(v) for v in rng.integers(1, 50, 2))
        gt = (rng.random((h, w)) < rng.uniform(0.01, 0.99)).astype(np.uint8) * 255
        g = prepare_gt(gt)
        if g.is_empty:
            continue
        for den in ("n-1+eps", "n-1"):
            for q in _gt_quadrants(g, "area", "pysod", den):
                if q.n == 0:
                    continue
                block = g.mask[q.rows[0] : q.rows[1], q.cols[0] : q.cols[1]]
                assert q.gt_mean == np.mean(block)
                with np.errstate(invalid="ignore", divide="ignore"):
                    want = np.sum((block - np.mean(block)) ** 2) / _denominator(q.n, den)
                np.testing.assert_allclose(q.gt_var, want, rtol=1e-15, atol=0, equal_nan=True)
                assert q.constant == (q.n > 1 and q.gt_mean in (0.0, 1.0))
                checked += 1
    assert checked > 300
