"""The dataset browser at scale: streamed scores, an earlier eval reused, natural order."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore

from fminspect.batch import stream
from fminspect.batch.service import DatasetPieces, whole
from fminspect.cli import main
from fminspect.io.discovery import discover
from tests.datasets import make_dataset
from tests.gui.conftest import deliver_posted, settle, wait_for

COD_NAMES = [
    "COD10K-CAM-1-Aquatic-3-Crab-10",
    "COD10K-CAM-1-Aquatic-3-Crab-2",
    "COD10K-CAM-1-Aquatic-3-Crab-1",
    "img_00100",
    "img_00010",
    "img_00001",
    "img_00011",
]


def _renamed(root: Path) -> Path:
    """The dataset's samples renamed to COD10K-style names (which sort wrongly as text)."""
    for folder in [root / "GT", root / "Imgs", *(root / "Pred").iterdir()]:
        for i, f in enumerate(sorted(folder.iterdir(), key=lambda p: int(p.stem[3:]))):
            f.rename(f.with_name(COD_NAMES[i] + f.suffix))
    return root


def test_samples_are_in_natural_order_both_ways(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _renamed(make_dataset(tmp_path / "DS", n_images=7, methods=("A", "B"), size=(30, 40)))
    window.open_path(root)
    b = window.browser
    expected = [
        "COD10K-CAM-1-Aquatic-3-Crab-1",
        "COD10K-CAM-1-Aquatic-3-Crab-2",
        "COD10K-CAM-1-Aquatic-3-Crab-10",
        "img_00001",
        "img_00010",
        "img_00011",
        "img_00100",
    ]
    assert b.ordered_samples() == expected  # at once: before any score
    assert window.model.sample_names == expected
    b.view.sortByColumn(0, QtCore.Qt.SortOrder.DescendingOrder)  # a click on the header
    assert b.ordered_samples() == expected[::-1]
    assert b.order.currentText() == "column sample: Z → A"  # the box says what orders it
    b.order.setCurrentIndex(0)  # "sample name" chosen in the box
    assert b.ordered_samples() == expected
    settle(qtbot, window)


def test_long_names_are_cut_at_their_start_and_scores_are_seen(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _renamed(make_dataset(tmp_path / "DS", n_images=7, methods=("A", "B"), size=(30, 40)))
    window.browser_dock.setMinimumWidth(0)
    window.resizeDocks([window.browser_dock], [300], QtCore.Qt.Orientation.Horizontal)
    window.open_path(root)
    b = window.browser
    view, header = b.view, b.view.horizontalHeader()
    longest = max(COD_NAMES, key=len)
    fit = view.fontMetrics().horizontalAdvance(longest) + 12
    wait_for(qtbot, lambda: view.viewport().width() < fit + 2 * 64)  # a narrow list
    width = view.viewport().width()
    assert header.sectionViewportPosition(2) + header.sectionSize(2) <= width  # A's and B's
    assert header.sectionSize(0) == int(b.NAME_SHARE * width) < fit
    assert view.textElideMode() == QtCore.Qt.TextElideMode.ElideLeft  # "…Aquatic-3-Crab-10"
    row = b.ordered_samples().index(longest)
    tip = b.model.data(b.model.index(row, 0), QtCore.Qt.ItemDataRole.ToolTipRole)
    assert tip == longest
    # a model's title longer than its column keeps both ends; its tooltip is the whole name
    assert header.textElideMode() == QtCore.Qt.TextElideMode.ElideMiddle
    horizontal, tooltip = QtCore.Qt.Orientation.Horizontal, QtCore.Qt.ItemDataRole.ToolTipRole
    assert [b.model.headerData(c, horizontal, tooltip) for c in (1, 2)] == ["A", "B"]
    # a wider list: the whole names
    window.resize(2600, 900)
    window.resizeDocks([window.browser_dock], [700], QtCore.Qt.Orientation.Horizontal)
    wait_for(qtbot, lambda: header.sectionSize(0) == fit)
    # a width the user dragged to is kept when the list is resized
    header.resizeSection(0, 150)
    wide = view.viewport().width()
    window.resizeDocks([window.browser_dock], [400], QtCore.Qt.Orientation.Horizontal)
    wait_for(qtbot, lambda: view.viewport().width() < wide)
    assert header.sectionSize(0) == 150
    settle(qtbot, window)


def test_the_dataset_table_s_titles_fit_their_columns(qtbot, window, dataset_root) -> None:  # type: ignore[no-untyped-def]
    window.open_path(dataset_root)
    settle(qtbot, window)
    window.tabs.setCurrentIndex(1)  # the dataset view, drawn when shown
    view = window.dataset_view
    wait_for(qtbot, lambda: view.model.rowCount() == 3)
    header = view.table.horizontalHeader()
    metrics = header.fontMetrics()
    horizontal = QtCore.Qt.Orientation.Horizontal
    for col in range(view.model.columnCount()):
        title = view.model.headerData(col, horizontal)
        assert header.sectionSize(col) >= metrics.horizontalAdvance(title) + 8, title


@pytest.mark.slow
def test_the_list_shows_at_once_and_scores_stream_in_worst_first(
    qtbot, service_window, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """The window as the user gets it, its scoring service in a process of its own."""
    window = service_window
    root = make_dataset(tmp_path / "DS", n_images=12, methods=("A", "B", "C"), size=(40, 50))
    events: list[object] = []
    window.model.service.news.connect(events.append)
    b = window.browser
    b.measure.setCurrentText("MAE")
    b.order.setCurrentIndex(1)  # worst first for model A, while scores arrive
    window.open_path(root)
    assert b.model.rowCount() == 12 and b.model.matrix.done == 0  # names now, scores later
    settle(qtbot, window)
    wait_for(qtbot, lambda: not b._resort.isActive())  # the last re-sort
    planned = next(e for e in events if isinstance(e, stream.Planned))
    assert (planned.pairs, planned.stored, planned.units) == (36, 0, 12)
    assert any(isinstance(e, stream.Progress) for e in events)
    assert b.model.matrix.filled.all()
    values = [b.model.matrix.value(n, "A", "MAE") for n in b.ordered_samples()]
    assert values == sorted(values, reverse=True)  # MAE: larger is worse
    assert "DS" in window.model.scores.results


def test_an_earlier_eval_is_read_not_recomputed_and_the_dataset_values_are_eval_s(
    qtbot, window, tmp_path, monkeypatch
):  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B"), size=(40, 50))
    out = tmp_path / "results"
    monkeypatch.chdir(tmp_path)  # eval with a relative path, from this folder…
    assert main(["eval", "DS", "--out", "results", "--quiet", "--no-plots"]) == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # …the window from another one, with the absolute path
    events: list[object] = []
    window.model.service.news.connect(events.append)
    window.open_path(root)
    settle(qtbot, window)
    planned = next(e for e in events if isinstance(e, stream.Planned))
    assert (planned.pairs, planned.stored, planned.units) == (12, 12, 0)  # nothing computed
    assert not any(isinstance(e, stream.Progress) for e in events)
    summary = json.loads((out / "summary.json").read_text())["DS"]
    got = {r.method: r.values for r in window.model.scores.results["DS"]}
    assert got == summary  # exactly, CCm included (the dataset has images)
    assert "CCm" in got["A"]


def test_a_deleted_results_folder_falls_back_to_the_window_s_own_store(qtbot, window, tmp_path):  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A",), size=(30, 30))
    out = tmp_path / "results"
    assert (
        main(["eval", str(root), "--out", str(out), "--quiet", "--no-plots", "--measures", "MAE"])
        == 0
    )
    shutil.rmtree(out)
    events: list[object] = []
    window.model.service.news.connect(events.append)
    window.open_path(root)
    settle(qtbot, window)
    planned = next(e for e in events if isinstance(e, stream.Planned))
    assert planned.units == 3 and window.browser.model.matrix.filled.all()


def test_a_folder_opened_from_the_menu_is_read_on_a_thread(
    qtbot, window, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    import gc

    first = make_dataset(tmp_path / "First", n_images=3, methods=("A",), size=(30, 40))
    second = make_dataset(tmp_path / "Second", n_images=4, methods=("A", "B"), size=(30, 40))
    sent: list[tuple[object, ...]] = []  # the pickled dataset and the empty matrix given
    start = window.model.service.start
    monkeypatch.setattr(
        window.model.service, "start", lambda *a: (sent.append(a[3:]), start(*a))[1]
    )
    window.open_in_background(first)
    window.open_in_background(second)  # a newer opening: the first one's list never shows
    assert window.browser.model.rowCount() == 0  # nothing yet: read on a thread
    assert "reading" in window.statusBar().currentMessage()
    wait_for(qtbot, lambda: window.browser.model.rowCount() > 0)
    settle(qtbot, window)
    assert window.model.dataset is not None
    assert window.model.dataset.method_names == ["A", "B"]
    assert window.browser.model.rowCount() == 4
    assert window.model.sample is not None and window.model.sample.name == "img1"
    assert str(first) not in window.files.recent()  # never shown, so not a recent folder
    # the scoring service was sent the dataset as pickled on the reading thread, and scored it
    # into the matrix made there
    assert len(sent) == 1 and isinstance(sent[0][0], DatasetPieces)
    assert whole(sent[0][0]) == window.model.dataset
    assert window.browser.model.matrix is sent[0][1]
    assert window.browser.model.matrix.filled.all() and "Second" in window.model.scores.results
    assert gc.isenabled()  # collections were held only while the folder was read


def test_a_matrix_made_in_advance_is_used_only_if_it_fits(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from fminspect.batch.scores import score_matrix
    from fminspect.pipeline import EvalConfig

    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A", "B"), size=(30, 40))
    (ds,), _ = discover(root)
    made = score_matrix(ds, EvalConfig())
    assert made.samples == ["img1", "img2", "img3"] and made.methods == ["A", "B"]
    assert score_matrix(ds, EvalConfig(), made) is made
    other = score_matrix(ds, EvalConfig(keys=("MAE",)), made)  # measures changed meanwhile
    assert other is not made and other.keys == ("MAE",)
    made.filled[0, 0] = True  # one that has been written to is not reused
    assert score_matrix(ds, EvalConfig(), made) is not made


@pytest.mark.parametrize("asked", ["img3", "img3.png"])  # its name, or its file's name
def test_a_sample_asked_for_at_start_is_shown_and_not_the_first(
    qtbot, window, tmp_path, asked
) -> None:  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A",), size=(30, 40))
    # what `fminspect ROOT --sample NAME` does
    window.open_in_background(root, lambda: window.go_to(asked))
    wait_for(qtbot, lambda: window.browser.model.rowCount() > 0)
    settle(qtbot, window)
    deliver_posted()  # (a first sample read meanwhile would replace it)
    assert window.model.sample is not None and window.model.sample.name == "img3"


def test_a_folder_without_a_dataset_opened_from_the_menu_says_so(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    window.open_in_background(tmp_path / "empty")
    wait_for(qtbot, lambda: window.problem_list.count() > 0)
    assert "no dataset" in window.statusBar().currentMessage()
    assert window.browser.model.rowCount() == 0


def test_the_list_s_order_is_the_walk_and_its_rows_open_their_samples(
    qtbot, window, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtTest import QTest

    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B"), size=(30, 40))
    window.open_path(root)
    settle(qtbot, window)
    b = window.browser
    b.order.setCurrentIndex(2)  # A − B: A worse first
    wait_for(qtbot, lambda: b.model.sort_column == len(b.model.models) + 1)
    order = b.ordered_samples()
    assert order != sorted(order, key=lambda n: int(n[3:]))  # not the names' order
    b.view.clicked.emit(b.model.index(0, 0))  # the first row: opened
    wait_for(qtbot, lambda: window.model.sample.name == order[0])
    QTest.keyClick(window, QtCore.Qt.Key.Key_D)  # D walks the list, not the names
    wait_for(qtbot, lambda: window.model.sample.name == order[1])
    window.model.step(1)
    wait_for(qtbot, lambda: window.model.sample.name == order[2])
    window.model.step(-1)
    wait_for(qtbot, lambda: window.model.sample.name == order[1])
    # the highlighted row is the shown sample
    assert b.view.currentIndex().row() == 1 or b.view.selectionModel().isRowSelected(1)
    # ↓ and End in the list open the sample they move to
    b.view.setFocus()
    b.view.setCurrentIndex(b.model.index(1, 0))
    QTest.keyClick(b.view, QtCore.Qt.Key.Key_Down)
    wait_for(qtbot, lambda: window.model.sample.name == order[2])
    QTest.keyClick(b.view, QtCore.Qt.Key.Key_End)
    wait_for(qtbot, lambda: window.model.sample.name == order[-1])
    settle(qtbot, window)
    # a click on a title orders by it and the order box says so
    b.view.horizontalHeader().sectionClicked.emit(0)
    b.view.sortByColumn(0, QtCore.Qt.SortOrder.AscendingOrder)
    assert b.order.currentText() == "sample name"
    b.view.sortByColumn(1, QtCore.Qt.SortOrder.DescendingOrder)
    assert b.order.currentText() == "column A: largest first"
    assert b.ordered_samples()[0] == window.model.walk.ordered()[0]
    name = window.model.sample.name
    window.model.step(1)
    wait_for(qtbot, lambda: window.model.sample.name == window.model.walk.neighbour(name, 1))


def test_tags_on_the_number_keys_notes_and_the_case_list(
    qtbot, window, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from PySide6 import QtWidgets
    from PySide6.QtTest import QTest

    from fminspect.pipeline.tags import TagStore, tags_path

    root = make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B"), size=(30, 40))
    window.open_path(root)
    settle(qtbot, window)
    b, panel = window.browser, window.cases_panel
    assert str(root.resolve() / ".fminspect") in panel.where.text()
    first = window.model.sample.name
    QTest.keyClick(window, QtCore.Qt.Key.Key_1)  # tag 1 on the shown sample
    assert panel.checks[1].isChecked() and panel.counts[1].text() == "1"
    row = b.model.walk.row_of(first)
    assert b.model.cell(row, b.model.tags_column) == "1"
    assert b.model.headerData(b.model.tags_column, QtCore.Qt.Orientation.Horizontal) == "tags"
    panel.note.setPlainText("GT misses the handle")  # written as it is typed
    panel.names[1].setText("GT error")
    panel.names[1].editingFinished.emit()
    QTest.keyClick(window, QtCore.Qt.Key.Key_N)  # the next sample without a tag
    wait_for(qtbot, lambda: window.model.sample.name == b.model.walk.neighbour(first, 1))
    assert not panel.checks[1].isChecked() and panel.note.toPlainText() == ""
    with TagStore(tags_path(root)[0]) as other:  # on disk already
        assert other.tags("DS", first) == {1} and other.names[1] == "GT error"
        assert other.note("DS", first) == "GT misses the handle"
    out = tmp_path / "cases.csv"
    offered: list[list[str]] = []
    suggested: list[str] = []

    def choose(parent, title, label, items, *rest):  # type: ignore[no-untyped-def]
        offered.append(list(items))
        return items[1], True  # the first tag's cases only

    def save_as(parent, title, default, *rest):  # type: ignore[no-untyped-def]
        suggested.append(default)
        return str(out), "CSV (*.csv)"

    monkeypatch.setattr(QtWidgets.QInputDialog, "getItem", choose)
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", save_as)
    window.files.export_cases()
    assert offered == [["every tagged or annotated sample (1)", "tagged “GT error” only (1)"]]
    assert suggested == ["gt_error.csv"]
    assert out.read_text().splitlines()[1] == f"DS,{first},GT error,GT misses the handle"
    settle(qtbot, window)
    # a colleague's folder, its dataset named otherwise: the list goes onto its samples,
    # and the window says so (a trial: "1 cases read", and nothing applied)
    theirs = make_dataset(tmp_path / "Theirs", n_images=5, methods=("A",), size=(30, 40))
    window.open_path(theirs)
    settle(qtbot, window)
    told: list[str] = []
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *a: (str(out), ""))
    monkeypatch.setattr(QtWidgets.QMessageBox, "information", lambda w, t, text: told.append(text))
    window.files.import_cases()
    assert window.model.cases.store is not None
    assert window.model.cases.store.tags("Theirs", first) == {1}
    assert len(told) == 1 and "those of dataset 'DS' to 'Theirs'" in told[0]
    assert told[0] in window.statusBar().currentMessage()


def test_a_filter_narrows_the_list_and_the_walk_and_a_wrong_one_is_said(
    qtbot, window, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=8, methods=("A", "B"), size=(30, 40))
    window.open_path(root)
    settle(qtbot, window)
    b = window.browser
    matrix = b.model.matrix
    median = float(np.nanmedian(matrix.column("A", "Sm")))
    b.filter.setText(f"Sm[A] < {median}")
    b.apply_filter()
    listed = b.ordered_samples()
    assert 0 < len(listed) < 8 and b.model.rowCount() == len(listed)
    assert all(matrix.value(n, "A", "Sm") < median for n in listed)
    assert b.filter_note.text() == f"{len(listed)} of 8 samples listed"
    b.view.clicked.emit(b.model.index(0, 0))
    wait_for(qtbot, lambda: window.model.sample.name == listed[0])
    for row, expected in enumerate([*listed[1:], listed[0]], start=2):  # D walks the
        window.model.step(1)  # filtered list, and wraps; the status bar says the row
        wait_for(qtbot, lambda e=expected: window.model.sample.name == e)
        place = f"({(row - 1) % len(listed) + 1}/{len(listed)} listed of 8)"
        wait_for(qtbot, lambda p=place: p in window.statusBar().currentMessage())
    b.filter.setText("Sm[Z] < 2")
    b.apply_filter()
    assert "no model 'Z'" in b.filter_note.text() and b.model.rowCount() == len(listed)
    # a class or value that no sample has: the ones there are, named (a trial got no hint)
    attrs = tmp_path / "attrs.csv"
    attrs.write_text(
        "image,size\n" + "".join(f"img{k},{'small' if k % 2 else 'large'}\n" for k in range(1, 9))
    )
    b.filter.setText(f"{attrs}:size=huge")
    b.apply_filter()
    assert b.model.rowCount() == 0
    assert b.filter_note.text().endswith(f"{attrs}: size=large, size=small")
    b.filter.setText(f"{attrs}:size=SMALL")  # in any case
    b.apply_filter()
    assert b.model.rowCount() == 4
    # a table beside the dataset, named without its folder (a trial: looked for in the
    # folder the window was started from, "attrs.csv: file not found")
    (root / "mine.csv").write_text(attrs.read_text())
    b.filter.setText("mine.csv:size=small")
    b.apply_filter()
    assert b.model.rowCount() == 4, b.filter_note.text()
    b.filter.setText("untagged")  # a tag taken: the sample leaves the list
    b.apply_filter()
    assert b.model.rowCount() == 8
    window.model.toggle_tag(2)
    assert b.model.rowCount() == 7 and window.model.sample.name not in b.ordered_samples()
    b.filter.clear()
    b.apply_filter()
    assert b.model.rowCount() == 8 and b.filter_note.text() == ""
    settle(qtbot, window)
