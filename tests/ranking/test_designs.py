"""Study designs past "every participant sees every pair": incomplete (balanced slots) and
active (expected information gain), through the store, packs and aggregation."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from fminspect.ranking.active import NOISE_VARIANCE, PRIOR_VARIANCE, Posterior
from fminspect.ranking.aggregate import default_rule
from fminspect.ranking.design import Design, Group, Item, new_design
from fminspect.ranking.export import open_pack, write_pack
from fminspect.ranking.schedule import (
    ACTIVE_CHUNK,
    all_pairs,
    participant_seed,
    planned_trials,
    schedule,
    slot_pairs,
)
from fminspect.ranking.simulate import SimulatedParticipant, simulate
from fminspect.ranking.store import StudyError, StudyStore, VotingSession
from fminspect.ranking.workflow import consensus


def _groups(n: int, maps: int, root: Path | None = None) -> list[Group]:
    folder = root or Path("/nonexistent")
    return [
        Group(
            f"g{k:03d}",
            "d",
            f"s{k:03d}",
            None,
            None,
            tuple(
                Item(f"g{k:03d}m{m}", f"model{m}", str(folder / f"{k}_{m}.png"))
                for m in range(maps)
            ),
        )
        for k in range(n)
    ]


def _design(sampling: str, n: int = 6, maps: int = 5, **kw: int) -> Design:
    return new_design("t", _groups(n, maps), seed=3, sampling=sampling, **kw)


def _strengths(design: Design, gap: float = 1.0) -> dict[str, float]:
    return {i.id: -gap * k for g in design.groups for k, i in enumerate(g.items)}


# ------------------------------------------------------------------ the design record
def test_a_design_written_before_the_new_fields_keeps_its_fingerprint() -> None:
    full = _design("full")
    old = json.loads(full.to_json())
    assert not {"sampling", "per_participant", "coverage"} & set(old)  # as older versions wrote
    again = Design.from_json(json.dumps(old))
    assert again.fingerprint == full.fingerprint and again.sampling == "full"
    active = _design("active", per_participant=12)
    assert Design.from_json(active.to_json()) == active
    assert active.fingerprint != full.fingerprint


@pytest.mark.parametrize(
    ("sampling", "kw", "message"),
    [
        ("random", {}, "must be one of"),
        ("active", {}, "at least one pair per participant"),
        ("incomplete", {"per_participant": 10}, "covered by"),
    ],
)
def test_impossible_designs_are_refused(sampling: str, kw: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _design(sampling, **kw)


# ------------------------------------------------------------------ incomplete designs
@pytest.mark.parametrize(("per", "coverage"), [(7, 1), (10, 3), (13, 2), (60, 2)])
def test_incomplete_slots_cover_every_pair_coverage_times_and_are_balanced(
    per: int, coverage: int
) -> None:
    design = _design("incomplete", per_participant=per, coverage=coverage)  # 60 pairs
    slots = [slot_pairs(design, s) for s in range(design.slots)]
    assert design.slots == max(coverage, math.ceil(60 * coverage / per))
    seen = Counter(p for s in slots for p in s)
    assert set(seen) == set(all_pairs(design)) and set(seen.values()) == {coverage}
    sizes = [len(s) for s in slots]
    assert max(sizes) - min(sizes) <= 1 and max(sizes) <= per
    assert all(len(set(s)) == len(s) for s in slots)  # a slot never holds a pair twice
    assert planned_trials(design) == max(sizes)


def test_incomplete_participants_take_the_least_used_slot_and_a_second_round_covers_again(
    tmp_path: Path,
) -> None:
    design = _design("incomplete", per_participant=20, coverage=2)  # 60 pairs → 6 slots
    store = StudyStore.create(tmp_path / "s.sqlite", design)
    ids = [f"p{k}" for k in range(2 * design.slots)]
    for p in ids:
        store.register(p)
    assert [store.slot(p) for p in ids] == list(range(design.slots)) * 2
    first_round = Counter(
        frozenset((t.left, t.right)) for p in ids[: design.slots] for t in store.trials(p)
    )
    assert set(first_round.values()) == {2} and len(first_round) == 60
    # a participant's trials are their slot's pairs, arranged from their own seed
    assert store.trials("p3") == schedule(design, "p3", 3)
    assert {(t.group, *sorted((t.left, t.right))) for t in store.trials("p3")} == {
        (g, *sorted((a, b))) for g, a, b in slot_pairs(design, 3)
    }


def test_full_design_schedules_are_those_of_every_earlier_version(tmp_path: Path) -> None:
    """Results files of a full design are checked by recomputing the schedule: the arranging
    code must draw the same random numbers in the same order as it always has."""
    design = _design("full", n=3, maps=4)
    design = new_design("t", list(design.groups), seed=3, repeats=4)
    trials = schedule(design, "ann")
    rng = np.random.default_rng(participant_seed(3, "ann"))
    sides = [rng.random() < 0.5 for _ in all_pairs(design)]
    order = rng.permutation(len(sides))
    firsts = [t for t in trials if t.kind == "pair"]
    expected = []
    for i in order:
        g, a, b = all_pairs(design)[i]
        expected.append((g, a, b) if sides[i] else (g, b, a))
    assert [(t.group, t.left, t.right) for t in firsts] == expected
    assert sum(t.kind == "repeat" for t in trials) == 4


# ------------------------------------------------------------------ the active posterior
def _moments(mu: np.ndarray, var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact posterior means and variances of two independent Gaussians after observing
    'first preferred' under the probit likelihood Φ((x₀ − x₁)/√noise): numerically, by
    quadrature over d = x₀ − x₁, and each xₖ given d by Gaussian conditioning."""
    md, vd = mu[0] - mu[1], var[0] + var[1]

    def moment(k: int) -> float:
        return integrate.quad(
            lambda d: (
                d**k * norm.pdf(d, md, math.sqrt(vd)) * norm.cdf(d / math.sqrt(NOISE_VARIANCE))
            ),
            md - 12 * math.sqrt(vd),
            md + 12 * math.sqrt(vd),
            epsabs=1e-13,
            epsrel=1e-12,
            limit=200,
        )[0]

    z = moment(0)
    mean_d = moment(1) / z
    var_d = moment(2) / z - mean_d**2
    gain = np.array([var[0], -var[1]]) / vd  # x_k = mu_k + gain_k (d − md) + independent rest
    return mu + gain * (mean_d - md), var - gain**2 * vd + gain**2 * var_d


@pytest.mark.parametrize("start", [(0.0, 0.0), (0.8, -0.3), (-1.5, 1.0)])
def test_each_vote_matches_the_exact_posterior_moments(start: tuple[float, float]) -> None:
    """The online update is moment matching: the updated mean and variance of each map are
    those of the exact posterior (quadrature) after one probit observation."""
    post = Posterior(_design("active", n=1, maps=2, per_participant=1))
    a, b = post.items
    post.mu[:] = start
    post.var[:] = [PRIOR_VARIANCE, 0.3]
    mu0, var0 = post.mu.copy(), post.var.copy()
    post.update(a, b)
    m, v = _moments(mu0, var0)
    assert np.allclose(post.mu, m, atol=1e-7) and np.allclose(post.var, v, atol=1e-7)


def test_information_gain_is_the_expected_kl_divergence_and_prefers_uncertain_pairs() -> None:
    post = Posterior(_design("active", n=1, maps=3, per_participant=1))
    post.mu[:] = [0.0, 0.1, 3.0]
    post.var[:] = [0.5, 0.5, 0.5]
    gains = post.gains()
    k = {
        frozenset((post.items[a], post.items[b])): i
        for i, (a, b) in enumerate(zip(post.pair_a, post.pair_b, strict=True))
    }
    close = gains[k[frozenset(post.items[:2])]]
    far = gains[k[frozenset((post.items[0], post.items[2]))]]
    assert close > far > 0
    # the expectation over both answers, each KL computed from the updated moments
    p = norm.cdf(-0.1 / math.sqrt(NOISE_VARIANCE + 1.0))
    total = 0.0
    for winner, loser, prob in ((0, 1, p), (1, 0, 1 - p)):
        after = Posterior(_design("active", n=1, maps=3, per_participant=1))
        after.mu[:], after.var[:] = post.mu, post.var
        after.update(after.items[winner], after.items[loser])
        kl = 0.5 * (
            np.log(post.var / after.var) + (after.var + (after.mu - post.mu) ** 2) / post.var - 1
        )
        total += prob * kl.sum()
    assert close == pytest.approx(total, rel=1e-12)


def test_a_batch_spreads_over_groups_and_never_repeats_a_pair() -> None:
    design = _design("active", n=10, maps=4, per_participant=30)
    post = Posterior(design)
    picks = post.choose(30, rng=np.random.default_rng(0))
    assert len({frozenset((c.a, c.b)) for c in picks}) == 30
    per_group = Counter(c.group for c in picks)
    assert len(per_group) == 10 and max(per_group.values()) - min(per_group.values()) <= 2
    again = post.choose(5, exclude=[frozenset((c.a, c.b)) for c in picks])
    assert not {frozenset((c.a, c.b)) for c in again} & {frozenset((c.a, c.b)) for c in picks}


def test_a_batch_equals_the_greedy_choice_that_evaluates_every_pair_at_each_pick() -> None:
    """``choose`` evaluates again only the gains of pairs sharing a map with the last pick;
    the plain greedy rule (every gain at every pick) must give the same pairs in the same
    order, ties broken by the same draws."""
    design = _design("active", n=12, maps=6, per_participant=30)
    draw = np.random.default_rng(5)
    keys = [
        frozenset((g.items[i].id, g.items[j].id))
        for g in design.groups
        for i in range(6)
        for j in range(i + 1, 6)
    ]
    for case in range(6):
        post = Posterior(design)
        for _ in range(int(draw.integers(0, 400))):
            g = design.groups[int(draw.integers(len(design.groups)))]
            i, j = draw.choice(6, 2, replace=False)
            post.update(g.items[i].id, g.items[j].id)
        pending = [keys[k] for k in draw.choice(len(keys), 40)]
        exclude = [keys[k] for k in draw.choice(len(keys), 15)]
        var = post.var.copy()
        for pair in pending:
            post._shrink(var, post.pair_index[pair])
        blocked = np.isin(np.arange(len(keys)), [post.pair_index[p] for p in exclude])
        rng, expected = np.random.default_rng(case), []
        for _ in range(25):
            gain = post.gains(var)
            gain[blocked] = -np.inf
            best = np.flatnonzero(gain >= gain.max() - 1e-12)
            k = int(best[0] if len(best) == 1 else rng.choice(best))
            blocked[k] = True
            expected.append(frozenset((post.items[post.pair_a[k]], post.items[post.pair_b[k]])))
            post._shrink(var, k)
        picks = post.choose(25, exclude, pending, rng=np.random.default_rng(case))
        assert [frozenset((c.a, c.b)) for c in picks] == expected


# ------------------------------------------------------------------ active studies
def test_an_active_session_chooses_chunks_from_the_votes_and_ends_as_planned(
    tmp_path: Path,
) -> None:
    design = new_design(
        "t", _groups(6, 5), seed=3, sampling="active", per_participant=25, repeats=3
    )
    store = StudyStore.create(tmp_path / "s.sqlite", design)
    first = store.register("ann")
    assert sum(t.kind == "pair" for t in first) == ACTIVE_CHUNK
    session = VotingSession(store, "ann")
    assert session.total == planned_trials(design) == 25 + 3
    who = SimulatedParticipant("ann", _strengths(design), seed=1)
    assert simulate(store, who) == 28 and session.store.trials("ann")[-1].index == 27
    pairs = [frozenset((t.left, t.right)) for t in store.trials("ann") if t.kind == "pair"]
    assert len(pairs) == len(set(pairs)) == 25
    repeats = [t for t in store.trials("ann") if t.kind == "repeat"]
    assert len(repeats) == 3 and all(t.repeat_of is not None for t in repeats)
    assert store.extend("ann") == []
    # the next participant's pairs come from ann's answers: the posterior has them all
    assert store.posterior().votes == 25


def test_the_posterior_kept_between_chunks_equals_one_built_from_every_vote(
    tmp_path: Path,
) -> None:
    design = _design("active", n=4, maps=4, per_participant=20)
    store = StudyStore.create(tmp_path / "s.sqlite", design)
    session = VotingSession(store, "ann")
    rng = np.random.default_rng(0)
    for step in range(18):
        assert session.current() is not None
        session.vote("left" if rng.random() < 0.6 else "right", 900.0)
        if step in (5, 11):  # undo, then answer the other way: the same row id again
            last = store.votes("ann")[-1]
            session.undo()
            session.vote("right" if last.choice == "left" else "left", 900.0)
        kept = store.posterior()
        fresh = Posterior(design).update_all(
            (v.left, v.right) if v.choice == "left" else (v.right, v.left)
            for v in store.votes()
            if v.kind == "pair"
        )
        assert np.array_equal(kept.mu, fresh.mu) and np.array_equal(kept.var, fresh.var)


def test_pairs_given_and_not_answered_are_discounted(tmp_path: Path) -> None:
    """A pair given to someone and not answered yet counts as half-learnt: the next choice
    goes to maps nobody is comparing (here the only pair disjoint from the pending one)."""
    post = Posterior(_design("active", n=1, maps=4, per_participant=1))
    m = post.items
    pending = [frozenset((m[0], m[1]))]
    assert {post.choose(1, pending=pending)[0].a, post.choose(1, pending=pending)[0].b} == {
        m[2],
        m[3],
    }
    # through the store: what ann was given and has not answered steers bob's first pair
    design = _design("active", n=3, maps=5, per_participant=10)
    store = StudyStore.create(tmp_path / "s.sqlite", design)
    ann = [frozenset((t.left, t.right)) for t in store.register("ann") if t.kind == "pair"]
    bob = [frozenset((t.left, t.right)) for t in store.register("bob") if t.kind == "pair"]

    def rng() -> np.random.Generator:
        return np.random.default_rng([participant_seed(design.seed, "bob"), 0])

    expected = store.posterior().choose(10, pending=ann, rng=rng())
    assert sorted(bob, key=sorted) == sorted((frozenset((c.a, c.b)) for c in expected), key=sorted)
    assert expected != store.posterior().choose(10, rng=rng())  # the discount changed it


def test_active_study_needs_a_pooling_rule_and_gets_one_by_default(tmp_path: Path) -> None:
    design = _design("active", n=3, maps=4, per_participant=12)
    store = StudyStore.create(tmp_path / "s.sqlite", design)
    for k in range(6):
        simulate(store, SimulatedParticipant(f"sim-{k}", _strengths(design, 3.0), seed=k))
    assert default_rule(design).name == "bt"
    for rule in ("unanimous", "k_of_n:3"):
        with pytest.raises(StudyError, match="nobody ranks every pair"):
            consensus(store, rule)
    result = consensus(store)
    assert str(result.rule) == "bt:0.9"
    # 6 participants × 12 of the 18 pairs: every group ordered from the pooled votes
    assert all(g.votes > 0 for g in result.groups)
    assert all(g.bt_order == tuple(g.items) for g in result.groups)
    assert result.consensual and all(g.consensus == tuple(g.items) for g in result.consensual)
    assert consensus(store, "majority").rule.name == "majority"


# ------------------------------------------------------------------ packs
@pytest.mark.parametrize("sampling", ["incomplete", "active"])
def test_a_pack_is_one_participants_and_their_votes_merge_back(
    tmp_path: Path, sampling: str
) -> None:
    import cv2

    root = tmp_path / "files"
    root.mkdir()
    groups = _groups(3, 4, root)
    for g in groups:
        for i in g.items:
            cv2.imwrite(i.path, np.full((8, 8), 40 * int(i.id[-1]), np.uint8))
    kw = {"per_participant": 8} | ({"coverage": 2} if sampling == "incomplete" else {})
    design = new_design("t", groups, seed=5, sampling=sampling, **kw)
    lab = StudyStore.create(tmp_path / "lab.sqlite", design)
    with pytest.raises(StudyError, match="--participant"):
        write_pack(lab, tmp_path / "any.zip")
    write_pack(lab, tmp_path / "ann.zip", "ann")
    given = lab.trials("ann")
    assert len(given) == planned_trials(design) and not lab.votes("ann")
    local = StudyStore(open_pack(tmp_path / "ann.zip", tmp_path / "there"))
    assert local.pack_for == "ann" and local.trials("ann") == given
    with pytest.raises(StudyError, match="made for participant 'ann'"):
        local.register("bob")
    simulate(local, SimulatedParticipant("ann", _strengths(design), seed=2))
    results = local.export_results("ann")
    assert lab.merge_results(results, "ann.json") == len(given)
    assert [v.chosen for v in lab.votes("ann")] == [v.chosen for v in local.votes("ann")]
    with pytest.raises(StudyError, match="duplicate"):
        lab.merge_results(results, "ann.json")
    stranger = dict(results, participant="zed")
    stranger["votes"] = [dict(v, participant="zed") for v in results["votes"]]  # type: ignore[union-attr]
    with pytest.raises(StudyError, match="gave participant 'zed' no pairs"):
        lab.merge_results(stranger, "zed.json")


def test_a_pack_whose_trials_were_edited_is_refused(tmp_path: Path) -> None:
    import zipfile

    import cv2

    root = tmp_path / "files"
    root.mkdir()
    groups = _groups(2, 3, root)
    for g in groups:
        for i in g.items:
            cv2.imwrite(i.path, np.zeros((8, 8), np.uint8))
    design = new_design("t", groups, sampling="active", per_participant=4)
    lab = StudyStore.create(tmp_path / "lab.sqlite", design)
    write_pack(lab, tmp_path / "p.zip", "ann")
    edited = tmp_path / "edited.zip"
    with zipfile.ZipFile(tmp_path / "p.zip") as src, zipfile.ZipFile(edited, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "participant.json":
                given = json.loads(data)
                given["trials"][0]["left"] = "g999m0"
                data = json.dumps(given).encode()
            dst.writestr(info, data)
    with pytest.raises(StudyError, match="trials do not match the study"):
        open_pack(edited, tmp_path / "there")


def test_a_study_file_of_the_first_schema_gains_the_slot_column(tmp_path: Path) -> None:
    """Version-1 files (no ``participants.slot``) open, are upgraded once, keep their votes."""
    import sqlite3

    design = _design("full", n=2, maps=3)
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(
        """
        CREATE TABLE study (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE participants (id TEXT PRIMARY KEY, seed INTEGER NOT NULL,
            created TEXT NOT NULL, origin TEXT NOT NULL);
        CREATE TABLE trials (participant TEXT NOT NULL REFERENCES participants(id),
            idx INTEGER NOT NULL, kind TEXT NOT NULL, grp TEXT NOT NULL,
            left_item TEXT NOT NULL, right_item TEXT NOT NULL, repeat_of INTEGER, correct TEXT,
            PRIMARY KEY (participant, idx));
        CREATE TABLE votes (participant TEXT NOT NULL, trial INTEGER NOT NULL,
            kind TEXT NOT NULL, grp TEXT NOT NULL, left_item TEXT NOT NULL,
            right_item TEXT NOT NULL, choice TEXT NOT NULL, chosen TEXT, rt_ms REAL NOT NULL,
            ts TEXT NOT NULL, app_version TEXT NOT NULL, PRIMARY KEY (participant, trial));
        INSERT INTO participants VALUES ('old', 1, '2025-01-01', 'local');
        """
    )
    db.execute("INSERT INTO study VALUES ('design', ?)", (design.to_json(),))
    db.execute("INSERT INTO study VALUES ('schema_version', '1')")
    db.close()
    store = StudyStore(path)
    assert store.participants() == ["old"] and store.slot("old") is None
    assert store.db.execute("SELECT value FROM study WHERE key = 'schema_version'").fetchone() == (
        "2",
    )
    assert len(store.register("new")) == design.pairs
    store.close()
    assert StudyStore(path).participants() == ["old", "new"]  # opened again: no second upgrade


@pytest.mark.faults
def test_a_chunk_that_cannot_be_stored_is_chosen_again_and_no_vote_is_lost(
    tmp_path: Path,
) -> None:
    import sqlite3

    design = _design("active", n=4, maps=4, per_participant=2 * ACTIVE_CHUNK)
    store = StudyStore.create(tmp_path / "s.sqlite", design)
    session = VotingSession(store, "ann")
    for _ in range(ACTIVE_CHUNK):
        session.vote("left", 500.0)
    real = store.db

    class Full:
        def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
            return real.execute(sql, *args)

        def executemany(self, sql: str, *args: object) -> sqlite3.Cursor:
            raise sqlite3.OperationalError("database or disk is full (injected)")

        def __getattr__(self, name: str) -> object:
            return getattr(real, name)

    store.db = Full()  # type: ignore[assignment]
    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        session.current()
    store.db = real
    assert not real.in_transaction and len(store.trials("ann")) == ACTIVE_CHUNK
    assert len(store.votes("ann")) == ACTIVE_CHUNK
    nxt = session.current()  # chosen again, stored this time
    assert nxt is not None and nxt.index == ACTIVE_CHUNK
    assert len(store.trials("ann")) == 2 * ACTIVE_CHUNK


def test_an_unfinished_results_file_then_the_final_one_merge_without_losing_votes(
    tmp_path: Path,
) -> None:
    """A participant elsewhere sends an interim file, then the final one: the second adds
    the votes the first did not have; a file contradicting merged votes is refused."""
    from fminspect.ranking.workflow import merge_results

    design = _design("full", n=2, maps=4)
    lab = StudyStore.create(tmp_path / "lab.sqlite", design)
    remote = StudyStore.create(tmp_path / "remote.sqlite", design)
    who = SimulatedParticipant("ann", _strengths(design), seed=4)
    simulate(remote, who, stop_after=5)
    (tmp_path / "interim.json").write_text(json.dumps(remote.export_results("ann")))
    simulate(remote, who)
    final = remote.export_results("ann")
    (tmp_path / "final.json").write_text(json.dumps(final))
    first, second, again = merge_results(
        lab.path, [tmp_path / "interim.json", tmp_path / "final.json", tmp_path / "final.json"]
    )
    assert (first.votes, first.unfinished, first.answered, first.planned) == (5, True, 5, 12)
    assert (second.votes, second.unfinished, second.participant) == (7, False, "ann")
    assert "duplicate results are refused" in again.refused
    assert [v.chosen for v in StudyStore(lab.path).votes("ann")] == [
        v.chosen for v in remote.votes("ann")
    ]
    changed = dict(final)
    changed["votes"] = [dict(v) for v in final["votes"]]  # type: ignore[union-attr]
    first_vote = changed["votes"][0]
    first_vote["choice"] = "right" if first_vote["choice"] == "left" else "left"
    first_vote["chosen"] = (
        first_vote["right"] if first_vote["choice"] == "right" else first_vote["left"]
    )
    with pytest.raises(StudyError, match="differs on 1 of them"):
        StudyStore(lab.path).merge_results(changed, "edited.json")
