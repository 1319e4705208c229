"""Boundary IoU (Cheng et al. 2021) and mean boundary accuracy (CascadePSP): hand cases and
independent re-derivations of the authors' definitions (their code needs pycocotools / a
checkout, not installable here: the bands are recomputed with SciPy distance transforms and
morphology, a different method for the same sets)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from scipy import ndimage

from fminspect.metrics import boundary_accuracy, boundary_iou, evaluate, prepare
from fminspect.metrics.boundary_accuracy import radii
from fminspect.metrics.boundary_iou import band_width, inner_band
from tests.reference.cases import random_cases


def _band_by_distance(mask: np.ndarray, width: int) -> np.ndarray:
    """Mask pixels within ``width`` (chessboard) of a background pixel, the frame counting as
    background: what ``width`` erosions by a 3×3 square remove."""
    padded = np.pad(mask, 1)
    d = ndimage.distance_transform_cdt(padded, metric="chessboard")[1:-1, 1:-1]
    return mask & (d <= width)


def test_band_width_follows_the_diagonal() -> None:
    assert band_width((400, 600), 0.02) == round(0.02 * math.hypot(400, 600)) == 14
    assert band_width((10, 10), 0.02) == 1  # at least one pixel
    assert band_width((30, 40), 0.02) == 1  # 0.02 · 50 = 1


@pytest.mark.parametrize("case", random_cases(25, seed=12, min_size=8), ids=lambda c: c["id"])
def test_bands_equal_the_distance_transform_and_biou_its_iou(case) -> None:  # type: ignore[no-untyped-def]
    r = boundary_iou(case["pred"], case["gt"])
    pair = prepare(case["pred"], case["gt"])
    gt_band = _band_by_distance(pair.mask, r.width)
    pred_band = _band_by_distance(pair.pred > 0.5, r.width)
    np.testing.assert_array_equal(r.binary.gt_band, gt_band)
    np.testing.assert_array_equal(r.binary.pred_band, pred_band)
    union = np.count_nonzero(gt_band | pred_band)
    want = 1.0 if union == 0 else np.count_nonzero(gt_band & pred_band) / union
    assert r.binary.score == want


def test_boundary_iou_ignores_the_interior_and_sees_a_ragged_edge() -> None:
    gt = np.zeros((200, 200), np.uint8)
    gt[20:180, 20:180] = 255  # d = round(0.02 · 283) = 6
    assert band_width(gt.shape, 0.02) == 6
    band = inner_band(gt > 0, 6)
    assert np.count_nonzero(band) == 160 * 160 - 148 * 148
    ragged = gt.copy()
    ragged[20:180:4, 20:26] = 0  # notches along one side
    s = evaluate(ragged, gt, keys=["binIoU", "binBIoU"])
    assert s["binIoU"] > 0.99 and s["binBIoU"] < 0.93
    empty = np.zeros_like(gt)
    assert boundary_iou(empty, empty).binary.score == 1.0


def _region_by_scipy(mask: np.ndarray, radius: int) -> np.ndarray:
    """Dilation minus erosion with the same disk, the image border neither adding nor
    removing pixels (OpenCV's defaults for dilate/erode)."""
    disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1)) > 0
    grown = ndimage.binary_dilation(mask, disk, border_value=0)
    shrunk = ndimage.binary_erosion(mask, disk, border_value=1)
    return grown & ~shrunk


def test_mba_radii_and_regions() -> None:
    assert radii((400, 550)) == (1, 1, 1, 2, 2)
    assert radii((2048, 2048)) == (1, 3, 6, 8, 11)
    rng = np.random.default_rng(1)
    for size in ((120, 160), (700, 900)):
        gt = np.zeros(size, np.uint8)
        cv2.circle(gt, (size[1] // 2, size[0] // 2), size[0] // 3, 255, -1)
        gt[: size[0] // 5, : size[1] // 5] = 255  # an object at the border
        pred = np.clip(
            cv2.GaussianBlur(np.roll(gt, 3, axis=0), (0, 0), 3).astype(int)
            + rng.integers(-60, 60, size),
            0,
            255,
        ).astype(np.uint8)
        r = boundary_accuracy(pred, gt)
        seg, mask = pred > 127, gt > 128
        want = []
        for radius, region in zip(r.radii, r.regions, strict=True):
            np.testing.assert_array_equal(region, _region_by_scipy(mask, radius))
            want.append(np.count_nonzero((seg == mask) & region) / np.count_nonzero(region))
        assert r.score == pytest.approx(sum(want) / 5, abs=1e-15)
    assert boundary_accuracy(gt, gt).score == 1.0
    empty = boundary_accuracy(pred, np.zeros_like(gt))
    assert math.isnan(empty.score) and empty.warnings
