"""The voting window driven by key presses, and the analysis window."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore

from fminspect.io.discovery import discover
from fminspect.ranking.build import build_design, groups_from_dataset
from fminspect.ranking.export import write_pack
from fminspect.ranking.present import Presenter
from fminspect.ranking.simulate import SimulatedParticipant, simulate, strengths_by_position
from fminspect.ranking.store import StudyStore
from tests.datasets import make_dataset
from tests.gui.conftest import PATIENCE_MS, wait_for

Key = QtCore.Qt.Key


@pytest.fixture
def study(tmp_path: Path) -> Path:
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B", "C"), size=(60, 80))
    (ds,), _ = discover(root)
    path = tmp_path / "study.sqlite"
    design = build_design(
        "gui study", groups_from_dataset(ds), path, checks=1, repeats=1, allow_ties=True
    )
    StudyStore.create(path, design).close()
    return path


def _window(qtbot, store, **kw):  # type: ignore[no-untyped-def]
    from fminspect.gui.app import application
    from fminspect.gui.voting import VotingWindow

    application()
    w = VotingWindow(store, min_view_ms=0, **kw)
    qtbot.addWidget(w)
    w.resize(900, 600)
    w.show()
    w.setFocus()
    return w


def test_keys_vote_undo_pause_and_finish(qtbot, study: Path) -> None:
    store = StudyStore(study)
    w = _window(qtbot, store)
    assert w.page == "start"
    qtbot.keyClicks(w.id_edit, "anna")
    qtbot.keyClick(w.id_edit, Key.Key_Return)
    assert w.page == "vote" and w.session is not None and w.session.participant == "anna"
    total = w.session.total
    first = w.session.current()
    qtbot.keyClick(w, Key.Key_Left)
    qtbot.keyClick(w, Key.Key_2)
    qtbot.keyClick(w, Key.Key_Space)  # ties allowed in this study
    votes = store.votes("anna")
    assert [v.choice for v in votes] == ["left", "right", "tie"]
    assert votes[0].chosen == first.left and all(v.rt_ms >= 0 for v in votes)
    qtbot.keyClick(w, Key.Key_Backspace)
    assert len(store.votes("anna")) == 2 and w.session.position == 2
    # pause: keys do not vote; P resumes
    qtbot.keyClick(w, Key.Key_P)
    assert w.page == "pause"
    qtbot.keyClick(w, Key.Key_Left)
    assert len(store.votes("anna")) == 2
    qtbot.keyClick(w, Key.Key_P)
    assert w.page == "vote"
    while w.page == "vote":
        qtbot.keyClick(w, Key.Key_1)
    assert w.page == "finished" and len(store.votes("anna")) == total
    assert "pairs" in w.finished_text.text()
    # Backspace on the last screen takes back the last answer
    qtbot.keyClick(w, Key.Key_Backspace)
    assert w.page == "vote" and len(store.votes("anna")) == total - 1


def test_no_model_name_on_screen_and_it_scales(qtbot, study: Path) -> None:
    store = StudyStore(study)
    w = _window(qtbot, store, participant="bo")
    from PySide6 import QtWidgets

    texts = " ".join(lbl.text() for lbl in w.findChildren(QtWidgets.QLabel)) + w.windowTitle()
    for model in ("A", "B", "C"):
        assert f" {model} " not in f" {texts} "
    for item in store.design.groups[0].items:
        assert item.model not in w.left_pic.caption + w.right_pic.caption
    before = w.left_pic.size().toTuple()
    for size in ((1600, 1000), (420, 300)):
        w.resize(*size)
        wait_for(qtbot, lambda old=before: w.left_pic.size().toTuple() != old)
        before = w.left_pic.size().toTuple()
        r = w.left_pic.image_rect()
        assert 0 < r.width() <= w.left_pic.width() and 0 < r.height() <= w.left_pic.height()
        assert abs(r.width() / r.height() - 80 / 60) < 0.05  # the aspect ratio is kept


@pytest.mark.faults
def test_ties_refused_when_not_allowed_and_min_view_time(qtbot, tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "DS", n_images=2, methods=("A", "B"), size=(30, 40))
    (ds,), _ = discover(root)
    path = tmp_path / "s.sqlite"
    StudyStore.create(path, build_design("no ties", groups_from_dataset(ds), path)).close()
    from fminspect.gui.app import application
    from fminspect.gui.voting import VotingWindow

    application()
    store = StudyStore(path)
    w = VotingWindow(store, participant="c", min_view_ms=60_000)
    qtbot.addWidget(w)
    w.show()
    qtbot.keyClick(w, Key.Key_Left)  # pressed at once: ignored
    assert store.votes("c") == []
    w.min_view_ms = 0
    qtbot.keyClick(w, Key.Key_Space)  # no ties in this study
    assert store.votes("c") == []
    qtbot.keyClick(w, Key.Key_Right)
    assert len(store.votes("c")) == 1


def test_resume_after_closing_and_pause_time_is_not_counted(qtbot, study: Path) -> None:
    store = StudyStore(study)
    now = [100.0]  # the window's clock (seconds), moved by the test
    w = _window(qtbot, store, participant="dan", clock=lambda: now[0])
    now[0] += 0.5
    qtbot.keyClick(w, Key.Key_Left)
    now[0] += 0.12  # the second pair, shown for 120 ms
    qtbot.keyClick(w, Key.Key_P)
    now[0] += 400.0  # a long pause
    qtbot.keyClick(w, Key.Key_P)
    now[0] += 0.03  # and 30 ms after it
    qtbot.keyClick(w, Key.Key_Right)
    w.close()
    assert [v.rt_ms for v in store.votes("dan")] == pytest.approx([500, 150])
    w2 = _window(qtbot, StudyStore(study), participant="dan")
    assert w2.page == "pause" and "Welcome back" in w2.pause_title.text()
    qtbot.keyClick(w2, Key.Key_Space)
    assert w2.page == "vote" and w2.session.position == 2


def test_a_pack_is_voted_on_and_the_results_file_is_written(
    qtbot, study: Path, tmp_path: Path
) -> None:
    from fminspect.gui.voting import prepare_study

    pack = write_pack(StudyStore(study), tmp_path / "pack.zip")
    store, paths, results_dir = prepare_study(pack, tmp_path / "elsewhere")
    assert paths and results_dir == tmp_path / "elsewhere"
    w = _window(qtbot, store, participant="eve", paths=paths, results_dir=results_dir)
    while w.page == "vote":
        qtbot.keyClick(w, Key.Key_Right)
    assert w.page == "finished" and w.results_file is not None
    data = json.loads(w.results_file.read_text())
    assert data["participant"] == "eve" and len(data["votes"]) == w.session.total
    assert str(w.results_file) in w.finished_text.text()


@pytest.mark.faults
def test_unreadable_file_blocks_the_start_with_its_name(qtbot, study: Path) -> None:
    store = StudyStore(study)
    victim = Path(store.design.groups[1].items[0].path)
    victim.write_bytes(b"corrupt")
    w = _window(qtbot, store)
    assert not w.start_button.isEnabled()
    assert victim.name in w.problems_label.text()


def test_overlay_presentation_tints_the_image() -> None:
    from fminspect.ranking.present import OVERLAY_COLOUR, candidate

    image = np.full((10, 10, 3), 100, np.uint8)
    import cv2

    m = np.zeros((10, 10), np.uint8)
    m[:5] = 255
    _, buf = cv2.imencode(".png", m)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.png"
        p.write_bytes(buf.tobytes())
        out = candidate(str(p), (10, 10), "overlay", 0.5, image)
        grey = candidate(str(p), (10, 10), "side_by_side", 0.5, image)
    assert np.array_equal(out[7, 7], [100, 100, 100])  # map 0: the image untouched
    assert np.allclose(out[2, 2], 0.5 * 100 + 0.5 * OVERLAY_COLOUR, atol=1)
    assert np.array_equal(grey[2, 2], [255, 255, 255]) and np.array_equal(grey[7, 7], [0, 0, 0])


def test_presenter_shows_references_as_designed(study: Path) -> None:
    store = StudyStore(study)
    trial = store.register("x")[0]
    screen = Presenter(store.design).screen(trial)
    assert [name for name, _ in screen.references] == ["image", "ground truth"]
    assert screen.left.shape == screen.right.shape == (60, 80, 3)


@pytest.mark.slow
def test_analysis_window_rule_exclusion_and_measures(qtbot, study: Path) -> None:
    from fminspect.gui.analysis import AnalysisWindow
    from fminspect.gui.app import application

    application()
    store = StudyStore(study)
    truth = strengths_by_position(store, gap=50)
    for k in range(3):
        simulate(store, SimulatedParticipant(f"p{k}", truth, seed=k))
    simulate(store, SimulatedParticipant("rev", {i: -s for i, s in truth.items()}, seed=9))
    w = AnalysisWindow(store, measure_keys=["MAE", "Sm"])
    qtbot.addWidget(w)
    w.show()
    wait_for(qtbot, lambda: w.result is not None)  # aggregated off the GUI thread
    assert not w.result.consensual  # 'rev' breaks unanimity
    with qtbot.waitSignal(w.agreement_ready, timeout=PATIENCE_MS):
        w.rule.setCurrentIndex(w.rule.findData("majority"))
        assert w._still_aggregating()  # no export of the previous rule's numbers meanwhile
    assert not w._still_aggregating()
    assert len(w.result.consensual) == 4 and w.agreement is not None
    assert w.measures.rowCount() == 2 and "Sm α=0.5" in {
        w.measures.item(r, 0).text() for r in range(2)
    }
    # the paired comparisons are in the table and the chart, as in the Markdown report
    from fminspect.ranking.report import AGREEMENT_COLUMNS, agreement_cells, tied_with_best

    last = w.measures.columnCount() - 1
    assert (
        w.measures.horizontalHeaderItem(last).text()
        == AGREEMENT_COLUMNS[-1]
        == ("θ not different from")
    )
    cells = agreement_cells(w.agreement)
    assert [w.measures.item(r, last).text() for r in range(2)] == [c[-1] for c in cells]
    from fminspect.ranking.report import agreement_rows

    tied = tied_with_best(w.agreement, agreement_rows(w.agreement), "theta")
    assert tied[0] and tied[1] == (cells[0][-1] != "–")  # dark: the best, and its equals
    # exclude 'rev' by ticking it: unanimity is reached
    w.rule.setCurrentIndex(w.rule.findData("unanimous"))
    row = next(
        r for r in range(w.participants.rowCount()) if w.participants.item(r, 1).text() == "rev"
    )
    with qtbot.waitSignal(w.agreement_ready, timeout=PATIENCE_MS):
        w.participants.item(row, 0).setCheckState(QtCore.Qt.CheckState.Checked)
    assert w.result.excluded == ["rev"] and len(w.result.consensual) == 4
    QtCore.QThreadPool.globalInstance().waitForDone(PATIENCE_MS)


def test_undo_after_the_end_removes_the_outdated_results_file(
    qtbot, study: Path, tmp_path: Path
) -> None:
    from fminspect.gui.voting import prepare_study

    store, paths, results_dir = prepare_study(
        write_pack(StudyStore(study), tmp_path / "p.zip"), tmp_path / "u"
    )
    w = _window(qtbot, store, participant="fay", paths=paths, results_dir=results_dir)
    while w.page == "vote":
        qtbot.keyClick(w, Key.Key_Left)
    written = w.results_file
    assert written is not None and written.exists()
    qtbot.keyClick(w, Key.Key_Backspace)
    assert not written.exists() and w.results_file is None
    qtbot.keyClick(w, Key.Key_Right)
    assert w.page == "finished" and w.results_file is not None and w.results_file.exists()


@pytest.mark.faults
def test_an_answer_that_cannot_be_saved_is_kept_retried_and_undo_stays_in_step(
    qtbot, study: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    from PySide6 import QtWidgets

    from tests.ranking.test_write_faults import _inject

    store = StudyStore(study)
    w = _window(qtbot, store, participant="p")
    qtbot.keyClick(w, Key.Key_Left)
    answers = []
    buttons = QtWidgets.QMessageBox.StandardButton

    def dialog(parent, title, text, *args):  # type: ignore[no-untyped-def]
        answers.append(text)
        return buttons.Retry if len(answers) == 1 else buttons.Cancel

    monkeypatch.setattr(QtWidgets.QMessageBox, "critical", dialog)
    real = store.db
    _inject(store, "COMMIT", sqlite3.OperationalError("database or disk is full (injected)"))
    second = w.session.current()
    qtbot.keyClick(w, Key.Key_2)  # fails once; the participant presses Retry; it is saved
    assert len(answers) == 1 and answers[0].startswith("Your answer could not be saved (data")
    assert [v.trial for v in store.votes("p")] == [0, second.index] and w.session.position == 2
    store.db = real
    _inject(store, "DELETE", sqlite3.OperationalError("disk I/O error (injected)"))
    qtbot.keyClick(w, Key.Key_Backspace)  # fails; the participant presses Cancel
    assert answers[1].startswith("Taking back your last answer could not be saved")
    assert w.session.position == 2 == len(store.votes("p"))  # nothing changed, in step
    qtbot.keyClick(w, Key.Key_Backspace)  # the injected error fired once: this works
    assert w.session.position == 1 == len(store.votes("p"))
    assert w.session.current() == second


def test_an_active_pack_opens_for_its_participant_and_its_pairs_are_chosen_as_votes_arrive(
    qtbot, tmp_path: Path
) -> None:
    """An active design in the window: the lab's own session chooses its chunks as it goes;
    a pack opens for the participant it was made for (id filled in, others refused)."""
    from fminspect.gui.analysis import AnalysisWindow
    from fminspect.gui.app import application
    from fminspect.gui.voting import prepare_study
    from fminspect.ranking.schedule import ACTIVE_CHUNK

    application()
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B", "C", "D"), size=(40, 50))
    (ds,), _ = discover(root)
    path = tmp_path / "active.sqlite"
    design = build_design(
        "active",
        groups_from_dataset(ds, per_group=4),
        path,
        sampling="active",
        per_participant=2 * ACTIVE_CHUNK + 3,
        checks=1,
    )
    lab = StudyStore.create(path, design)
    w = _window(qtbot, lab, participant="ann")
    assert w.page == "vote" and w.session is not None
    assert len(w.session.trials) < w.session.total == 2 * ACTIVE_CHUNK + 3 + 1
    while w.page == "vote":
        qtbot.keyClick(w, Key.Key_Left)
    assert w.page == "finished" and len(lab.votes("ann")) == w.session.total
    pack = write_pack(lab, tmp_path / "bob.zip", "bob")
    store, paths, results_dir = prepare_study(pack, tmp_path / "elsewhere")
    v = _window(qtbot, store, paths=paths, results_dir=results_dir)
    assert v.id_edit.text() == "bob"
    v.start("mallory")
    assert v.session is None and "made for participant 'bob'" in v.start_message.text()
    v.start("bob")
    while v.page == "vote":
        qtbot.keyClick(v, Key.Key_Right)
    assert (
        v.results_file is not None
        and lab.merge_results(json.loads(v.results_file.read_text()), "bob.json") == v.session.total
    )
    a = AnalysisWindow(lab, measure_keys=["MAE"])
    qtbot.addWidget(a)
    assert a.rule.currentData() == "bt"
    assert not a.rule.model().item(a.rule.findData("unanimous")).isEnabled()
    wait_for(qtbot, lambda: a.result is not None)
    assert str(a.result.rule) == "bt:0.9"
    QtCore.QThreadPool.globalInstance().waitForDone(PATIENCE_MS)


def test_the_tools_menu_opens_a_study_and_names_a_broken_one(
    qtbot, study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6 import QtWidgets

    from fminspect.gui.app import application
    from fminspect.gui.study_windows import open_analysis, open_voting

    application()
    parent = QtWidgets.QWidget()
    qtbot.addWidget(parent)
    warned: list[str] = []
    monkeypatch.setattr(
        QtWidgets.QMessageBox, "warning", lambda _parent, _title, text: warned.append(text)
    )
    voting = open_voting(parent, str(study), participant="anna")
    assert voting is not None
    qtbot.addWidget(voting)
    assert voting.isFullScreen() and voting.session.participant == "anna"
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"not a study")
    assert open_voting(parent, str(broken)) is None
    assert open_analysis(parent, str(broken)) is None
    assert len(warned) == 2 and all("broken.sqlite" in text for text in warned)
