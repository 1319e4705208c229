"""E-measure: the reference's degenerate-GT table, hand cases, and maps that reproduce it."""

from __future__ import annotations

import numpy as np
import pytest

from fminspect.metrics import emeasure, emeasure_at, prepare
from fminspect.metrics._numerics import EPS

N = 64 * 64
Z = np.zeros((64, 64), np.uint8)
FULL = np.full((64, 64), 255, np.uint8)
C128 = np.full((64, 64), 128, np.uint8)


@pytest.mark.parametrize(
    ("gt", "pred", "adp", "mean", "mx"),
    [
        # METRICS.md §3, values verified with pysodmetrics 1.6.2 on 64×64
        (Z, Z, 0.0, 0.996337, 1.000244),  # thr = 0 → everything foreground
        (Z, FULL, 0.0, 0.0, 0.0),
        (Z, C128, 1.000244, 0.496215, 1.000244),  # thr capped at 1, nothing ≥ 1
        (FULL, Z, 1.000244, 0.003907, 1.000244),
        (FULL, C128, 0.0, 0.504029, 1.000244),
    ],
)
def test_degenerate_gt_table(gt, pred, adp, mean, mx) -> None:  # type: ignore[no-untyped-def]
    r = emeasure(pred, gt)
    assert r.adaptive == pytest.approx(adp, abs=1e-6)
    assert r.mean == pytest.approx(mean, abs=1e-6)
    assert r.max == pytest.approx(mx, abs=1e-6)


def test_maximum_is_n_over_n_minus_one_and_not_clipped() -> None:
    gt = Z.copy()
    gt[10:30, 10:40] = 255
    r = emeasure(gt.copy(), gt)
    assert r.max == pytest.approx(N / (N - 1))
    assert r.max > 1


def test_curve_at_threshold_zero_is_a_quarter_times_n_over_n_minus_one() -> None:
    rng = np.random.default_rng(1)
    gt = (rng.random((40, 50)) < 0.3).astype(np.uint8) * 255
    r = emeasure(rng.integers(0, 256, (40, 50), dtype=np.uint8), gt)
    n = 40 * 50
    assert r.curve[0] == pytest.approx(0.25 * n / (n - 1 + EPS))


def test_region_values_hand_computed() -> None:
    # 2×2: GT = [[1, 0], [1, 0]]; binary F = [[1, 1], [0, 0]] → one pixel per region
    gt = np.array([[255, 0], [255, 0]], np.uint8)
    at = emeasure_at(prepare(np.array([[255, 255], [0, 0]], np.uint8), gt), threshold=0.5)
    assert (at.counts.tp, at.counts.fp, at.counts.fn, at.counts.tn) == (1, 1, 1, 1)
    # μ_F = μ_G = 0.5 → φ ∈ {±0.5}; ξ = 2·φ_F·φ_G/(φ_F² + φ_G²) = ±1; f(ξ) ∈ {1, 0}
    assert at.region_alignment == pytest.approx((1, -1, -1, 1))
    assert at.region_enhanced == pytest.approx((1, 0, 0, 1))
    assert at.score == pytest.approx(2 / 3)
    assert sum(at.region_contribution) == pytest.approx(at.score)


def test_region_counts_are_the_confusion_counts_and_contributions_sum_to_the_score() -> None:
    # unequal regions, so that swapping two of them cannot go unnoticed
    rng = np.random.default_rng(5)
    gt = (rng.random((37, 53)) < 0.35).astype(np.uint8) * 255
    pair = prepare(rng.integers(0, 256, (37, 53), dtype=np.uint8), gt)
    for t in (0.2, 0.5, 0.8):
        at = emeasure_at(pair, threshold=t)
        b, g = at.binary_map, pair.mask
        expected = (np.sum(b & g), np.sum(b & ~g), np.sum(~b & ~g), np.sum(~b & g))
        assert (at.counts.tp, at.counts.fp, at.counts.tn, at.counts.fn) == expected
        assert len(set(expected)) == 4
        assert sum(at.region_contribution) == pytest.approx(at.score, abs=1e-12)


def test_maps_reproduce_the_score_and_take_four_values() -> None:
    rng = np.random.default_rng(2)
    gt = (rng.random((30, 40)) < 0.4).astype(np.uint8) * 255
    pair = prepare(rng.integers(0, 256, (30, 40), dtype=np.uint8), gt)
    r = emeasure(pair)
    at = r.at
    assert at.enhanced_map.sum() / (pair.gt.size - 1 + EPS) == pytest.approx(r.adaptive, abs=1e-12)
    # the per-pixel definitions hold on every pixel
    phi_f = at.binary_map - at.binary_map.mean()
    phi_g = pair.mask - pair.mask.mean()
    np.testing.assert_allclose(at.bias_pred_map, phi_f)
    np.testing.assert_allclose(at.bias_gt_map, phi_g)
    xi = 2 * phi_f * phi_g / (phi_f**2 + phi_g**2 + EPS)
    np.testing.assert_allclose(at.alignment_map, xi)
    np.testing.assert_allclose(at.enhanced_map, (1 + xi) ** 2 / 4)
    assert len(np.unique(at.enhanced_map)) <= 4
    assert not at.enhanced_map.flags.writeable


def test_curve_point_maps_match_the_curve() -> None:
    rng = np.random.default_rng(3)
    gt = (rng.random((25, 25)) < 0.3).astype(np.uint8) * 255
    pair = prepare(rng.integers(0, 256, (25, 25), dtype=np.uint8), gt)
    curve = emeasure(pair).curve
    for t in (0, 1, 77, 128, 254, 255):
        assert emeasure_at(pair, index=t).score == pytest.approx(curve[t], abs=1e-12)


def test_degenerate_gt_enhanced_map_is_the_special_case() -> None:
    at = emeasure(C128, Z).at  # empty GT: enhanced = 1 where F = 0
    assert at.degenerate == "empty GT"
    assert at.enhanced_map.sum() / (N - 1 + EPS) == pytest.approx(at.score)


@pytest.mark.parametrize("gt_kind", ["objects", "empty", "full"])
def test_a_value_above_one_from_the_references_denominator_is_flagged(gt_kind: str) -> None:
    rng = np.random.default_rng(3)
    gt = {
        "objects": (rng.random((20, 30)) > 0.6).astype(np.uint8) * 255,
        "empty": np.zeros((20, 30), np.uint8),
        "full": np.full((20, 30), 255, np.uint8),
    }[gt_kind]
    perfect = emeasure(gt.copy(), gt)  # agrees on every pixel: N/(N − 1) by the reference
    n = gt.size
    assert perfect.max == pytest.approx(n / (n - 1 + EPS), abs=1e-12) and perfect.max > 1
    (warning,) = perfect.warnings
    assert warning.startswith(f"a value above 1 ({perfect.max:.7f}): the reference's denom")
    assert "pysodmetrics 1.6.2 Emeasure" in warning and "not clipped" in warning
    if gt_kind == "objects":  # (a full GT: the threshold 0 makes any map perfect)
        noisy = emeasure((rng.random((20, 30)) * 255).astype(np.uint8), gt)
        assert noisy.max <= 1 and noisy.adaptive <= 1 and noisy.warnings == ()
