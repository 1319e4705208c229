"""Batch evaluation: outputs, coverage flags, bad files, cache/resume, parallel identity, Dask,
and parity of dataset values with pysodmetrics' own accumulators."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from fminspect.batch import EvalConfig, evaluate_datasets
from fminspect.batch.outputs import PLOT_TAGS, write_all
from fminspect.batch.plots import PlotError, PlotProcess
from fminspect.batch.pool import LocalPool
from fminspect.batch.runner import families
from fminspect.cli import main
from fminspect.io.discovery import discover
from fminspect.metrics import DatasetAccumulator, Params, compute_suite, measure_keys, prepare_gt
from tests.datasets import make_dataset
from tests.processes import PATIENCE_S, wait_until_stored

CLASSIC = ("MAE", "Sm", "wFm", "adpEm", "meanEm", "maxEm", "adpFm", "meanFm", "maxFm")


def _run(root: Path, out: Path, **kw):  # type: ignore[no-untyped-def]
    datasets, _ = discover(root)
    config = kw.pop("config", EvalConfig(keys=CLASSIC))
    plotter = kw.pop("plotter", None)
    cache_path = kw.pop("cache_path", out / "cache.sqlite")
    report = evaluate_datasets(datasets, config, cache_path=cache_path, progress=False, **kw)
    write_all(report, out, plotter=plotter)
    return report


@pytest.mark.slow
def test_outputs_and_values(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=7, methods=("A", "B"), missing={"B": 2})
    report = _run(root, tmp_path / "out")
    out = tmp_path / "out"
    for name in (
        "summary.json",
        "results.json",
        "per_image.csv",
        "summary.csv",
        "summary.md",
        "summary.tex",
        "curves.csv",
        "problems.csv",
        "plots/DS_pr.png",
        "plots/DS_fm.pdf",
        "plots/DS_em.png",
    ):
        assert (out / name).exists(), name
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) == {"DS"} and set(summary["DS"]) == {"A", "B"}
    # dataset values are the accumulator over the same images, read the same way
    (ds,) = discover(root)[0]
    acc = DatasetAccumulator()
    for s in ds.samples:
        gt = cv2.imread(str(s.gt), cv2.IMREAD_GRAYSCALE)
        pred = cv2.imread(str(s.preds["A"]), cv2.IMREAD_GRAYSCALE)
        suite = compute_suite(pred, prepare_gt(gt), keys=CLASSIC)
        acc.add(s.name, suite.scores(), suite.curves())
    ours = acc.results()
    assert set(summary["DS"]["A"]) == set(CLASSIC)  # the default measures
    for k in CLASSIC:
        assert summary["DS"]["A"][k] == pytest.approx(ours[k], abs=1e-12), k
    # the ROC's curves are written with the others: the accumulator's image-averaged FPR
    fpr = [
        float(row[4])
        for row in csv.reader((out / "curves.csv").read_text().splitlines())
        if row[1:3] == ["A", "FPR"]
    ]
    assert fpr == pytest.approx(acc.mean_curves()["FPR"].tolist(), abs=1e-12)
    assert fpr[0] == pytest.approx(1.0) and len(fpr) == 256  # t = 0: every pixel foreground
    # incomplete coverage is flagged in every output
    assert "5/7 ⚠" in (out / "summary.md").read_text()
    assert "5/7 ⚠" in (out / "summary.csv").read_text()
    assert r"$^\dagger$" in (out / "summary.tex").read_text()
    results = json.loads((out / "results.json").read_text())
    assert results["datasets"]["DS"]["B"]["coverage"]["complete"] is False
    assert results["config"]["normalization"] == "GT>128, stretch"
    assert "maxFm β²=0.3" in (out / "summary.csv").read_text().splitlines()[0]
    assert len(results["input_digests_blake2b"]) == 7 + 7 + 5
    assert report.evaluated == 12


@pytest.mark.faults
def test_bad_files_become_problems_and_the_batch_goes_on(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A",))
    (root / "Pred" / "A" / "img2.png").write_bytes(b"garbage")
    small = cv2.resize(cv2.imread(str(root / "Pred" / "A" / "img3.png"), 0), (20, 10))
    cv2.imwrite(str(root / "Pred" / "A" / "img3.png"), small)
    report = _run(root, tmp_path / "out")
    assert report.evaluated == 3
    msgs = [(p.severity, p.name, p.message) for p in report.problems]
    assert any(s == "error" and n == "img2" and "not an image" in m for s, n, m in msgs)
    assert any(s == "warning" and n == "img3" and "resized from 20×10" in m for s, n, m in msgs)
    assert "resized" in (tmp_path / "out" / "per_image.csv").read_text()
    # the unreadable prediction is not silently left out of the averages: the coverage says so
    (result,) = report.results
    assert (result.coverage.label, result.coverage.failed) == ("3/4 ⚠", ["img2"])
    out = tmp_path / "out"
    assert "3/4 ⚠" in (out / "summary.csv").read_text()
    assert "| A | 3/4 ⚠ |" in (out / "summary.md").read_text()
    assert (
        "missing or unreadable: see problems.csv), so not ranked: A."
        in (out / "summary.md").read_text()
    )
    cov = json.loads((out / "results.json").read_text())["datasets"]["DS"]["A"]["coverage"]
    assert (cov["failed"], cov["complete"]) == (["img2"], False)
    tex_row = next(r for r in (out / "summary.tex").read_text().splitlines() if r.startswith("A &"))
    assert tex_row.count(r"$^\dagger$") == 1 + len(CLASSIC)  # its images column, its values


def test_a_method_evaluated_on_a_subset_is_not_ranked(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"))
    (root / "Pred" / "A" / "img2.png").unlink()
    _run(root, tmp_path / "out")
    md = (tmp_path / "out" / "summary.md").read_text()
    row = {line.split("|")[1].strip(): line for line in md.splitlines() if line.startswith("| ")}
    assert "**" not in row["A"] and "<u>" not in row["A"]  # 3/4 images: not comparable
    assert row["B"].count("**") == 2 * len(CLASSIC)  # the only method ranked: best everywhere
    assert "so not ranked: A." in md and "(among the methods evaluated on every image)" in md
    tex = (tmp_path / "out" / "summary.tex").read_text().splitlines()
    assert r"\textbf" not in next(r for r in tex if r.startswith("A &"))
    assert r"\textbf" in next(r for r in tex if r.startswith("B &"))


def test_a_measure_averaged_over_fewer_images_is_marked(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A", "B"), size=(64, 64))
    (root / "Imgs" / "img2.jpg").unlink()  # CCm cannot be computed for img2
    report = _run(root, tmp_path / "out", config=EvalConfig(keys=("MAE", "CCm")))
    assert report.results[0].counts == {"MAE": 3, "CCm": 2}
    out = tmp_path / "out"
    assert "CCm 2/3" in (out / "summary.csv").read_text()
    md = (out / "summary.md").read_text()
    assert "‡" in md and "A CCm (2 of 3)" in md
    assert "A CCm (2 of 3)" in (out / "summary.tex").read_text()
    # both methods average the same two images: they are ranked against each other
    values = {r.method: r.values["CCm"] for r in report.results}
    best = max(values, key=lambda m: values[m])
    row = next(line for line in md.splitlines() if line.startswith(f"| {best} |"))
    assert f"**{values[best]:.3f}** ‡" in row


@pytest.mark.slow
def test_cache_reuses_and_resumes(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B", "C"))
    out = tmp_path / "out"
    first = _run(root, out, methods=["A"])  # an "interrupted" run that did only A
    assert (first.computed, first.reused) == (5, 0)
    second = _run(root, out)
    assert (second.computed, second.reused) == (10, 5)
    third = _run(root, out)
    assert (third.computed, third.reused) == (0, 15)
    # a changed file is recomputed, nothing else
    p = root / "Pred" / "B" / "img3.png"
    cv2.imwrite(str(p), 255 - cv2.imread(str(p), 0))
    fourth = _run(root, out)
    assert (fourth.computed, fourth.reused) == (1, 14)
    # a changed parameter invalidates every record
    changed = _run(root, out, config=EvalConfig(keys=CLASSIC, interpolation="bicubic"))
    assert changed.computed == 15


def test_a_resuming_run_says_how_many_images_it_found_done(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Its progress lines count only the images left (22/123): a line first says why."""
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A",), size=(40, 40))
    cmd = ["eval", str(root), "--out", str(tmp_path / "out"), "--no-plots", "--measures", "MAE"]
    assert main(cmd) == 0
    assert "stored already" not in capsys.readouterr().err  # nothing was stored before
    for folder, ext in (("GT", ".png"), ("Imgs", ".jpg"), ("Pred/A", ".png")):  # one image more
        img1 = cv2.imread(str(root / folder / f"img1{ext}"))  # flipped: not img1's content
        cv2.imwrite(str(root / folder / f"img5{ext}"), img1[::-1].copy())
    assert main(cmd) == 0
    err = capsys.readouterr().err
    assert "4 of 5 images have every result stored already; evaluating the other 1" in err
    assert "evaluating: 1/1 (100.0%)" in err
    assert main([*cmd, "--quiet"]) == 0  # nothing left, and --quiet: no such line
    assert "stored already" not in capsys.readouterr().err


@pytest.mark.slow
def test_cache_is_kept_per_measure_family(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"))
    out = tmp_path / "out"
    full = _run(root, out, config=EvalConfig())  # every measure
    assert (full.computed, full.reused) == (8, 0)
    # fewer measures: all from the cache, the same numbers
    fewer = _run(root, out, config=EvalConfig(keys=("Sm", "maxFm", "CCm")))
    assert (fewer.computed, fewer.reused) == (0, 8)
    assert fewer.per_image[0]["Sm"] == full.per_image[0]["Sm"]
    assert fewer.per_image[0]["CCm"] == full.per_image[0]["CCm"]
    # another β²: the F-measure family is recomputed, the S-measure comes from the cache
    beta = _run(root, out, config=EvalConfig(Params(beta2=1.0), keys=("Sm", "maxFm")))
    assert beta.computed == 8
    fresh = _run(
        root, tmp_path / "fresh", config=EvalConfig(Params(beta2=1.0), keys=("Sm", "maxFm"))
    )
    assert beta.per_image == fresh.per_image  # a joined record equals one computed at once
    assert [r.values for r in beta.results] == [r.values for r in fresh.results]
    # the records of that run: only the F family was written
    with sqlite3.connect(out / "cache.sqlite") as db:
        n = db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    families_per_prediction = len(families(measure_keys()))
    assert n == 8 * families_per_prediction + 8  # one new record per prediction


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "cache.sqlite" and not p.name.startswith("cache.sqlite")
    }


@pytest.mark.slow
def test_outputs_are_byte_identical_for_any_number_of_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also whether the plots are drawn here or in a plotting process (as the CLI does)."""
    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B"))
    _run(root, tmp_path / "serial", jobs=1)
    with PlotProcess() as plotter:
        _run(root, tmp_path / "two", jobs=2, pool=LocalPool(2), plotter=plotter)
    # the command line's pool: workers forked from a server that imported the measures
    # (pytest's main, `python -m pytest` or pip's guarded `pytest` script, may run again)
    monkeypatch.setattr("fminspect.batch.pool._main_reimport_is_harmless", lambda: True)
    pool = LocalPool(2, preload=True)
    try:
        assert pool.preloaded == sys.platform.startswith("linux")
        _run(root, tmp_path / "forked", jobs=2, pool=pool)
    finally:
        pool.close()
    a = _files(tmp_path / "serial")
    assert len(a) > 10 and sum(name.endswith((".png", ".pdf")) for name in a) == 8  # PR ROC F E
    for other in ("two", "forked"):
        b = _files(tmp_path / other)
        assert a.keys() == b.keys()
        for name in a:
            assert a[name] == b[name], (other, name)


def test_the_forkserver_pool_is_kept_from_scripts_that_may_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    from fminspect.batch import pool as pool_module

    script = types.ModuleType("__main__")
    script.__file__ = str(tmp_path / "my_eval.py")  # may lack an `if __name__` guard
    monkeypatch.setitem(sys.modules, "__main__", script)
    assert not pool_module._main_reimport_is_harmless()
    assert not pool_module._forkserver_usable()  # LocalPool(preload=True) takes loky's pool
    script.__file__ = str(tmp_path / "bin" / "fminspect")  # pip's guarded entry point
    assert pool_module._main_reimport_is_harmless()
    del script.__file__  # an interactive session or notebook
    assert pool_module._main_reimport_is_harmless()


@pytest.mark.slow
def test_outputs_from_the_store_equal_those_just_computed(tmp_path: Path) -> None:
    """A run that computes its records and a run that reads them all from the store assemble
    the dataset values from the store in the same order: the same bytes."""
    root = make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B"))
    cache = tmp_path / "cache.sqlite"
    config = EvalConfig(keys=(*CLASSIC, "relaxFm", "adpMSIoU"))
    fresh = _run(root, tmp_path / "fresh", config=config, cache_path=cache)
    cached = _run(root, tmp_path / "cached", config=config, cache_path=cache)
    assert (fresh.computed, fresh.reused, cached.computed, cached.reused) == (10, 0, 0, 10)
    a, b = (_files(tmp_path / d) for d in ("fresh", "cached"))
    assert a.keys() == b.keys() and len(a) > 10
    for name in a:
        assert a[name] == b[name], name


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_output(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"))
    _run(root, tmp_path / "serial")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        report = _run(root, tmp_path / "dask", scheduler=cluster.scheduler_address)
    assert report.computed == 8
    a, b = _files(tmp_path / "serial"), _files(tmp_path / "dask")
    # results.json says where it was computed; everything else is byte-identical
    ra, rb = (json.loads(x.pop("results.json")) for x in (a, b))
    assert (
        "cluster" not in ra and sum(w["images"] for w in rb.pop("cluster")["workers"].values()) == 4
    )
    assert a == b and ra == rb


def test_a_gt_saved_as_0_1_gets_a_hint(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=2, methods=("A",))
    gt = cv2.imread(str(root / "GT" / "img1.png"), cv2.IMREAD_GRAYSCALE)
    cv2.imwrite(str(root / "GT" / "img1.png"), (gt > 128).astype(np.uint8))  # 0/1, not 0/255
    report = _run(root, tmp_path / "out", config=EvalConfig(keys=("MAE",)))
    (p,) = [p for p in report.problems if p.name == "img1"]
    assert p.severity == "warning" and p.path == root / "GT" / "img1.png"
    assert "largest value is 1" in p.message and "0/1 mask" in p.message


@pytest.mark.slow
def test_piping_into_a_reader_that_stops_is_not_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = make_dataset(tmp_path / "DS", n_images=1, methods=("A",))
    fmi = Path(sys.executable).with_name("fminspect")
    proc = subprocess.Popen(
        [str(fmi), "score", str(root / "Pred" / "A" / "img1.png"), str(root / "GT" / "img1.png")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # like `| head -0`: nobody reads what it prints
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(PATIENCE_S) == 141 and "Traceback" not in err, err


@pytest.mark.slow
def test_cli_eval_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A", "B"), missing={"B": 1})
    rc = main(
        [
            "eval",
            str(root),
            "--out",
            str(tmp_path / "o"),
            "--measures",
            "MAE",
            "maxFm",
            "--quiet",
            "--no-plots",
        ]
    )
    assert rc == 0
    err = capsys.readouterr().err
    # --quiet: only the method with a missing map is listed, loudly
    assert "DS/B" in err and "2/3 matched  ⚠ 1 missing" in err and "DS/A" not in err
    assert "5 (image, method) pairs evaluated" in err
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["DS"]["A"].keys() == {
        "MAE",
        "maxFm",
    }
    main(["eval", str(root), "--out", str(tmp_path / "o"), "--measures", "MAE", "--no-plots"])
    err = capsys.readouterr().err
    assert "A" in err and "3/3 matched" in err  # without --quiet, every method
    assert main(["eval", str(tmp_path / "nothing"), "--out", str(tmp_path / "o2"), "--quiet"]) == 2
    (tmp_path / "empty").mkdir()  # a folder, but no dataset in it: an input not usable
    assert main(["eval", str(tmp_path / "empty"), "--out", str(tmp_path / "o2"), "--quiet"]) == 1
    assert main(["eval", str(root), "--measures", "maxF", "--out", str(tmp_path / "o3")]) == 2
    # two workers started before the measures are imported, plots drawn by the plotting
    # process: the same files as the serial run with in-process plots
    args = ["eval", str(root), "--measures", "MAE", "maxFm", "maxEm", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "o4"), "--jobs", "2"]) == 0
    _run(root, tmp_path / "o5", config=EvalConfig(keys=("MAE", "maxFm", "maxEm")))
    a, b = _files(tmp_path / "o4"), _files(tmp_path / "o5")
    assert sorted(n for n in a if n.startswith("plots")) == [
        f"plots/DS_{tag}.{ext}" for tag in ("em", "fm", "pr", "roc") for ext in ("pdf", "png")
    ]
    assert a == b


def test_ccm_uses_images_and_the_camouflage_degree_once_per_image(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A", "B"), size=(64, 64))
    report = _run(root, tmp_path / "out", config=EvalConfig(keys=("Cm", "CCm")))
    vals = report.summary()["DS"]["A"]
    assert set(vals) == {"Cm", "CCm"} and 0 <= vals["CCm"] <= 1


@pytest.mark.slow
@pytest.mark.reference
def test_dataset_values_equal_pysodmetrics_accumulators_on_files(tmp_path: Path, pysod) -> None:  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=12, methods=("A",), size=(80, 96), seed=3)
    report = _run(root, tmp_path / "out", config=EvalConfig())
    (ds,) = discover(root)[0]
    cases = [
        {
            "pred": cv2.imread(str(s.preds["A"]), 0),
            "gt": cv2.imread(str(s.gt), 0),
            "normalize": True,
        }
        for s in ds.samples
    ]
    ref = pysod(cases, {"mode": "dataset", "cases": [{"normalize": True}] * len(cases)})["dataset"]
    ours = report.summary()["DS"]["A"]
    for key, value in ref.items():
        if not key.startswith("curve_") and key != "handlers":
            assert ours[key] == pytest.approx(value, abs=1e-10), key


@pytest.mark.faults
@pytest.mark.slow
def test_plot_process_raises_the_rendering_error(tmp_path: Path) -> None:
    import numpy as np

    from fminspect.batch.plots import Figure, Line

    fig = Figure("x", "t", "a", "b", (0, 1), (0, 1), (Line("m", np.arange(3.0), np.ones(3)),))
    blocker = tmp_path / "plots"
    blocker.write_text("a file where the plots folder should go")
    with PlotProcess() as plotter, pytest.raises(PlotError, match="FileExistsError"):
        plotter.render([fig], blocker)
    # a run that fails before plotting stops the child at once
    plotter = PlotProcess()
    child = plotter._proc
    with pytest.raises(ZeroDivisionError), plotter:
        raise ZeroDivisionError
    assert child is not None and child.poll() is not None
    with PlotProcess() as plotter:
        plotter.render([fig], tmp_path / "ok")
    assert (tmp_path / "ok" / "x.png").stat().st_size > 0
    assert (tmp_path / "ok" / "x.pdf").stat().st_size > 0


@pytest.mark.faults
def test_cli_eval_reports_failed_plots_and_keeps_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(self):  # type: ignore[no-untyped-def]
        raise PlotError("the plotting process failed: ImportError: no matplotlib")

    # the child is given the figures, but says it failed when asked for the result
    monkeypatch.setattr(PlotProcess, "start", lambda self, figures, folder: None)
    monkeypatch.setattr(PlotProcess, "finish", fail)
    root = make_dataset(tmp_path / "DS", n_images=2, methods=("A",))
    out = tmp_path / "o"
    args = ["eval", str(root), "--out", str(out), "--measures", "MAE", "maxFm", "--quiet"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "not every plot was written: the plotting process failed: ImportError" in err
    assert "2 (image, method) pairs evaluated" in err
    assert (out / "summary.json").exists() and not (out / "plots").exists()


@pytest.mark.slow
def test_plots_follow_the_measures_and_old_plots_do_not_linger(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=2, methods=("A",))
    out = tmp_path / "out"
    (out / "plots").mkdir(parents=True)
    (out / "plots" / "notes.txt").write_text("a file of the user's")
    _run(root, out)
    names = sorted(p.name for p in (out / "plots").iterdir())
    plots = ("em", "fm", "pr", "roc")  # the ROC comes with the sweep counts
    assert names == [f"DS_{t}.{e}" for t in plots for e in ("pdf", "png")] + ["notes.txt"]
    _run(root, out, config=EvalConfig(keys=("meanEm",)))  # E curve and the ROC's only
    assert sorted(p.name for p in (out / "plots").iterdir()) == [
        "DS_em.pdf",
        "DS_em.png",
        "DS_roc.pdf",
        "DS_roc.png",
        "notes.txt",
    ]
    (out / "plots" / "notes.txt").unlink()
    _run(root, out, config=EvalConfig(keys=("maxFm", "meanEm", "maxIoU", "maxDice")))
    every = sorted(p.name for p in (out / "plots").iterdir())
    assert every == sorted(f"DS_{t}.{e}" for t in PLOT_TAGS for e in ("pdf", "png"))
    _run(root, out, config=EvalConfig(keys=("MAE", "Sm")))  # no curve: no plots folder
    assert not (out / "plots").exists()


@pytest.mark.faults
@pytest.mark.slow
def test_conversions_are_reported_and_a_bad_gt_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B"))
    for i in range(1, 5):  # four RGBA predictions of A
        path = root / "Pred" / "A" / f"img{i}.png"
        grey = cv2.imread(str(path), 0)
        cv2.imwrite(str(path), np.dstack([grey, grey, grey, np.full_like(grey, 255)]))
    (root / "GT" / "img5.png").write_bytes(b"not a png")
    out = tmp_path / "o"
    # exit 1: the unreadable GT is an input that could not be used (README, exit statuses)
    assert main(["eval", str(root), "--out", str(out), "--measures", "MAE", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("RGBA: alpha channel ignored (fully opaque)") == 4  # 3 shown + summary
    assert "… and 1 more warnings like “RGBA: alpha channel ignored (fully opaque)” (A)" in err
    problems = (out / "problems.csv").read_text()
    assert problems.count("RGBA: alpha channel ignored") == 4
    gt_errors = [line for line in problems.splitlines() if "img5.png" in line]
    assert len(gt_errors) == 1 and "2 predictions not evaluated" in gt_errors[0]
    assert "prediction: RGBA" in (out / "per_image.csv").read_text()
    # a rerun answered from the cache reports the same conversions
    assert main(["eval", str(root), "--out", str(out), "--measures", "MAE", "--quiet"]) == 1
    assert "0 computed" in capsys.readouterr().err
    assert (out / "problems.csv").read_text() == problems


@pytest.mark.faults
def test_file_digests_on_threads_name_unreadable_files(tmp_path: Path) -> None:
    from fminspect.pipeline.store import ResultStore as ResultCache
    from fminspect.pipeline.store import file_digest

    files = []
    for i in range(6):
        f = tmp_path / f"f{i}.bin"
        f.write_bytes(bytes([i]) * (5000 + i))
        files.append(f)
    missing, folder = tmp_path / "missing.png", tmp_path / "a_folder.png"
    folder.mkdir()
    with ResultCache(tmp_path / "c.sqlite") as cache:
        got = cache.digests([*files, missing, folder, files[0]], threads=2)
        assert [got[f] for f in files] == [file_digest(f) for f in files]
        assert isinstance(got[missing], FileNotFoundError)
        assert isinstance(got[folder], OSError)
        # remembered: an unchanged file is not hashed again, and agrees with digest()
        assert cache.digests(files, threads=1) == {f: got[f] for f in files}
        assert cache.digest(files[3]) == got[files[3]]


@pytest.mark.faults
@pytest.mark.parametrize("which", ["GT", "image"])
def test_an_unreadable_gt_or_image_is_named_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    from fminspect.pipeline import store as cache_module

    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A",), size=(64, 64))
    folder = root / ("GT" if which == "GT" else "Imgs")
    (bad,) = [p for p in folder.iterdir() if p.stem == "img1"]
    real = cache_module.file_digest

    def failing(path: Path) -> str:  # as root, file permissions cannot make it unreadable
        if Path(path) == bad:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(cache_module, "file_digest", failing)
    report = _run(root, tmp_path / "out", config=EvalConfig(keys=("MAE", "CCm")))
    assert report.evaluated == 2
    (problem,) = [p for p in report.problems if p.name == "img1" and p.severity == "error"]
    assert Path(problem.path) == bad and "cannot be read" in problem.message
    assert "Permission denied" in problem.message


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_two_plot_processes_share_the_files_out_evenly(n: int) -> None:
    from fminspect.batch.plots import Figure, _formats

    figs = [Figure(f"f{k}", "", "", "", (0, 1), (0, 1), ()) for k in range(n)]
    halves = [_formats(figs, part, 2) for part in (0, 1)]
    files = [(k, fmt) for half in halves for k, fmts in enumerate(half) for fmt in fmts]
    assert sorted(files) == sorted((k, fmt) for k in range(n) for fmt in ("pdf", "png"))
    assert len(files) == len(set(files))
    assert [sum(len(f) for f in half) for half in halves] == [n, n]
    # with PNG and PDF alternating first, each half draws about as many PNGs (the slower)
    pngs = [sum("png" in f for f in half) for half in halves]
    assert abs(pngs[0] - pngs[1]) <= 1
    assert _formats(figs, 0, 1) == [
        ("png", "pdf") if k % 2 == 0 else ("pdf", "png") for k in range(n)
    ]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the plots fork on Linux only")
def test_a_failing_forked_plot_half_is_reported(tmp_path: Path) -> None:
    # in a child Python (forking the test process, which may hold Qt threads, is not safe):
    # the forked half fails, the other half's files are written, and the caller hears of it
    script = f"""
import fminspect.batch.plots as P
real = P.render
def render(figures, folder, *, part=0, parts=1):
    if part == 1:
        raise OSError("disk full (simulated)")
    real(figures, folder, part=part, parts=parts)
P.render = render
line = P.Line("m", P.np.array([0.0, 1.0]), P.np.array([0.0, 1.0]))
fig = P.Figure("x", "t", "a", "b", (0, 1), (0, 1), (line,))
try:
    P.render_in_two([fig], {str(tmp_path)!r})
except RuntimeError as exc:
    print("raised:", exc)
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    # the copy's own error is in the message the command line shows, not only in its log
    assert "raised: the forked plotting process failed: OSError: disk full (simulated)" in (
        proc.stdout
    )
    assert "Traceback" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.png"]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the forkserver pool")
def test_closing_the_forkserver_pool_while_workers_send_results_does_not_hang() -> None:
    # killing a worker half-way through sending a result used to leave the pool's thread
    # waiting for the rest, and the process hung at exit: close() now lets them finish
    script = """
import time
from fminspect.batch.pool import LocalPool
pool = LocalPool(2, preload=True)
assert pool.preloaded
pool.ready()
futures = [pool.executor.submit(bytes, 80_000_000) for _ in range(4)]  # 80 MB results
time.sleep(0.15)
pool.close()
print("closed")
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=PATIENCE_S
    )
    assert proc.returncode == 0, proc.stderr
    assert "closed" in proc.stdout


@pytest.mark.faults
@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals to a process group")
def test_ctrl_c_stops_eval_jobs_2_and_a_rerun_resumes(tmp_path: Path) -> None:
    import signal

    root = make_dataset(tmp_path / "DS", n_images=120, size=(160, 160), methods=("A", "B"))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "fminspect", "eval", str(root), "--out", str(out)]
    cmd += ["--jobs", "2", "--quiet", "--no-plots", "--measures", "MAE", "Sm", "wFm", "maxEm"]
    # as Ctrl-C in a terminal: SIGINT to the command's whole process group, once some
    # results are in the cache
    proc = subprocess.Popen(cmd, start_new_session=True, stderr=subprocess.PIPE, text=True)
    if not wait_until_stored(out / "cache.sqlite", proc):
        pytest.skip("the run ended before it could be interrupted")
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=PATIENCE_S)  # it used to be able to hang here
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("fminspect eval --jobs 2 did not stop after Ctrl-C")
    # one line saying what was kept where (no traceback), and the documented exit status;
    # before it, the warnings of the images scored so far (how many depends on when the
    # interrupt came: one of these GTs is empty)
    assert proc.returncode == 130 and "Traceback" not in err, err
    *warnings, line = err.splitlines()
    assert all(w.startswith("warning: [DS/") for w in warnings), err
    assert line.startswith("fminspect eval: interrupted: ") and line.endswith(
        f"of 120 images were done and their results are kept in {out / 'cache.sqlite'}; "
        "rerun the same command to resume"
    ), line
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=PATIENCE_S)
    assert rerun.returncode == 0, rerun.stderr
    assert "240 (image, method) pairs evaluated" in rerun.stderr
    assert " 0 wholly from the cache" not in rerun.stderr  # the first run's results were kept


@pytest.mark.faults
@pytest.mark.slow
def test_eval_jobs_2_from_a_folder_holding_a_fminspect_folder(tmp_path: Path) -> None:
    """A folder named ``fminspect`` in the current folder (a checkout's parent, a results
    folder named after the tool) must not be imported by the workers instead of the package."""
    make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"))
    (tmp_path / "fminspect").mkdir()
    (tmp_path / "fminspect" / "__init__.py").write_text("raise ImportError('the wrong one')\n")
    # the installed command, as a user runs it (``python -m`` would itself import the folder)
    command = Path(sys.executable).parent / "fminspect"
    cmd = [str(command), "eval", "DS", "--out", "out", "--jobs", "2", "--quiet", "--no-plots"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    done = subprocess.run(
        cmd, cwd=tmp_path, capture_output=True, text=True, timeout=PATIENCE_S, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "8 (image, method) pairs evaluated: 8 computed" in done.stderr
    assert "started one by one" not in done.stderr  # the preloaded pool worked


@pytest.mark.faults
@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the plots fork on Linux only")
def test_a_plot_process_stopped_while_drawing_takes_its_forked_half_with_it(
    tmp_path: Path,
) -> None:
    import time

    from fminspect.batch.plots import Figure, Line

    x = np.linspace(0, 1, 256)
    lines = tuple(Line(f"m{i}", x, x**i) for i in range(5))
    # 400 files: far more than a fast machine draws in the 5 s close() waits
    figs = [Figure(f"f{k:03d}", "t", "x", "y", (0, 1), (0, 1), lines) for k in range(200)]
    plotter = PlotProcess()
    plotter.start(figs, tmp_path)
    # drawing, by condition: on a busy machine the first file can take longer than the 5 s
    # close() waits
    end = time.monotonic() + PATIENCE_S
    while not any(tmp_path.iterdir()) and time.monotonic() < end:
        time.sleep(0.01)
    plotter.close()  # the process is killed before it has drawn them all
    before = sorted(tmp_path.iterdir())
    assert 0 < len(before) < 400
    time.sleep(1.5)
    assert sorted(tmp_path.iterdir()) == before  # no orphaned copy goes on writing


@pytest.mark.slow
def test_a_forkserver_that_cannot_start_falls_back_to_loky(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fminspect.batch import pool as pool_module

    def refuse(jobs: int, modules: tuple[str, ...], nice: int = 0) -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(pool_module, "_forkserver_usable", lambda: True)
    monkeypatch.setattr(pool_module, "_forkserver_executor", refuse)
    pool = LocalPool(2, preload=True)
    try:
        pool.ready()
        assert not pool.preloaded
        assert "could not be forked from a preloaded server" in pool.fallback
        assert "Connection refused" in pool.fallback
        assert pool.executor.submit(abs, -3).result() == 3
    finally:
        pool.close()


def test_the_beta2_note_reads_family_names_and_groups() -> None:
    from fminspect.batch.workflow import unused_beta2
    from fminspect.metrics import Params

    beta1 = Params.from_kwargs(beta2=1.0)
    # asked for through a word that includes F: no note
    for words in (("all",), ("default",), ("fmeasure",), ("maxFm",)):
        assert unused_beta2(EvalConfig(params=beta1, keys=words)) == (), words
    # nothing β² changes: the note names what it would change
    noted = unused_beta2(EvalConfig(params=beta1, keys=("MAE", "smeasure")))
    assert "maxFm" in noted and "Sm" not in noted


@pytest.mark.slow
def test_eval_ci_with_no_method_on_every_image_writes_intervals_only(tmp_path: Path) -> None:
    """An unreadable GT leaves every method without that image: nothing is paired, and
    eval --ci says so rather than stopping with a traceback (it did)."""
    from fminspect.batch.significance import Setup

    root = make_dataset(tmp_path / "DS", n_images=8, methods=("A", "B"))
    (root / "GT" / "img_3.png").write_text("not an image")
    _run(root, tmp_path / "out", significance=Setup(resamples=100, seed=1))
    stats = json.loads((tmp_path / "out" / "statistics.json").read_text())["datasets"]["DS"]
    assert stats["setup"]["tested_methods"] == []
    for key in CLASSIC:
        ks = stats["keys"][key]
        assert set(ks["intervals"]) == {"A", "B"} and ks["pairs"] == [] and ks["groups"] == {}


@pytest.mark.slow
def test_eval_ci_writes_intervals_tests_and_groups_from_the_stored_records(
    tmp_path: Path,
) -> None:
    from fminspect.batch.significance import Setup, percentile_interval, resampling_weights

    root = make_dataset(tmp_path / "DS", n_images=12, methods=("A", "B", "C"), missing={"C": 3})
    setup = Setup(resamples=300, seed=4)
    report = _run(root, tmp_path / "out", significance=setup)
    out = tmp_path / "out"
    stats = json.loads((out / "statistics.json").read_text())["datasets"]["DS"]
    assert stats["setup"]["images"] == 12 and stats["setup"]["resamples"] == 300
    assert stats["setup"]["tested_methods"] == ["A", "B"]  # C lacks 3 maps: not paired
    values = report.summary()["DS"]
    for key in CLASSIC:
        ks = stats["keys"][key]
        assert set(ks["intervals"]) == {"A", "B", "C"}
        assert [(p["a"], p["b"]) for p in ks["pairs"]] == [("A", "B")]
        assert set(ks["groups"]) == {"A", "B"}
    # the interval of a mean key is the percentile interval of the weighted means, by hand
    rows = [r for r in report.per_image if r["method"] == "A"]
    sm = np.array([r["Sm"] for r in rows])
    w = resampling_weights(12, 300, 4)
    low, high = percentile_interval(w @ sm / 12, 0.95)
    assert stats["keys"]["Sm"]["intervals"]["A"] == pytest.approx([low, high], abs=1e-12)
    assert low <= values["A"]["Sm"] <= high
    # and a curve key's interval holds its dataset value (max of the mean F curve)
    lo, hi = stats["keys"]["maxFm"]["intervals"]["B"]
    assert lo <= values["B"]["maxFm"] <= hi
    with (out / "significance.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(CLASSIC) and {r["method a"] for r in table} == {"A"}
    # a run without --ci removes the statistics of the earlier one
    _run(root, out)
    assert not (out / "statistics.json").exists() and not (out / "significance.csv").exists()
