"""fminspect.api on the bundled demo data: each function returns (and, given ``out``, writes)
what its subcommand prints and writes for the same arguments."""

from __future__ import annotations

import csv
import inspect
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fminspect import api
from fminspect.cli import main
from fminspect.io.resources import resource
from fminspect.meta.outputs import protocol_caption
from fminspect.ranking.report import agreement_markdown, study_summary
from fminspect.ranking.store import StudyStore

DEMO = resource("demo")
PRED, GT, IMG = (
    DEMO / "Pred" / "RC" / "coffee.png",
    DEMO / "GT" / "coffee.png",
    DEMO / "Imgs" / "coffee.jpg",
)


def _cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _files(folder: Path) -> dict[str, bytes]:
    """Every output file's bytes, by relative path (not the result cache)."""
    return {
        str(f.relative_to(folder)): f.read_bytes()
        for f in sorted(folder.rglob("*"))
        if f.is_file() and not f.name.startswith("cache.sqlite")
    }


def test_every_function_is_documented_with_an_example() -> None:
    functions = [getattr(api, n) for n in api.__all__ if inspect.isfunction(getattr(api, n))]
    assert len(functions) == 13
    for f in functions:
        doc = inspect.getdoc(f) or ""
        assert "Examples\n--------\n>>> " in doc, f.__name__


@pytest.mark.slow
def test_importing_the_api_imports_no_qt() -> None:
    code = (
        "import sys, fminspect.api\n"
        "print(','.join(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'pyqtgraph', 'shiboken6') or m.startswith('fminspect.gui')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_score_pair_is_what_score_prints(capsys: pytest.CaptureFixture[str]) -> None:
    pair = api.score_pair(
        PRED, GT, image=IMG, params=api.Params(beta2=1.0, alpha=0.7), interpolation="nearest"
    )
    options = ["--beta2", "1", "--alpha", "0.7", "--interpolation", "nearest"]
    code, out, _ = _cli(capsys, "score", PRED, GT, "--img", IMG, "--json", *options)
    assert code == 0 and out == json.dumps(pair.as_json(), indent=2) + "\n"
    printed = json.loads(out)
    assert printed["scores"] == pair.scores() and "CCm" in printed["scores"]
    assert printed["labels"]["Sm"] == "Sm α=0.7" == pair.labels()["Sm"]
    assert pair.suite.smeasure is not None and pair.scores()["Sm"] == pair.suite.smeasure.score
    code, out, _ = _cli(capsys, "score", PRED, GT)
    assert code == 0 and out == api.score_pair(PRED, GT).table() + "\n"
    code, _, err = _cli(capsys, "score", DEMO / "missing.png", GT)
    with pytest.raises(api.LoadError) as exc:
        api.score_pair(DEMO / "missing.png", GT)
    assert exc.value.path == DEMO / "missing.png" and "file not found" in str(exc.value)
    # the command names the input's role too, and checks every input before reading any
    assert (
        code == 2 and err == f"fminspect score: the prediction {DEMO / 'missing.png'}: not found\n"
    )


def test_evaluate_dataset_returns_and_writes_what_eval_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    methods, measures = ["FT", "RC", "GTblur"], ["MAE", "Sm", "maxFm"]
    code, _, err = _cli(
        capsys,
        "eval",
        DEMO,
        "--out",
        tmp_path / "cli",
        "--methods",
        *methods,
        "--measures",
        *measures,
        "--no-plots",
        "--quiet",
    )
    report = api.evaluate_dataset(
        DEMO, out=tmp_path / "api", methods=methods, measures=measures, plots=False, progress=False
    )
    assert code == 0 and f"{report.evaluated} (image, method) pairs evaluated" in err
    assert report.evaluated == 30
    written = _files(tmp_path / "api")
    assert written == _files(tmp_path / "cli") and "per_image.csv" in written
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert report.summary() == summary and set(summary["demo"]) == set(methods)
    # without out: the same values, nothing written but the cache
    again = api.evaluate_dataset(
        DEMO, methods=methods, measures=measures, cache=tmp_path / "c.sqlite", progress=False
    )
    assert again.summary() == summary and {p.name for p in tmp_path.iterdir()} == {
        "cli",
        "api",
        "c.sqlite",
    }
    # the same refusals, typed
    code, _, err = _cli(capsys, "eval", DEMO, "--methods", "nobody", "--out", tmp_path / "x")
    with pytest.raises(api.SelectionError) as selection:
        api.evaluate_dataset(DEMO, methods=["nobody"])
    assert code == 2 and err == f"fminspect eval: {selection.value}\n"
    code, _, err = _cli(capsys, "eval", tmp_path / "absent", "--out", tmp_path / "x")
    with pytest.raises(api.SelectionError) as absent:  # a wrong path
        api.evaluate_dataset(tmp_path / "absent")
    assert code == 2 and err == f"fminspect eval: {absent.value}\n"
    assert str(absent.value) == f"{tmp_path / 'absent'}: no such folder"
    (tmp_path / "nothing").mkdir()  # a folder, but no dataset in it
    code, _, err = _cli(capsys, "eval", tmp_path / "nothing", "--out", tmp_path / "x")
    with pytest.raises(api.NoDatasetError) as nothing:
        api.evaluate_dataset(tmp_path / "nothing")
    assert code == 1 and err == "".join(f"{p}\n" for p in nothing.value.problems)


def test_evaluate_dataset_takes_eval_s_image_lists_and_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trial: the API lacked --images, --exclude-images, --subsets and --ci."""
    methods, measures = ["FT", "RC"], ["MAE", "Sm"]
    (tmp_path / "out.txt").write_text("coffee\nrocket\nnope\n")
    options = ["--methods", *methods, "--measures", *measures, "--no-plots", "--quiet"]
    code, _, err = _cli(
        capsys, "eval", DEMO, "--out", tmp_path / "cli", *options,
        "--exclude-images", tmp_path / "out.txt", "--ci", "--resamples", "200",
    )  # fmt: skip
    with pytest.warns(UserWarning, match="out.txt") as said:
        report = api.evaluate_dataset(
            DEMO, out=tmp_path / "api", methods=methods, measures=measures, plots=False,
            progress=False, exclude_images=tmp_path / "out.txt", ci=True, resamples=200,
        )  # fmt: skip
    assert code == 0
    lines = [str(w.message) for w in said]
    assert all(f"fminspect eval: {line}" in err for line in lines)
    assert f"1 name of {tmp_path / 'out.txt'} is in no dataset: nope" in lines
    for name in ("summary.json", "statistics.json"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert report.evaluated == 16 and report.statistics is not None  # 8 images × 2 methods


@pytest.mark.slow
def test_run_meta_returns_and_writes_what_meta_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    methods, measures, metas = ["FT", "RC", "SR"], ["MAE", "Sm"], ["generic", "gt_switch"]
    code, out, _ = _cli(
        capsys,
        "meta",
        DEMO,
        "--out",
        tmp_path / "cli",
        "--methods",
        *methods,
        "--measures",
        *measures,
        "--metas",
        *metas,
        "--seed",
        "4",
        "--good-min",
        "0.5",
        "--no-plots",
        "--quiet",
    )
    options = {"methods": methods, "measures": measures, "metas": metas, "progress": False}
    report = api.run_meta(DEMO, out=tmp_path / "api", plots=False, seed=4, good_min=0.5, **options)
    assert code == 0 and out == protocol_caption(report) + "\n"
    assert _files(tmp_path / "api") == _files(tmp_path / "cli")
    with open(tmp_path / "cli" / "summary.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(report.summary) > 0
    for row in rows:
        value = report.value(row["dataset"], row["meta"], row["statistic"], row["measure"])
        assert repr(value) == row["value"]
    # without out: the same summary
    again = api.run_meta(DEMO, cache=tmp_path / "c.sqlite", seed=4, good_min=0.5, **options)
    assert again.summary == report.summary and again.cases == report.cases
    code, _, err = _cli(capsys, "meta", DEMO, "--metas", "application")
    with pytest.raises(ValueError, match="needs an application") as exc:
        api.run_meta(DEMO, metas=["application"])
    assert code == 2 and err == f"fminspect meta: {exc.value}\n"


@pytest.mark.slow
def test_study_functions_do_what_the_rank_commands_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_study, api_study = tmp_path / "cli.sqlite", tmp_path / "api.sqlite"
    models = ["FT", "RC", "SR", "GTblur"]
    code, out, err = _cli(
        capsys,
        "rank",
        "create",
        cli_study,
        DEMO,
        "--models",
        *models,
        "--samples",
        "coffee",
        "rocket",
        "chelsea",
        "nothing",
        "--checks",
        "2",
        "--repeats",
        "2",
        "--seed",
        "3",
        "--name",
        "demo",
        "--ties",
    )
    created = api.create_study(
        api_study,
        DEMO,
        models=models,
        samples=["coffee", "rocket", "chelsea", "nothing"],
        checks=2,
        repeats=2,
        seed=3,
        name="demo",
        allow_ties=True,
    )
    # the command's stderr: the messages, and the progress of checking the files (a bar on
    # a terminal, a plain line here) that the API shows only when asked (progress=None)
    said = [line for line in err.splitlines() if not line.startswith("checking the study's")]
    assert code == 0 and said == list(created.messages)
    assert "checking the study's files: 18/18" in err
    assert created.messages == ("warning: no sample named 'nothing'; left out",)
    assert out.startswith(
        f"study {cli_study}: {created.groups} groups, {created.pairs} pairs, full design; "
        f"each participant sees {created.trials_per_participant} trials"
    )
    assert (created.groups, created.pairs, created.trials_per_participant) == (3, 18, 22)
    with StudyStore(cli_study) as store:
        made = store.design
    assert made.groups == created.design.groups and made.selection == created.design.selection
    assert [(c.id, c.kind, c.group) for c in made.checks] == [
        (c.id, c.kind, c.group) for c in created.design.checks
    ]
    code, _, err = _cli(capsys, "rank", "create", cli_study, DEMO)
    with pytest.raises(api.ArgumentError, match="already exists") as exists:
        api.create_study(cli_study, DEMO)
    assert code == 2 and err == f"fminspect rank: {exists.value}\n"

    # simulated participants vote alike in both studies (same design seed, same ids)
    code, out, _ = _cli(capsys, "rank", "simulate", cli_study, "--participants", "4", "--gap", "9")
    votes = api.simulate_votes(api_study, participants=4, gap=9)
    assert code == 0 and out == "".join(f"{p}: {n} simulated votes\n" for p, n in votes.items())
    assert list(votes) == ["sim-1", "sim-2", "sim-3", "sim-4"]

    code, out, _ = _cli(capsys, "rank", "aggregate", cli_study, "--out", tmp_path / "agg_cli")
    result = api.aggregate_study(api_study, out=tmp_path / "agg_api")
    assert code == 0 and out == study_summary(result) + "\n"
    assert len(result.consensual) == 3
    for name in ("participants.csv", "summary.md"):
        assert (tmp_path / "agg_api" / name).read_bytes() == (
            tmp_path / "agg_cli" / name
        ).read_bytes()

    code, out, _ = _cli(capsys, "rank", "export", cli_study, tmp_path / "ranked")
    result, folder = api.export_consensus(api_study, tmp_path / "ranked_api")
    assert code == 0 and out == (
        f"3 of 3 groups reached consensus ({result.rule}); human-ranked dataset written to "
        f"{tmp_path / 'ranked'}\n"
    )
    exported = {
        name: data for name, data in _files(tmp_path / "ranked").items() if "manifest" not in name
    }
    assert exported == {n: d for n, d in _files(folder).items() if "manifest" not in n}

    report_args = ["--measures", "MAE", "Sm"]
    ranked = tmp_path / "ranked"
    code, out, _ = _cli(capsys, "rank", "report", "--ranked", ranked, *report_args)
    report = api.human_agreement(ranked=ranked, measures=["MAE", "Sm"])
    assert code == 0 and out == agreement_markdown(report, "ranked") + "\n"
    code, out, _ = _cli(capsys, "rank", "report", cli_study, *report_args, "--out", tmp_path / "r1")
    report = api.human_agreement(api_study, measures=["MAE", "Sm"], out=tmp_path / "r2")
    assert code == 0 and out == agreement_markdown(report, "demo (unanimous)") + "\n"
    assert report.row("MAE").groups == 3
    assert _files(tmp_path / "r1") == _files(tmp_path / "r2")
    code, _, err = _cli(capsys, "rank", "report")
    with pytest.raises(api.ArgumentError) as neither:
        api.human_agreement()
    assert code == 2 and err == f"fminspect rank: {neither.value}\n"

    code, out, _ = _cli(capsys, "rank", "pack", cli_study, tmp_path / "cli.zip")
    pack = api.pack_study(api_study, tmp_path / "api.zip")
    assert code == 0 and out.startswith(f"study pack written to {tmp_path / 'cli.zip'};")
    with zipfile.ZipFile(pack) as a, zipfile.ZipFile(tmp_path / "cli.zip") as b:
        assert a.namelist() == b.namelist()

    code, out, _ = _cli(capsys, "rank", "export-results", cli_study, "--out", tmp_path / "res")
    written = api.export_results(api_study, out=tmp_path / "res_api")
    assert code == 0 and [Path(p).name for p in out.split()] == [p.name for p in written]
    # another study's results are refused by both, for the same reason
    code, out, err = _cli(capsys, "rank", "merge", cli_study, written[0])
    merged = api.merge_results(cli_study, [written[0]])
    assert code == 1 and out == "" and err == f"refused: {merged[0].refused}\n"
    assert merged[0].votes == 0 and "another study" in merged[0].refused
    merged = api.merge_results(api_study, [tmp_path / "res" / "results_sim-1.json"])
    assert "another study" in merged[0].refused
