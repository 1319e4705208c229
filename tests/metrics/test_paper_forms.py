"""The papers' forms where the reference code departs from the paper (issue #20).

Each default reproduces pysodmetrics 1.6.2 / the authors' code (the parity tests check it);
these tests check that the paper's form, selected by its parameter, computes what the
paper's text says, by hand and independently of the fast path:

* S-measure, Cheng & Fan IJCV 2021 §4.1 / Eq. 8: quadrant weight ∝ the GT foreground the
  quadrant covers (``s_weights='foreground'``; the code: the quadrant's area);
* weighted F, Margolin et al. CVPR 2014 §4.2 / Eq. 11: σ² = 5 (``wfm_kernel='paper'``;
  the code: σ = 5 on a 7×7 window);
* camouflage degree, Wang et al. 2025 §3.3 / §4.1: a band of every pixel within k = 20 px
  (``ccm_band='disk'``; the code: a 20×20 square) and the patch step (``ccm_stride``).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from fminspect.metrics import MEASURES_BY_KEY, Params, compute_suite, prepare, prepare_gt
from fminspect.metrics._numerics import EPS, matlab_gauss2d
from fminspect.metrics.camouflage_degree import camouflage_degree, context_band
from fminspect.metrics.smeasure import smeasure
from fminspect.metrics.weighted_fmeasure import weighted_fmeasure


def _cases(n: int, seed: int):  # type: ignore[no-untyped-def]
    """Random GTs (one to three rectangles, off-centre) with noisy predictions."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        h, w = (int(v) for v in rng.integers(20, 90, 2))
        gt = np.zeros((h, w), np.uint8)
        for _ in range(int(rng.integers(1, 4))):
            r0, c0 = int(rng.integers(0, h - 4)), int(rng.integers(0, w - 4))
            dr, dc = int(rng.integers(3, h // 2 + 4)), int(rng.integers(3, w // 2 + 4))
            gt[r0 : r0 + dr, c0 : c0 + dc] = 255
        noise = rng.normal(0, rng.uniform(10, 80), gt.shape)
        pred = np.clip(gt * rng.uniform(0.3, 1) + noise + rng.uniform(0, 60), 0, 255)
        yield pred.astype(np.uint8), gt


def test_smeasure_foreground_weights_are_each_quadrants_share_of_the_object() -> None:
    differ = 0
    for pred, gt in _cases(150, 1):
        area = smeasure(pred, gt)
        paper = smeasure(pred, gt, weights="foreground")
        if area.degenerate is not None:
            assert paper.score == area.score  # empty/full GT: the weights play no part
            continue
        mask = gt > 128
        cy, cx = area.centroid
        blocks = (mask[:cy, :cx], mask[:cy, cx:], mask[cy:, :cx], mask[cy:, cx:])
        expected_w = [np.count_nonzero(b) / np.count_nonzero(mask) for b in blocks]
        assert [q.weight for q in paper.quadrants] == pytest.approx(expected_w, abs=1e-15)
        assert sum(q.weight for q in paper.quadrants) == pytest.approx(1.0, abs=1e-12)
        # the quadrants' SSIM does not depend on the weights: Eq. 8 with the paper's w_k
        s_r = sum(w * q.ssim for w, q in zip(expected_w, area.quadrants, strict=True) if w)
        assert paper.region_score == pytest.approx(s_r, abs=1e-12)
        assert paper.object_score == area.object_score
        assert paper.score == pytest.approx(
            max(0.0, 0.5 * paper.object_score + 0.5 * s_r), abs=1e-12
        )
        assert paper.weights == "foreground" and area.weights == "area"
        differ += abs(paper.score - area.score) > 1e-4
    assert differ > 50  # the two forms give different numbers on most of these maps


def test_weighted_f_paper_kernel_matches_its_full_size_maps_and_differs_from_the_code() -> None:
    differ = 0
    for pred, gt in _cases(60, 2):
        if not (gt > 128).any():
            continue
        pair = prepare(pred, gt)
        code = weighted_fmeasure(pair)
        paper = weighted_fmeasure(pair, kernel="paper")
        assert (code.kernel, paper.kernel) == ("code", "paper")
        g = pair.mask
        # the full-size path written out (Eq. 9–14 as the authors' code reads them: Et, the
        # 7×7 window), with σ = √5: the fast path must agree with it
        e = np.abs(pair.pred - g)
        idx = ndimage.distance_transform_edt(~g, return_distances=False, return_indices=True)
        et = np.where(g, e, e[idx[0], idx[1]])
        ea = ndimage.correlate(et, matlab_gauss2d(7, np.sqrt(5.0)), mode="constant", cval=0)
        min_e = np.where(g & (ea < e), ea, e)
        delta = ndimage.distance_transform_edt(~g)
        b = np.where(g, 1.0, 2 - np.exp(np.log(0.5) / 5 * delta))
        ew = min_e * b
        tp = g.sum() - ew[g].sum()
        fp = ew[~g].sum()
        recall = 1 - ew[g].mean()
        precision = tp / (tp + fp + EPS)
        f = 2 * recall * precision / (recall + precision + EPS)
        assert paper.score == pytest.approx(f, abs=1e-10)
        np.testing.assert_allclose(paper.smoothed_error_map, ea, atol=1e-12)
        differ += abs(paper.score - code.score) > 1e-5
    assert differ > 20


def test_disk_band_is_every_pixel_within_twenty_pixels() -> None:
    for _, gt in _cases(40, 3):
        mask = gt > 128
        if not mask.any():
            continue
        band = context_band(mask, 20, "disk")
        distance = ndimage.distance_transform_edt(~mask)
        np.testing.assert_array_equal(band, (distance > 0) & (distance <= 20))
        square = context_band(mask, 20, "square")
        assert not (square & mask).any()
        assert (square & ~band).sum() == 0  # a 20×20 square reaches at most 10√2 < 20 px
    # pixels at exactly 20 px (offsets (0, 20), (12, 16), (16, 12)) are in; on a width
    # computed padded (a multiple of 256) too
    for width in (250, 256):
        mask = np.zeros((64, width), bool)
        mask[30, 100] = True
        band = context_band(mask, 20, "disk")
        distance = ndimage.distance_transform_edt(~mask)
        np.testing.assert_array_equal(band, (distance > 0) & (distance <= 20))
        assert band[30, 120] and band[42, 116] and band[46, 112] and not band[30, 121]


def test_stride_sets_the_patch_grid_and_the_forms_reach_the_score() -> None:
    rng = np.random.default_rng(4)
    img = rng.integers(0, 256, (90, 120, 3), np.uint8)
    gt = np.zeros((90, 120), np.uint8)
    gt[25:70, 30:85] = 255
    g = prepare_gt(gt)
    mask = gt > 128
    for stride in (1, 3, 4, 7):
        d = camouflage_degree(img, g, stride=stride)
        assert d.stride == stride
        # every 7×7 window on the stride grid lying wholly inside the object (the band), and
        # no other
        for region, found in ((mask, d.object_patches), (d.band_mask, d.band_patches)):
            expected = {
                (r, c)
                for r in range(0, 90 - 6, stride)
                for c in range(0, 120 - 6, stride)
                if region[r : r + 7, c : c + 7].all()
            }
            assert {tuple(p) for p in found} == expected and expected
    d_code = camouflage_degree(img, g)
    d_paper = camouflage_degree(img, g, band_shape="disk", stride=4)
    assert d_paper.band_mask.sum() > d_code.band_mask.sum()
    assert len(d_paper.object_patches) < len(d_code.object_patches)
    pred = np.clip(gt * 0.8 + rng.normal(0, 40, gt.shape), 0, 255).astype(np.uint8)
    params = Params(ccm_band="disk", ccm_stride=4)
    suite = compute_suite(pred, gt, params, img=img, keys=["CCm"])
    assert suite.camouflage_context.degree.band_shape == "disk"
    default = compute_suite(pred, gt, img=img, keys=["CCm"]).camouflage_context
    assert suite.camouflage_context.score != default.score


def test_the_variant_label_names_the_paper_forms() -> None:
    paper = Params(s_weights="foreground", wfm_kernel="paper", ccm_band="disk", ccm_stride=4)
    assert MEASURES_BY_KEY["Sm"].label(paper) == "Sm α=0.5 w=fg"
    assert MEASURES_BY_KEY["wFm"].label(paper) == "wFm β²=1 σ²=5"
    assert MEASURES_BY_KEY["CCm"].label(paper).endswith("band=disk stride=4")
    # the defaults keep the labels every earlier output used
    assert MEASURES_BY_KEY["Sm"].label(Params()) == "Sm α=0.5"
    assert MEASURES_BY_KEY["wFm"].label(Params()) == "wFm β²=1"
    for bad in ({"s_weights": "fg"}, {"wfm_kernel": "gauss"}, {"ccm_band": "circle"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            Params(**bad)
