"""Weighted F-measure: SciPy tie-breaking, exact distances, the border quirk, maps → score."""

from __future__ import annotations

import sys

import cv2
import numpy as np
import pytest
from scipy import ndimage

from fminspect.metrics import prepare, prepare_gt, weighted_fmeasure
from fminspect.metrics._numerics import EPS

wfm_module = sys.modules["fminspect.metrics.weighted_fmeasure"]


def _masks(n: int, seed: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    for _ in range(n):
        h, w = rng.integers(3, 60, 2)
        yield rng.random((h, w)) < rng.uniform(0.02, 0.6)


def test_band_sources_follow_scipy_tie_breaking() -> None:
    checked = 0
    for mask in _masks(200, 0):
        if not mask.any():
            continue
        part = wfm_module._gt_part(prepare_gt(mask))
        local = mask[part.crop]
        ft = ndimage.distance_transform_edt(~local, return_distances=False, return_indices=True)
        expected = (ft[0] * local.shape[1] + ft[1]).ravel()[part.band_index]
        np.testing.assert_array_equal(part.band_source, expected)
        checked += part.band_index.size
    assert checked > 10_000


@pytest.fixture(params=[1, 2], ids=["opencv-1-thread", "opencv-2-threads"])
def opencv_threads(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """OpenCV's distance transform rounds differently with one thread (fminspect's workers)
    than with several: every distance test runs under both."""
    before = cv2.getNumThreads()
    cv2.setNumThreads(request.param)
    yield request.param
    cv2.setNumThreads(before)


def test_exact_distance_map_equals_scipy_bit_for_bit(opencv_threads: int) -> None:
    for mask in _masks(100, 1):
        if mask.any():
            np.testing.assert_array_equal(
                wfm_module.exact_distance_map(mask), ndimage.distance_transform_edt(~mask)
            )
    # up to the exact-recovery limit from OpenCV; beyond it (single-threaded OpenCV errs by
    # one in Δ² from Δ ≈ 886 on) from SciPy
    for shape, point in (((700, 40), (0, 0)), ((1448, 1448), (0, 0)), ((2100, 9), (5, 4))):
        mask = np.zeros(shape, bool)
        mask[point] = True
        np.testing.assert_array_equal(
            wfm_module.exact_distance_map(mask), ndimage.distance_transform_edt(~mask)
        )


def test_widths_that_alias_in_the_cache_are_computed_padded(opencv_threads: int) -> None:
    # widths that are multiples of 256 go through a padded copy (fminspect/metrics/
    # _numerics.py: l2_distance); the padding's columns must change no distance
    rng = np.random.default_rng(5)
    for w in (256, 512, 1024):
        mask = rng.random((37, w)) < 0.002
        mask[0, 0] = True
        mask[20, w - 1] = True  # an object pixel in the last column, beside the padding
        d = ndimage.distance_transform_edt(~mask)
        got = wfm_module._squared_distances(wfm_module._opencv_distance(mask))
        assert got.shape == mask.shape
        np.testing.assert_array_equal(got, np.rint(d**2))  # float32 may differ by an ulp
        np.testing.assert_array_equal(wfm_module.exact_distance_map(mask), d)
        # one object pixel, in the last column: the padding's columns reach no one
        alone = np.zeros((9, w), bool)
        alone[4, w - 1] = True
        np.testing.assert_array_equal(
            wfm_module.exact_distance_map(alone), ndimage.distance_transform_edt(~alone)
        )


def _weights_by_formula(mask: np.ndarray) -> np.ndarray:
    d = ndimage.distance_transform_edt(~mask)
    return np.where(mask, 0.0, 2 - np.exp(np.log(0.5) / 5 * d))


def test_background_weights_match_the_formula(opencv_threads: int) -> None:
    for mask in _masks(50, 2):
        if mask.any():
            np.testing.assert_array_equal(
                wfm_module._background_weights(mask), _weights_by_formula(mask)
            )
    # far beyond the table's end (B = 2.0 exactly), where Δ² may be off by one or clipped
    for shape in ((3, 1500), (2, 2100), (1448, 1448), (2, 5000)):
        mask = np.zeros(shape, bool)
        mask[1, 7] = mask[0, -300] = True
        np.testing.assert_array_equal(
            wfm_module._background_weights(mask), _weights_by_formula(mask)
        )


def test_squared_distances_are_exact_up_to_the_recovery_limit(opencv_threads: int) -> None:
    limit = wfm_module.EXACT_RECOVERY_LIMIT
    for shape, fg in (((3, 1500), [(1, 7), (0, 1200)]), ((1448, 1448), [(0, 0)])):
        mask = np.zeros(shape, bool)
        for r, c in fg:
            mask[r, c] = True
        d = ndimage.distance_transform_edt(~mask)
        got = wfm_module._squared_distances(wfm_module._opencv_distance(mask))
        near = d <= limit
        np.testing.assert_array_equal(got[near], np.rint(d[near] ** 2))
        assert np.all(got[~near] >= limit**2 - 1)  # far: possibly off by one, never near


def test_weight_table_is_the_formula_up_to_where_it_rounds_to_two() -> None:
    table = wfm_module._WEIGHT_TABLE
    n = np.arange(1, 400_000)
    expected = 2 - np.exp(np.log(0.5) / 5 * np.sqrt(n))
    assert table[0] == 0 and table[-1] == 2.0 and table[-2] < 2.0
    np.testing.assert_array_equal(np.take(table, n, mode="clip"), expected)


def test_full_gt_all_zero_prediction_scores_above_zero_like_the_reference() -> None:
    # METRICS §5: zero padding of the Gaussian makes EA < E along the border
    full = np.full((64, 64), 255, np.uint8)
    assert weighted_fmeasure(np.zeros_like(full), full).score == pytest.approx(0.0967, abs=1e-4)
    full = np.full((96, 128), 255, np.uint8)
    assert weighted_fmeasure(np.zeros_like(full), full).score == pytest.approx(0.0579, abs=1e-4)


def test_perfect_map_and_empty_gt() -> None:
    gt = np.zeros((30, 30), np.uint8)
    gt[10:20, 5:25] = 255
    assert weighted_fmeasure(gt.copy(), gt).score == pytest.approx(1.0)
    r = weighted_fmeasure(gt, np.zeros_like(gt))
    assert r.score == 0.0 and r.warnings


def test_maps_reproduce_every_number() -> None:
    rng = np.random.default_rng(5)
    gt = np.zeros((50, 60), np.uint8)
    gt[10:35, 15:50] = 255
    pair = prepare(np.clip(gt * 0.6 + rng.normal(40, 50, gt.shape), 0, 255).astype(np.uint8), gt)
    r = weighted_fmeasure(pair)
    g = pair.mask
    assert r.weighted_tp_map.sum() == pytest.approx(r.tp, abs=1e-9)
    assert r.weighted_fp_map.sum() == pytest.approx(r.fp, abs=1e-9)
    assert 1 - r.weighted_fn_map[g].mean() == pytest.approx(r.recall, abs=1e-12)
    assert r.tp / (r.tp + r.fp + EPS) == pytest.approx(r.precision)
    np.testing.assert_allclose(r.weighted_error_map, r.min_error_map * r.importance_map)
    np.testing.assert_array_equal(r.distance_map, ndimage.distance_transform_edt(~g))
    assert np.all(r.dependency_error_map[g] == r.error_map[g])
    assert np.all(r.min_error_map <= r.error_map + 1e-15)
    assert r.score == pytest.approx(2 * r.recall * r.precision / (r.recall + r.precision + EPS))


def test_gt_cache_is_shared_across_predictions() -> None:
    gt = np.zeros((40, 40), np.uint8)
    gt[5:30, 5:20] = 255
    g = prepare_gt(gt)
    rng = np.random.default_rng(0)
    a = weighted_fmeasure(rng.integers(0, 256, gt.shape, dtype=np.uint8), g)
    assert "weighted_fmeasure" in g._memo
    b = weighted_fmeasure(rng.integers(0, 256, gt.shape, dtype=np.uint8), gt)
    assert 0 < a.score < 1 and 0 < b.score < 1
