"""Conventions (--convention): each preset does what its implementation does.

* ``pysodmetrics`` is fminspect's default (the parity suite checks it against 1.6.2);
* ``pysodevaltoolkit`` against pysodmetrics 1.4.2, the release PySODEvalToolkit pins, run in
  its own environment on the same seeded random and edge cases, to 1e-10;
* ``matlab`` by the behaviours of the authors' MATLAB code that it reproduces (read from the
  ``.m`` files, METRICS §4 and §5), checked by hand: no MATLAB runs here;
* ``context-original`` against pysodmetrics' Context-measures given the inputs the original
  code makes (GT ≥ 128, prediction / 255 without a stretch), to its documented 1e-8.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from fminspect.metrics import Params, compute_suite, prepare
from fminspect.metrics._inputs import CURVE_THRESHOLDS, MATLAB_THRESHOLDS
from fminspect.metrics.smeasure import smeasure
from fminspect.metrics.weighted_fmeasure import weighted_fmeasure
from fminspect.pipeline.config import EvalConfig
from fminspect.pipeline.conventions import CONVENTIONS, convention, convention_of
from tests.metrics.test_parity_real_size import _photo_scene, _scene
from tests.reference.cases import edge_cases, random_cases
from tests.reference.context_cases import context_cases

ATOL = 1e-10


def test_every_preset_names_its_implementation_and_is_recognised_back() -> None:
    from fminspect.cli._common import CONVENTION_NAMES

    assert tuple(CONVENTIONS) == CONVENTION_NAMES
    for c in CONVENTIONS.values():
        assert c.implementation
        assert convention_of(c.apply(), c.interpolation) == c.name
        assert EvalConfig(c.apply(), interpolation=c.interpolation).as_dict()["convention"] == (
            c.name
        )
    assert convention_of(Params(), "bilinear") == "pysodmetrics"
    assert convention_of(Params(s_centroid="matlab"), "bilinear") == "custom"
    # β², α … are not part of a convention
    assert convention_of(Params(beta2=1.0), "bilinear") == "pysodmetrics"
    with pytest.raises(ValueError, match="unknown convention 'octave'"):
        convention("octave")


# ------------------------------------------------------------------------ pysodevaltoolkit
def _classic(case: dict, params: Params) -> dict[str, object]:
    s = compute_suite(case["pred"], case["gt"], params=params)
    return {
        "fm_adp": s.fmeasure.adaptive,
        "fm_curve": s.fmeasure.fmeasure.curve[::-1],
        "em_adp": s.emeasure.adaptive,
        "em_curve": s.emeasure.curve[::-1],
        "sm": s.smeasure.score,
        "wfm": s.weighted_fmeasure.score,
        "mae": s.mae.score,
        "_sm_warnings": s.smeasure.warnings,
    }


@pytest.mark.reference
@pytest.mark.slow
def test_pysodevaltoolkit_agrees_with_pysodmetrics_1_4_2(pysod142) -> None:  # type: ignore[no-untyped-def]
    cases = [c for c in random_cases(160, seed=20261126) + edge_cases() if c["normalize"]]
    cases += _one_pixel_sets()
    cases += [  # real sizes: ≥ 1000 × 1000, many objects, thin lines (test_parity_real_size)
        {"id": f"real-{i}", "pred": p, "gt": g, "normalize": True}
        for i, (p, g) in enumerate([_scene(4, (1024, 1100)), _scene(5, (1000, 1000))])
    ]
    params = convention("pysodevaltoolkit").apply()
    results = pysod142(cases)["results"]
    failures, empty_quadrants, one_pixel, sm_differs_from_default = [], 0, 0, 0
    for case, ref in zip(cases, results, strict=True):
        assert "error" not in ref, (case["id"], ref)
        ours = _classic(case, params)
        for key, ref_value in ref.items():
            mine = np.asarray(ours[key], dtype=np.float64)
            theirs = np.asarray(ref_value, dtype=np.float64)
            if key.startswith("em_") and case["pred"].size == 1:
                one_pixel += 1  # E of one pixel: N, not N − 1 + eps (test_parity_classic)
                continue
            if key == "sm" and ours["_sm_warnings"]:
                # an empty quadrant: 1.4.2's NaN region gives max(0, NaN) = 0; fminspect
                # gives the quadrant no weight (the documented deliberate difference)
                assert float(theirs) == 0.0 or math.isnan(float(theirs)), case["id"]
                empty_quadrants += 1
                continue
            if not np.allclose(mine, theirs, rtol=0, atol=ATOL, equal_nan=True):
                failures.append(f"{case['id']}: {key} differs by {np.nanmax(abs(mine - theirs))}")
        default = _classic(case, Params())["sm"]
        if not np.allclose(default, ref["sm"], rtol=0, atol=ATOL, equal_nan=True):  # type: ignore[arg-type]
            sm_differs_from_default += 1
    assert not failures, "\n".join(failures[:20])
    assert len(cases) >= 160
    # the preset matters: where a set or quadrant has one pixel, the default (N − 1 + eps)
    # would not agree with 1.4.2
    assert sm_differs_from_default >= 2


def _one_pixel_sets() -> list[dict]:
    """A one-pixel GT foreground, and a one-pixel quadrant (foreground centroid in the
    corner)."""
    out = []
    for i, (r, c) in enumerate(((3, 3), (0, 0))):
        gt = np.zeros((12, 10), np.uint8)
        gt[r, c] = 255
        gt[r + 2 : r + 5, c + 2 : c + 5] = 255 if i else 0
        pred = np.random.default_rng(i).integers(0, 256, (12, 10)).astype(np.uint8)
        out.append({"id": f"one-pixel-{i}", "pred": pred, "gt": gt, "normalize": True})
    return out


def test_the_n_minus_1_denominator_gives_nan_for_one_pixel_sets() -> None:
    gt = np.zeros((8, 8), np.uint8)
    gt[3, 3] = 255  # a one-pixel foreground: its std is np.std of one value, ddof = 1
    pred = np.zeros((8, 8), np.uint8)
    pred[2:5, 2:5] = 200
    default = smeasure(pred, gt).score
    assert math.isfinite(default)
    from fminspect.metrics.smeasure import smeasure_from_pair

    old = smeasure_from_pair(prepare(pred, gt), denominator="n-1")
    assert old.foreground is not None and math.isnan(old.foreground.std)
    assert old.score == 0.0  # max(0, NaN), as 1.4.2 computes it


# ---------------------------------------------------------------------------------- matlab
def test_matlab_rounds_the_centroid_half_away_on_the_one_based_mean() -> None:
    """METRICS §4: foreground in columns 0–5 (0-based mean 2.5) and rows 10–13 of 32×40:
    pysodmetrics splits at column 3 (round-half-even(2.5) + 1), StructureMeasure.m at 4
    (round(3.5) half away from zero); eval-co-sod at 2 (round(2.5), no + 1)."""
    gt = np.zeros((32, 40), np.uint8)
    gt[10:14, 0:6] = 255
    rng = np.random.default_rng(4)
    pred = rng.integers(0, 256, (32, 40)).astype(np.uint8)
    pair = prepare(pred, gt)
    from fminspect.metrics.smeasure import smeasure_from_pair

    pysod = smeasure_from_pair(pair)
    matlab = smeasure_from_pair(pair, centroid="matlab")
    cosod = smeasure_from_pair(pair, centroid="co-sod")
    # rows: 0-based mean 11.5 → pysod 12 + 1 = 13, MATLAB round(12.5) = 13, co-sod 12
    assert pysod.centroid == (13, 3)
    assert matlab.centroid == (13, 4)
    assert cosod.centroid == (12, 2)
    assert pysod.score != matlab.score  # the split moved: another S-measure
    # where the means are not halves, the three agree up to the + 1
    gt2 = np.zeros((32, 40), np.uint8)
    gt2[10:13, 0:5] = 255  # means 11 and 2
    a = smeasure_from_pair(prepare(pred, gt2))
    b = smeasure_from_pair(prepare(pred, gt2), centroid="matlab")
    assert a.centroid == b.centroid == (12, 3) and a.score == b.score


def test_matlab_gives_nan_weighted_f_for_an_empty_gt_which_means_leave_out() -> None:
    gt = np.zeros((16, 16), np.uint8)
    pred = np.full((16, 16), 30, np.uint8)
    assert weighted_fmeasure(pred, gt).score == 0.0
    params = convention("matlab").apply()
    s = compute_suite(pred, gt, params=params, keys=("wFm",))
    assert math.isnan(s.scores()["wFm"])
    from fminspect.metrics import DatasetAccumulator

    acc = DatasetAccumulator()
    acc.add("empty", {"wFm": math.nan}, {})
    acc.add("other", {"wFm": 0.5}, {})
    assert acc.results(params)["wFm"] == 0.5 and acc.counts()["wFm"] == 1


def test_matlab_labels_say_what_differs() -> None:
    from fminspect.metrics import MEASURES_BY_KEY

    params = convention("matlab").apply()
    assert MEASURES_BY_KEY["Sm"].label(params) == "Sm α=0.5 c=matlab"
    assert MEASURES_BY_KEY["wFm"].label(params) == "wFm β²=1 ∅=NaN"
    assert "N−1" in MEASURES_BY_KEY["Sm"].label(convention("pysodevaltoolkit").apply())


# ------------------------------------------------------------------------ context-original
@pytest.mark.reference
@pytest.mark.slow
def test_context_original_is_the_reference_on_the_original_codes_inputs(pysod) -> None:  # type: ignore[no-untyped-def]
    """The original code binarises the GT with ≥ 128 and divides the prediction by 255 with
    no stretch; pysodmetrics given exactly those inputs (normalize=False) is the original
    code up to its 1e-8 epsilons (METRICS §10.7)."""
    cases = [c for c in context_cases(40, seed=77) if np.any(c["gt"] >= 128)]
    cases.append(_photo_scene(9, (1000, 1040), camouflaged=True))  # and a real size
    made = [
        {
            "id": c["id"],
            "pred": c["pred"].astype(np.float64) / 255,
            "gt": c["gt"] >= 128,
            "img": c["img"],
        }
        for c in cases
    ]
    results = pysod(made, [{"groups": ["context"], "normalize": False} for _ in made])["results"]
    params = convention("context-original").apply()
    worst = 0.0
    for case, ref in zip(cases, results, strict=True):
        s = compute_suite(case["pred"], case["gt"], img=case["img"], params=params, keys=("Cm",))
        worst = max(worst, abs(s.scores()["Cm"] - ref["cm"]))
        # and the preset matters: the default normalisation gives another value somewhere
    assert worst < 1e-8
    stretched = [
        abs(compute_suite(c["pred"], c["gt"], keys=("Cm",)).scores()["Cm"] - r["cm"])
        for c, r in zip(cases, results, strict=True)
    ]
    assert max(stretched) > 1e-6


# ------------------------------------------------------------------ MATLAB's E-measure '>'
def test_matlab_e_measure_binarises_with_strict_greater_on_the_continuous_map() -> None:
    from fminspect.metrics.emeasure import _emeasure_binary, emeasure_from_pair

    for case in random_cases(12, seed=5):
        if not case["normalize"]:
            continue
        pair = prepare(case["pred"], case["gt"])
        strict = emeasure_from_pair(pair, strict=True)
        for t in (0, 1, 37, 128, 254, 255):
            want = _emeasure_binary(pair.pred > t / 255, pair.gt, t / 255, "").score
            assert strict.curve[t] == pytest.approx(want, abs=1e-12), (case["id"], t)
        thr = pair.adaptive_threshold
        want = _emeasure_binary(pair.pred > thr, pair.gt, thr, "").score
        assert strict.adaptive == pytest.approx(want, abs=1e-12)
        assert strict.at.rule.startswith("adaptive: pred>")


def test_the_documented_consequences_of_matlabs_strict_e_measure() -> None:
    """METRICS §9.1: an empty GT with an all-zero map scores adpEm 0 in pysodmetrics and
    1.000081 in MATLAB (96×128); a uint8 map holding both 0 and 255, not stretched, shifts
    the curve by one threshold and leaves meanEm and maxEm as they are."""
    params = convention("matlab").apply()
    gt = np.zeros((96, 128), np.uint8)
    zero = np.zeros((96, 128), np.uint8)
    ours = compute_suite(zero, gt, keys=("adpEm",)).scores()["adpEm"]
    matlab = compute_suite(zero, gt, params=params, keys=("adpEm",)).scores()["adpEm"]
    assert ours == 0.0 and round(matlab, 6) == 1.000081
    rng = np.random.default_rng(2)
    gt = np.zeros((48, 64), np.uint8)
    gt[10:30, 12:40] = 255
    pred = rng.integers(0, 256, (48, 64)).astype(np.uint8)
    pred[0, 0], pred[0, 1] = 0, 255
    a = compute_suite(pred, gt, keys=("meanEm", "maxEm")).emeasure
    strict = replace(params, thresholds="t/255")  # the '>' alone, on t/255
    b = compute_suite(pred, gt, params=strict, keys=("meanEm", "maxEm")).emeasure
    np.testing.assert_allclose(b.curve[:-1], a.curve[1:], rtol=0, atol=1e-12)
    assert b.mean == pytest.approx(a.mean, abs=1e-12) and b.max == pytest.approx(a.max, abs=1e-12)
    # MATLAB's own thresholds move a grey level k/255 across T_k where T_k < k/255 in the
    # last bit: the curve differs there, and only there
    m = compute_suite(pred, gt, params=params, keys=("meanEm", "maxEm")).emeasure
    moved = np.flatnonzero(np.abs(m.curve - b.curve) > 1e-12)
    below = np.flatnonzero(MATLAB_THRESHOLDS < CURVE_THRESHOLDS)
    assert len(moved) and set(moved) <= set(below)


def test_a_strict_e_measure_dataset_curve_is_the_mean_of_its_images_curves() -> None:
    from fminspect.metrics import DatasetAccumulator

    params = replace(Params(), em_compare=">")
    acc, curves = DatasetAccumulator(), []
    for case in random_cases(6, seed=9):
        if not case["normalize"]:
            continue
        s = compute_suite(case["pred"], case["gt"], params=params, keys=("meanEm", "maxEm"))
        acc.add(case["id"], s.scores(), s.curves())
        curves.append(s.emeasure.curve)
    mean_curve = np.mean(curves, axis=0)
    np.testing.assert_allclose(acc.mean_curves(params)["Em"], mean_curve, rtol=0, atol=1e-12)
    values = acc.results(params)
    assert values["maxEm"] == pytest.approx(mean_curve.max(), abs=1e-12)
    assert values["meanEm"] == pytest.approx(mean_curve.mean(), abs=1e-12)
