"""Context-measure: edge cases, the paper's properties, conventions, intermediates."""

from __future__ import annotations

import math
import sys

import cv2
import numpy as np
import pytest
from skimage import data

from fminspect.metrics import (
    camouflage_context_measure,
    camouflage_degree,
    context_kernel,
    context_measure,
    evaluate,
    prepare,
    prepare_gt,
)
from fminspect.metrics.camouflage_degree import context_band


def _blob(h=80, w=90, box=(20, 60, 25, 70)):  # type: ignore[no-untyped-def]
    gt = np.zeros((h, w), np.uint8)
    gt[box[0] : box[1], box[2] : box[3]] = 255
    return gt


def _textured_image(h: int, w: int) -> np.ndarray:
    grass = data.grass()[:h, :w]
    return np.stack([grass, grass // 2 + 60, grass // 3 + 30], axis=2).astype(np.uint8)


# ---------------------------------------------------------------- edge cases: defined + warned
def test_empty_gt_is_defined_and_warned() -> None:
    z = np.zeros((40, 40), np.uint8)
    r = context_measure(z, z)
    assert r.score == pytest.approx(1.0) and any("empty GT" in w for w in r.warnings)
    pred = z.copy()
    pred[5:10, 5:10] = 255
    assert context_measure(pred, z).score == 0.0
    img = np.zeros((40, 40, 3), np.uint8)
    c = camouflage_context_measure(z, z, img=img)
    assert c.score == pytest.approx(1.0) and c.degree.cd_map.sum() == 0


def test_single_pixel_gt_uses_the_fixed_kernel() -> None:
    gt = np.zeros((30, 30), np.uint8)
    gt[12, 17] = 255
    k = context_kernel(prepare_gt(gt))
    assert k.kernel.shape == (3, 3) and k.warnings
    np.testing.assert_allclose(k.covariance, np.diag([0.25, 0.25]))
    r = context_measure(gt.copy(), gt)
    assert 0 < r.score <= 1 and r.warnings


@pytest.mark.parametrize("axis", [0, 1])
def test_gt_on_one_row_or_column_collapses_the_kernel_to_a_line(axis: int) -> None:
    gt = np.zeros((50, 60), np.uint8)
    if axis == 0:
        gt[25, 10:50] = 255
    else:
        gt[5:45, 30] = 255
    k = context_kernel(prepare_gt(gt))
    assert k.kernel.shape[axis] == 1 and any("single" in w for w in k.warnings)
    assert math.isfinite(context_measure(gt.copy(), gt).score)


def test_gt_on_an_exact_diagonal_is_regularised_not_an_exception() -> None:
    gt = (np.eye(40) * 255).astype(np.uint8)
    k = context_kernel(prepare_gt(gt))
    assert any("singular" in w for w in k.warnings)
    # the kernel lies on the diagonal
    off = k.kernel.copy()
    np.fill_diagonal(off, 0)
    assert off.sum() < 1e-12 and k.kernel.sum() == pytest.approx(1.0)
    r = context_measure(gt.copy(), gt)
    assert 0.5 < r.score <= 1
    two = np.zeros((10, 10), np.uint8)
    two[3, 3] = two[4, 4] = 255  # two diagonal pixels: also singular in both references
    assert math.isfinite(context_measure(two, two).score)


def test_objects_thinner_than_a_patch_give_zero_degree_with_a_warning() -> None:
    gt = np.zeros((60, 60), np.uint8)
    gt[20:25, 5:55] = 255  # 5 px tall: no 7×7 patch fits inside
    img = _textured_image(60, 60)
    d = camouflage_degree(img, gt)
    assert d.cd_map.sum() == 0 and any("patch fits inside the object" in w for w in d.warnings)
    c = camouflage_context_measure(gt.copy(), gt, img=img)
    assert math.isfinite(c.score) and c.warnings


def test_gt_filling_the_image_has_no_context_band() -> None:
    full = np.full((40, 40), 255, np.uint8)
    img = _textured_image(40, 40)
    d = camouflage_degree(img, full)
    assert not d.band_mask.any() and d.cd_map.sum() == 0
    assert any("context band" in w for w in d.warnings)
    assert math.isfinite(camouflage_context_measure(full, full, img=img).score)


def test_context_band_reaches_9_up_left_and_10_down_right() -> None:
    m = np.zeros((60, 60), bool)
    m[30, 30] = True
    rows, cols = np.nonzero(context_band(m) | m)
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (21, 40, 21, 40)


# ---------------------------------------------------------------- properties from the paper
def test_perfect_prediction_scores_near_one_and_best() -> None:
    # the kernel's extent is fixed (trace α² = 36 px²), so perfect maps of small objects
    # score well below 1 and large ones approach it
    scores = []
    for radius in (10, 40, 80, 150):
        gt = np.zeros((400, 400), np.uint8)
        cv2.circle(gt, (200, 200), radius, 255, -1)
        scores.append(context_measure(gt.copy(), gt).score)
    assert scores == sorted(scores) and scores[-1] > 0.97 and scores[2] > 0.95
    gt = _blob()
    img = _textured_image(*gt.shape)
    perfect = camouflage_context_measure(gt.copy(), gt, img=img).score
    for shift in (2, 6):
        assert camouflage_context_measure(np.roll(gt, shift, axis=1), gt, img=img).score < perfect


def test_one_percent_noise_lowers_the_score() -> None:
    gt = _blob()
    img = _textured_image(*gt.shape)
    rng = np.random.default_rng(0)
    good = cv2.GaussianBlur(gt, (0, 0), 1.5)
    noisy = good.astype(np.float64)
    region = np.flatnonzero((good > 0).ravel() | True)
    picks = rng.choice(region, size=len(region) // 100, replace=False)
    noisy.flat[picks] += rng.normal(0, 0.2 * 255, picks.size)
    noisy = np.clip(noisy, 0, 255).astype(np.uint8)
    assert (
        camouflage_context_measure(noisy, gt, img=img).score
        < camouflage_context_measure(good, gt, img=img).score
    )
    assert context_measure(noisy, gt).score < context_measure(good, gt).score


def test_context_flaw_pair_is_separated_by_the_camouflage_form() -> None:
    """Paper Fig. 2 (a1/a2) idea: two predictions missing equal, mirror-image parts of the
    object — one the camouflaged half, one the conspicuous half — tie on pixel-wise
    measures, but missing the camouflaged half must cost more under C^ω_β."""
    h, w = 90, 120
    gt = np.zeros((h, w), np.uint8)
    gt[25:65, 30:90] = 255
    texture = _textured_image(h, w)
    img = texture.copy()
    img[25:65, 60:90] = (230, 40, 200)  # right half conspicuous; left half = background texture
    miss_camouflaged = gt.copy()
    miss_camouflaged[25:65, 30:45] = 0
    miss_conspicuous = gt.copy()
    miss_conspicuous[25:65, 75:90] = 0
    a1, a2 = (evaluate(p, gt) for p in (miss_camouflaged, miss_conspicuous))
    for key in ("MAE", "maxFm", "adpIoU", "maxDice"):
        assert a1[key] == pytest.approx(a2[key]), key
    c1 = camouflage_context_measure(miss_camouflaged, gt, img=img)
    c2 = camouflage_context_measure(miss_conspicuous, gt, img=img)
    assert c1.degree.cd_map[25:65, 30:60].mean() > c1.degree.cd_map[25:65, 60:90].mean()
    assert c1.score < c2.score - 0.01


# ---------------------------------------------------------------- intermediates → score
def test_intermediates_reproduce_the_scores() -> None:
    gt = _blob()
    img = _textured_image(*gt.shape)
    pred = cv2.GaussianBlur(np.roll(gt, 4, axis=0), (0, 0), 2)
    r = camouflage_context_measure(pred, gt, img=img)
    x = r._pair.pred
    y = r._pair.mask.astype(float)
    assert np.sum(r.forward_map * x) / np.sum(x) == pytest.approx(r.forward, abs=1e-12)
    assert np.sum(r.reverse_map * y) / y.sum() == pytest.approx(r.reverse, abs=1e-12)
    cd = r.degree.cd_map
    assert r.weighted_reverse_map.sum() / (y.sum() + cd.sum()) == pytest.approx(
        r.weighted_reverse, abs=1e-12
    )
    f, rw = r.forward, r.weighted_reverse
    assert 2.2 * f * rw / (1.2 * f + rw) == pytest.approx(r.score, abs=1e-12)
    assert r.kernel.kernel.sum() == pytest.approx(1.0)
    assert np.trace(r.kernel.covariance) == pytest.approx(36.0)
    assert r.degree.repainted.shape == img.shape and (r.degree.cd_map[~r._pair.mask] == 0).all()
    assert cd.min() >= 0 and cd.max() <= 1


@pytest.mark.parametrize("where", ["inside", "touching the border"])
def test_forward_term_is_exact_in_float64(where: str) -> None:
    """F_m = Σ X·(K ∗ Y) / Σ X against SciPy's direct float64 correlation ('mirror' is
    reflect-101). Both references store K ∗ Y as float32; fminspect does not (see the
    module docstring), and takes Σ Y·(K ∗ X) instead when the object is clear of the border."""
    from scipy import ndimage

    rng = np.random.default_rng(4)
    box = (20, 60, 25, 70) if where == "inside" else (0, 50, 30, 90)
    gt = _blob(box=box)
    pred = np.clip(cv2.GaussianBlur(gt, (0, 0), 3) + rng.normal(0, 25, gt.shape), 0, 255)
    r = context_measure(pred.astype(np.uint8), gt)
    x, y = r._pair.pred, r._pair.mask.astype(np.float64)
    ky = ndimage.correlate(y, r.kernel.kernel, mode="mirror")
    assert r.forward == pytest.approx(float(np.sum(x * ky) / np.sum(x)), abs=1e-14)
    assert np.abs(r.relevance_map - ky).max() < 1e-14


def test_forward_term_is_exact_for_objects_at_every_distance_from_the_border() -> None:
    """The single-filter path is taken only when no kernel window of the object crosses the
    border: objects 0 … d + 3 px from each of the four borders give the exact F_m."""
    from scipy import ndimage

    rng = np.random.default_rng(9)
    base = _blob(h=70, w=64, box=(0, 12, 0, 9))
    half = context_kernel(prepare_gt(base)).half_size
    for gap in range(max(half) + 4):
        for flip_r, flip_c in ((False, False), (True, True), (False, True), (True, False)):
            gt = np.roll(base, (gap, gap), axis=(0, 1))
            gt = gt[::-1] if flip_r else gt
            gt = np.ascontiguousarray(gt[:, ::-1] if flip_c else gt)
            pred = rng.integers(0, 256, gt.shape).astype(np.uint8)
            r = context_measure(pred, gt)
            x, y = r._pair.pred, r._pair.mask.astype(np.float64)
            ky = ndimage.correlate(y, r.kernel.kernel, mode="mirror")
            exact = float(np.sum(x * ky) / np.sum(x))
            assert r.forward == pytest.approx(exact, abs=1e-14), (gap, flip_r, flip_c)


@pytest.mark.parametrize(
    ("fft_from", "fft_up_to"), [(0, 10**9), (10**9, 10**9)], ids=["spectrum", "filter2D"]
)
def test_k_star_x_on_the_object_is_filter2d_s_through_the_kernel_s_spectrum(
    fft_from: int, fft_up_to: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #50: K ∗ X on the object's crop through the kernel's spectrum (kept per GT)
    equals OpenCV's filter2D of the whole map (reflect-101) within 1e-14, for objects inside
    the image and touching each border, on crops of every size (both paths)."""
    import importlib

    cm = importlib.import_module("fminspect.metrics.context_measure")  # not the function
    monkeypatch.setattr(cm, "FFT_FROM", fft_from)
    monkeypatch.setattr(cm, "FFT_UP_TO", fft_up_to)
    rng = np.random.default_rng(12)
    for box in [
        (20, 60, 25, 70),
        (0, 50, 30, 90),
        (40, 80, 0, 30),
        (10, 80, 60, 100),
        (0, 80, 0, 100),
    ]:
        gt = _blob(h=80, w=100, box=box)
        pred = rng.integers(0, 256, gt.shape).astype(np.uint8)
        pair = prepare(pred, prepare_gt(gt))
        kernel = context_kernel(pair.gt)
        got, _ = cm._smoothed_on_fg(pair, kernel)
        want = cv2.filter2D(pair.pred, -1, kernel.kernel)[pair.mask]
        assert np.abs(got - want).max() < 1e-14, box


def test_camouflage_degree_is_computed_once_per_gt_and_image() -> None:
    gt = prepare_gt(_blob())
    img = _textured_image(*gt.shape)
    a = camouflage_context_measure(_blob(), gt, img=img).degree
    b = camouflage_context_measure(np.roll(_blob(), 3, axis=1), gt, img=img).degree
    assert a is b
    other = camouflage_degree(img[::-1].copy(), gt)
    assert other is not a


def test_the_same_image_array_is_hashed_once_and_an_edited_one_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every model of a sample passes the same image: its digest (the degree's key) is kept
    per array and checked by comparison; an array edited in place gets its own degree."""
    module = sys.modules["fminspect.metrics.camouflage_degree"]
    hashed: list[int] = []
    digest = module._digest
    monkeypatch.setattr(module, "_digest", lambda a: hashed.append(1) or digest(a))
    gt = prepare_gt(_blob())
    img = _textured_image(*gt.shape)
    first = camouflage_degree(img, gt)
    for _ in range(3):
        assert camouflage_degree(img, gt) is first
    assert len(hashed) == 1
    img[30:40, 30:40] = 0  # edited in place: not the image the degree was measured on
    edited = camouflage_degree(img, gt)
    assert len(hashed) == 2 and edited is not first
    fresh = camouflage_degree(img.copy(), prepare_gt(_blob()))
    np.testing.assert_array_equal(edited.cd_map, fresh.cd_map)
    assert not np.array_equal(edited.cd_map, first.cd_map)
    original = camouflage_degree(_textured_image(*gt.shape), prepare_gt(_blob()))
    np.testing.assert_array_equal(first.cd_map, original.cd_map)


# ---------------------------------------------------------------- the original conventions
def test_original_convention_thresholds_gt_inclusively() -> None:
    gt = _blob()
    gt128 = np.where(gt > 0, 128, 0).astype(np.uint8)
    assert context_measure(gt, gt128).score == 0.0  # > 128: an empty GT, non-empty pred
    assert context_measure(gt, gt128, convention="original").score == pytest.approx(
        context_measure(gt, gt).score, abs=1e-7
    )


def test_original_convention_does_not_stretch_and_uses_eps_1e8() -> None:
    gt = _blob()
    pred = (cv2.GaussianBlur(gt, (0, 0), 3) / 255 * 100).astype(np.uint8)  # max 100
    orig = context_measure(pred, gt, convention="original")
    unstretched = context_measure(pred / 255, gt)  # float input: taken as is
    assert orig.score == pytest.approx(unstretched.score, abs=1e-7)
    assert orig.score != pytest.approx(context_measure(pred, gt).score, abs=1e-3)
    f, r = orig.forward, orig.reverse
    assert orig.score == pytest.approx(2 * f * r / (f + r + 1e-8), abs=1e-15)


def test_original_convention_takes_bgr_images() -> None:
    gt = _blob()
    rgb = _textured_image(*gt.shape)
    bgr = rgb[..., ::-1].copy()
    a = camouflage_degree(rgb, gt)
    b = camouflage_degree(bgr, gt, convention="original")
    np.testing.assert_array_equal(a.matches, b.matches)
    # the repainting averages differ only where an exact .5 rounds down (eps 1e-8)
    diff = np.abs(a.repainted.astype(int) - b.repainted.astype(int))
    assert diff.max() <= 1
    with pytest.raises(ValueError, match="convention"):
        context_measure(gt, gt, convention="matlab")  # type: ignore[arg-type]


# ---------------------------------------------------------------- speed-ups stay bit-identical
def test_table_driven_rgb2lab_equals_scikit_image_bit_for_bit() -> None:
    """Lab of the object's pixels equals the reference's rgb2lab of the whole image."""
    from skimage.color import rgb2lab

    from fminspect.metrics.camouflage_degree import _rgb2lab

    rng = np.random.default_rng(3)
    images = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for h, w in ((400, 500), (7, 3))]
    plane = np.stack(np.meshgrid(np.arange(256), np.arange(256), indexing="ij"), -1)
    for fixed in (0, 10, 128, 255):  # every value of two channels against a third
        third = np.full((*plane.shape[:2], 1), fixed)
        images.append(np.concatenate([plane, third], -1).astype(np.uint8))
    for img in images:
        mask = rng.random(img.shape[:2]) < 0.3
        np.testing.assert_array_equal(_rgb2lab(img[mask]), rgb2lab(img)[mask])
        np.testing.assert_array_equal(_rgb2lab(img.reshape(-1, 3)), rgb2lab(img).reshape(-1, 3))


@pytest.mark.parametrize("block", [16 << 20, 1], ids=["one-block", "a-row-a-block"])
@pytest.mark.parametrize("stride", [1, 3, 7, 9])
def test_repainting_averages_every_covering_patch(
    stride: int, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strided sums over the patch grid equal a direct per-patch accumulation: patches
    overlapping (stride < 7), touching (7) or apart (9), on an object with holes, gathered
    in one block or one grid row at a time."""
    from fminspect.metrics.camouflage_degree import PATCH, _repaint

    module = sys.modules[_repaint.__module__]  # (the package's name is the function's)
    monkeypatch.setattr(module, "REPAINT_BLOCK_BYTES", block)

    rng = np.random.default_rng(4 + stride)
    rgb = rng.integers(0, 256, (60, 70, 3), dtype=np.uint8)
    fg_all = np.array([(r, c) for r in range(3 * stride, 40, stride) for c in range(0, 30, stride)])
    fg_xy = fg_all[rng.random(len(fg_all)) < 0.7]  # some grid cells not in the object
    bg_xy = np.array([(r, c) for r in range(0, 50, 3) for c in range(40, 60, 3)])
    matches = rng.integers(0, len(bg_xy), len(fg_xy))
    sums = np.zeros((60, 70, 3))
    counts = np.zeros((60, 70))
    for (r, c), m in zip(fg_xy, matches, strict=True):
        sr, sc = bg_xy[m]
        sums[r : r + PATCH, c : c + PATCH] += rgb[sr : sr + PATCH, sc : sc + PATCH]
        counts[r : r + PATCH, c : c + PATCH] += 1
    expected = np.where(counts[..., None] > 0, np.round(sums / (counts[..., None] + 1e-16)), 0)
    repainted, got_counts = _repaint(rgb, fg_xy, bg_xy, matches, 1e-16, stride)
    np.testing.assert_array_equal(got_counts, counts)
    np.testing.assert_array_equal(repainted, expected.astype(np.uint8))


@pytest.mark.slow
def test_nearest_band_patch_is_the_exact_brute_force_answer() -> None:
    """Lowest squared distance (Lab + spatial), ties to the lowest band index — including
    queries with several candidates within the first pick's bound (few grey levels make
    exact Lab ties common)."""
    from fminspect.metrics.camouflage_degree import nearest_band_patch

    rng = np.random.default_rng(5)
    several = 0
    for levels, n_q, n_b in ((3, 2500, 300), (256, 1500, 400), (2, 800, 50)):
        fg = rng.integers(0, levels, (n_q, 147)).astype(np.uint8)
        bg = rng.integers(0, levels, (n_b, 147)).astype(np.uint8)
        fg_xy = rng.normal(0, 20, (n_q, 2)).astype(np.float32)
        bg_xy = rng.normal(0, 20, (n_b, 2)).astype(np.float32)
        lab = ((fg[:, None, :].astype(np.int64) - bg[None, :, :]) ** 2).sum(axis=2)
        spatial = ((fg_xy[:, None, :].astype(np.float64) - bg_xy[None, :, :]) ** 2).sum(axis=2)
        distance = lab + spatial
        expected = distance.argmin(axis=1)  # first (lowest) index among equal minima
        np.testing.assert_array_equal(nearest_band_patch(fg, bg, fg_xy, bg_xy), expected)
        first, rows = lab.argmin(axis=1), np.arange(n_q)
        bound = lab[rows, first] + spatial[rows, first]
        several += int(((lab <= bound[:, None]).sum(axis=1) > 1).sum())
    assert several > 100  # the multi-candidate path was exercised


@pytest.mark.parametrize("box", [(20, 60, 25, 70), (0, 50, 0, 40)], ids=["inside", "at-border"])
def test_both_forms_of_one_pair_filter_the_prediction_once(
    box: tuple[int, int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """C_β and C^ω_β of one pair share K ∗ X (issue #50): one filtering of the prediction
    where there were two, and each value bit-identical to the one computed alone."""
    from fminspect.metrics._inputs import prepare
    from fminspect.metrics.suite import compute_suite

    gt = _blob(box=box)
    rng = np.random.default_rng(3)
    pred = np.clip(gt / 255 * 0.7 + rng.random(gt.shape) * 0.3, 0, 1)
    img = _textured_image(*gt.shape)
    alone = (
        context_measure(pred, gt).score,
        camouflage_context_measure(pred, gt, img=img).score,
    )
    calls: list[int] = []  # the output depth of each filtering: -1 for the prediction's
    real = cv2.filter2D

    def counting(src, ddepth, *args, **kw):  # type: ignore[no-untyped-def]
        calls.append(ddepth)
        return real(src, ddepth, *args, **kw)

    monkeypatch.setattr(cv2, "filter2D", counting)
    import importlib

    cm = importlib.import_module("fminspect.metrics.context_measure")
    through_spectrum = cm._correlate

    def counting_spectrum(crop, spec):  # type: ignore[no-untyped-def]
        calls.append(-1)  # the prediction's crop, filtered through the kernel's spectrum
        return through_spectrum(crop, spec)

    monkeypatch.setattr(cm, "_correlate", counting_spectrum)
    pair = prepare(pred, gt)
    suite = compute_suite(pair, None, img=img, keys=["Cm", "CCm"])
    scores = suite.scores()
    assert (scores["Cm"], scores["CCm"]) == alone  # bit-identical
    # K ∗ X once (and the GT's K ∗ Y, needed where the object is near the border)
    assert calls.count(-1) == 1, calls
