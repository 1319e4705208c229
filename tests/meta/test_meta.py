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
from fminspect.meta.protocols import Selection
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
    # noise goes to 1 % of (map > 0) ∩ GT background, and nowhere else
    pred = np.zeros((H, W))
    pred[:, :40] = 0.8  # predicted foreground: the left half
    gt = np.zeros((H, W), bool)
    gt[:, :20] = True  # so the region is columns 20–39: 1200 pixels
    # the Context-measure paper's count: 1 % of the whole image's 4800 pixels → 48 changed
    noisy, changed = m.inject_noise(pred, gt, np.random.default_rng(1))
    assert changed.sum() == 48 and not changed[:, :20].any() and not changed[:, 40:].any()
    assert np.array_equal(noisy[~changed], pred[~changed])
    assert noisy.min() >= 0 and noisy.max() <= 1
    # ours: 1 % of the region's 1200 pixels → 12
    _, of_region = m.inject_noise(pred, gt, np.random.default_rng(1), of="region")
    assert of_region.sum() == 12 and not of_region[:, :20].any()
    # a region smaller than 1 % of the image is perturbed whole
    small = np.zeros((H, W))
    small[:2, 30:40] = 0.9  # 20 pixels of predicted foreground on GT background
    _, whole = m.inject_noise(small, gt, np.random.default_rng(1))
    assert whole.sum() == 20 and np.array_equal(whole, small > 0)
    _, none = m.inject_noise(np.zeros((H, W)), gt, np.random.default_rng(1))
    assert not none.any()
    # Margolin's random switches: k other images each, never the image itself
    picks = m.other_indices(6, 3, np.random.default_rng(2))
    assert all(len(p) == 3 == len(set(p)) and i not in p for i, p in enumerate(picks))
    assert [len(p) for p in m.other_indices(4, 100, np.random.default_rng(2))] == [3] * 4
    with pytest.raises(ValueError, match="at least two"):
        m.other_indices(1, 5, np.random.default_rng(2))


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
    context = {
        "protocol": "context2025",
        "switches": 1,
        "switch_select": Selection("adpDice", "min", 0.6),
    }
    r = run(root, tmp_path, metas=("gt_switch",), keys=("MAE", "Sm", "maxFm"), seed=5, **context)
    for key in ("MAE", "Sm", "maxFm"):
        assert r.value("ds", "gt_switch", "error rate", key) == 0.0
    switched = [c for c in r.cases if c.meta == "gt_switch"]
    assert {c.model for c in switched} == {"perfect"}  # the empty map has F1 = 0 < 0.6
    assert len(switched) == 3 * 3
    mapping = r.switched_with["ds"]  # one derangement: one other GT each, all different
    assert sorted(mapping) == ["im0", "im1", "im2"]
    assert all(len(v) == 1 and v[0] != k for k, v in mapping.items())
    assert sorted(v[0] for v in mapping.values()) == ["im0", "im1", "im2"]
    assert all(f"GT of {mapping[c.image][0]}" in c.detail for c in switched)
    # Margolin's: every other GT (100 asked, 2 exist); each measure picks its own good maps
    # (score ≥ 0.5 by itself): the empty map has MAE ≤ 0.5 but S < 0.5 and max F = 0
    r = run(root, tmp_path, metas=("gt_switch",), keys=("MAE", "Sm", "maxFm"), seed=5)
    assert r.config.switches == 100 and all(len(v) == 2 for v in r.switched_with["ds"].values())
    switched = [c for c in r.cases if c.meta == "gt_switch"]
    by_key = {k: {c.model for c in switched if c.measure == k} for k in ("MAE", "Sm", "maxFm")}
    assert by_key == {"MAE": {"perfect", "empty"}, "Sm": {"perfect"}, "maxFm": {"perfect"}}
    # one case per map and measure, counting its errors over its 2 switched GTs
    assert sum(c.measure == "Sm" for c in switched) == 3 and {c.trials for c in switched} == {2}
    # that reading lets the empty map in for MAE, and it "prefers" every smaller GT: areas
    # 400, 400, 324, so im0→im2 and im1→im2 are errors, 2 of the 12 MAE comparisons
    empty = {c.image: c.outcome for c in switched if c.model == "empty" and c.measure == "MAE"}
    assert empty == {"im0": 1, "im1": 1, "im2": 0}
    assert r.value("ds", "gt_switch", "error rate", "MAE") == pytest.approx(2 / 12)
    assert next(x.n for x in r.summary if x.meta == "gt_switch" and x.measure == "MAE") == 12
    assert r.value("ds", "gt_switch", "error rate", "Sm") == 0.0


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
    cfg = {"metas": ("noise_injection",), "keys": ("MAE",), "seed": 11, "inject_select": None}
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
            c.outcome == int(by_hand < c.reference) and c.detail == f"{changed.sum()} pixels drawn"
        )
        exact = cases[(f"im{i}", "exact")]  # no false positive: nothing to perturb
        assert exact.outcome is None and exact.detail == "0 pixels drawn"
    # the paper's selection (F1 ≥ 0.6): the soft map's adaptive threshold keeps its false
    # positives too (Dice 2·|GT| / (|GT| + 1200 + |GT|) < 0.6), so only the exact map is noised
    r = run(root, tmp_path, **{**cfg, "inject_select": Selection("adpDice", "min", 0.6)})
    assert {c.model for c in r.cases if c.meta == "noise_injection"} == {"exact"}


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


@pytest.mark.slow
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
    # the default protocol: Margolin's switches, every other GT here; each step cited
    assert protocol["protocol"]["protocol"] == "default"
    assert protocol["protocol"]["switches"] == 100
    assert {k: len(v) for k, v in protocol["gt_switch_pseudo_gts"]["ds"].items()} == {
        "im0": 2,
        "im1": 2,
        "im2": 2,
    }
    steps = protocol["protocol"]["preset"]["steps"]
    assert set(steps) == {"generic", "noise_map", "gt_switch", "noise_injection", "annotation"}
    assert "§4.3" in steps["noise_injection"][1]["cite"] and "§5.3" in steps["gt_switch"][0]["cite"]
    assert protocol["protocol"]["differs_from_preset"] == []
    md = (out / "summary.md").read_text()
    assert "Sm α=0.5" in md and "seed 9" in md and "Protocol default" in md
    assert r"mean \|Δ\| (dilate)" in md and "mean Δ (dilate)" not in md
    # a preset, with one knob changed: recorded as changed
    out2 = tmp_path / "out2"
    args = ["meta", str(root), "--out", str(out2), "--measures", "MAE", "--quiet"]
    assert main([*args, "--protocol", "context2025", "--switches", "2", "--no-plots"]) == 0
    protocol = json.loads((out2 / "protocol.json").read_text())["protocol"]
    assert protocol["metas"] == ["gt_switch", "noise_injection", "annotation"]
    assert protocol["switches"] == 2 and protocol["differs_from_preset"] == ["switches"]
    assert protocol["inject_of"] == "image" and protocol["annotation_stats"] == ["mean |Δ|"]
    assert main([*args, "--protocol", "context2025", "--metas", "generic"]) == 2
    assert "context2025 protocol has no generic" in capsys.readouterr().err
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
    mae = Selection("MAE", "min", 0.05)
    r = run(root, tmp_path, metas=("gt_switch",), keys=("MAE",), switch_select=mae)
    assert {c.model for c in r.cases if c.meta == "gt_switch"} == {"perfect"}
    f1 = Selection("adpDice", "min", 1.5)
    none = run(root, tmp_path, metas=("gt_switch",), keys=("MAE",), switch_select=f1)
    assert not none.cases and any("no map is good enough" in p.message for p in none.problems)
