"""The intervals a ranking report prints cover at their nominal rate at the numbers of
groups a consensus leaves (measured by simulation, fixed seeds), and say what they are."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fminspect.ranking.intervals import (
    MEAN_METHOD,
    PROPORTION_METHOD,
    mean_interval,
    proportion_interval,
)

#: θ = 1 − Spearman ρ of a 3-map group takes one of these values (the 6 orders of 3 maps).
THETAS = np.array([0.0, 0.5, 0.5, 1.5, 1.5, 2.0])
#: Measures from nearly always right to often wrong (probabilities of the 6 orders).
MEASURES = {
    "nearly always right": [0.97, 0.01, 0.01, 0.01, 0.0, 0.0],
    "mostly right": [0.8, 0.08, 0.08, 0.02, 0.01, 0.01],
    "often wrong": [0.4, 0.2, 0.2, 0.1, 0.05, 0.05],
}


@pytest.mark.parametrize("n", [6, 10, 20])
@pytest.mark.parametrize("measure", list(MEASURES))
def test_the_theta_interval_covers_at_its_nominal_rate(n: int, measure: str) -> None:
    p = np.array(MEASURES[measure])
    true = float(THETAS @ p)
    rng = np.random.default_rng([n, len(measure)])
    studies = 400
    covered = sum(
        (lambda ci: ci.low <= true <= ci.high)(mean_interval(rng.choice(THETAS, n, p=p), 0, 2))
        for _ in range(studies)
    )
    # 95 % nominal; the test allows for the simulation's own error (400 studies: ±1.1 %)
    assert covered / studies >= 0.93, (measure, n, covered / studies)


@pytest.mark.parametrize("n", [6, 10, 20, 100])
@pytest.mark.parametrize("rate", [0.05, 0.2, 0.5])
def test_the_error_rate_interval_covers_at_its_nominal_rate(n: int, rate: float) -> None:
    from scipy.stats import binom

    # exact coverage: the probability of every count whose interval holds the true rate
    coverage = sum(
        binom.pmf(k, n, rate)
        for k in range(n + 1)
        if (lambda ci: ci.low <= rate <= ci.high)(proportion_interval(k, n))
    )
    assert coverage >= 0.95, (n, rate, coverage)


def test_no_error_is_not_a_zero_width_certainty() -> None:
    ci = proportion_interval(0, 10)
    assert ci.low == 0 and ci.high == pytest.approx(0.3085, abs=1e-4)  # Clopper–Pearson
    assert ci.method == PROPORTION_METHOD == "Clopper–Pearson" and ci.n == 10
    same = mean_interval(np.zeros(8), 0, 2)  # every group ordered right: θ = 0 in all 8
    assert same.low == 0 and 0.3 < same.high < 1.5 and same.method == MEAN_METHOD
    assert same.n == 8


def test_intervals_narrow_with_more_groups_and_hold_the_mean() -> None:
    rng = np.random.default_rng(1)
    widths = []
    for n in (6, 20, 100, 400):
        x = rng.choice(THETAS, n, p=MEASURES["mostly right"])
        ci = mean_interval(x, 0, 2)
        assert ci.low <= x.mean() <= ci.high
        widths.append(ci.high - ci.low)
    assert widths == sorted(widths, reverse=True) and widths[-1] < 0.2


def test_degenerate_inputs() -> None:
    assert math.isnan(proportion_interval(0, 0).low)
    assert math.isnan(mean_interval(np.array([]), 0, 2).high)
    with pytest.raises(ValueError, match="outside"):
        mean_interval(np.array([0.5, 2.5]), 0, 2)


def test_the_report_names_each_interval_s_method_and_n(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from fminspect.ranking.agreement import HumanAgreementReport, MeasureAgreement
    from fminspect.ranking.report import agreement_markdown, write_agreement

    row = MeasureAgreement("MAE", 0.0, (0.0, 0.9), 0.0, (0.0, 0.3085), 0.0, 10, (0.0, 0.3085))
    report = HumanAgreementReport((row,), (), (), "GT>128, stretch", {"MAE": "MAE"})
    text = agreement_markdown(report, "t")
    assert "95 % intervals over the 10 groups: θ by betting (Waudby-Smith & Ramdas)" in text
    assert "error rates by Clopper–Pearson" in text and "[0.0, 30.9] %" in text
    write_agreement(report, tmp_path, "t")
    saved = json.loads((tmp_path / "measures_vs_humans.json").read_text(encoding="utf-8"))
    assert saved["intervals"]["theta"] == MEAN_METHOD
    assert saved["intervals"]["error_rate"] == PROPORTION_METHOD
    assert saved["rows"][0]["top1_ci_high"] == 0.3085 and saved["rows"][0]["groups"] == 10


@pytest.mark.slow
def test_holm_and_mcnemar_agree_with_statsmodels() -> None:
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.multitest import multipletests

    from fminspect.ranking.intervals import holm, mcnemar_exact

    p = [0.01, 0.04, 0.03, 0.2, 0.0005]
    assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]), abs=1e-15)
    for b, c in ((0, 0), (3, 0), (7, 2), (10, 11)):
        expected = 1.0 if b + c == 0 else mcnemar([[5, b], [c, 5]], exact=True).pvalue
        assert mcnemar_exact(b, c) == pytest.approx(expected, abs=1e-12)


def test_the_paired_theta_test_holds_its_level_and_finds_a_real_difference() -> None:
    from fminspect.ranking.agreement import paired_comparisons
    from fminspect.ranking.intervals import mean_test

    rng = np.random.default_rng(7)
    p = np.array(MEASURES["mostly right"])
    # the same measure twice (independent draws): rejected at most ~5 % of the time
    false = sum(
        mean_test(rng.choice(THETAS, 20, p=p) - rng.choice(THETAS, 20, p=p), -2, 2, 0) < 0.05
        for _ in range(300)
    )
    assert false / 300 <= 0.06
    # a good and a bad measure over 60 groups: told apart by both tests after Holm
    good = rng.choice(THETAS, 60, p=MEASURES["nearly always right"])
    bad = rng.choice(THETAS, 60, p=MEASURES["often wrong"])
    groups = [f"g{i}" for i in range(60)]
    per_key = {
        "good": {g: (t, t > 0, t > 1) for g, t in zip(groups, good, strict=True)},
        "bad": {g: (t, t > 0, t > 1) for g, t in zip(groups, bad, strict=True)},
        "good2": {g: (t, t > 0, t > 1) for g, t in zip(groups, good, strict=True)},
    }
    by_pair = {(c.a, c.b): c for c in paired_comparisons(per_key)}
    assert by_pair[("good", "bad")].theta_p_holm < 0.05
    assert by_pair[("good", "bad")].error_p_holm < 0.05
    same = by_pair[("good", "good2")]
    assert same.theta_p == 1.0 and same.error_p == 1.0 and same.groups == 60
