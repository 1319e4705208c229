"""Edge cases of aggregation and refusals of bad or tampered files."""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path

import numpy as np
import pytest

from fminspect.cli import main
from fminspect.io.discovery import discover
from fminspect.io.loading import to_u8
from fminspect.ranking.aggregate import Rule, aggregate
from fminspect.ranking.agreement import _pair_table, free_marginal_kappa
from fminspect.ranking.build import build_design, groups_from_dataset
from fminspect.ranking.export import export_ranked, load_ranked, open_pack, write_pack
from fminspect.ranking.simulate import SimulatedParticipant, simulate, strengths_by_position
from fminspect.ranking.store import StudyError, StudyStore, VotingSession
from tests.datasets import make_dataset


@pytest.fixture
def store(tmp_path: Path) -> StudyStore:
    root = make_dataset(tmp_path / "data", n_images=4, methods=("A", "B", "C"), size=(30, 40))
    (ds,), _ = discover(root)
    path = tmp_path / "study.sqlite"
    design = build_design("edge", groups_from_dataset(ds), path, allow_ties=True)
    return StudyStore.create(path, design)


def _vote_group(store: StudyStore, who: str, group: str, answer) -> None:  # type: ignore[no-untyped-def]
    """Answer only ``group``'s pairs with ``answer(trial) -> choice``; leave the rest."""
    session = VotingSession(store, who)
    for t in session.trials:
        if t.group == group:
            store.record(who, t, answer(t), 100.0)


def test_unfinished_and_undecided_participants_are_not_circular(store: StudyStore) -> None:
    truth = strengths_by_position(store, gap=50)
    for k in range(2):
        simulate(store, SimulatedParticipant(f"p{k}", truth, seed=k))
    g0 = store.design.groups[0]
    best = g0.items[0].id
    # 'late' answered one pair of g0 only; 'unsure' answered every pair, one with a tie
    session = VotingSession(store, "late")
    first = next(t for t in session.trials if t.group == g0.id)
    store.record("late", first, "left", 100.0)
    _vote_group(
        store,
        "unsure",
        g0.id,
        lambda t: (
            "tie" if best not in (t.left, t.right) else ("left" if t.left == best else "right")
        ),
    )
    result = aggregate(store, Rule("unanimous"), exclude=["unsure"])
    g = result.groups[0]
    assert g.unfinished == 1 and g.circular_triads == 0
    assert g.consensus == tuple(g.items) and set(g.participant_orders) == {"p0", "p1"}
    with_unsure = aggregate(store, Rule("unanimous")).groups[0]
    assert with_unsure.undecided == 1 and with_unsure.circular_triads == 0
    assert with_unsure.participant_orders["unsure"] is None  # a tie gives no strict order
    assert with_unsure.reason == (
        "not unanimous: 1 of 3 give no order (circular or undecided answers)"
    )


@pytest.mark.faults
def test_k_of_n_refuses_two_orders_with_the_same_support(store: StudyStore) -> None:
    truth = strengths_by_position(store, gap=50)
    reverse = {i: -s for i, s in truth.items()}
    for k in range(2):
        simulate(store, SimulatedParticipant(f"up{k}", truth, seed=k))
        simulate(store, SimulatedParticipant(f"down{k}", reverse, seed=k))
    g = aggregate(store, Rule("k_of_n", k=2)).groups[0]
    assert g.consensus is None and "two different orders" in g.reason


@pytest.mark.parametrize(
    "text", ["foo", "k_of_n", "k_of_n:x", "k_of_n:0", "bt:0.3", "bt:1.5", "majority:2"]
)
@pytest.mark.faults
def test_bad_rules_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(ValueError, match="rule"):
        Rule.parse(text)


def test_kappa_is_free_marginal_and_does_not_depend_on_which_map_comes_first(
    store: StudyStore,
) -> None:
    import dataclasses

    from statsmodels.stats.inter_rater import fleiss_kappa  # the test oracle

    truth = strengths_by_position(store, gap=1.0)
    for k in range(5):
        simulate(store, SimulatedParticipant(f"p{k}", truth, seed=k))
    votes = store.votes()
    table = _pair_table(votes)
    assert table.shape == (3 * len(store.design.groups), 3)
    kappa = free_marginal_kappa(votes, 3)  # this study allows "cannot decide"
    assert kappa == pytest.approx(fleiss_kappa(table.astype(int), method="randolph"), abs=1e-12)
    # the same votes with every pair's sides and ids swapped: the same κ (Fleiss' moves)
    swapped = [
        dataclasses.replace(
            v,
            left=v.right,
            right=v.left,
            choice={"left": "right", "right": "left"}.get(v.choice, v.choice),
        )
        for v in votes
    ]
    assert free_marginal_kappa(swapped, 3) == pytest.approx(kappa, abs=1e-12)
    group = [v for v in votes if v.group == store.design.groups[0].id]
    assert -1 <= free_marginal_kappa(group, 3) <= 1


@pytest.mark.faults
def test_merge_refuses_relabelled_or_malformed_votes(store: StudyStore, tmp_path: Path) -> None:
    remote_path = open_pack(write_pack(store, tmp_path / "p.zip"), tmp_path / "remote")
    remote = StudyStore(remote_path)
    simulate(remote, SimulatedParticipant("r", strengths_by_position(remote)))
    results = remote.export_results("r")
    simulate(store, SimulatedParticipant("A", strengths_by_position(store)))
    forged = json.loads(json.dumps(results))
    forged["votes"][0]["participant"] = "A"
    with pytest.raises(StudyError, match=r"vote 1 \(trial \d+\) does not match"):
        store.merge_results(forged, "forged.json")
    flipped = json.loads(json.dumps(results))
    flipped["votes"][0]["chosen"] = (
        flipped["votes"][0]["right"]
        if flipped["votes"][0]["choice"] == "left"
        else flipped["votes"][0]["left"]
    )
    with pytest.raises(StudyError, match="does not match"):
        store.merge_results(flipped, "flipped.json")
    broken = dict(results, votes=[{"trial": 0}])
    with pytest.raises(StudyError, match="malformed"):
        store.merge_results(broken, "broken.json")
    with pytest.raises(StudyError, match="not an fminspect results file"):
        store.merge_results([1, 2], "list.json")  # type: ignore[arg-type]
    assert store.participants() == ["A"]
    assert store.merge_results(results, "good.json") == len(results["votes"])


def test_packs_cannot_write_outside_their_folder_or_mix_versions(
    store: StudyStore, tmp_path: Path
) -> None:
    pack = write_pack(store, tmp_path / "p.zip")
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(pack) as src, zipfile.ZipFile(evil, "w") as dst:
        manifest = json.loads(src.read("manifest.json"))
        manifest["files"]["../escaped.txt"] = manifest["files"].pop(next(iter(manifest["files"])))
        for name in src.namelist():
            dst.writestr(name, json.dumps(manifest) if name == "manifest.json" else src.read(name))
    with pytest.raises(StudyError, match="do not match"):
        open_pack(evil, tmp_path / "x")
    assert not (tmp_path / "escaped.txt").exists()
    open_pack(pack, tmp_path / "here")
    other = tmp_path / "other.sqlite"
    design = build_design("edge v2", list(store.design.groups), other)
    other_pack = write_pack(StudyStore.create(other, design), tmp_path / "v2.zip")
    with pytest.raises(StudyError, match="another version"):
        open_pack(other_pack, tmp_path / "here")
    truncated = tmp_path / "trunc.zip"
    truncated.write_bytes(pack.read_bytes()[: len(pack.read_bytes()) // 2])
    with pytest.raises(StudyError, match="not a study pack"):
        open_pack(truncated, tmp_path / "t")


@pytest.mark.faults
def test_export_refuses_a_folder_in_use_and_bad_manifests_are_named(
    store: StudyStore, tmp_path: Path
) -> None:
    simulate(store, SimulatedParticipant("p", strengths_by_position(store)))
    result = aggregate(store, Rule("unanimous", min_participants=1))  # one voter, on purpose
    out = export_ranked(result, tmp_path / "ranked")
    with pytest.raises(StudyError, match="not empty"):
        export_ranked(result, out)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["groups"][0].pop("ranked")
    (out / "manifest.json").write_text(json.dumps(manifest))
    groups, problems = load_ranked(out)
    assert len(groups) == len(result.consensual) - 1 and "malformed" in problems[0]


def test_sixteen_bit_maps_are_shown_at_their_real_levels() -> None:
    a16 = np.array([[0, 257 * 100, 65535]], np.uint16)
    assert to_u8(a16).tolist() == [[0, 100, 255]]
    assert to_u8(np.array([[0.0, 0.5, 1.0]])).tolist() == [[0, 128, 255]]
    assert to_u8(np.array([[True, False]])).tolist() == [[255, 0]]


@pytest.mark.faults
def test_cli_refuses_bad_rules_unknown_participants_and_makes_the_results_folder(
    store: StudyStore, tmp_path: Path, capsys
) -> None:
    simulate(store, SimulatedParticipant("p", strengths_by_position(store)))
    path = str(store.path)
    store.close()
    assert main(["rank", "aggregate", path, "--rule", "foo"]) == 1
    assert "--rule" in capsys.readouterr().err
    assert main(["rank", "aggregate", path, "--exclude", "nobody"]) == 1
    assert "no participant named nobody" in capsys.readouterr().err
    assert main(["rank", "export-results", path, "--out", str(tmp_path / "new" / "dir")]) == 0
    assert (tmp_path / "new" / "dir" / "results_p.json").exists()


def _pack_with(pack: Path, out: Path, name: str, data: bytes) -> Path:
    """A copy of ``pack`` whose member ``name`` holds ``data`` (its digest updated to match,
    so only the size checks can refuse it)."""
    import hashlib

    with zipfile.ZipFile(pack) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        manifest = json.loads(src.read("manifest.json"))
        manifest["files"][name] = hashlib.sha256(data).hexdigest()
        for member in src.namelist():
            body = data if member == name else src.read(member)
            dst.writestr(member, json.dumps(manifest) if member == "manifest.json" else body)
    return out


@pytest.mark.faults
def test_pack_bombs_are_refused_before_anything_is_inflated(
    store: StudyStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fminspect.ranking.export as export

    pack = write_pack(store, tmp_path / "p.zip")
    with zipfile.ZipFile(pack) as z:
        first = next(n for n in z.namelist() if n.startswith("files/"))
    # 16 MB of zeros deflate to ~16 KB: a 1000-fold member is a bomb, not an image
    bomb = _pack_with(pack, tmp_path / "bomb.zip", first, bytes(16 * 2**20))
    with pytest.raises(StudyError, match=rf"bomb.zip: {first} would inflate 1,0\d\d-fold"):
        open_pack(bomb, tmp_path / "b")
    assert not (tmp_path / "b").exists()  # refused before the folder was made
    # the declared sizes are checked against each limit before reading
    monkeypatch.setattr(export, "MAX_PACK_MEMBER", 100)
    with pytest.raises(StudyError, match=rf"{first} would inflate to [\d,]+ bytes.*limit 100\)"):
        open_pack(pack, tmp_path / "m")
    monkeypatch.setattr(export, "MAX_PACK_MEMBER", 2**29)
    monkeypatch.setattr(export, "MAX_JSON_BYTES", 100)
    with pytest.raises(StudyError, match=r"manifest.json would inflate to [\d,]+ bytes"):
        open_pack(pack, tmp_path / "j")
    monkeypatch.setattr(export, "MAX_JSON_BYTES", 2**28)
    full = shutil_usage(free=2**20)
    monkeypatch.setattr(export.shutil, "disk_usage", full)
    with pytest.raises(StudyError, match=r"need 0 MB and .* has 1 MB free"):
        open_pack(pack, tmp_path / "d")
    assert not any((tmp_path / n).exists() for n in ("m", "j", "d"))
    monkeypatch.undo()
    assert StudyStore(open_pack(pack, tmp_path / "ok")).design.fingerprint == (
        store.design.fingerprint
    )


def shutil_usage(free: int):  # type: ignore[no-untyped-def]
    """A stand-in for shutil.disk_usage on a disk with ``free`` bytes left."""
    import collections

    usage = collections.namedtuple("usage", "total used free")
    return lambda _path: usage(10 * free, 9 * free, free)


@pytest.mark.faults
def test_a_huge_results_file_is_refused_by_its_size_unread(
    store: StudyStore, tmp_path: Path
) -> None:
    from fminspect.ranking.export import merge_results_file

    huge = tmp_path / "results.json"
    with open(huge, "wb") as fh:  # sparse: 300 MB on paper, nothing on disk
        fh.truncate(300 * 2**20)
    with pytest.raises(StudyError, match=r"results.json: 314,572,800 bytes is more than a "):
        merge_results_file(store, huge)
    assert store.participants() == []


@pytest.mark.faults
def test_an_interrupted_create_leaves_no_study_file(
    store: StudyStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    design = store.design
    target = tmp_path / "new" / "study.sqlite"

    def interrupted(self: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(type(design), "to_json", interrupted)
    with pytest.raises(KeyboardInterrupt):
        StudyStore.create(target, design)
    assert list(target.parent.iterdir()) == []  # neither a 0-byte study nor a temporary file
    monkeypatch.undo()
    made = StudyStore.create(target, design)
    assert made.design.fingerprint == design.fingerprint
    assert sorted(
        p.name for p in target.parent.iterdir() if not p.name.endswith(("-wal", "-shm"))
    ) == ["study.sqlite"]
    with pytest.raises(StudyError, match="already exists"):
        StudyStore.create(target, design)


def test_one_participant_is_no_consensus_and_even_splits_are_named(store: StudyStore) -> None:
    truth = strengths_by_position(store, gap=50)
    simulate(store, SimulatedParticipant("only", truth, seed=0))
    alone = aggregate(store, Rule("unanimous")).groups[0]
    assert alone.consensus is None
    assert alone.reason == (
        "only 1 participant ranked this group: a consensus needs at least 2 (the rule's min)"
    )
    expert = Rule.parse("unanimous,min=1")  # a study of one expert, said in the rule
    assert str(expert) == "unanimous,min=1" and str(Rule.parse("unanimous")) == "unanimous"
    assert aggregate(store, expert).groups[0].consensus is not None
    reverse = {i: -s for i, s in truth.items()}
    simulate(store, SimulatedParticipant("other", reverse, seed=1))
    split = aggregate(store, Rule("majority")).groups[0]
    assert split.consensus is None and split.reason.startswith("no majority between ")
    assert split.reason.endswith(": 1 against 1")
    for bad in ("unanimous,min=0", "unanimous,max=3", "k_of_n:3,min=x"):
        with pytest.raises(ValueError, match="rule"):
            Rule.parse(bad)


def test_kappa_counts_pairs_with_different_numbers_of_raters() -> None:
    """Incomplete and active designs: each pair with ≥ 2 raters is a subject with its own n;
    a pair answered once carries no agreement and is left out."""
    from fminspect.ranking.store import Vote

    def vote(who: str, a: str, b: str, chosen: str) -> Vote:
        return Vote(
            who, 0, "pair", "g", a, b, "left" if chosen == a else "right", chosen, 1.0, "", ""
        )

    votes = [vote(p, "x", "y", "x") for p in ("p1", "p2", "p3")]  # 3 agree: P = 1
    votes += [vote("p1", "x", "z", "x"), vote("p2", "x", "z", "z")]  # 2 disagree: P = 0
    votes += [vote("p4", "y", "z", "y")]  # one rater: no agreement to measure
    assert _pair_table(votes).tolist() == [[3.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    assert free_marginal_kappa(votes, 2) == pytest.approx((0.5 - 0.5) / 0.5)
    assert free_marginal_kappa(votes[:3], 2) == pytest.approx(1.0)
    assert math.isnan(free_marginal_kappa(votes[-1:], 2))


def test_every_unreadable_file_is_named_in_order_whatever_the_threads(tmp_path: Path) -> None:
    """check_files decodes on several threads; what it says is what one thread says."""
    from fminspect.ranking.build import check_files

    root = make_dataset(tmp_path / "DS", n_images=12, methods=("A", "B", "C"))
    (dataset,), _ = discover(root)
    design = build_design("s", groups_from_dataset(dataset), tmp_path / "s.sqlite")
    files = design.files()
    victims = [files[k] for k in (1, 7, 20, len(files) - 1)]
    for k, victim in enumerate(victims):
        Path(victim).write_bytes(b"not a picture" if k % 2 else b"")
    one = check_files(design, threads=1)
    assert len(one) == len(victims)
    assert all(Path(v).name in said for v, said in zip(victims, one, strict=True))
    for threads in (2, 5):
        assert check_files(design, threads=threads) == one
