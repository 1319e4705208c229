"""Meta-measures on hand-built datasets whose outcomes can be worked out by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from fminspect.cli import main
from fminspect.io.discovery import discover
from fminspect.meta import MetaConfig, run_meta
from fminspect.meta import maps as m
from fminspect.meta.outputs import write_meta
from tests.datasets import write_png

H, W = 60, 80


def square(top: int, left: int, side: int) -> np.ndarray:
    a = np.zeros((H, W), np.uint8)
    a[top : top + side, left : left + side] = 255
    return a


def quality_by_area(image, gt, pred) -> float:  # type: ignore[no-untyped-def]
    """A test application: the closer the map's foreground area to the GT's, the better."""
    return -abs(float((pred >= 0.5).sum()) - float(gt.sum()))


def quality_is_area(image, gt, pred) -> float:  # type: ignore[no-untyped-def]
    """A test application that prefers bigger maps."""
    return float((pred >= 0.5).sum())


def quality_unknown_when_small(image, gt, pred) -> float:  # type: ignore[no-untyped-def]
    """A test application that cannot rate maps smaller than the GT."""
    area = float((pred >= 0.5).sum())
    return area if area >= float(gt.sum()) else float("nan")


def build(root: Path, gts: list[np.ndarray], models: dict[str, list[np.ndarray]]) -> Path:
    for i, gt in enumerate(gts):
        name = f"im{i}.png"
        write_png(root / "GT" / name, gt)
        write_png(root / "Imgs" / name, np.dstack([gt // 2 + 60] * 3))
        for model, arrs in models.items():
            write_png(root / "Pred" / model / name, arrs[i])
    return root


def run(root: Path, tmp: Path, **kw):  # type: ignore[no-untyped-def]
    (ds,), _ = discover(root)
    return run_meta([ds], MetaConfig(**kw), cache_path=tmp / "cache.sqlite", progress=False)


# ----------------------------------------------------------------------------- the maps
def test_synthetic_maps_and_perturbations() -> None:
    disc = m.centred_circle((100, 120), 0.25)
    assert (
        disc.sum() == pytest.approx(math.pi * 25**2, rel=0.03)
        and disc[50, 60] == 1
        and disc[0, 0] == 0
    )
    g = m.centred_gaussian((101, 121), 0.25)
    sigma = 0.25 * 101
    assert g[50, 60] == 1 and g.argmax() == 50 * 121 + 60
    assert g[50, 60 + 25] == pytest.approx(math.exp(-(25**2) / (2 * sigma**2)))
    rng = np.random.default_rng(0)
    noise = m.gaussian_noise_map((200, 200), rng, 0.5, 0.25)
    assert noise.min() >= 0 and noise.max() <= 1 and abs(noise.mean() - 0.5) < 0.01
    perm = m.derangement(7, np.random.default_rng(3))
    assert sorted(perm) == list(range(7)) and not np.any(perm == np.arange(7))
    assert np.array_equal(perm, m.derangement(7, np.random.default_rng(3)))
    with pytest.raises(ValueError, match="at least two"):
        m.derangement(1, rng)
    sq = square(20, 20, 10) > 0
    assert (m.morph_gt(sq, "dilate") > 0).sum() == 12 * 12 and (
        m.morph_gt(sq, "erode") > 0
    ).sum() == 8 * 8
    # noise goes to 1 % of (map ≥ 0.5) ∩ GT background, and nowhere else
    pred = np.zeros((H, W))
    pred[:, :40] = 0.8  # predicted foreground: the left half
    gt = np.zeros((H, W), bool)
    gt[:, :20] = True  # so the region is columns 20–39: 1200 pixels → 12 changed
    noisy, changed = m.inject_noise(pred, gt, np.random.default_rng(1))
    assert changed.sum() == 12 and not changed[:, :20].any() and not changed[:, 40:].any()
    assert np.array_equal(noisy[~changed], pred[~changed])
    assert noisy.min() >= 0 and noisy.max() <= 1
    _, none = m.inject_noise(np.zeros((H, W)), gt, np.random.default_rng(1))
    assert not none.any()


# ----------------------------------------------------------------------------- outcomes by hand
def test_generic_map_wins_exactly_when_the_gt_is_the_centred_circle(tmp_path: Path) -> None:
    circle = (m.centred_circle((H, W), 0.25) * 255).astype(np.uint8)
    corner = square(2, 2, 14)
    shift = lambda a: np.roll(a, 9, axis=1)  # noqa: E731  an imperfect model
    centred = build(
        tmp_path / "centred",
        [circle] * 3,
        {"A": [shift(circle)] * 3, "B": [shift(shift(circle))] * 3},
    )
    r = run(centred, tmp_path, metas=("generic",), keys=("MAE", "Sm", "wFm"))
    for key in ("MAE", "Sm", "wFm"):  # the circle *is* the GT: it beats the models everywhere
        assert r.value("centred", "generic", "error rate (circle)", key) == 1.0
    away = build(tmp_path / "away", [corner] * 3, {"A": [corner] * 3, "B": [shift(corner)] * 3})
    r = run(away, tmp_path, metas=("generic", "noise_map"), keys=("MAE", "Sm", "wFm"))
    for key in ("MAE", "Sm", "wFm"):  # the GT is in a corner: the generic maps lose
        assert r.value("away", "generic", "error rate (circle)", key) == 0.0
        assert r.value("away", "noise_map", "error rate", key) == 0.0
    case = next(
        c for c in r.cases if c.meta == "generic" and c.measure == "MAE" and c.case == "circle"
    )
    assert case.detail == "mean of 2 models" and case.outcome == 0


@pytest.mark.faults
def test_gt_switch_perfect_maps_never_prefer_another_gt_and_bad_maps_are_left_out(
    tmp_path: Path,
) -> None:
    gts = [square(5, 5, 20), square(30, 50, 20), square(35, 5, 18)]  # disjoint objects
    root = build(tmp_path / "ds", gts, {"perfect": gts, "empty": [np.zeros((H, W), np.uint8)] * 3})
    r = run(root, tmp_path, metas=("gt_switch",), keys=("MAE", "Sm", "maxFm"), seed=5)
    for key in ("MAE", "Sm", "maxFm"):
        assert r.value("ds", "gt_switch", "error rate", key) == 0.0
    switched = [c for c in r.cases if c.meta == "gt_switch"]
    assert {c.model for c in switched} == {"perfect"}  # the empty map has F1 = 0 < 0.6
    assert len(switched) == 3 * 3
    mapping = r.derangements["ds"]
    assert sorted(mapping) == ["im0", "im1", "im2"] and all(k != v for k, v in mapping.items())
    assert all(f"GT of {mapping[c.image]}" in c.detail for c in switched)


def test_annotation_errors_score_change_by_hand(tmp_path: Path) -> None:
    side = 20
    gts = [square(10, 10, side), square(20, 30, side)]
    root = build(
        tmp_path / "ds", gts, {"perfect": gts, "shifted": [np.roll(g, 3, axis=0) for g in gts]}
    )
    r = run(root, tmp_path, metas=("annotation",), keys=("MAE",))
    ring = (side + 2) ** 2 - side**2  # the perfect map misses the ring added by the dilation
    perfect = [
        c
        for c in r.cases
        if c.meta == "annotation" and c.model == "perfect" and c.case == "Δ (dilate)"
    ]
    assert [c.test - c.reference for c in perfect] == pytest.approx([ring / (H * W)] * 2)
    eroded = [c for c in r.cases if c.model == "perfect" and c.case == "Δ (erode)"]
    assert [c.test for c in eroded] == pytest.approx([(side**2 - (side - 2) ** 2) / (H * W)] * 2)
    # the perfect map stays better than the shifted one: the ranking does not change
    assert r.value("ds", "annotation", "1 − ρ (dilate)", "MAE") == pytest.approx(0.0, abs=1e-12)


def test_noise_injection_outcome_matches_a_hand_computation(tmp_path: Path) -> None:
    gts = [square(10, 10, 20), square(20, 30, 25)]
    soft = []
    for g in gts:
        p = (g > 0) * 200
        p[:, 60:] = 150  # foreground predicted where the GT is background
        soft.append(p.astype(np.uint8))
    root = build(tmp_path / "ds", gts, {"soft": soft, "exact": gts})
    cfg = {"metas": ("noise_injection",), "keys": ("MAE",), "seed": 11}
    r = run(root, tmp_path, **cfg)
    cases = {(c.image, c.model): c for c in r.cases if c.meta == "noise_injection"}
    for i, g in enumerate(gts):
        c = cases[(f"im{i}", "soft")]
        pred = soft[i] / 200.0  # the min–max stretch: 0 → 0, 200 → 1
        noisy, changed = m.inject_noise(
            pred,
            g > 128,
            np.random.default_rng(m.case_seed(11, "ds", f"im{i}", "noise_injection", "soft")),
        )
        by_hand = np.abs(noisy - (g > 128)).mean()
        assert c.test == pytest.approx(by_hand, abs=1e-12)
        assert (
            c.outcome == int(by_hand < c.reference)
            and c.detail == f"{changed.sum()} pixels changed"
        )
        exact = cases[(f"im{i}", "exact")]  # no false positive: nothing to perturb
        assert exact.outcome is None and exact.detail == "0 pixels changed"


@pytest.mark.slow
def test_application_plugin_and_determinism(tmp_path: Path) -> None:
    gts = [square(10, 10, 20), square(20, 30, 25), square(5, 40, 15)]
    models = {
        "exact": gts,
        "big": [m.morph_gt(g > 0, "dilate", 5) for g in gts],
        "bigger": [m.morph_gt(g > 0, "dilate", 9) for g in gts],
    }
    root = build(tmp_path / "ds", gts, models)
    app = "tests.meta.test_meta:quality_by_area"
    cfg = {
        "metas": ("generic", "noise_map", "noise_injection", "application"),
        "keys": ("MAE", "Sm"),
        "application": app,
    }
    r1 = run(root, tmp_path, seed=3, **cfg)
    # bigger maps are worse both by MAE and by the application: perfect agreement
    assert r1.value("ds", "application", "θ", "MAE") == pytest.approx(0.0)
    r2 = run(root, tmp_path, seed=3, **cfg)
    assert list(map(repr, r1.cases)) == list(map(repr, r2.cases)) and r1.summary == r2.summary
    r3 = run(root, tmp_path, seed=4, **cfg)
    noise1 = [c.test for c in r1.cases if c.meta == "noise_map"]
    assert noise1 != [c.test for c in r3.cases if c.meta == "noise_map"]
    (ds,), _ = discover(root)
    parallel = run_meta(
        [ds], MetaConfig(seed=3, **cfg), cache_path=tmp_path / "c2.sqlite", jobs=2, progress=False
    )
    assert list(map(repr, parallel.cases)) == list(map(repr, r1.cases))  # repr: NaN ≠ NaN


def test_a_measure_that_ties_models_the_application_ranks_counts_as_rho_0(tmp_path: Path) -> None:
    gts = [square(10, 10, 20), square(20, 30, 25)]
    plus, minus = [], []
    for g in gts:  # 20 pixels more, 20 pixels fewer: the same MAE, different areas
        p, q = g.copy(), g.copy()
        p[0, :20] = 255
        rows, cols = np.nonzero(g)
        q[rows[:20], cols[:20]] = 0
        plus.append(p)
        minus.append(q)
    root = build(tmp_path / "ds", gts, {"plus": plus, "minus": minus})
    r = run(
        root,
        tmp_path,
        metas=("application",),
        keys=("MAE",),
        application="tests.meta.test_meta:quality_is_area",
    )
    thetas = [c for c in r.cases if c.meta == "application" and c.case == "θ"]
    assert len(thetas) == 2
    for c in thetas:
        assert c.test == 1.0 and "same score: ρ = 0" in c.detail
    assert r.value("ds", "application", "θ", "MAE") == 1.0
    # an application that cannot rate one of the two models: nothing to rank, not a tie
    r = run(
        root,
        tmp_path / "2",
        metas=("application",),
        keys=("MAE",),
        application="tests.meta.test_meta:quality_unknown_when_small",
    )
    for c in [c for c in r.cases if c.meta == "application" and c.case == "θ"]:
        assert np.isnan(c.test) and "fewer than two models" in c.detail
    with pytest.raises(ValueError, match="cannot load the application"):
        MetaConfig(metas=("application",), application="no.such.module:fn")


def test_cli_writes_every_output_and_records_the_protocol(tmp_path: Path, capsys) -> None:
    gts = [square(10, 10, 20), square(20, 30, 25), square(5, 40, 15)]
    root = build(tmp_path / "ds", gts, {"A": gts, "B": [np.roll(g, 4, axis=1) for g in gts]})
    out = tmp_path / "out"
    assert (
        main(
            [
                "meta",
                str(root),
                "--out",
                str(out),
                "--measures",
                "MAE",
                "Sm",
                "--seed",
                "9",
                "--quiet",
            ]
        )
        == 0
    )
    for name in (
        "cases.csv",
        "summary.csv",
        "summary.md",
        "summary.tex",
        "protocol.json",
        "meta.png",
        "meta.pdf",
    ):
        assert (out / name).exists(), name
    protocol = json.loads((out / "protocol.json").read_text())
    assert protocol["protocol"]["seed"] == 9 and protocol["protocol"]["inject_std"] == 0.2
    assert set(protocol["gt_switch_derangements"]["ds"]) == {"im0", "im1", "im2"}
    md = (out / "summary.md").read_text()
    assert "Sm α=0.5" in md and "seed 9" in md
    assert main(["meta", str(root), "--metas", "application"]) == 2
    assert "needs an application" in capsys.readouterr().err


@pytest.mark.slow
def test_write_meta_is_byte_identical_for_the_same_seed(tmp_path: Path) -> None:
    gts = [square(10, 10, 20), square(20, 30, 25)]
    root = build(tmp_path / "ds", gts, {"A": gts, "B": [np.roll(g, 4, axis=1) for g in gts]})
    for k in (1, 2):
        write_meta(run(root, tmp_path, keys=("MAE", "Sm"), seed=2), tmp_path / f"o{k}")
    for name in (
        "cases.csv",
        "summary.csv",
        "summary.md",
        "summary.tex",
        "protocol.json",
        "meta.png",
    ):
        assert (tmp_path / "o1" / name).read_bytes() == (tmp_path / "o2" / name).read_bytes(), name


@pytest.mark.faults
def test_human_only_run_names_variants_and_a_bad_folder_is_a_problem(tmp_path: Path) -> None:
    gt = square(10, 10, 20)
    for g in ("g1", "g2"):
        write_png(tmp_path / "ranked" / g / "gt.png", gt)
        write_png(tmp_path / "ranked" / g / "1.png", gt)
        write_png(tmp_path / "ranked" / g / "2.png", np.roll(gt, 5, axis=1))
        write_png(tmp_path / "ranked" / g / "3.png", np.zeros_like(gt))
    (tmp_path / "empty").mkdir()
    config = MetaConfig(metas=("human",), keys=("MAE", "Sm"))
    r = run_meta(
        [],
        config,
        cache_path=tmp_path / "c.sqlite",
        ranked=[tmp_path / "ranked", tmp_path / "empty"],
    )
    assert r.labels == {"MAE": "MAE", "Sm": "Sm α=0.5"}
    assert r.value("ranked (human)", "human", "θ", "Sm") == 0.0
    assert any("empty" in str(p.path) and "no ranked groups" in p.message for p in r.problems)
    from fminspect.meta.outputs import protocol_caption

    caption = protocol_caption(r)
    assert "human: θ" in caption and "generic" not in caption and "annotation" not in caption


def test_gt_switch_good_maps_follow_the_measure_direction(tmp_path: Path) -> None:
    gts = [square(5, 5, 20), square(30, 50, 20), square(35, 5, 18)]
    root = build(tmp_path / "ds", gts, {"perfect": gts, "empty": [np.zeros((H, W), np.uint8)] * 3})
    # MAE is lower-is-better: "good" means MAE ≤ 0.05, which only the perfect map meets
    r = run(root, tmp_path, metas=("gt_switch",), keys=("MAE",), good_key="MAE", good_min=0.05)
    assert {c.model for c in r.cases if c.meta == "gt_switch"} == {"perfect"}
    none = run(root, tmp_path, metas=("gt_switch",), keys=("MAE",), good_min=1.5)
    assert not none.cases and any("no map is good enough" in p.message for p in none.problems)
