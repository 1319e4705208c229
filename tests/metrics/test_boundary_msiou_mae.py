"""Relaxed boundary F, multiscale IoU and MAE: hand cases and parity of the building blocks."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from scipy import ndimage

from fminspect.metrics import mae, msiou, relaxed_fmeasure
from fminspect.metrics.boundary_fmeasure import boundary
from fminspect.metrics.msiou import CELL_SIZES, cell_maps, edge_map


def _disc(radius: int, size: int = 64) -> np.ndarray:
    img = np.zeros((size, size), np.uint8)
    cv2.circle(img, (size // 2, size // 2), radius, 255, -1)
    return img


def test_boundary_is_the_one_pixel_inner_contour() -> None:
    m = np.zeros((7, 7), bool)
    m[1:6, 1:6] = True
    b = boundary(m)
    assert b.sum() == 16 and not b[2:5, 2:5].any()
    full = np.ones((4, 5), bool)  # the image frame counts as boundary
    assert boundary(full).sum() == 2 * 4 + 2 * 5 - 4


def test_relaxed_f_within_and_beyond_rho() -> None:
    near = relaxed_fmeasure(_disc(18), _disc(20))  # boundaries 2 px apart
    assert near.precision == near.recall == near.score == 1.0
    far = relaxed_fmeasure(_disc(12), _disc(20))  # 8 px apart
    assert far.precision == far.recall == far.score == 0.0
    # concentric discs of radii 8 and 6: METRICS §9.5 (TF code gives precision 1.364)
    r = relaxed_fmeasure(_disc(6), _disc(8))
    assert r.precision == 1.0 and r.recall == 1.0


def test_relaxed_f_partial_hand_computed() -> None:
    gt = np.zeros((20, 40), np.uint8)
    gt[5:15, 5:35] = 255
    pred = np.zeros_like(gt)
    pred[5:15, 5:15] = 255  # shares the left part of the GT outline only
    r = relaxed_fmeasure(pred, gt)
    assert r.precision == pytest.approx(np.count_nonzero(r.matched_pred) / r.pred_boundary.sum())
    assert r.recall == pytest.approx(np.count_nonzero(r.matched_gt) / r.gt_boundary.sum())
    assert 0 < r.recall < r.precision <= 1
    p, q = r.precision, r.recall
    assert r.score == pytest.approx(1.3 * p * q / (0.3 * p + q))


def test_relaxed_f_empty_cases() -> None:
    z = np.zeros((10, 10), np.uint8)
    both = relaxed_fmeasure(z, z)
    assert both.score == 1.0 and both.warnings
    gt = z.copy()
    gt[3:7, 3:7] = 255
    assert relaxed_fmeasure(z, gt).score == 0.0
    assert relaxed_fmeasure(gt, z).score == 0.0


def test_edge_map_equals_scipy_sobel_support() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = rng.random(tuple(rng.integers(1, 40, 2))) < rng.uniform(0.05, 0.7)
        f = m.astype(float)
        ref = np.hypot(ndimage.sobel(f, 0, mode="constant"), ndimage.sobel(f, 1, mode="constant"))
        np.testing.assert_array_equal(edge_map(m), ref > 0)


def test_cell_maps_equal_direct_box_counting() -> None:
    rng = np.random.default_rng(1)
    for _ in range(60):
        h, w = (int(v) for v in rng.integers(1, 700, 2))
        edge = rng.random((h, w)) < 0.002
        for s, grid in zip(CELL_SIZES, cell_maps(edge), strict=True):
            ph, pw = (s - h % s) % s, (s - w % s) % s
            padded = np.pad(edge, ((ph, 0), (pw, 0)))
            direct = padded.reshape(padded.shape[0] // s, s, padded.shape[1] // s, s).any((1, 3))
            np.testing.assert_array_equal(grid, direct)


def test_msiou_perfect_empty_and_hand_ratio() -> None:
    gt = _disc(20)
    r = msiou(gt.copy(), gt)
    assert r.adaptive.score == r.binary.score == 1.0
    z = np.zeros((16, 16), np.uint8)
    assert msiou(z, z).binary.score == 1.0
    anything = msiou(np.full((16, 16), 255, np.uint8), z)  # empty GT: 1 whatever the map
    assert anything.binary.score == 1.0 and "empty GT" in anything.warnings[0]
    assert not r.warnings
    miss = msiou(np.zeros_like(gt), gt).binary  # no predicted edges: ratios 1/(|GT cells| + 1)
    np.testing.assert_allclose(miss.ratios, 1 / (miss.gt_cells + 1))
    assert miss.score == pytest.approx(np.trapezoid(miss.ratios, dx=1 / 9))


def test_mae_hand_computed_and_error_map() -> None:
    pred = np.array([[0.0, 0.5], [1.0, 1.0]])
    gt = np.array([[0, 0], [255, 0]], np.uint8)
    r = mae(pred, gt)
    assert r.score == 0.375
    np.testing.assert_array_equal(r.error_map, [[0, 0.5], [0, 1]])
    # the missed object (one GT pixel, error 0) and the false alarms (0, 0.5, 1 → 0.5)
    assert (r.foreground_error, r.background_error) == (0.0, 0.5)
    empty = mae(pred, np.zeros((2, 2), np.uint8))
    assert np.isnan(empty.foreground_error) and empty.background_error == empty.score
