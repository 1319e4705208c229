"""F and E over eval-co-sod's 255 thresholds (maxFm255 … meanEm255): each curve point is the
measure of ``pred >= θ_k`` by definition, and the dataset values are the max and mean of the
image-averaged curve, as for the 256-threshold keys."""

from __future__ import annotations

import numpy as np
import pytest

from fminspect.metrics import DatasetAccumulator, Params, compute_suite, prepare
from fminspect.metrics.emeasure import _emeasure_binary
from fminspect.metrics.fmeasure import fmeasure_formula
from fminspect.metrics.thresholds255 import THRESHOLDS, curves255_from_pair
from tests.reference.cases import edge_cases, random_cases

KEYS = ("maxFm255", "meanFm255", "maxEm255", "meanEm255")


def test_the_thresholds_are_eval_co_sods() -> None:
    assert THRESHOLDS.size == 255
    assert THRESHOLDS[0] == 0.0 and THRESHOLDS[-1] == pytest.approx(1 - 1e-10, abs=1e-16)


CASES = [c for c in random_cases(10, seed=3) + edge_cases()[:6] if c["normalize"]]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_every_point_is_the_measure_of_its_binarisation(case: dict) -> None:
    pair = prepare(case["pred"], case["gt"])
    r = curves255_from_pair(pair, beta2=0.3)
    f = fmeasure_formula(0.3)
    mask = pair.gt.mask
    for k in (0, 1, 50, 127, 200, 253, 254):
        binary = pair.pred >= THRESHOLDS[k]
        tp = np.int64(np.count_nonzero(binary & mask))
        fp = np.int64(np.count_nonzero(binary & ~mask))
        fn, tn = np.int64(pair.gt.n_fg) - tp, np.int64(pair.gt.n_bg) - fp
        assert r.fmeasure[k] == pytest.approx(float(f(tp, fp, tn, fn)), abs=1e-12)
        want = _emeasure_binary(binary, pair.gt, float(THRESHOLDS[k]), "").score
        assert r.emeasure[k] == pytest.approx(want, abs=1e-12)


def test_dataset_values_are_the_max_and_mean_of_the_mean_curve_and_differ_from_256() -> None:
    acc, f_curves, e_curves = DatasetAccumulator(), [], []
    differs = 0
    for case in random_cases(8, seed=21):
        s = compute_suite(case["pred"], case["gt"], keys=(*KEYS, "meanFm"))
        acc.add(case["id"], s.scores(), s.curves())
        f_curves.append(s.curves255.fmeasure)
        e_curves.append(s.curves255.emeasure)
        differs += abs(s.scores()["meanFm255"] - s.scores()["meanFm"]) > 1e-9
    values = acc.results(Params())
    f, e = np.mean(f_curves, axis=0), np.mean(e_curves, axis=0)
    assert values["maxFm255"] == pytest.approx(f.max(), abs=1e-12)
    assert values["meanFm255"] == pytest.approx(f.mean(), abs=1e-12)
    assert values["maxEm255"] == pytest.approx(e.max(), abs=1e-12)
    assert values["meanEm255"] == pytest.approx(e.mean(), abs=1e-12)
    assert differs >= 1  # another sweep: another number somewhere
