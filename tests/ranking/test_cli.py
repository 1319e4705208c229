"""``fminspect rank`` end to end, as a lab would run it (no GUI subcommands)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fminspect.cli import main
from fminspect.ranking.store import StudyStore
from tests.datasets import make_dataset


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B", "C", "D"), size=(40, 50))


@pytest.mark.slow
def test_create_simulate_aggregate_export_report(tmp_path: Path, root: Path, capsys) -> None:
    study = tmp_path / "s.sqlite"
    args = ["rank", "create", str(study), str(root), "--auto", "3", "--by", "MAE", "--checks", "2"]
    assert main([*args, "--repeats", "2", "--presentation", "overlay", "--min-gap", "0"]) == 0
    out = capsys.readouterr().out
    assert "6 groups, 18 pairs" in out and "22 trials" in out
    with StudyStore(study) as store:
        d = store.design
        assert d.presentation == "overlay" and d.selection["by"] == "MAE" and len(d.checks) == 2
        assert all(len(g.items) == 3 for g in d.groups)
    assert main(["rank", "create", str(study), str(root)]) == 2  # never overwrites a study
    assert "already exists" in capsys.readouterr().err

    assert main(["rank", "simulate", str(study), "--participants", "4", "--gap", "20"]) == 0
    agg = tmp_path / "agg"
    assert main(["rank", "aggregate", str(study), "--rule", "unanimous", "--out", str(agg)]) == 0
    summary = capsys.readouterr().out
    assert "6 of 6 groups reach consensus" in summary
    for name in ("groups.csv", "participants.csv", "summary.md", "summary.json", "votes.csv"):
        assert (agg / name).exists(), name
    assert json.loads((agg / "summary.json").read_text())["rule"] == "unanimous"

    ranked = tmp_path / "ranked"
    assert main(["rank", "export", str(study), str(ranked)]) == 0
    assert len(json.loads((ranked / "manifest.json").read_text())["groups"]) == 6
    rep = tmp_path / "rep"
    cmd = ["rank", "report", "--ranked", str(ranked), "--measures", "MAE", "Sm", "--out", str(rep)]
    assert main(cmd) == 0
    table = capsys.readouterr().out
    # the simulated people ranked by MAE (--by MAE), so MAE agrees with them exactly
    assert "| MAE | 0.000 |" in table and "Sm α=0.5" in table
    for name in ("measures_vs_humans.csv", "measures_vs_humans.md", "measures_vs_humans.png"):
        assert (rep / name).exists(), name
    capsys.readouterr()
    # from the study: what the numbers rest on, and the measure that picked the maps flagged
    args = ["rank", "report", str(study), "--measures", "MAE", "--exclude", "sim-2"]
    assert main([*args, "--out", str(tmp_path / "rep2")]) == 0
    table = capsys.readouterr().out
    assert "| MAE (picked the maps) | 0.000 |" in table
    assert (
        "- 3 participants counted: sim-1, sim-3, sim-4\n- excluded: sim-2 (named with --" in table
    )
    assert "- 6 of 6 groups reached consensus; the 0 others are not counted" in table
    assert "picked by MAE (rank create --auto 3 --by MAE, at least 0.0 apart)" in table
    assert "isotropic Gaussian prior of precision 0.1 (variance 10)" in table
    saved = json.loads((tmp_path / "rep2" / "measures_vs_humans.json").read_text())
    assert saved["selected_by"] == "MAE" and len(saved["basis"]) == 7
    # simulated voters this far apart agree on every pair: said, since the scales' distances
    # are then the prior's
    assert saved["basis"][-1].startswith("6 of the 6 consensual groups are separated")


@pytest.mark.faults
def test_pack_export_results_and_merge_refusals(tmp_path: Path, root: Path, capsys) -> None:
    study = tmp_path / "s.sqlite"
    assert main(["rank", "create", str(study), str(root), "--models", "A", "B", "C"]) == 0
    assert main(["rank", "create", str(tmp_path / "x.sqlite"), str(root), "--models", "Z"]) == 2
    assert "no model named Z" in capsys.readouterr().err
    pack = tmp_path / "s.zip"
    assert main(["rank", "pack", str(study), str(pack)]) == 0
    from fminspect.ranking.export import open_pack
    from fminspect.ranking.simulate import SimulatedParticipant, simulate, strengths_by_position

    remote = StudyStore(open_pack(pack, tmp_path / "remote"))
    simulate(remote, SimulatedParticipant("r1", strengths_by_position(remote)))
    remote_study = str(remote.path)
    remote.close()
    results = tmp_path / "res"
    results.mkdir()
    assert main(["rank", "export-results", remote_study, "--out", str(results)]) == 0
    file = results / "results_r1.json"
    assert main(["rank", "merge", str(study), str(file)]) == 0
    assert main(["rank", "merge", str(study), str(file)]) == 1  # the same results again
    assert "already in this study" in capsys.readouterr().err
    assert main(["rank", "aggregate", str(tmp_path / "missing.sqlite")]) == 1
    assert "no such study file" in capsys.readouterr().err


def test_k_of_n_with_more_than_the_participants_says_no_group_can_agree(
    tmp_path: Path, root: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    study = tmp_path / "s.sqlite"
    assert main(["rank", "create", str(study), str(root), "--auto", "3", "--min-gap", "0"]) == 0
    assert main(["rank", "simulate", str(study), "--participants", "4"]) == 0
    capsys.readouterr()
    assert main(["rank", "aggregate", str(study), "--rule", "k_of_n:9"]) == 0
    captured = capsys.readouterr()
    assert "k_of_n:9 needs 9 participants to agree, but only 4" in captured.err
    assert "0 of 6 groups" in captured.out


@pytest.mark.slow
@pytest.mark.parametrize("design", ["incomplete", "active"])
def test_a_design_that_scales_from_create_to_report(
    tmp_path: Path, root: Path, capsys, design: str
) -> None:
    """As a lab runs it: create with 4 maps per image, vote (simulated), pack for one person
    elsewhere, merge, aggregate under the default rule."""
    study = tmp_path / "s.sqlite"
    args = ["rank", "create", str(study), str(root), "--design", design]
    args += ["--pairs-per-participant", "12", "--checks", "1"]
    assert main([*args, *(["--coverage", "2"] if design == "incomplete" else [])]) == 0
    out = capsys.readouterr().out
    assert f"6 groups, 36 pairs, {design} design; each participant sees 13 trials" in out
    if design == "incomplete":
        assert "one round is 6 participants: each pair is answered by 2 of them" in out
    assert "--participant p01" in out
    assert main(["rank", "simulate", str(study), "--participants", "6", "--gap", "3"]) == 0
    assert main(["rank", "pack", str(study), str(tmp_path / "any.zip")]) == 1
    assert "add --participant ID" in capsys.readouterr().err
    pack = tmp_path / "p07.zip"
    assert main(["rank", "pack", str(study), str(pack), "--participant", "p07"]) == 0
    assert "participant p07 runs" in capsys.readouterr().out
    from fminspect.ranking.export import open_pack
    from fminspect.ranking.simulate import SimulatedParticipant, simulate, strengths_by_position

    remote = StudyStore(open_pack(pack, tmp_path / "remote"))
    simulate(remote, SimulatedParticipant("p07", strengths_by_position(remote, gap=3)))
    remote_study = str(remote.path)
    remote.close()
    assert main(["rank", "export-results", remote_study, "--out", str(tmp_path / "res")]) == 0
    assert main(["rank", "merge", str(study), str(tmp_path / "res" / "results_p07.json")]) == 0
    assert main(["rank", "aggregate", str(study), "--rule", "unanimous"]) == 1
    assert "nobody ranks every pair of a group" in capsys.readouterr().err
    assert main(["rank", "aggregate", str(study), "--out", str(tmp_path / "agg")]) == 0
    summary = json.loads((tmp_path / "agg" / "summary.json").read_text())
    assert summary["rule"] == "bt:0.9" and summary["design"] == design
    assert len(summary["participants"]) == 7
    assert all(g["participants"] >= 2 for g in summary["groups"])  # votes pooled per group


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--coverage", "3"], "are for --design incomplete or active"),
        (["--pairs-per-participant", "40"], "are for --design incomplete or active"),
        (["--design", "active", "--coverage", "2"], "--coverage is for --design incomplete"),
        (["--design", "incomplete", "--coverage", "0"], "must be at least 1"),
        (["--design", "active", "--pairs-per-participant", "-4"], "must be at least 1"),
        (["--repeats", "-1"], "must be 0 or more"),
        (["--checks", "-2"], "must be 0 or more"),
    ],
)
def test_design_options_that_cannot_apply_are_refused(
    tmp_path: Path, root: Path, capsys, extra: list[str], message: str
) -> None:
    study = tmp_path / "s.sqlite"
    assert main(["rank", "create", str(study), str(root), *extra]) == 2
    assert message in capsys.readouterr().err and not study.exists()


def test_values_beyond_what_the_study_has_are_said(tmp_path: Path, root: Path, capsys) -> None:
    study = tmp_path / "s.sqlite"
    args = ["rank", "create", str(study), str(root), "--models", "A", "B", "C"]
    assert main([*args, "--design", "active", "--pairs-per-participant", "500"]) == 0
    err = capsys.readouterr().err
    assert "--pairs-per-participant 500: the study has 18 pairs, so each participant is" in err


def test_auto_scores_only_the_chosen_samples_and_names_a_list_of_unknowns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trial: `rank create --samples ONE --auto 3` on 1,000 images scored all 20,000 maps
    (43 s); a --samples-from list of names none of which exists said "no sample has at least
    two of the chosen maps", hiding the cause."""
    from fminspect.ranking import build, create

    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B", "C"), size=(24, 32))
    scored: list[list[str]] = []
    score_maps = build.score_maps

    def spy(datasets, *args, **kwargs):  # type: ignore[no-untyped-def]
        scored.append([s.name for d in datasets for s in d.samples])
        return score_maps(datasets, *args, **kwargs)

    monkeypatch.setattr(create, "score_maps", spy)
    study = tmp_path / "s.sqlite"
    args = ["rank", "create", str(study), str(root), "--auto", "2", "--min-gap", "0"]
    assert main([*args, "--samples", "img2", "img5"]) == 0
    assert scored == [["img2", "img5"]]
    with StudyStore(study) as s:
        assert {g.sample for g in s.design.groups} == {"img2", "img5"}
    (tmp_path / "typos.txt").write_text("imgX\nimg99\n")
    code = main(["rank", "create", str(tmp_path / "t.sqlite"), str(root),
                 "--samples-from", str(tmp_path / "typos.txt")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "none of the samples named is in DS: 'img99', 'imgX' (e.g. img1)" in err


def test_auto_reads_the_scores_eval_computed_from_its_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trial: `rank create --auto` after `eval` scored every map again into a cache of its
    own (10 s on 300 × 12). It now reads the store eval used for the dataset, as the window
    and the gallery do; `--cache FILE` names another; with neither, the study's own."""
    root = make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B", "C"), size=(24, 32))
    args = ["rank", "create", "STUDY", str(root), "--auto", "2", "--min-gap", "0"]

    def create(study: str, *extra: str) -> str:
        assert main([a if a != "STUDY" else str(tmp_path / study) for a in args] + [*extra]) == 0
        printed = capsys.readouterr()
        return printed.err + printed.out

    said = create("own.sqlite")  # nothing evaluated yet: a cache of the study's own
    assert f"Sm of 15 maps: 0 read from {tmp_path / 'own.cache.sqlite'}, 15 computed" in said
    out = tmp_path / "out"
    assert main(["eval", str(root), "--out", str(out), "--no-plots", "--measures", "Sm"]) == 0
    capsys.readouterr()
    said = create("after_eval.sqlite")
    assert f"Sm of 15 maps: 15 read from {out / 'cache.sqlite'}, 0 computed" in said
    assert not (tmp_path / "after_eval.cache.sqlite").exists()
    said = create("named.sqlite", "--cache", str(tmp_path / "other.sqlite"))
    assert f"Sm of 15 maps: 0 read from {tmp_path / 'other.sqlite'}, 15 computed" in said
