"""The normalisation gate: GT rules, stretch, dtypes and error messages."""

from __future__ import annotations

import numpy as np
import pytest

from fminspect.metrics import Normalization, prepare, prepare_gt
from fminspect.metrics._inputs import binarize_gt, normalize_pred


@pytest.mark.faults
def test_gt_strictly_greater_than_128_by_default() -> None:
    gt = np.array([[127, 128, 129, 255]], np.uint8)
    assert binarize_gt(gt).tolist() == [[False, False, True, True]]
    inclusive = Normalization(gt_inclusive=True)
    assert binarize_gt(gt, inclusive).tolist() == [[False, True, True, True]]
    assert inclusive.gt_rule == "GT>=128" and Normalization().gt_rule == "GT>128"


def test_gt_uint16_float_and_bool_use_the_same_scale() -> None:
    g16 = np.array([[128 * 257, 128 * 257 + 1, 0, 65535]], np.uint16)
    assert binarize_gt(g16).tolist() == [[False, True, False, True]]
    gf = np.array([[128 / 255, 0.51, 0.0, 1.0]])
    assert binarize_gt(gf).tolist() == [[False, True, False, True]]
    gb = np.array([[True, False]])
    assert binarize_gt(gb).tolist() == [[True, False]]


def test_pred_is_divided_by_255_then_stretched_unless_constant() -> None:
    pred = np.array([[10, 20], [30, 110]], np.uint8)
    out, notes = normalize_pred(pred)
    np.testing.assert_allclose(out, [[0, 0.1], [0.2, 1.0]])
    assert notes == ()
    raw, _ = normalize_pred(pred, Normalization(stretch=False))
    np.testing.assert_allclose(raw, pred / 255)
    const, notes = normalize_pred(np.full((2, 2), 128, np.uint8))
    np.testing.assert_allclose(const, 128 / 255)  # 0.50196…, as pysodmetrics
    assert "constant" in notes[0]


def test_float_and_bool_predictions_are_taken_as_they_are() -> None:
    pred = np.array([[0.2, 0.4]])
    out, _ = normalize_pred(pred)
    np.testing.assert_array_equal(out, pred)
    out, _ = normalize_pred(np.array([[True, False]]))
    np.testing.assert_array_equal(out, [[1.0, 0.0]])


def test_uint16_prediction_uses_its_full_scale() -> None:
    out, _ = normalize_pred(np.array([[0, 65535]], np.uint16), Normalization(stretch=False))
    np.testing.assert_array_equal(out, [[0.0, 1.0]])


@pytest.mark.parametrize(
    ("pred", "gt", "error", "match"),
    [
        (np.zeros((3, 4), np.uint8), np.zeros((4, 3), np.uint8), ValueError, r"\(3, 4\).*\(4, 3\)"),
        (np.zeros((3, 4, 3), np.uint8), np.zeros((3, 4), np.uint8), ValueError, "2-D.*grey"),
        (np.full((2, 2), 1.5), np.zeros((2, 2), np.uint8), ValueError, r"\[0, 1\]"),
        (np.full((2, 2), np.nan), np.zeros((2, 2), np.uint8), ValueError, "NaN"),
        (np.full((2, 2), 300, np.int32), np.zeros((2, 2), np.uint8), ValueError, "8-bit"),
        (np.zeros((2, 2), complex), np.zeros((2, 2), np.uint8), TypeError, "complex"),
        (np.zeros((0, 2), np.uint8), np.zeros((0, 2), np.uint8), ValueError, "empty"),
    ],
)
@pytest.mark.faults
def test_bad_inputs_raise_clear_messages(pred, gt, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        prepare(pred, gt)


def test_prepared_gt_is_reused_and_checked() -> None:
    gt = prepare_gt(np.array([[0, 255]], np.uint8))
    assert prepare(np.array([[0, 255]], np.uint8), gt).gt is gt
    with pytest.raises(ValueError, match="GT>=128"):
        prepare_gt(gt, Normalization(gt_inclusive=True))


def test_normalization_label_names_every_choice() -> None:
    assert Normalization().label == "GT>128, stretch"
    assert Normalization(gt_inclusive=True, stretch=False).label == "GT>=128, no stretch"
    with pytest.raises(ValueError, match="gt_threshold"):
        Normalization(gt_threshold=300)


def test_unit_map_scales_without_stretch_and_always_copies() -> None:
    from fminspect.metrics import unit_map

    np.testing.assert_array_equal(unit_map(np.array([[0, 51]], np.uint8)), [[0.0, 0.2]])
    np.testing.assert_array_equal(unit_map(np.array([[0, 65535]], np.uint16)), [[0.0, 1.0]])
    np.testing.assert_array_equal(unit_map(np.array([[True, False]])), [[1.0, 0.0]])
    a = np.array([[0.25, 0.5]])
    out = unit_map(a)
    out[0, 0] = 1.0  # an edit of the copy leaves the original alone
    assert a[0, 0] == 0.25
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        unit_map(np.array([[2.0]]))


NORMS = {
    "min-max": Normalization(),
    "max": Normalization(stretch_rule="max"),
    "raw": Normalization(stretch=False),
    "matlab": Normalization(thresholds="matlab"),
}


@pytest.mark.parametrize("big", [False, True], ids=["calcHist", "bincount"])
@pytest.mark.parametrize("norm", NORMS.values(), ids=NORMS.keys())
def test_a_uint8_map_s_sweep_counted_per_level_is_the_pixel_sweep(
    norm: Normalization, big: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #50: a uint8 map's 256-threshold sweep from two histograms of its levels equals
    the sweep counted pixel by pixel, every count of every threshold, the adaptive and the
    binary rule (and so the strict sweep of MATLAB's E-measure, item 7), and its MAE the
    pixels' mean within 1e-15 — on narrow, wide, constant and
    two-level maps, empty and full GTs (and through NumPy's bincount, taken where a bin
    could pass float32's exact range)."""
    from fminspect.metrics import _confusion, _inputs
    from fminspect.metrics._inputs import Pair
    from fminspect.metrics.mae import mae_from_pair

    if big:
        monkeypatch.setattr(_inputs, "_FLOAT32_EXACT", 0)
    rng = np.random.default_rng(7)
    shape = (37, 53)
    blob = np.zeros(shape, np.uint8)
    blob[8:30, 10:40] = 255
    maps = [
        rng.integers(0, 256, shape, dtype=np.uint8),
        rng.integers(90, 110, shape, dtype=np.uint8),  # narrow: stretched far apart
        np.full(shape, 77, np.uint8),
        np.where(blob > 0, 255, 0).astype(np.uint8),
        (blob // 2 + rng.integers(0, 100, shape)).astype(np.uint8),
    ]
    gts = [blob, np.zeros(shape, np.uint8), np.full(shape, 255, np.uint8)]
    for gt in gts:
        for pred in maps:
            pair = prepare(pred, gt, norm)
            assert pair.levels is not None
            plain = Pair(pred=pair.pred, gt=pair.gt, norm=norm)  # no levels: pixel by pixel
            # the sweep, and the strict one of the MATLAB toolbox's E-measure (pred > T)
            for sweep in (_confusion._sweep, _confusion._strict_sweep):
                got, want = sweep(pair), sweep(plain)
                for name in ("tp", "fp", "tn", "fn"):
                    np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
                assert (got.adaptive, got.binary) == (want.adaptive, want.binary)
                assert got.adaptive_threshold == want.adaptive_threshold
            by_level, by_pixel = mae_from_pair(pair), mae_from_pair(plain)
            assert by_level.score == pytest.approx(by_pixel.score, rel=0, abs=1e-15)
            np.testing.assert_array_equal(by_level.error_map, np.abs(pair.pred - pair.mask))


def test_the_levels_are_a_copy_of_the_caller_s_map() -> None:
    pred = np.arange(12, dtype=np.uint8).reshape(3, 4) * 20
    pair = prepare(pred, pred)
    pred[:] = 0  # the caller reuses its array
    assert pair.levels is not None and pair.levels.max() == 220
    assert not pair.levels.flags.writeable


def test_the_sweep_mae_and_s_measure_count_a_map_in_one_pass() -> None:
    """Issue #50: the threshold sweep and MAE count a uint8 map's levels under the S-measure's
    quadrant labels (foreground in the lowest bit), so the three share one histogram; other
    splits and empty GTs count on their own."""
    from fminspect.metrics import compute_suite
    from fminspect.metrics.suite import Params

    rng = np.random.default_rng(3)
    gt = np.zeros((60, 80), np.uint8)
    gt[10:40, 20:70] = 255
    pred = rng.integers(0, 256, gt.shape, dtype=np.uint8)

    def histograms(suite: object) -> list[str]:
        return sorted(k for k in suite.pair._memo if k.startswith("level_counts."))  # type: ignore[attr-defined]

    suite = compute_suite(pred, gt, keys=["MAE", "Sm", "maxFm", "maxEm"])
    assert histograms(suite) == ["level_counts.smeasure.pysod"]
    other = compute_suite(pred, gt, Params(s_centroid="matlab"), keys=["MAE", "Sm", "maxFm"])
    assert histograms(other) == ["level_counts.smeasure.matlab", "level_counts.smeasure.pysod"]
    assert other.scores()["maxFm"] == suite.scores()["maxFm"]
    empty = compute_suite(pred, np.zeros_like(gt), keys=["MAE", "maxFm"])
    assert histograms(empty) == ["level_counts.fg"]


def test_a_gt_s_row_and_column_counts_and_bounds_are_numpy_s() -> None:
    """Issue #50: the per-row/per-column foreground counts (OpenCV's sums), shared by the
    bounds and the S-measure's centroid, equal NumPy's counts on random masks."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        h, w = (int(v) for v in rng.integers(1, 70, 2))
        mask = rng.random((h, w)) < rng.uniform(0.001, 0.5)
        if not mask.any():
            continue
        g = prepare_gt(mask)
        rows, cols = g.profiles
        np.testing.assert_array_equal(rows, np.count_nonzero(mask, axis=1))
        np.testing.assert_array_equal(cols, np.count_nonzero(mask, axis=0))
        r, c = np.nonzero(mask)
        assert g.bounds == (r.min(), r.max(), c.min(), c.max())
