"""Human-ranking studies without Qt: design, schedule, durable store, simulated participants,
aggregation, agreement, packs and human-ranked datasets."""

from __future__ import annotations

import json
import math
import zipfile
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import friedmanchisquare

from fminspect.io.discovery import discover
from fminspect.metrics import measure_keys
from fminspect.ranking.aggregate import Rule, aggregate
from fminspect.ranking.agreement import (
    RankedGroup,
    free_marginal_kappa,
    group_agreement,
    kendall_w,
    measures_vs_humans,
)
from fminspect.ranking.build import build_design, groups_from_dataset, pick_spread
from fminspect.ranking.design import Design
from fminspect.ranking.export import (
    export_ranked,
    load_ranked,
    merge_results_file,
    open_pack,
    write_pack,
    write_results,
    write_votes_csv,
)
from fminspect.ranking.schedule import schedule
from fminspect.ranking.simulate import SimulatedParticipant, simulate, strengths_by_position
from fminspect.ranking.store import StudyError, StudyStore, VotingSession
from tests.datasets import make_dataset, write_png


@pytest.fixture
def dataset(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "data", n_images=20, methods=("A", "B", "C", "D"), size=(40, 56))
    (ds,), _ = discover(root)
    return ds


def _study(tmp_path: Path, dataset, **options) -> StudyStore:  # type: ignore[no-untyped-def]
    groups = groups_from_dataset(dataset, models=["A", "B", "C"])
    path = tmp_path / "study.sqlite"
    checks = options.pop("checks", 0)
    design = build_design("test study", groups, path, checks=checks, **options)
    return StudyStore.create(path, design)


# ----------------------------------------------------------------------------- design & schedule
def test_design_round_trips_through_json_and_keeps_every_choice(tmp_path: Path, dataset) -> None:
    store = _study(
        tmp_path,
        dataset,
        checks=4,
        repeats=5,
        seed=7,
        presentation="overlay",
        overlay_alpha=0.4,
        show_gt=False,
        allow_ties=True,
    )
    d = store.design
    again = Design.from_json(d.to_json())
    assert again == d and again.fingerprint == d.fingerprint
    assert (d.seed, d.presentation, d.overlay_alpha, d.show_gt, d.allow_ties, d.repeats) == (
        7,
        "overlay",
        0.4,
        False,
        True,
        5,
    )
    assert len(d.checks) == d.attention_checks == 4
    assert {c.kind for c in d.checks} == {"GT vs noise", "GT vs empty"}
    assert all(Path(f).exists() for f in d.files())
    with pytest.raises(StudyError, match="already exists"):
        StudyStore.create(store.path, d)


def test_schedule_covers_every_pair_once_with_random_sides_repeats_and_checks(
    tmp_path: Path, dataset
) -> None:
    store = _study(tmp_path, dataset, checks=3, repeats=6, seed=1)
    design = store.design
    trials = schedule(design, "alice")
    assert trials == schedule(design, "alice")  # recorded seed → same schedule
    assert [(t.left, t.right) for t in trials] != [
        (t.left, t.right) for t in schedule(design, "bob")
    ]
    pairs = [t for t in trials if t.kind == "pair"]
    expected = {
        (g.id, frozenset(p))
        for g in design.groups
        for p in combinations([i.id for i in g.items], 2)
    }
    assert Counter((t.group, frozenset((t.left, t.right))) for t in pairs) == Counter(expected)
    lefts = Counter(
        t.left == design.group(t.group).items[0].id
        for t in pairs
        if design.group(t.group).items[0].id in (t.left, t.right)
    )
    assert lefts[True] > 5 and lefts[False] > 5  # the best map is not always on one side
    repeats = [t for t in trials if t.kind == "repeat"]
    assert len(repeats) == 6
    for r in repeats:
        first = trials[r.repeat_of]
        assert (first.kind, first.group, first.left, first.right) == (
            "pair",
            r.group,
            r.right,
            r.left,
        )
        assert r.index - first.index >= 4
    checks = [t for t in trials if t.kind == "check"]
    assert len(checks) == 3 and all(t.correct in (t.left, t.right) for t in checks)
    assert [t.index for t in trials] == list(range(len(trials)))


def test_pick_spread_takes_clearly_different_maps() -> None:
    scores = {"a": 0.95, "b": 0.93, "c": 0.7, "d": 0.52, "e": 0.5, "f": 0.1}
    assert pick_spread(scores, 3) == ["a", "d", "f"]  # nearest to best, middle, worst
    assert pick_spread(scores, 4) == ["a", "c", "e", "f"]  # targets .95, .67, .38, .1
    assert pick_spread({"a": 0.5, "b": 0.51, "c": 0.52}, 3, min_gap=0.05) == ["c"]


# ----------------------------------------------------------------------------- store & session
def test_votes_are_durable_undo_works_and_a_session_resumes(tmp_path: Path, dataset) -> None:
    store = _study(tmp_path, dataset)
    session = VotingSession(store, "p1")
    first = session.current()
    session.vote("left", 900)
    session.vote("right", 800)
    undone = session.undo()
    assert undone is not None and session.position == 1
    assert session.current() == undone
    with pytest.raises(StudyError, match="does not allow"):
        session.vote("tie", 100)
    session.vote("left", 700)
    store.close()
    store = StudyStore(tmp_path / "study.sqlite")  # reopen, as after a crash
    again = VotingSession(store, "p1")
    assert again.position == 2 and again.current() == again.trials[2]
    votes = store.votes("p1")
    assert [v.trial for v in votes] == [0, 1] and votes[0].chosen == first.left
    assert votes[1].rt_ms == 700 and votes[0].app_version
    with pytest.raises(StudyError, match="already voted"):
        store.record("p1", again.trials[0], "left", 1)


@pytest.mark.faults
def test_not_a_study_file_is_refused_by_name(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(StudyError, match=r"junk\.sqlite"):
        StudyStore(junk)
    with pytest.raises(StudyError, match="no such study"):
        StudyStore(tmp_path / "missing.sqlite")


# ----------------------------------------------------------------------------- simulated studies
@pytest.mark.slow
def test_simulated_participants_true_ranking_bias_and_lapses_are_recovered(
    tmp_path: Path, dataset
) -> None:
    store = _study(tmp_path, dataset, checks=10, repeats=6, seed=3)
    truth = strengths_by_position(store, gap=2.5)
    people = [SimulatedParticipant(f"sim-{k}", truth, seed=k) for k in range(9)]
    people.append(SimulatedParticipant("sim-biased", truth, left_bias=3.0, seed=99))
    people.append(SimulatedParticipant("sim-lapser", truth, lapse=1.0, seed=98))
    for who in people:
        simulate(store, who)
    result = aggregate(store, Rule("bt", p=0.8), exclude_failing=True, min_attention=1.0)
    stats = {s.participant: s for s in result.participants}
    # the lapsing participant fails attention checks and is excluded; nobody else is
    assert stats["sim-lapser"].attention < 1 and result.excluded == ["sim-lapser"]
    assert all(s.attention == 1 for p, s in stats.items() if p != "sim-lapser")
    # the side bias is found (binomial test), and not in the unbiased participants
    assert stats["sim-biased"].left_bias_p < 0.01 and stats["sim-biased"].left_share > 0.65
    assert (
        sum(
            s.left_bias_p < 0.01
            for p, s in stats.items()
            if p.startswith("sim-") and p[4:].isdigit()
        )
        == 0
    )
    # adjusted for testing all 11 participants (Holm), the smallest p is multiplied by 11
    from statsmodels.stats.multitest import multipletests  # the test oracle

    raw = [s.left_bias_p for s in result.participants]
    adjusted = [s.left_bias_p_holm for s in result.participants]
    assert adjusted == pytest.approx(list(multipletests(raw, method="holm")[1]), abs=1e-12)
    biased = stats["sim-biased"]
    assert biased.left_bias_p_holm == pytest.approx(11 * biased.left_bias_p)
    assert stats["sim-0"].repeats == 6 and stats["sim-0"].median_rt_ms > 0
    # the true order (items listed best first) is recovered in every group
    for g in result.groups:
        assert g.bt_order == tuple(g.items), g.group
        assert g.bt[0] > g.bt[1] > g.bt[2] and np.all(g.bt_sd > 0)
    assert len(result.consensual) >= 0.7 * len(result.groups)
    assert all("< 0.8" in g.reason for g in result.groups if g.consensus is None)
    assert result.kendall_w > 0.5 and result.kappa > 0.3
    # unanimity is much harder than BT probability
    strict = aggregate(store, Rule("unanimous"), exclude_failing=True)
    assert len(strict.consensual) < len(result.consensual)
    assert all(g.reason.startswith("not unanimous") for g in strict.groups if g.consensus is None)
    majority = aggregate(store, Rule("majority"), exclude_failing=True)
    assert all(g.consensus == tuple(g.items) for g in majority.consensual)
    assert len(majority.consensual) == len(majority.groups)


@pytest.mark.slow
def test_consensus_rules_and_their_reasons(tmp_path: Path, dataset) -> None:
    store = _study(tmp_path, dataset)
    truth = strengths_by_position(store, gap=50.0)  # everyone gives the true order
    reverse = {k: -v for k, v in truth.items()}
    for k in range(3):
        simulate(store, SimulatedParticipant(f"agree{k}", truth, seed=k))
    simulate(store, SimulatedParticipant("contrarian", reverse, seed=5))
    unanimous = aggregate(store, Rule("unanimous"))
    assert not unanimous.consensual
    assert all(
        g.reason == "not unanimous: the participants give 2 different orders"
        for g in unanimous.groups
    )
    three = aggregate(store, Rule.parse("k_of_n:3"))
    assert len(three.consensual) == len(three.groups)
    assert all(g.reason == "3 of 4 participants give this order" for g in three.groups)
    four = aggregate(store, Rule.parse("k_of_n:4"))
    assert not four.consensual and "need 4" in four.groups[0].reason
    alone = aggregate(store, Rule("unanimous"), exclude=["contrarian"])
    assert len(alone.consensual) == len(alone.groups) and alone.excluded == ["contrarian"]
    assert str(Rule.parse("bt:0.95")) == "bt:0.95"
    with pytest.raises(ValueError, match="rule must be one of"):
        Rule("plurality")


def test_circular_triads_are_counted(tmp_path: Path, dataset) -> None:
    store = _study(tmp_path, dataset)
    session = VotingSession(store, "cyclic")
    g0 = store.design.groups[0]
    a, b, c = (i.id for i in g0.items)
    beats = {(a, b), (b, c), (c, a)}  # a > b > c > a
    while not session.finished:
        t = session.current()
        session.vote("left" if (t.left, t.right) in beats else "right", 500)
    result = aggregate(store, Rule("majority", min_participants=1))  # one voter, on purpose
    g = next(r for r in result.groups if r.group == g0.id)
    assert g.circular_triads == 1 and g.participant_orders["cyclic"] is None
    assert g.consensus is None and g.reason == "pairwise majorities are cyclic"


# ----------------------------------------------------------------------------- agreement statistics
def test_kendall_w_matches_friedman_and_limits() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        m, n = rng.integers(3, 9), rng.integers(3, 6)
        scores = rng.integers(0, 4, size=(m, n)).astype(float)
        if np.any(np.ptp(scores, axis=1) == 0):
            continue
        chi2 = friedmanchisquare(*scores.T).statistic
        assert math.isclose(kendall_w(scores), chi2 / (m * (n - 1)), rel_tol=1e-12)
    assert kendall_w([[3, 2, 1]] * 5) == 1.0
    assert kendall_w([[3, 2, 1], [1, 2, 3]]) == 0.0
    assert math.isnan(kendall_w([[1, 2, 3]]))


def test_kappa_of_perfect_and_split_raters(tmp_path: Path, dataset) -> None:
    store = _study(tmp_path, dataset)
    truth = strengths_by_position(store, gap=50.0)
    for k in range(4):
        simulate(store, SimulatedParticipant(f"p{k}", truth, seed=k))
    assert free_marginal_kappa(store.votes(), 2) == pytest.approx(1.0)
    for k in range(4):
        simulate(store, SimulatedParticipant(f"r{k}", {i: -s for i, s in truth.items()}, seed=k))
    # 4 against 4 on every pair: 3 of 7 rater pairs agree, below chance (1/2)
    assert free_marginal_kappa(store.votes(), 2) == pytest.approx((3 / 7 - 0.5) / 0.5)


def test_group_agreement_by_hand() -> None:
    assert group_agreement([3, 2, 1]) == (0.0, False, False)
    assert group_agreement([1, 2, 3]) == (2.0, True, True)
    theta, wrong, top = group_agreement([3, 1, 2])  # ρ = 0.5
    assert theta == pytest.approx(0.5) and wrong and not top
    assert group_agreement([2, 2, 1]) == (pytest.approx(1 - 0.8660254037844387), True, True)
    assert group_agreement([5, 5, 5]) == (1.0, True, True)


def test_measures_vs_humans_on_obvious_rankings() -> None:
    rng = np.random.default_rng(0)
    groups = []
    for k in range(6):
        gt = np.zeros((60, 80), np.uint8)
        gt[15 + k : 45, 20 : 60 - k] = 255
        good = gt.copy()
        good[15 + k, 20:30] = 0  # nearly perfect
        meh = np.roll(gt, 6, axis=1)
        bad = (rng.random(gt.shape) * 255).astype(np.uint8)
        groups.append(RankedGroup(f"g{k}", gt, (good, meh, bad), None, ("good", "meh", "bad")))
    report = measures_vs_humans(groups, ["MAE", "Sm", "maxEm", "wFm"])
    for key in ("MAE", "Sm", "maxEm", "wFm"):
        row = report.row(key)
        assert row.theta == 0 and row.error_rate == 0 and row.groups == 6, key
        # no error in 6 groups is not a certainty: the intervals say how little 6 groups show
        assert row.theta_ci[0] == 0 and 0.5 < row.theta_ci[1] < 2
        assert row.error_ci[0] == 0 and row.error_ci[1] == pytest.approx(0.4593, abs=1e-4)
    assert "α=0.5" in report.labels["Sm"] and report.normalization
    # family names and 'default' are the keys they stand for, as on every command
    by_family = measures_vs_humans(groups, ["smeasure", "overlap"])
    assert by_family.row("Sm").theta == report.row("Sm").theta
    assert {r.key for r in by_family.rows} == {"Sm", *measure_keys(["overlap"])}
    assert {r.key for r in measures_vs_humans(groups[:2], ["default"]).rows} == set(
        measure_keys(with_images=False)
    )
    # a map of another size is resized (noted); a broken group is skipped with its reason
    small = RankedGroup(
        "small", groups[0].gt, tuple(m[::2, ::2] for m in groups[0].maps), None, ("a", "b", "c")
    )
    broken = RankedGroup("broken", np.zeros((4, 4, 2), np.uint8), groups[0].maps)
    report = measures_vs_humans([small, broken, *groups[1:]], ["MAE"])
    assert report.row("MAE").groups == 6
    assert any(g == "small" and "resized" in n for g, n in report.notes)
    assert [g for g, _ in report.skipped] == ["broken"]
    # with a cache, another human order of the same maps only re-ranks: the same scores
    cache: dict = {}
    first = measures_vs_humans(groups, ["MAE"], cache=cache)
    assert len(cache) == 18 and first.row("MAE").theta == 0
    flipped = [RankedGroup(g.group, g.gt, g.maps[::-1], None, g.names[::-1]) for g in groups]
    again = measures_vs_humans(flipped, ["MAE"], cache=cache)
    assert len(cache) == 18 and again.row("MAE").theta == 2  # exactly reversed orders
    assert again.row("MAE").theta == measures_vs_humans(flipped, ["MAE"]).row("MAE").theta


# ----------------------------------------------------------------------------- packs & merging
def test_pack_vote_elsewhere_and_merge_back(tmp_path: Path, dataset) -> None:
    lab = _study(tmp_path, dataset, checks=2, repeats=2)
    truth = strengths_by_position(lab)
    simulate(lab, SimulatedParticipant("lab-1", truth))
    pack = write_pack(lab, tmp_path / "study.fmpack.zip")
    with zipfile.ZipFile(pack) as z:
        assert {"manifest.json", "design.json"} <= set(z.namelist())
        assert len([n for n in z.namelist() if n.startswith("files/")]) == len(lab.design.files())
    # "another computer": the dataset is gone, only the pack exists
    import shutil

    shutil.rmtree(dataset.gt.path.parent)
    remote_path = open_pack(pack, tmp_path / "remote")
    remote = StudyStore(remote_path)
    assert remote.design.fingerprint == lab.design.fingerprint
    from fminspect.ranking.export import local_paths

    paths = local_paths(remote_path)
    assert set(paths) == set(lab.design.files()) and all(Path(p).exists() for p in paths.values())
    simulate(remote, SimulatedParticipant("remote-1", truth, seed=4))
    results = write_results(remote, "remote-1", tmp_path / "remote-1.json")
    assert merge_results_file(lab, results) == len(remote.votes("remote-1"))
    assert [v.chosen for v in lab.votes("remote-1")] == [v.chosen for v in remote.votes("remote-1")]
    with pytest.raises(StudyError, match="already in this study"):
        merge_results_file(lab, results)
    data = json.loads(results.read_text())
    other = dict(data, study_id="0" * 32)
    (tmp_path / "other.json").write_text(json.dumps(other))
    with pytest.raises(StudyError, match="another study"):
        merge_results_file(lab, tmp_path / "other.json")
    edited = dict(data, participant="remote-2", design_fingerprint="f" * 16)
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    with pytest.raises(StudyError, match="different version"):
        merge_results_file(lab, tmp_path / "edited.json")
    renamed = dict(data, participant="remote-3")  # its schedule belongs to remote-1
    (tmp_path / "renamed.json").write_text(json.dumps(renamed))
    with pytest.raises(StudyError, match="schedule does not match"):
        merge_results_file(lab, tmp_path / "renamed.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(StudyError, match=r"broken\.json"):
        merge_results_file(lab, tmp_path / "broken.json")
    assert lab.participants() == ["lab-1", "remote-1"]  # refusals wrote nothing


@pytest.mark.faults
def test_damaged_pack_is_refused(tmp_path: Path, dataset) -> None:
    lab = _study(tmp_path, dataset)
    pack = write_pack(lab, tmp_path / "p.zip")
    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(pack) as src, zipfile.ZipFile(damaged, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            dst.writestr(name, data[:-10] + b"0" * 10 if name.startswith("files/00000") else data)
    with pytest.raises(StudyError, match="damaged"):
        open_pack(damaged, tmp_path / "x")
    (tmp_path / "notzip.zip").write_text("hello")
    with pytest.raises(StudyError, match="not a study pack"):
        open_pack(tmp_path / "notzip.zip", tmp_path / "y")


# ----------------------------------------------------------------------------- datasets out and in
@pytest.mark.slow
def test_export_ranked_dataset_and_read_it_back(tmp_path: Path, dataset) -> None:
    store = _study(tmp_path, dataset)
    truth = strengths_by_position(store, gap=50.0)
    for k in range(3):
        simulate(store, SimulatedParticipant(f"p{k}", truth, seed=k))
    result = aggregate(store, Rule("unanimous"))
    out = export_ranked(result, tmp_path / "ranked")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == "fminspect-human-ranked/1" and manifest["rule"] == "unanimous"
    assert len(manifest["groups"]) == len(store.design.groups)
    g0 = manifest["groups"][0]
    assert [r["model"] for r in g0["ranked"]] == ["A", "B", "C"] and g0["participants"] == 3
    assert (out / g0["gt"]).exists() and (out / g0["image"]).exists()
    rows = (out / "manifest.csv").read_text().splitlines()
    assert rows[0].startswith("group,rank,file,model") and len(rows) == 1 + 3 * len(
        store.design.groups
    )
    back, problems = load_ranked(out)
    assert problems == []
    assert len(back) == len(store.design.groups) and back[0].names == ("A", "B", "C")
    sample = store.design.groups[0]
    from fminspect.io.loading import load_map

    assert np.array_equal(back[0].maps[0], load_map(sample.items[0].path).array)
    # the votes as tidy CSV
    csv_path = write_votes_csv(store, tmp_path / "votes.csv")
    lines = csv_path.read_text().splitlines()
    assert lines[0].startswith("observer,session,scene,condition_A,condition_B,selection")
    assert len(lines) == 1 + len(store.votes())


def test_load_rank_named_folders(tmp_path: Path) -> None:
    gt = np.zeros((20, 30), np.uint8)
    gt[5:15, 5:20] = 255
    for name in ("img001", "img002"):
        write_png(tmp_path / name / "GT.png", gt)
        write_png(tmp_path / name / "image.png", np.dstack([gt] * 3))
        write_png(tmp_path / name / "1.png", gt)
        write_png(tmp_path / name / "rank2_modelX.png", np.roll(gt, 3))
        write_png(tmp_path / name / "3-modelY.png", np.zeros_like(gt))
    (tmp_path / "notes").mkdir()
    (tmp_path / "img003").mkdir()
    write_png(tmp_path / "img003" / "GT.png", gt)
    (tmp_path / "img003" / "1.png").write_bytes(b"broken")
    write_png(tmp_path / "img003" / "2.png", gt)
    groups, problems = load_ranked(tmp_path)
    assert [g.group for g in groups] == ["img001", "img002"]
    assert len(problems) == 1 and "img003" in problems[0] and "1.png" in problems[0]
    assert groups[0].names == ("1", "rank2_modelX", "3-modelY") and groups[0].image is not None
    with pytest.raises(StudyError, match="no ranked groups"):
        load_ranked(tmp_path / "notes")


def test_the_not_different_column_names_the_measures_or_says_all_of_them() -> None:
    from fminspect.ranking.report import _others

    assert _others([], 20) == "–"
    assert _others(["MAE", "Sm"], 20) == "MAE, Sm"
    assert _others([f"m{k}" for k in range(19)], 20) == "all 19 others"
    assert _others(["MAE"], 2) == "MAE"  # with two measures, "all 1 others" says nothing


def test_json_outputs_are_standard_json_without_nan() -> None:
    """json.dumps writes NaN, which strict parsers (browsers, jq, R's jsonlite) reject."""
    import json

    import numpy as np

    from fminspect.io.atomic import strict_json

    text = strict_json({"w": float("nan"), "k": [np.float64(0.5), np.inf, 1], "s": "NaN"})
    assert json.loads(text, parse_constant=lambda c: 1 / 0) == {
        "w": None,
        "k": [0.5, None, 1],
        "s": "NaN",
    }
