"""The measure registry: one entry per measure, parameter defaults once, every confusion-count
measure in every variant pysodmetrics 1.6.2 has (per image and over a dataset, pooled
included), and dataset curves derived from the stored sweep counts to the last bit."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from fminspect.metrics import (
    DEFAULT_PARAMS,
    MEASURE_KEYS,
    MEASURES,
    MEASURES_BY_KEY,
    REGISTRY,
    DatasetAccumulator,
    Params,
    compute_suite,
    default_keys,
    evaluate,
    measure_keys,
    parameters,
)
from fminspect.metrics.registry import SWEEP_FAMILY
from tests.reference.cases import edge_cases, random_cases

#: registry symbol → pysodmetrics FmeasureV2 handler name (tests/reference/pysod_oracle.py)
HANDLER = {
    "Fm": "fm",
    "Pre": "pre",
    "Rec": "rec",
    "IoU": "iou",
    "Dice": "dice",
    "TNR": "spec",
    "FPR": "fpr",
    "BER": "ber",
    "OA": "oa",
    "Kappa": "kappa",
}
VARIANTS = ("adp", "mean", "max", "min", "bin", "pooled")


def _split(key: str) -> tuple[str, str] | None:
    """(variant, symbol) of a confusion-count key, e.g. ('pooled', 'IoU')."""
    for v in VARIANTS:
        if key.startswith(v) and key[len(v) :] in HANDLER:
            return v, key[len(v) :]
    return None


def test_every_confusion_measure_has_the_five_variants() -> None:
    for symbol in [*HANDLER, "CKappa"]:
        best = "min" if symbol in ("FPR", "BER") else "max"
        for v in ("adp", "mean", best, "bin", "pooled"):
            assert f"{v}{symbol}" in MEASURES_BY_KEY, f"{v}{symbol}"
    assert sum(1 for k in MEASURE_KEYS if _split(k)) == 5 * len(HANDLER)


def test_keys_are_unique_and_each_names_its_family() -> None:
    assert len(set(MEASURE_KEYS)) == len(MEASURE_KEYS) == len(MEASURES)
    for name, fam in REGISTRY.families.items():
        assert all(m.field == name for m in fam.measures)
        assert fam.paper and fam.reference, name
        if name != SWEEP_FAMILY:
            assert fam.teaching and fam.view, name


def test_parameter_defaults_exist_once_and_ranges_are_checked() -> None:
    params = parameters()
    fields = {f.name: f for f in dataclasses.fields(Params)}
    normalization = {"gt_threshold", "gt_inclusive", "stretch", "thresholds", "stretch_rule"}
    assert set(fields) - normalization == set(params)  # every parameter is a family's
    for name, p in params.items():
        assert getattr(DEFAULT_PARAMS, name) == p.default, name
    with pytest.raises(ValueError, match=r"beta2 \(β²\) must be > 0"):
        Params(beta2=0)
    with pytest.raises(ValueError, match=r"relax_rho .* whole number"):
        Params(relax_rho=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alpha"):
        Params(alpha=1.5)
    with pytest.raises(ValueError, match="thresholds must be one of t/255, matlab"):
        Params(thresholds="255")


def test_measure_keys_take_keys_families_default_and_all() -> None:
    assert measure_keys() == default_keys()
    assert "binIoU" not in default_keys() and "maxFm" in default_keys()
    assert measure_keys("all") == tuple(MEASURE_KEYS)
    got = measure_keys(["classification", "MAE"])
    assert got[0] == "MAE" and "pooledBER" in got and "maxFm" not in got
    assert "CCm" not in measure_keys("all", with_images=False)
    with pytest.raises(ValueError, match="unknown measure"):
        measure_keys(["maxF"])
    with pytest.raises(ValueError, match="unknown measure"):
        measure_keys([SWEEP_FAMILY])  # the counts are not a measure


def test_evaluate_all_gives_every_key_and_curves_follow_beta2() -> None:
    rng = np.random.default_rng(3)
    gt = np.zeros((40, 50), np.uint8)
    gt[10:30, 12:33] = 255
    pred = rng.integers(0, 256, gt.shape).astype(np.uint8)
    scores = evaluate(pred, gt, keys="all")
    assert set(scores) == set(MEASURE_KEYS) - {"CCm"}
    assert evaluate(pred, gt)["maxFm"] == scores["maxFm"]
    suite = compute_suite(pred, gt, Params(beta2=1.0), keys=["maxFm"])
    acc = DatasetAccumulator()
    acc.add("one", suite.scores(), suite.curves())
    # the dataset F curve is derived from the counts under the run's β² (here F1 = Dice)
    curves = acc.mean_curves(Params(beta2=1.0))
    np.testing.assert_array_equal(curves["Fm"], suite.fmeasure.fmeasure.curve)


@pytest.mark.slow
def test_dataset_curves_from_the_counts_equal_the_mean_of_the_images_curves() -> None:
    cases = random_cases(40, seed=11, min_size=8) + edge_cases()
    acc = DatasetAccumulator()
    per_image: dict[str, list[np.ndarray]] = {}
    for c in cases:
        s = compute_suite(c["pred"], c["gt"], keys="all")
        acc.add(c["id"], s.scores(), s.curves())
        o, f, k = s.overlap, s.fmeasure, s.classification
        for name, curve in {
            "Fm": f.fmeasure.curve,
            "Precision": f.precision.curve,
            "Recall": f.recall.curve,
            "IoU": o.iou.curve,
            "Dice": o.dice.curve,
            "Em": s.emeasure.curve,
            "TNR": k.specificity.curve,
            "FPR": k.fpr.curve,
            "BER": k.ber.curve,
            "OA": k.accuracy.curve,
            "Kappa": k.kappa_pysodmetrics.curve,
            "CKappa": k.cohen_kappa.curve,
        }.items():
            per_image.setdefault(name, []).append(np.asarray(curve))
    curves = acc.mean_curves()
    for name, rows in per_image.items():
        # the same numbers to the last bit as averaging each image's own curve
        np.testing.assert_array_equal(curves[name], np.mean(np.stack(rows), axis=0), name)
    pooled = acc.pooled()
    assert pooled is not None
    tp = sum(compute_suite(c["pred"], c["gt"]).sweep.binary.tp for c in cases)
    assert int(pooled.tp) == tp


def dataset_reference(handlers: dict, key: str) -> float | None:
    """pysodmetrics' dataset value of a confusion-count ``key`` from the oracle's dataset
    handlers (None for a key of another family)."""
    parts = _split(key)
    if parts is None:
        return None
    variant, symbol = parts
    name = HANDLER[symbol]
    curve = np.asarray(handlers[f"{name}_dynamic"])
    return float(
        {
            "adp": handlers[f"{name}_adaptive"],
            "mean": curve.mean(),
            "max": curve.max(),
            "min": curve.min(),
            "bin": handlers[f"{name}_binary"],
            "pooled": handlers[f"{name}_pooled"],
        }[variant]
    )


@pytest.mark.slow
@pytest.mark.reference
def test_every_confusion_key_equals_pysodmetrics_over_a_dataset(pysod) -> None:  # type: ignore[no-untyped-def]
    """Per image, every key is the parity tester's (test_parity_registry.py); here the
    dataset values, pooled included."""
    cases = [c for c in random_cases(60, seed=9, min_size=12) if c["normalize"]]
    cases += [c for c in edge_cases() if c["normalize"] and c["pred"].size > 1]
    # over the dataset: pysodmetrics' accumulators, the pooled ones with sample_based=False
    ref = pysod(cases, {"mode": "dataset", "cases": [{"normalize": True} for _ in cases]})
    handlers = ref["dataset"]["handlers"]
    acc = DatasetAccumulator()
    for c in cases:
        s = compute_suite(c["pred"], c["gt"], keys="all")
        acc.add(c["id"], s.scores(), s.curves())
    values = acc.results()
    for key, value in values.items():
        want = dataset_reference(handlers, key)
        if want is not None:
            assert math.isclose(value, want, rel_tol=0, abs_tol=1e-10), (key, value, want)
    # pooling is not the mean of the images' values (the two differ on these cases)
    assert abs(values["pooledIoU"] - values["binIoU"]) > 1e-3


def test_the_docs_list_every_key_as_the_registry_does() -> None:
    from pathlib import Path

    from fminspect.cli.measures import markdown

    readme = (Path(__file__).parents[2] / "docs" / "measures.md").read_text(encoding="utf-8")
    start = readme.index("<!-- measures-table -->\n") + len("<!-- measures-table -->\n")
    table = readme[start : readme.index("<!-- /measures-table -->")]
    assert table == markdown(), (
        "docs/measures.md's table is out of date: fminspect measures --format markdown"
    )


def test_the_docs_list_every_parameter_as_the_registry_does() -> None:
    from pathlib import Path

    from fminspect.cli.measures import parameters_markdown

    readme = (Path(__file__).parents[2] / "docs" / "measures.md").read_text(encoding="utf-8")
    start = readme.index("<!-- parameters-table -->\n") + len("<!-- parameters-table -->\n")
    table = readme[start : readme.index("<!-- /parameters-table -->")]
    assert table == parameters_markdown(), "fminspect measures --parameters --format markdown"
