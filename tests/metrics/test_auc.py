"""AUC of the ROC and PR curves and average precision: independent definitions, the
interpolation choices, degenerate GTs, and Margolin et al.'s interpolation flaw."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fminspect.metrics import DatasetAccumulator, Params, auc, compute_suite, evaluate
from fminspect.metrics.auc import average_precision
from tests.reference.cases import random_cases


def _mann_whitney(q: np.ndarray, mask: np.ndarray) -> float:
    """P(q_fg > q_bg) + ½ P(q_fg = q_bg): the ROC area with ties, by counting pairs."""
    fg, bg = q[mask].astype(np.int64), q[~mask].astype(np.int64)
    bg_hist = np.bincount(bg, minlength=256)
    below = np.concatenate(([0], np.cumsum(bg_hist)[:-1]))
    greater = below[fg].sum()
    equal = bg_hist[fg].sum()
    return float((greater + 0.5 * equal) / (fg.size * bg.size))


def _ap_steps(q: np.ndarray, mask: np.ndarray) -> float:
    """Non-interpolated AP by sorting pixels: Σ over distinct scores (high to low) of the
    recall gained times the precision there (scikit-learn's average_precision_score)."""
    order = np.argsort(-q.ravel().astype(np.int64), kind="stable")
    scores, labels = q.ravel()[order], mask.ravel()[order]
    ap, tp, seen, previous_recall = 0.0, 0, 0, 0.0
    n_fg = int(labels.sum())
    i = 0
    while i < scores.size:
        j = i
        while j < scores.size and scores[j] == scores[i]:
            j += 1
        tp += int(labels[i:j].sum())
        seen = j
        recall = tp / n_fg
        ap += (recall - previous_recall) * (tp / seen)
        previous_recall = recall
        i = j
    return ap


@pytest.mark.parametrize("case", random_cases(40, seed=5, min_size=6)[:40], ids=lambda c: c["id"])
def test_roc_area_is_the_mann_whitney_probability_and_ap_none_the_sorted_sum(case) -> None:  # type: ignore[no-untyped-def]
    s = compute_suite(case["pred"], case["gt"], keys=["AUCROC"])
    pair, a = s.pair, s.auc
    n_fg = int(pair.mask.sum())
    if n_fg in (0, pair.mask.size):
        assert math.isnan(a.auc_roc) and a.warnings
        return
    assert a.auc_roc == pytest.approx(_mann_whitney(pair.quantized, pair.mask), abs=1e-12)
    none = auc(case["pred"], case["gt"], interpolation="none")
    assert none.ap == pytest.approx(_ap_steps(pair.quantized, pair.mask), abs=1e-12)


def test_interpolations_by_hand() -> None:
    # recall/precision at t = 0, 1, 2 (ascending threshold): (1, .5), (.5, 1), (0, 0)
    recall = np.array([1.0, 0.5, 0.0])
    precision = np.array([0.5, 1.0, 0.0])
    # points from high threshold: (0,1) added, (0,0), (.5,1), (1,.5)
    assert average_precision(precision, recall, "none") == pytest.approx(0.5 * 1 + 0.5 * 0.5)
    assert average_precision(precision, recall, "all") == pytest.approx(0.5 * 1 + 0.5 * 0.5)
    # 11 levels: r ≤ .5 → 1 (six levels), r > .5 → .5 (five levels)
    assert average_precision(precision, recall, "11pt") == pytest.approx((6 + 2.5) / 11)
    # a dip that the envelope fills: (.25, .4) below (.5, 1)
    recall = np.array([1.0, 0.5, 0.25, 0.0])
    precision = np.array([0.5, 1.0, 0.4, 0.0])
    assert average_precision(precision, recall, "none") == pytest.approx(0.25 * 0.4 + 0.25 + 0.25)
    assert average_precision(precision, recall, "all") == pytest.approx(0.25 + 0.25 + 0.25)
    # no binarisation with precision 1: VOC 2007's p̂(0) is the best real one, 0.6, not the
    # (R = 0, P = 1) the PR points begin with
    recall = np.array([1.0, 0.5, 0.0])
    precision = np.array([0.4, 0.6, 0.0])
    assert average_precision(precision, recall, "11pt") == pytest.approx((6 * 0.6 + 5 * 0.4) / 11)
    with pytest.raises(ValueError, match="interpolation"):
        average_precision(precision, recall, "voc")


def test_margolin_interpolation_flaw_fuzzy_map_scores_as_the_gt() -> None:
    # Margolin et al., CVPR 2014, Fig. 2: a fuzzy map that ranks every object pixel above
    # every background pixel gets the GT's perfect AUC and AP; weighted F tells them apart
    gt = np.zeros((40, 40), np.uint8)
    gt[10:30, 10:30] = 255
    fuzzy = np.where(gt > 0, 140, 100).astype(np.uint8)
    fuzzy[0, 0] = 0  # keeps the stretch from making it binary
    fuzzy[20, 20] = 255
    for pred in (gt, fuzzy):
        s = evaluate(pred, gt, keys=["AUCROC", "AUCPR", "AP", "wFm"])
        assert (s["AUCROC"], s["AUCPR"], s["AP"]) == (1.0, 1.0, 1.0)
    assert evaluate(fuzzy, gt, keys=["wFm"])["wFm"] < 0.9 < evaluate(gt, gt, keys=["wFm"])["wFm"]


def test_dataset_values_come_from_the_averaged_curves() -> None:
    cases = random_cases(12, seed=8, min_size=10)
    acc = DatasetAccumulator()
    curves = {"Precision": [], "Recall": []}
    for c in cases:
        s = compute_suite(c["pred"], c["gt"], keys=["AP", "AUCPR"])
        acc.add(c["id"], s.scores(), s.curves())
        r = compute_suite(c["pred"], c["gt"], keys=["maxFm"]).fmeasure
        curves["Precision"].append(r.precision.curve)
        curves["Recall"].append(r.recall.curve)
    p = np.mean(np.stack(curves["Precision"]), axis=0)
    rec = np.mean(np.stack(curves["Recall"]), axis=0)
    for interp in ("all", "11pt", "none"):
        values = acc.results(Params(ap_interpolation=interp))
        assert values["AP"] == average_precision(p, rec, interp)
    with pytest.raises(ValueError, match="ap_interpolation"):
        Params(ap_interpolation="voc")


def test_an_image_without_roc_stays_in_the_dataset_curves_and_its_count() -> None:
    gt = np.zeros((20, 20), np.uint8)
    gt[5:15, 5:15] = 255
    empty = np.zeros_like(gt)
    acc = DatasetAccumulator()
    per_image = []
    for name, pred, g in (("perfect", gt.copy(), gt), ("no object", gt.copy(), empty)):
        s = compute_suite(pred, g, keys=["AUCROC"])
        acc.add(name, s.scores(), s.curves())
        per_image.append(s.auc.auc_roc)
    assert per_image[0] == 1.0 and math.isnan(per_image[1])
    curves = acc.mean_curves()
    fx = np.concatenate(([0.0], curves["FPR"][::-1]))
    ty = np.concatenate(([0.0], curves["Recall"][::-1]))
    by_hand = float(np.sum((fx[1:] - fx[:-1]) * (ty[1:] + ty[:-1]) / 2))
    assert acc.results()["AUCROC"] == by_hand < 0.75  # the empty GT's recall 0 is averaged in
    assert acc.counts()["AUCROC"] == 2  # so the value rests on both images, and says so
