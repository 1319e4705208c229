"""The dataset view's jobs: intervals and tests, and compare — in the window, as the CLI."""

from __future__ import annotations

import csv
import html
import json
import threading
from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui

from fminspect.batch.compare import render
from fminspect.batch.significance import Setup, spread_text
from fminspect.batch.tasks import TaskStopped, run_task
from fminspect.cli import main
from fminspect.gui.panels.dataset_view import p_text
from fminspect.io.discovery import discover
from fminspect.pipeline.config import EvalConfig
from tests.datasets import make_dataset
from tests.gui.conftest import deliver_posted, settle, wait_for


def _open_scored(qtbot, window, tmp_path: Path) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """A dataset evaluated by ``eval --ci`` and then opened in the window."""
    root = make_dataset(tmp_path / "DS", n_images=12, methods=("A", "B", "C"), size=(40, 50))
    out = tmp_path / "results"
    assert main(["eval", str(root), "--out", str(out), "--quiet", "--no-plots", "--ci"]) == 0
    window.open_path(root)
    settle(qtbot, window)
    window.tabs.setCurrentWidget(window.dataset_view)
    wait_for(qtbot, lambda: window.dataset_view.stats_button.isEnabled())
    return root, out


@pytest.mark.slow
def test_intervals_and_tests_are_eval_ci_s_and_shown_in_the_table_and_the_pair(
    qtbot, window, tmp_path
):  # type: ignore[no-untyped-def]
    _, out = _open_scored(qtbot, window, tmp_path)
    view = window.dataset_view
    assert not view.model.stats and "±" not in view.model.data(view.model.index(0, 1))
    qtbot.mouseClick(view.stats_button, QtCore.Qt.MouseButton.LeftButton)
    assert view.stop_button.isVisibleTo(view)  # a job under way can be stopped
    wait_for(qtbot, lambda: bool(view.model.stats))
    cli = json.loads((out / "statistics.json").read_text())["datasets"]["DS"]
    got = json.loads(json.dumps(view.model.stats["DS"]))  # (tuples as lists, as written)
    assert got["setup"] == cli["setup"]  # the same method, B, seed and n
    assert set(got["keys"]) == set(cli["keys"])
    for key, st in got["keys"].items():  # intervals, pairs and groups, exactly (NaN p too)
        assert json.dumps(st, sort_keys=True) == json.dumps(cli["keys"][key], sort_keys=True)
    # the cells: value ± half width and the group letters; tips name the method and n
    col = view.model.columns.index(("DS", "Sm"))
    row = view.model.methods.index("A")
    lo, hi = cli["keys"]["Sm"]["intervals"]["A"]
    text = view.model.data(view.model.index(row, col))
    value = next(r for r in window.model.scores.results["DS"] if r.method == "A").values["Sm"]
    assert f"{value:.4f} {spread_text(value, (lo, hi), 4)}" in text
    assert text.endswith(cli["keys"]["Sm"]["groups"]["A"])
    tip = view.model.data(view.model.index(row, col), QtCore.Qt.ItemDataRole.ToolTipRole)
    assert "percentile bootstrap" in tip and "n = 12 images" in tip and "B = 1000" in tip
    assert not view.stop_button.isVisibleTo(view)
    assert "Holm" in view.task_note.text()
    # every cell fits its column, the best (bold) ones too, and still when the table is
    # drawn again (refresh sized the columns by their titles alone)
    view.refresh()
    header = view.table.horizontalHeader()
    for c in range(view.model.columnCount()):
        for r in range(view.model.rowCount()):
            index = view.proxy.index(r, c)
            font = index.data(QtCore.Qt.ItemDataRole.FontRole) or view.table.font()
            need = QtGui.QFontMetrics(font).horizontalAdvance(str(index.data()))
            assert header.sectionSize(c) >= need + 6, (c, r, index.data())
    # the pair: the test of its dataset value
    view.set_pair("A", "B", "Sm", "DS")
    pair = next(p for p in cli["keys"]["Sm"]["pairs"] if {p["a"], p["b"]} == {"A", "B"})
    summary = view.pair_summary.text()
    assert f"Holm-adjusted {html.escape(p_text(pair['p_holm']))}" in summary  # rich text
    assert ("not significantly different" in summary) != pair["significant"]
    # CSV: both ends of every interval and the group
    rows = list(csv.DictReader(view.model.to_csv().splitlines()))
    a = next(r for r in rows if r["method"] == "A")
    assert (float(a["Sm low"]), float(a["Sm high"])) == (lo, hi)
    assert a["Sm group"] == cli["keys"]["Sm"]["groups"]["A"]
    # other parameters: the values and their statistics are gone
    window.params.beta2.setValue(0.5)
    wait_for(qtbot, lambda: not view.model.stats)
    settle(qtbot, window)


@pytest.mark.slow
def test_compare_in_the_window_reports_what_the_command_reports(qtbot, window, tmp_path):  # type: ignore[no-untyped-def]
    root, out = _open_scored(qtbot, window, tmp_path)
    summary = json.loads((out / "summary.json").read_text())["DS"]
    table = tmp_path / "paper.csv"
    table.write_text(
        "method,Sm,MAE\n"
        f"A,{summary['A']['Sm']:.3f},{summary['A']['MAE']:.3f}\n"
        f"B,{summary['B']['Sm'] + 0.2:.3f},{summary['B']['MAE']:.3f}\n"  # no convention
    )
    view = window.dataset_view
    view.compare_requested.emit(table)
    wait_for(qtbot, lambda: window.compare_dialog is not None)
    dialog = window.compare_dialog
    assert dialog.objectName() == "compareDialog"
    verdicts = {
        (dialog.table.item(i, 1).text(), dialog.table.item(i, 2).text()): dialog.table.item(
            i, 6
        ).text()
        for i in range(dialog.table.rowCount())
    }
    assert verdicts[("A", "Sm")] == verdicts[("A", "MAE")] == verdicts[("B", "MAE")] == "agrees"
    assert verdicts[("B", "Sm")].startswith("unexplained")
    assert "1 unexplained" in view.task_note.text()
    # the saved report is the command's, for the same table
    saved = dialog.save(tmp_path / "report.csv")
    assert saved.read_bytes() == render(dialog.comparison, "csv").encode()
    cli_report = tmp_path / "cli.csv"
    assert (
        main(
            [
                "compare",
                str(root),
                str(table),
                "--format",
                "csv",
                "--out",
                str(cli_report),
                "--cache",
                str(tmp_path / "compare.sqlite"),
                "--ci",  # the window tests as its controls say: B = 1000, paired bootstrap
            ]
        )
        == 0
    )
    assert cli_report.read_bytes() == saved.read_bytes()
    assert "our interval" in verdicts[("B", "Sm")]  # theirs against our interval
    dialog.close()


@pytest.mark.slow
def test_a_wrong_table_is_said_in_the_view_not_raised(qtbot, window, tmp_path):  # type: ignore[no-untyped-def]
    _open_scored(qtbot, window, tmp_path)
    bad = tmp_path / "paper.csv"
    bad.write_text("nothing,here\n1,2\n")
    view = window.dataset_view
    view.compare_requested.emit(bad)
    wait_for(qtbot, lambda: view.task_note.text().startswith("compare:"))
    assert "paper.csv" in view.task_note.text()
    assert window.compare_dialog is None and not view.stop_button.isVisibleTo(view)


@pytest.mark.parametrize("kind", ["statistics", "compare"])
def test_a_stopped_job_raises_task_stopped_before_its_next_step(tmp_path, kind) -> None:  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=10, methods=("A", "B"), size=(30, 30))
    store = tmp_path / "store.sqlite"
    out = ["--out", str(tmp_path / "out"), "--cache", str(store), "--quiet", "--no-plots"]
    assert main(["eval", str(root), *out]) == 0
    (ds,), _ = discover(root)
    stop = threading.Event()
    stop.set()
    if kind == "statistics":
        args: tuple[object, ...] = ([(ds, store)], EvalConfig(), Setup())
    else:
        table = tmp_path / "paper.csv"
        table.write_text("method,Sm\nA,0.5\n")
        args = ([ds], table, EvalConfig().params, "bilinear", store)
    with pytest.raises(TaskStopped):
        run_task(kind, args, {}, stop=stop)


@pytest.mark.slow
def test_a_job_of_values_no_longer_shown_never_reaches_the_view(qtbot, window, tmp_path):  # type: ignore[no-untyped-def]
    """Intervals asked for, then another folder with the same dataset and method names
    opened at once: whatever the old job gives (a result, or "stopped") is dropped."""
    _open_scored(qtbot, window, tmp_path)
    view = window.dataset_view
    window.model.scores.ask_statistics(Setup(resamples=5000))
    old = window.model.scores.task_id
    assert old is not None
    other = make_dataset(tmp_path / "other" / "DS", n_images=12, methods=("A", "B", "C"), seed=5)
    window.open_path(other)
    assert window.model.scores.task_id is None and not view.stop_button.isVisibleTo(view)
    wait_for(qtbot, lambda: not window.model.service.task_running)  # it answered
    deliver_posted()
    assert not view.model.stats and view.task_note.text() == ""
    settle(qtbot, window)


@pytest.mark.slow
def test_the_compare_screenshot_of_the_demo_is_made(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """README's picture of the compare window, made by the screenshots command on the demo
    data: a value explained by a convention, the mistyped one unexplained."""
    import cv2

    from fminspect.gui.screenshots import _compare_dialog
    from fminspect.io.resources import resource

    (demo,), _ = discover(resource("demo"))
    dialog = _compare_dialog(tmp_path, demo)
    qtbot.addWidget(dialog)
    counts = dialog.comparison.counts()
    assert counts["unexplained"] == 1 and counts["explained"] >= 1
    assert dialog.comparison.statistics  # made with --ci
    assert main(["screenshots", str(tmp_path / "shots"), "--only", "compare"]) == 0
    picture = cv2.imread(str(tmp_path / "shots" / "compare.png"))
    assert picture is not None and picture.shape[:2] == (720, 1300) and picture.std() > 10
