"""evaluate(), compute_suite() and the measure registry."""

from __future__ import annotations

import doctest
import importlib
import math

import numpy as np
import pytest

from fminspect.metrics import (
    DEFAULT_PARAMS,
    MEASURE_KEYS,
    MEASURES_BY_KEY,
    Params,
    compute_suite,
    evaluate,
    fmeasure,
    prepare_gt,
    smeasure,
    weighted_fmeasure,
)

STABLE_KEYS = [
    "MAE",
    "Sm",
    "wFm",
    "adpEm",
    "meanEm",
    "maxEm",
    "adpFm",
    "meanFm",
    "maxFm",
    "adpIoU",
    "meanIoU",
    "maxIoU",
    "adpDice",
    "meanDice",
    "maxDice",
    "relaxFm",
    "adpMSIoU",
    "binMSIoU",
]


def _sample():  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    gt = np.zeros((48, 64), np.uint8)
    gt[10:30, 20:50] = 255
    pred = np.clip(gt * 0.8 + rng.normal(20, 40, gt.shape), 0, 255).astype(np.uint8)
    return pred, gt


def test_evaluate_returns_every_stable_key_once() -> None:
    pred, gt = _sample()
    scores = evaluate(pred, gt)
    assert list(scores)[: len(STABLE_KEYS)] == STABLE_KEYS
    assert all(isinstance(v, float) and math.isfinite(v) for v in scores.values())


def test_evaluate_matches_the_individual_measures_and_passes_params() -> None:
    pred, gt = _sample()
    scores = evaluate(pred, gt, beta2=1.0, alpha=0.7)
    assert scores["maxFm"] == fmeasure(pred, gt, beta2=1.0).max
    assert scores["Sm"] == smeasure(pred, gt, alpha=0.7).score
    assert scores["wFm"] == weighted_fmeasure(pred, gt).score
    with pytest.raises(TypeError, match=r"unknown parameter.*beta"):
        evaluate(pred, gt, beta=0.3)


def test_suite_with_a_prepared_gt_gives_identical_scores() -> None:
    pred, gt = _sample()
    g = prepare_gt(gt)
    assert compute_suite(pred, g).scores() == compute_suite(pred, gt).scores()


def test_labels_name_the_exact_variant() -> None:
    assert MEASURES_BY_KEY["maxFm"].label(DEFAULT_PARAMS) == "maxFm β²=0.3"
    assert MEASURES_BY_KEY["maxFm"].label(Params(beta2=1.0)) == "maxFm β²=1"
    assert MEASURES_BY_KEY["Sm"].label(DEFAULT_PARAMS) == "Sm α=0.5"
    assert "max of the image-averaged" in MEASURES_BY_KEY["maxEm"].aggregation
    assert set(STABLE_KEYS) <= set(MEASURE_KEYS)


@pytest.mark.parametrize(
    "module",
    [
        "fminspect.metrics.fmeasure",
        "fminspect.metrics.overlap",
        "fminspect.metrics.mae",
        "fminspect.metrics.emeasure",
        "fminspect.metrics.smeasure",
        "fminspect.metrics.weighted_fmeasure",
        "fminspect.metrics.boundary_fmeasure",
        "fminspect.metrics.msiou",
        "fminspect.metrics.suite",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_evaluate_gains_cm_and_ccm_with_an_image() -> None:
    pred, gt = _sample()
    assert "Cm" in evaluate(pred, gt) and "CCm" not in evaluate(pred, gt)
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, (*gt.shape, 3), dtype=np.uint8)
    scores = evaluate(pred, gt, img=img)
    from fminspect.metrics import camouflage_context_measure, context_measure

    assert scores["Cm"] == context_measure(pred, gt).score
    assert scores["CCm"] == camouflage_context_measure(pred, gt, img=img).score
    assert MEASURES_BY_KEY["CCm"].label(DEFAULT_PARAMS) == "CCm β²=1.2 α=6 γ=8 λ=20"


def test_update_suite_recomputes_only_what_a_parameter_affects() -> None:
    from fminspect.metrics import update_suite

    pred, gt = _sample()
    base = compute_suite(pred, gt)
    changed = update_suite(base, Params(beta2=1.0, alpha=0.7))
    fresh = compute_suite(pred, gt, Params(beta2=1.0, alpha=0.7))
    assert changed.scores() == fresh.scores()
    assert changed.emeasure is base.emeasure and changed.mae is base.mae  # reused as they are
    assert changed.fmeasure is not base.fmeasure and changed.smeasure is not base.smeasure
    with pytest.raises(ValueError, match="normalisation"):
        update_suite(base, Params(stretch=False))
