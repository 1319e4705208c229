"""``--convention classic-benchmark`` and ``maxFm_meanPR`` against the classic saliency
benchmark's own code: sal_eval_toolbox's ``performCalcu.m`` (``../shared/reference``) run
under GNU Octave on real data — SalBench DataSet1's 18 photographs with four classic methods
(FT, GC, HC, RC; CA's maps need MATLAB's ``imresize``: left out) and the CODToolbox's three
COD10K images with SINet's maps — per image and per curve point, and the dataset values
``fminspect eval`` writes. Target 1e-10. Where fminspect deliberately differs (the
benchmark's ``IoU_at_maxF`` reads the first method's curve for every method; its image count
when the last map is all zero), the test shows the difference and the preset says it.
Octave takes a few seconds for all of it; skips where Octave or ``../shared`` is missing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from fminspect.cli import main
from fminspect.io.loading import load_map
from fminspect.metrics import compute_suite
from fminspect.metrics.dataset import DatasetAccumulator
from fminspect.pipeline.conventions import convention
from tests.reference.octave_toolbox import (
    BENCHMARK,
    SHARED,
    TOOLBOX,
    OctaveUnavailable,
    octave,
    run_benchmark,
)

SALBENCH = SHARED / "realdata" / "SalBench-DataSet1"
METHODS = ("FT", "GC", "HC", "RC")
PARAMS = convention("classic-benchmark").apply()
#: fminspect's dataset key → performCalcu's Metrics field (one column per method)
DATASET = {
    "maxFm_meanPR": "MaxFmeasure",
    "MAE": "MAE",
    "Sm": "S_measure",
    "meanIoU": "meanIoU",
    "maxIoU": "maxIoU",
}


@pytest.fixture(scope="module")
def runnable() -> None:
    if not BENCHMARK.exists():
        pytest.skip(f"{BENCHMARK} is not here (../shared beside the project)")
    try:
        octave()
    except OctaveUnavailable as exc:
        pytest.skip(str(exc))


def _real_sets() -> dict[str, tuple[dict[str, Path], dict[str, dict[str, Path]]]]:
    sets = {}
    if SALBENCH.exists():
        gts = {p.stem: p for p in sorted((SALBENCH / "GT").glob("*.png"))}
        sets["SalBench"] = (
            gts,
            {m: {n: SALBENCH / "Pred" / m / f"{n}.png" for n in gts} for m in METHODS},
        )
    cod = TOOLBOX / "CamDataset" / "COD10K"
    if cod.exists():
        gts = {p.stem: p for p in sorted(cod.glob("*.png"))}
        folder = TOOLBOX / "CamMap" / "2020-CVPR-SINet" / "COD10K"
        sets["COD10K"] = (gts, {"SINet": {n: folder / f"{n}.png" for n in gts}})
    return sets


@pytest.fixture(scope="module")
def ran(runnable: None, tmp_path_factory: pytest.TempPathFactory) -> dict:
    sets = _real_sets()
    if not sets:
        pytest.skip("neither real set is here")
    return {
        name: (gts, maps, run_benchmark(tmp_path_factory.mktemp(name), gts, maps))
        for name, (gts, maps) in sets.items()
    }


@pytest.mark.reference
def test_every_image_and_curve_point_equals_performcalcu(ran: dict) -> None:
    pairs = 0
    for set_name, (gts, maps, theirs) in ran.items():
        for j, (method, files) in enumerate(maps.items()):
            pre, rec = [], []
            for i, name in enumerate(theirs["names"]):
                suite = compute_suite(
                    load_map(files[name]).array,
                    load_map(gts[name]).array,
                    params=PARAMS,
                    keys=["maxFm", "MAE", "Sm", "adpFm"],
                )
                f, where = suite.fmeasure, f"{set_name} {method} {name}"
                for ours, field in (
                    (f.precision.curve, "Pre_image"),
                    (f.recall.curve, "Recall_image"),
                ):
                    # its thresholds run from 1 down
                    want = theirs[field][i, ::-1, j]
                    np.testing.assert_allclose(ours, want, rtol=0, atol=1e-10, err_msg=where)
                adaptive = (f.precision.adaptive, f.recall.adaptive, f.fmeasure.adaptive)
                np.testing.assert_allclose(
                    adaptive, theirs["mean_Fmeasure_image"][i, :, j], rtol=0, atol=1e-10
                )
                scores = suite.scores()
                for key, field in (("MAE", "MAE_image"), ("Sm", "S_measure_image")):
                    want = float(theirs[field][i, 0, j])
                    if np.isnan(want):  # CalMAE.m of a constant map: 0/0
                        assert np.isnan(scores[key]), where
                    else:
                        assert scores[key] == pytest.approx(want, abs=1e-10), (where, key)
                pre.append(f.precision.curve)
                rec.append(f.recall.curve)
                pairs += 1
            # the image-averaged P and R, and F of them at every threshold (its max F's curve)
            mean_p, mean_r = np.mean(pre, axis=0), np.mean(rec, axis=0)
            f_curve = 1.3 * mean_p * mean_r / (0.3 * mean_p + mean_r)
            for ours, field in ((mean_p, "Pre"), (mean_r, "Recall"), (f_curve, "Fmeasure_Curve")):
                np.testing.assert_allclose(
                    ours, theirs[field][::-1, j], rtol=0, atol=1e-10, err_msg=f"{method} {field}"
                )
    assert pairs == sum(len(g) * len(m) for g, m, _ in ran.values())


@pytest.mark.reference
def test_eval_writes_the_benchmark_s_dataset_values(ran: dict, tmp_path: Path) -> None:
    for set_name, (gts, maps, theirs) in ran.items():
        root = tmp_path / set_name / "data"
        for name, path in gts.items():
            (root / set_name / "GT").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, root / set_name / "GT" / f"{name}.png")
        for method, files in maps.items():
            (root / set_name / "Pred" / method).mkdir(parents=True)
            for name, path in files.items():
                shutil.copyfile(path, root / set_name / "Pred" / method / f"{name}.png")
        out = tmp_path / set_name / "out"
        args = ["eval", str(root), "--convention", "classic-benchmark", "--out", str(out)]
        assert main([*args, "--no-plots", "--quiet"]) == 0
        results = json.loads((out / "results.json").read_text())
        assert results["config"]["convention"] == "classic-benchmark"
        from fminspect.batch import tables

        # its tables (the terminal's too) show its own numbers: its max F first
        shown = tables._default_measures(tables.load([out]))
        assert shown[:3] == ["maxFm_meanPR", "adpFm", "MAE"]
        assert any("N − 1" in t for t in results["config"]["convention_unreproduced"])
        for j, method in enumerate(maps):
            values = results["datasets"][set_name][method]["values"]
            for key, field in DATASET.items():
                assert values[key] == pytest.approx(theirs[field][0, j], abs=1e-10), (method, key)
            # its "mean F-measure" is the adaptive F averaged over the images
            assert values["adpFm"] == pytest.approx(theirs["mean_Fmeasure"][2, j], abs=1e-10)
            # IoU at max F: its IoU_at_maxF takes IoU(ind) of a 256 × methods matrix, i.e.
            # the first method's curve at each method's argmax; fminspect gives each its own
            best = int(np.argmax(theirs["Fmeasure_Curve"][:, j]))  # first max from 1 down
            own = theirs["IoU"][best, j]
            assert values["IoU_maxFm_meanPR"] == pytest.approx(own, abs=1e-10), method
            assert theirs["IoU_at_maxF"][0, j] == theirs["IoU"][best, 0]
            # a constant map's MAE is left out of the mean, as there (0/0 → NaN, dropped)
            n_mae = int(np.count_nonzero(~np.isnan(theirs["MAE_image"][:, 0, j])))
            assert results["datasets"][set_name][method]["images_per_measure"]["MAE"] == n_mae


# --------------------------------------------------------------- without Octave: the pieces
def test_its_thresholds_compared_with_the_map_are_floor_255p_for_every_double() -> None:
    # performCalcu.m counts pred >= fl(t/255) (histc over [0:255]/255); fminspect counts
    # floor(255·pred) >= t. Rounding is monotonic, so checking both sides of every boundary
    # checks every double: no separate threshold rule is needed.
    for t in range(256):
        at = t / 255
        below = np.nextafter(at, -1.0)
        assert int(np.floor(at * 255)) == t
        assert t == 0 or int(np.floor(below * 255)) == t - 1


def test_its_stretch_divides_by_the_maximum_and_keeps_a_zero_map_zero() -> None:
    gt = np.zeros((4, 4), np.uint8)
    gt[1:3, 1:3] = 255
    pred = np.array([[10, 20, 30, 40]] * 4, np.uint8)
    suite = compute_suite(pred, gt, params=PARAMS, keys=["MAE"])
    # 0.25, 0.5 after /max, 0 and 1/3 re-stretched (background: the error is the value)
    np.testing.assert_array_equal(suite.mae.error_map[0, :2], [0.0, 1 / 3])
    for dtype, scale in ((np.uint8, 255), (np.uint16, 65535)):
        p = np.array([[10, 20], [30, 40]], dtype)
        norm = PARAMS.norm
        from fminspect.metrics._inputs import normalize_pred

        out, _ = normalize_pred(p, norm)
        # sMap ./ max(sMap(:)) on im2double's values, operation for operation
        np.testing.assert_array_equal(out, (p / scale) / (40 / scale))
        zero, _ = normalize_pred(np.zeros((2, 2), dtype), norm)
        assert not zero.any()
    assert PARAMS.norm.label == "GT>=25.5, stretch /max"


def test_its_mae_is_of_the_map_stretched_again_and_nan_for_a_constant_map() -> None:
    gt = np.zeros((8, 8), np.uint8)
    gt[2:6, 2:6] = 255
    pred = np.full((8, 8), 100, np.uint8)
    pred[2:6, 2:6] = 200
    s = compute_suite(pred, gt, params=PARAMS, keys=["MAE"]).scores()["MAE"]
    assert s == 0.0  # 0.5 and 1 after /max, then 0 and 1
    assert compute_suite(pred, gt, keys=["MAE"]).scores()["MAE"] == 0.0  # min-max already
    flat = np.full((8, 8), 100, np.uint8)
    assert np.isnan(compute_suite(flat, gt, params=PARAMS, keys=["MAE"]).scores()["MAE"])
    assert compute_suite(flat, gt, keys=["MAE"]).scores()["MAE"] > 0  # kept as it is


def _images(seed: int, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        gt = np.zeros((24, 32), np.uint8)
        r, c = rng.integers(2, 12), rng.integers(2, 16)
        gt[r : r + rng.integers(3, 10), c : c + rng.integers(3, 14)] = 255
        pred = np.clip(gt * rng.uniform(0.2, 0.9) + rng.normal(60, 40, gt.shape), 0, 255)
        out.append((pred.astype(np.uint8), gt))
    return out


def test_max_f_of_the_mean_precision_and_recall_and_iou_at_its_threshold() -> None:
    acc = DatasetAccumulator(keep_rows=True)
    pre, rec, iou = [], [], []
    for i, (pred, gt) in enumerate(_images(3, 6)):
        s = compute_suite(pred, gt, keys=["maxFm_meanPR", "IoU_maxFm_meanPR", "maxIoU"])
        acc.add(str(i), s.scores(), s.curves())
        assert s.scores()["maxFm_meanPR"] == s.scores()["maxFm"]  # one image: its own
        pre.append(s.fmeasure.precision.curve)
        rec.append(s.fmeasure.recall.curve)
        iou.append(s.overlap.iou.curve)
    p, r = np.mean(pre, axis=0), np.mean(rec, axis=0)
    f = 1.3 * p * r / (0.3 * p + r)
    values = acc.results()
    assert values["maxFm_meanPR"] == pytest.approx(f.max(), abs=1e-15)
    assert values["maxFm_meanPR"] != pytest.approx(values["maxFm"], abs=1e-3)  # another number
    t = int(np.flatnonzero(f == f.max())[-1])  # the highest threshold on a tie
    assert values["IoU_maxFm_meanPR"] == np.mean(iou, axis=0)[t]
    assert acc.counts()["maxFm_meanPR"] == 6
    ones = acc.replicates(np.ones((1, 6)), ["maxFm_meanPR"])["maxFm_meanPR"]
    assert ones[0] == pytest.approx(values["maxFm_meanPR"], abs=1e-15)


def test_an_empty_gt_makes_its_max_f_nan_as_the_benchmark_s_recall_is_0_over_0() -> None:
    acc = DatasetAccumulator(keep_rows=True)
    images = _images(4, 3)
    images.append((images[0][0], np.zeros_like(images[0][1])))
    for i, (pred, gt) in enumerate(images):
        s = compute_suite(pred, gt, keys=["maxFm_meanPR", "IoU_maxFm_meanPR"])
        acc.add(str(i), s.scores(), s.curves())
    assert np.isnan(acc.scores["maxFm_meanPR"][-1])
    values = acc.results()
    assert np.isnan(values["maxFm_meanPR"]) and np.isnan(values["IoU_maxFm_meanPR"])
    assert np.isfinite(values["maxFm"])  # pysodmetrics' recall is 0 there
    # a bootstrap draw without the empty GT has a value, one with it has none
    draws = np.array([[1, 1, 1, 0], [1, 0, 1, 1]], dtype=float)
    got = acc.replicates(draws, ["maxFm_meanPR"])["maxFm_meanPR"]
    assert np.isfinite(got[0]) and np.isnan(got[1])


def test_eval_under_the_convention_computes_what_the_benchmark_reports_by_default() -> None:
    import argparse

    from fminspect.cli._common import measure_words

    args = argparse.Namespace(measures=None, convention="classic-benchmark")
    words = measure_words(args)
    assert words is not None and words[0] == "default"
    assert {"maxFm_meanPR", "IoU_maxFm_meanPR", "adpFm", "MAE", "Sm"} <= set(words)
    assert measure_words(argparse.Namespace(measures=None, convention="matlab")) is None
    assert measure_words(argparse.Namespace(measures=["MAE"], convention=None)) == ("MAE",)


@pytest.mark.reference
def test_its_count_drops_by_one_only_when_the_last_map_is_all_zero(
    runnable: None, tmp_path: Path
) -> None:
    # performCalcu.m resets totalNum inside its image loop, so only the last image's
    # all-zero map lowers it: its averages are then sums / (N − 1). fminspect divides by N
    # (the preset lists this among what it does not reproduce).
    import cv2

    images = _images(5, 3)
    gts, maps = {}, {"zero_last": {}, "zero_first": {}}
    for i, (pred, gt) in enumerate(images):
        name = f"{i:02d}"
        gts[name] = tmp_path / f"gt_{name}.png"
        cv2.imwrite(str(gts[name]), gt)
        for method, zero_at in (("zero_last", 2), ("zero_first", 0)):
            path = tmp_path / f"{method}_{name}.png"
            cv2.imwrite(str(path), np.zeros_like(pred) if i == zero_at else pred)
            maps[method][name] = path
    theirs = run_benchmark(tmp_path / "run", gts, maps)
    for j, (method, files) in enumerate(maps.items()):
        curves = [
            compute_suite(
                load_map(files[n]).array, load_map(gts[n]).array, params=PARAMS
            ).fmeasure.precision.curve
            for n in theirs["names"]
        ]
        ours = np.mean(curves, axis=0)[::-1]
        n = 2 if method == "zero_last" else 3
        np.testing.assert_allclose(theirs["Pre"][:, j], ours * 3 / n, rtol=1e-12, atol=0)
