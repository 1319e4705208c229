"""Dataset-level aggregation: hand-checked reductions and parity with pysodmetrics."""

from __future__ import annotations

import numpy as np
import pytest

from fminspect.metrics import DatasetAccumulator, aggregate, compute_suite
from tests.reference.cases import random_cases


def test_max_is_of_the_averaged_curve_not_the_mean_of_maxima() -> None:
    # image A peaks at threshold 0, image B at threshold 1: averaged curve [0.5, 0.5]
    a = {"maxFm": 1.0, "meanFm": 0.5, "MAE": 0.1}
    b = {"maxFm": 1.0, "meanFm": 0.5, "MAE": 0.3}
    ca = {"Fm": np.array([1.0, 0.0])}
    cb = {"Fm": np.array([0.0, 1.0])}
    out = aggregate([("a", a, ca), ("b", b, cb)])
    assert out["maxFm"] == 0.5  # the mean of per-image maxima would be 1.0
    assert out["meanFm"] == 0.5
    assert out["MAE"] == pytest.approx(0.2)


def test_accumulator_rejects_inconsistent_keys_and_empty() -> None:
    acc = DatasetAccumulator()
    with pytest.raises(ValueError, match="no image"):
        acc.results()
    acc.add("a", {"MAE": 0.1}, {})
    with pytest.raises(ValueError, match="scores"):
        acc.add("b", {"MAE": 0.1, "Sm": 0.5}, {})


@pytest.mark.slow
@pytest.mark.reference
def test_dataset_values_equal_pysodmetrics_accumulators(pysod) -> None:  # type: ignore[no-untyped-def]
    cases = [c for c in random_cases(80, seed=4, min_size=20) if c["normalize"]]
    # drop cases where pysodmetrics' S-measure is NaN (documented deliberate difference)
    cases = [c for c in cases if not compute_suite(c["pred"], c["gt"]).smeasure.warnings]
    meta = {"mode": "dataset", "cases": [{"normalize": True} for _ in cases]}
    ref = pysod(cases, meta)["dataset"]
    acc = DatasetAccumulator()
    for c in cases:
        s = compute_suite(c["pred"], c["gt"])
        acc.add(c["id"], s.scores(), s.curves())
    ours = acc.results()
    for key in (
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
        "adpMSIoU",
        "binMSIoU",
    ):
        assert ours[key] == pytest.approx(ref[key], abs=1e-10), key
    curves = acc.mean_curves()
    np.testing.assert_allclose(curves["Fm"][::-1], ref["curve_Fm"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(curves["Em"][::-1], ref["curve_Em"], rtol=0, atol=1e-10)
