"""The inspector window: the numbers it shows, threshold, zoom, bad input, responsiveness."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.export import export_grid
from fminspect.gui.panels.map_grid import CONFUSION_RGBA
from fminspect.metrics import DEFAULT_PARAMS, Params, compute_suite, prepare_gt
from tests.gui.conftest import PATIENCE_MS, deliver_posted, settle, wait_for


def opened(qtbot, window, root: Path):  # type: ignore[no-untyped-def]
    """The window's controller once ``root`` is open and scored."""
    assert window.open_path(root)
    settle(qtbot, window)
    return window.model


def _expected(window, model: str, params: Params = DEFAULT_PARAMS) -> dict[str, float]:  # type: ignore[no-untyped-def]
    s = window.model.sample
    return compute_suite(
        s.preds[model], prepare_gt(s.gt, params.norm), params, img=s.image
    ).scores()


def _table_shows(window, models: tuple[str, ...]) -> bool:  # type: ignore[no-untyped-def]
    """Whether the table holds the current sample's numbers of every model."""
    scores = window.table.model.scores
    return all(
        model in scores
        and all(scores[model].get(k) == v for k, v in _expected(window, model).items())
        for model in models
    )


@pytest.mark.slow
def test_table_shows_exactly_what_the_metrics_compute(qtbot, window, dataset_root: Path) -> None:  # type: ignore[no-untyped-def]
    assert window.open_path(dataset_root)
    settle(qtbot, window)
    table = window.table.model
    assert table.models == ["A", "B", "C"]
    for model in table.models:
        expected = _expected(window, model)
        for key, value in expected.items():
            assert table.scores[model][key] == value, (model, key)
        assert "CCm" in expected  # the dataset has images
    # header names the variant
    col = table.keys.index("maxFm")
    assert "β²=0.3" in table.headerData(col, QtCore.Qt.Orientation.Horizontal)


@pytest.mark.slow
def test_parameter_change_recomputes_off_thread_and_drops_stale_results(
    qtbot, window, dataset_root
):  # type: ignore[no-untyped-def]
    window.open_path(dataset_root)
    settle(qtbot, window)
    for value in (1.0, 0.5, 2.0):  # quick successive changes: only the last may be shown
        window.params.beta2.setValue(value)
    settle(qtbot, window)
    params = window.model.settings.params
    assert params.beta2 == 2.0
    for model in ("A", "B"):
        assert (
            window.table.model.scores[model]["maxFm"] == _expected(window, model, params)["maxFm"]
        )
        assert window.model.results[model].params.beta2 == 2.0

    def curves_show_the_results() -> bool:
        for model in ("A", "B"):
            f = window.model.results[model].fmeasure
            item = window.curves.curves.get(model, {}).get("fm")  # made when first drawn
            shown = None if item is None else item.yData
            if shown is None or not np.array_equal(shown, f.fmeasure.curve):
                return False
            if window.curves.marker(model, "fm", "max") != (f.fmeasure.argmax / 255, f.max):
                return False
        return True

    wait_for(qtbot, curves_show_the_results)  # redrawn a plot per event turn
    assert "β²=2" in window.curves.plots["fm"].getPlotItem().titleLabel.text
    window.params.gt_rule.setCurrentIndex(1)  # GT >= 128
    settle(qtbot, window)
    assert window.model.results["A"].pair.gt.norm.gt_rule == "GT>=128"


@pytest.mark.slow
def test_the_third_plot_shows_e_iou_or_dice_against_the_threshold(qtbot, window, dataset_root):  # type: ignore[no-untyped-def]
    window.open_path(dataset_root)
    settle(qtbot, window)
    result = window.model.results["A"]
    wait_for(qtbot, lambda: "A" in window.curves.curves)
    for which, scores in (("IoU", result.overlap.iou), ("Dice", result.overlap.dice)):
        window.curves.third_choice.setCurrentText(which)
        item = window.curves.curves["A"]["em"]
        np.testing.assert_array_equal(item.yData, scores.curve)
        assert window.curves.plots["em"].getPlotItem().titleLabel.text == which
        if window.curves.marked():
            assert window.curves.marker("A", "em", "max") == (scores.argmax / 255, scores.max)
    window.curves.third_choice.setCurrentText("E-measure")
    np.testing.assert_array_equal(window.curves.curves["A"]["em"].yData, result.emeasure.curve)


def test_the_panels_draw_with_any_choice_of_measures(qtbot, window, dataset_root):  # type: ignore[no-untyped-def]
    # only MAE and Sm chosen: the table shows them (and the @t columns), and the curves,
    # the @t columns and the third plot still have the F, E and IoU/Dice families they draw
    window.open_path(dataset_root)
    settle(qtbot, window)
    window.set_measures(["MAE", "Sm"])
    settle(qtbot, window)
    table = window.table.model
    assert table.keys == ["MAE", "Sm", "Fm@t", "Em@t", "IoU@t"]
    result = window.model.results["A"]
    assert result.overlap is not None and result.emeasure is not None
    assert table.scores["A"]["IoU@t"] == result.overlap.iou.curve[window.model.threshold]
    window.curves.third_choice.setCurrentText("Dice")
    np.testing.assert_array_equal(window.curves.curves["A"]["em"].yData, result.overlap.dice.curve)


@pytest.mark.slow
def test_threshold_moves_overlay_curve_markers_and_table(qtbot, window, dataset_root):  # type: ignore[no-untyped-def]
    window.open_path(dataset_root)
    settle(qtbot, window)
    window.params.confusion.setChecked(True)
    window.params.threshold.setValue(40)
    cell = window.grid.cells["A"]
    result = window.model.results["A"]
    assert window.model.threshold == 40
    codes = result.pair.confusion_codes(40)
    overlay = cell.overlay.image
    # TP pixels carry the TP colour wherever the GT contour does not cover them
    tp = (codes == 3) & ~window.grid._contour
    assert np.all(overlay[tp] == CONFUSION_RGBA[3])

    def f_plot_drawn() -> bool:  # the plots are redrawn one per event-loop turn
        try:
            window.curves.marker("A", "fm")
        except KeyError:
            return False
        return True

    wait_for(qtbot, f_plot_drawn)
    x, y = window.curves.marker("A", "fm")
    assert x == pytest.approx(40 / 255)
    assert y == pytest.approx(result.fmeasure.fmeasure.curve[40])
    assert window.table.model.scores["A"]["Fm@t"] == result.fmeasure.fmeasure.curve[40]
    window.params.threshold.setValue(255)
    assert window.table.model.scores["A"]["Fm@t"] == result.fmeasure.fmeasure.curve[255]
    if not np.array_equal(codes, result.pair.confusion_codes(255)):
        assert not np.array_equal(window.grid.cells["A"].overlay.image, overlay)
    assert "t=255" in window.table.model.label("Fm@t")


@pytest.mark.slow
def test_switching_samples_keeps_the_zoom(qtbot, window, dataset_root):  # type: ignore[no-untyped-def]
    window.open_path(dataset_root)
    settle(qtbot, window)
    view = window.grid.views[0]
    view.setRange(xRange=(10, 30), yRange=(5, 20), padding=0)
    before = view.viewRange()
    qtbot.keyClick(window, "d")
    settle(qtbot, window)
    assert window.model.sample.name == "img2"
    np.testing.assert_allclose(window.grid.views[0].viewRange(), before)
    # every panel follows (linked views)
    np.testing.assert_allclose(window.grid.views[-1].viewRange(), before)
    qtbot.keyClick(window, "a")
    settle(qtbot, window)
    assert window.model.sample.name == "img1"


@pytest.mark.faults
@pytest.mark.slow
def test_a_missing_map_keeps_an_empty_panel_saying_so(qtbot, window, dataset_root):  # type: ignore[no-untyped-def]
    """A shown model whose folder has no map of this image: an empty panel saying so, last
    (as an unreadable map gets), rather than a panel that silently disappears."""
    (dataset_root / "Pred" / "B" / "img1.png").unlink()
    window.open_path(dataset_root)
    settle(qtbot, window)
    assert window.model.sample.name == "img1"
    assert list(window.model.sample.preds) == ["A", "C"]
    assert list(window.grid.cells) == ["image", "GT", "A", "C", "B"]
    b = window.grid.cells["B"]
    assert "no map" in b.label.text and b.values is None and b.map.image is None
    # the next image has B's map: its panel is a map again, in its place
    window.model.step(1)
    settle(qtbot, window)
    assert list(window.grid.cells) == ["image", "GT", "A", "B", "C"]
    assert window.grid.cells["B"].values is not None


@pytest.mark.faults
@pytest.mark.slow
def test_corrupt_prediction_shows_a_message_and_the_others_still_display(
    qtbot, window, dataset_root
):  # type: ignore[no-untyped-def]
    (dataset_root / "Pred" / "B" / "img1.png").write_bytes(b"\x89PNG garbage")
    window.open_path(dataset_root)
    settle(qtbot, window)
    assert list(window.model.sample.preds) == ["A", "C"]
    assert set(window.model.results) == {"A", "C"}
    # B keeps an empty panel that says why, last; nothing is drawn or read out there
    assert list(window.grid.cells) == ["image", "GT", "A", "C", "B"]
    b = window.grid.cells["B"]
    assert "unreadable" in b.label.text and b.values is None and b.map.image is None
    texts = [window.problem_list.item(i).text() for i in range(window.problem_list.count())]
    assert any("img1.png" in t and "B" in t and "error" in t for t in texts)
    assert window.problem_dock.windowTitle().startswith("Problems (")
    # C keeps its colour (the third of the dataset's models) although B is missing here
    assert window.curves.colours == {"A": 0, "C": 2}
    assert window.table.model.colours == {"A": 0, "C": 2}


@pytest.mark.faults
@pytest.mark.slow
def test_size_mismatch_is_resized_and_reported(qtbot, window, dataset_root):  # type: ignore[no-untyped-def]
    path = dataset_root / "Pred" / "A" / "img1.png"
    cv2.imwrite(str(path), cv2.resize(cv2.imread(str(path), 0), (40, 30)))
    window.open_path(dataset_root)
    settle(qtbot, window)
    assert window.model.sample.preds["A"].shape == (60, 80)
    texts = [window.problem_list.item(i).text() for i in range(window.problem_list.count())]
    assert any("resized from 40×30" in t for t in texts)
    assert window.grid.cells["A"].label.text.startswith("A ⚠")


@pytest.mark.slow
def test_a_normalisation_change_scores_at_once_and_shows_all_models_together(
    qtbot, window, dataset_root
):  # type: ignore[no-untyped-def]
    window.open_path(dataset_root)
    settle(qtbot, window)
    shown_before = dict(window.table.model.scores)
    window.params.stretch.setCurrentIndex(2)  # no stretch: a list, no debounce, scoring started
    assert window.model._pending and not window.model._debounce.is_active()
    # until the request completes (or runs long), the table keeps the previous results whole
    assert window.table.model.scores == shown_before
    settle(qtbot, window)
    params = window.model.settings.params
    assert not params.stretch
    for model in window.table.model.models:
        assert (
            window.table.model.scores[model]["maxFm"] == _expected(window, model, params)["maxFm"]
        )
    window.params.beta2.setValue(1.5)  # a spin box: debounced
    assert window.model._debounce.is_active() and not window.model._pending
    settle(qtbot, window)
    col = window.table.model.keys.index("maxFm")
    assert "β²=1.5" in window.table.model.headerData(col, QtCore.Qt.Orientation.Horizontal)


@pytest.mark.slow
def test_a_long_request_shows_results_as_they_arrive(qtbot, window, dataset_root, monkeypatch):  # type: ignore[no-untyped-def]
    import fminspect.inspector.samples as controller_module

    window.open_path(dataset_root)
    settle(qtbot, window)
    scored = controller_module.score_model
    slow = threading.Event()

    def score_model(sample, model, *args, **kw):  # type: ignore[no-untyped-def]
        result = scored(sample, model, *args, **kw)
        if model == "B":
            slow.wait(PATIENCE_MS / 1000)  # model B takes long until the test lets it finish
        return result

    monkeypatch.setattr(controller_module, "score_model", score_model)
    try:
        window.params.stretch.setCurrentIndex(2)  # no stretch
        wait_for(qtbot, lambda: set(window.model.results) >= {"A", "C"})
        assert "B" in window.model._pending  # still scoring B…
        # …the others are held, at first
        assert not window.drawer._showing_progress and window.drawer._held
        wait_for(qtbot, lambda: window.drawer._showing_progress)  # then shown as they are
        wait_for(qtbot, lambda: "A" in window.table.model.scores)  # a turn later
        assert window.table.model.scores["A"]["MAE"] == window.model.results["A"].mae.score
        assert "B" not in window.table.model.scores
    finally:
        slow.set()
    settle(qtbot, window)
    assert not window.model.settings.params.stretch
    assert window.table.model.scores["B"]["MAE"] == window.model.results["B"].mae.score


@pytest.mark.slow
def test_gui_stays_responsive_while_the_camouflage_degree_is_computed(qtbot, window, tmp_path):  # type: ignore[no-untyped-def]
    from tests.datasets import make_dataset

    root = make_dataset(tmp_path / "Big", n_images=1, methods=("A", "B"), size=(900, 900), seed=5)
    # the event loop keeps turning while the models are scored: a zero-interval timer fires on
    # every turn; count its beats that happen while the scoring is under way (no wall-clock
    # bound here: how long a block may last is measured by benchmarks/bench_gui.py)
    beats_while_busy: list[int] = []
    timer = QtCore.QTimer()
    timer.timeout.connect(lambda: beats_while_busy.append(1) if window.model._pending else None)
    timer.start(0)
    window.open_path(root)
    assert window.busy_label.text()  # busy indicator shown
    settle(qtbot, window)
    timer.stop()
    # the GUI thread was free many times while the degree of a 900² image was computed
    assert len(beats_while_busy) > 10
    assert window.model.results["A"].camouflage_context is not None


@pytest.mark.slow
def test_export_grid_png_at_native_resolution_and_csv(qtbot, window, dataset_root, tmp_path):  # type: ignore[no-untyped-def]
    window.open_path(dataset_root)
    settle(qtbot, window)
    path = export_grid(window.grid, tmp_path / "grid.png")
    img = cv2.imread(str(path))
    assert img.shape[1] >= 80 * 3 and img.shape[0] >= 60 * 2
    csv_text = window.table.model.to_csv()
    assert csv_text.splitlines()[0].startswith("model,alias,MAE,Sm α=0.5")
    assert len(csv_text.splitlines()) == 4


def test_open_files_and_hover_readout(qtbot, window, dataset_root):  # type: ignore[no-untyped-def]
    window.open_files(
        dataset_root / "GT" / "img1.png",
        [dataset_root / "Pred" / "A" / "img1.png", dataset_root / "Pred" / "B" / "img1.png"],
        dataset_root / "Imgs" / "img1.jpg",
    )
    assert window.model.wait(PATIENCE_MS)
    seen = []
    window.grid.hovered.connect(seen.append)
    window.grid.show_cursor(10, 20)
    row, col, values = seen[-1]
    assert (row, col) == (10, 20) and set(values) >= {"image", "GT", "img1"}
    assert all(c.vline.isVisible() for c in window.grid.cells.values())


@pytest.mark.faults
def test_bad_folder_is_a_message_not_a_crash(qtbot, window, tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    assert not window.open_path(tmp_path / "empty")
    assert "no dataset found" in window.problem_list.item(0).text()


@pytest.mark.slow
def test_demo_dataset_table_matches_the_core(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    assert window.open_demo()
    settle(qtbot, window)
    c = window.model
    assert len(c.sample_names) >= 8 and len(c.sample.preds) >= 8
    for name in ("coffee", "camo_grass_horse"):
        c.select_sample(c.sample_names.index(name))
        settle(qtbot, window)
        for model in window.table.model.models:
            expected = _expected(window, model)
            assert "CCm" in expected
            assert {k: window.table.model.scores[model][k] for k in expected} == expected
    # the browser shows the batch scores of every sample for every model
    assert window.browser.model.samples == c.sample_names
    sm = window.browser.model.matrix.value("coffee", "RC", "Sm")
    c.select_sample(c.sample_names.index("coffee"))
    settle(qtbot, window)
    assert sm == pytest.approx(window.table.model.scores["RC"]["Sm"], abs=1e-12)


@pytest.mark.slow
def test_browser_orders(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    window.open_demo()
    settle(qtbot, window)
    b = window.browser
    b.measure.setCurrentText("maxFm")
    b.model_a.setCurrentText("SR")
    b.order.setCurrentIndex(1)  # worst first for SR
    names = b.ordered_samples()
    values = [b.model.matrix.value(n, "SR", "maxFm") for n in names]
    assert values == sorted(values)
    b.order.setCurrentIndex(3)  # measures disagree first
    from fminspect.meta.rankings import disagreement

    matrix = b.model.matrix
    taus = [
        disagreement(matrix.per_model(matrix.sample_index[n]), "maxFm", "Sm")
        for n in b.ordered_samples()
    ]
    assert taus == sorted(taus)
    assert b.status.text().endswith("GT>128, stretch · F β²=0.3, S α=0.5")  # what made them
    # choosing a row loads the sample
    b.view.clicked.emit(b.model.index(0, 0))
    settle(qtbot, window)
    assert window.model.sample.name == b.ordered_samples()[0]


@pytest.mark.slow
def test_screenshots_command_renders_the_real_window(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from fminspect.gui.screenshots import take_screenshots

    (path,) = take_screenshots(tmp_path, only=["inspector"])
    img = cv2.imread(str(path))
    assert img.shape[:2] == (1000, 1600)
    assert img.std() > 20  # not blank


@pytest.mark.slow
def test_screenshots_of_the_user_s_own_dataset(tmp_path, dataset_root, capsys) -> None:  # type: ignore[no-untyped-def]
    from fminspect.cli import main

    out = tmp_path / "shots"
    assert main(["screenshots", str(out), "--dataset", str(dataset_root), "--sample", "img3"]) == 0
    names = sorted(p.name for p in out.glob("*.png"))
    assert names == [
        "dataset.png",
        "dataset_dark.png",
        "dataset_statistics.png",  # with the intervals and tests
        "sample.png",
        "sample_dark.png",
    ]
    light, dark = cv2.imread(str(out / "sample.png")), cv2.imread(str(out / "sample_dark.png"))
    assert light.shape[:2] == (1000, 1600) and light.std() > 20
    assert dark.mean() < light.mean()  # the dark theme is dark
    assert main(["screenshots", str(out), "--dataset", str(dataset_root), "--sample", "nope"]) == 1
    assert "no sample 'nope'" in capsys.readouterr().err
    assert main(["screenshots", str(out), "--sample", "img3"]) == 2


@pytest.mark.slow
def test_screenshots_of_a_dataset_with_an_unreadable_gt(tmp_path, dataset_root) -> None:  # type: ignore[no-untyped-def]
    """An unreadable GT leaves every method without that image: the intervals job raised
    (no method to group), and the command waited for them until its timeout."""
    from fminspect.cli import main

    (dataset_root / "GT" / "img1.png").write_text("not an image")
    out = tmp_path / "shots"
    assert main(["screenshots", str(out), "--dataset", str(dataset_root)]) == 0
    assert (out / "dataset_statistics.png").is_file()


@pytest.mark.slow
def test_ctrl_c_copies_the_whole_table_even_after_a_click(qtbot, window, dataset_root):  # type: ignore[no-untyped-def]
    window.open_path(dataset_root)
    settle(qtbot, window)
    view = window.table.view
    view.setCurrentIndex(window.table.proxy.index(1, 2))  # a cell, as a click selects it
    view.setFocus()
    QtWidgets.QApplication.clipboard().clear()
    # the key press delivered to the view itself
    press = QtGui.QKeyEvent(
        QtCore.QEvent.Type.KeyPress, QtCore.Qt.Key.Key_C, QtCore.Qt.KeyboardModifier.ControlModifier
    )
    QtWidgets.QApplication.sendEvent(view, press)
    text = QtWidgets.QApplication.clipboard().text()
    assert text == window.table.model.to_csv()
    assert text.splitlines()[0].startswith("model,") and len(text.splitlines()) == 4
    # the headers name the variant in full (wrapped, never cut)
    header = window.table.model.headerData(
        window.table.model.keys.index("adpFm"), QtCore.Qt.Orientation.Horizontal
    )
    assert header == "adpFm ↑\nβ²=0.3\nthr=2·mean"


def test_the_gui_process_runs_blas_on_one_thread(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """Models are scored on parallel worker threads; multi-threaded OpenBLAS called from
    several of them at once made S-measure updates wait 50–250 ms (bench_gui.py)."""
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
    assert blas and all(i["num_threads"] == 1 for i in blas)


def test_a_job_of_a_deleted_window_calls_nothing(qtbot) -> None:  # type: ignore[no-untyped-def]
    import shiboken6

    from fminspect.gui.workers import submit

    called: list[str] = []
    kept, gone = QtCore.QObject(), QtCore.QObject()
    for name, owner in (("kept", kept), ("gone", gone)):
        submit(lambda: time.sleep(0.2), lambda _v, n=name: called.append(n), owner=owner)
    shiboken6.delete(gone)  # the window closed while its job ran
    assert QtCore.QThreadPool.globalInstance().waitForDone(PATIENCE_MS)
    wait_for(qtbot, lambda: called == ["kept"])
    deliver_posted()
    assert called == ["kept"]


def test_the_model_is_told_when_a_sample_s_results_are_drawn(
    qtbot, window, dataset_root, monkeypatch
):  # type: ignore[no-untyped-def]
    """It reads the next sample ahead then, not while the window draws (see the model's
    test); once per request."""
    window.open_path(dataset_root)
    settle(qtbot, window)
    told: list[bool] = []  # whether the window was still drawing when it said so
    monkeypatch.setattr(window.model, "results_drawn", lambda: told.append(window.drawing))
    window.model.step(1)
    settle(qtbot, window)
    wait_for(qtbot, lambda: bool(told), "told once drawn")
    deliver_posted()
    assert told == [False]


@pytest.mark.slow
def test_labels_problems_and_highlights_follow_what_is_shown(qtbot, window, dataset_root):  # type: ignore[no-untyped-def]
    c = window.model
    (dataset_root / "Pred" / "A" / "img2.png").write_bytes(b"not a png")
    window.open_path(dataset_root)
    settle(qtbot, window)
    # listed once the dataset browser has scored every sample, before img2 is visited
    assert c.sample.name == "img1"
    listed = [window.problem_list.item(i).text() for i in range(window.problem_list.count())]
    assert sum("img2.png" in t and "error" in t for t in listed) == 1
    window.params.beta2.setValue(2.0)
    c.step(1)  # a new sample right after a change of β²
    assert c.wait(PATIENCE_MS)
    assert "β²=2" in window.curves.plots["fm"].getPlotItem().titleLabel.text
    for delta in (-1, 1, -1, 1):  # visiting img2 again does not list its problem again
        c.step(delta)
        assert c.wait(PATIENCE_MS)
    listed = [window.problem_list.item(i).text() for i in range(window.problem_list.count())]
    assert len(listed) == len(set(listed)) and sum("img2.png" in t for t in listed) == 1
    # equal values everywhere: no model is highlighted as best
    model = window.table.model
    model.scores = {m: {**model.scores[m], "MAE": 0.5} for m in model.scores}
    model._refresh(None)
    assert "MAE" not in model._best
    col = model.keys.index("MAE")  # and the view's copy of the cells says so
    background = QtCore.Qt.ItemDataRole.BackgroundRole
    assert all(window.table.proxy.index(r, col).data(background) is None for r in range(3))


@pytest.mark.slow
def test_an_open_explain_window_says_when_the_parameters_changed(qtbot, window, dataset_root):  # type: ignore[no-untyped-def]
    (dataset_root / "Pred" / "B" / "img2.png").write_bytes(b"broken")
    c = opened(qtbot, window, dataset_root)
    explain = window.explain("A", "Sm")
    qtbot.addWidget(explain)
    assert "out of date" not in explain.windowTitle()
    window.params.alpha.setValue(0.8)
    assert "out of date" in explain.windowTitle()
    window.params.alpha.setValue(0.5)  # back to what the view shows
    assert "out of date" not in explain.windowTitle()
    c.step(1)  # to img2, whose map B cannot be read
    assert c.wait(PATIENCE_MS)
    assert "1 error: see Problems" in window.statusBar().currentMessage()
    from PySide6.QtTest import QTest

    explain.show()
    QTest.keyClick(explain, QtCore.Qt.Key.Key_Escape)  # closed from the keyboard
    assert not explain.isVisible()


@pytest.mark.slow
@pytest.mark.parametrize("kept", [64, 1])
def test_the_zoom_of_a_size_comes_back_with_a_sample_of_that_size(
    qtbot, window, dataset_root, monkeypatch, kept
):  # type: ignore[no-untyped-def]
    """The last zoom of each of the RANGES_KEPT sizes last shown comes back; that of a size
    not shown since is forgotten (a long browse through images of many sizes)."""
    from fminspect.gui.panels import map_grid

    monkeypatch.setattr(map_grid, "RANGES_KEPT", kept)
    for folder in ("GT", "Imgs", "Pred/A", "Pred/B", "Pred/C"):  # img2 at another size
        path = next((dataset_root / folder).glob("img2.*"))
        cv2.imwrite(str(path), cv2.resize(cv2.imread(str(path), cv2.IMREAD_UNCHANGED), (50, 30)))
    c = opened(qtbot, window, dataset_root)
    view = window.grid.views[0]
    whole = view.viewRange()
    view.setRange(xRange=(10, 30), yRange=(5, 20), padding=0)
    zoomed = view.viewRange()
    c.step(1)
    assert c.wait(PATIENCE_MS) and c.sample.shape == (30, 50)
    assert view.viewRange() != zoomed  # another size: the whole image
    c.step(-1)
    assert c.wait(PATIENCE_MS) and c.sample.name == "img1"
    assert len(window.grid._ranges) <= kept
    if kept > 1:
        np.testing.assert_allclose(view.viewRange(), zoomed)
    else:  # img2's size was remembered last, and img1's forgotten: the whole image
        np.testing.assert_allclose(view.viewRange(), whole)


@pytest.mark.faults
@pytest.mark.slow
def test_an_unreadable_gt_is_listed_once_and_a_rescoring_does_not_announce_it_again(
    qtbot, window, dataset_root
):  # type: ignore[no-untyped-def]
    """The browser's batch and the sample loader word an unreadable GT differently; it is one
    problem. Re-scoring the browser (after every parameter change) reports the errors it
    knows again: the status bar, which also holds the hover read-out, is left alone."""
    (dataset_root / "GT" / "img2.png").write_bytes(b"not a png")
    c = window.model
    window.open_path(dataset_root)
    settle(qtbot, window)
    c.step(1)  # to img2: the loader reports its GT too
    assert c.wait(PATIENCE_MS)
    listed = [window.problem_list.item(i).text() for i in range(window.problem_list.count())]
    assert sum("GT" in t and "img2.png" in t for t in listed) == 1, listed
    window.statusBar().clearMessage()
    window.model.scores.score_current()  # what the parameter timer does
    settle(qtbot, window)
    assert window.statusBar().currentMessage() == ""


def _toolkit_configs(root: Path, folder: Path) -> tuple[Path, Path]:
    """PySODEvalToolkit's two configs for the flat dataset ``root``, written in ``folder``."""
    import json

    dataset = {
        "DS": {
            "image": {"path": str(root / "Imgs"), "suffix": ".jpg"},
            "mask": {"path": str(root / "GT"), "suffix": ".png"},
        }
    }
    methods = {m: {"DS": {"path": str(root / "Pred" / m), "suffix": ".png"}} for m in "ABC"}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "datasets.json").write_text(json.dumps(dataset))
    (folder / "methods.json").write_text(json.dumps(methods))
    return folder / "datasets.json", folder / "methods.json"


def test_the_window_opens_toolkit_configs_and_says_when_there_is_no_model(
    qtbot, window, dataset_root, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    from fminspect.io.discovery import ToolkitConfigs

    d, m = _toolkit_configs(dataset_root, tmp_path / "cfg")
    assert window.open_path(ToolkitConfigs(d, m))
    (ds,) = window.model.datasets
    assert ds.method_names == ["A", "B", "C"] and len(ds.samples) == 5
    assert any(
        a.text() == "Open toolkit configs…" for a in window.menuBar().actions()[0].menu().actions()
    )
    # a folder with GTs and no model's maps: said in the status bar and the Problems list
    for method in "ABC":
        shutil.rmtree(dataset_root / "Pred" / method)
    assert window.open_path(dataset_root)
    assert "no model's maps" in window.statusBar().currentMessage()
    problems = [window.problem_list.item(i).text() for i in range(window.problem_list.count())]
    assert any("--dataset-config" in p for p in problems), problems


@pytest.mark.slow
def test_screenshots_of_toolkit_configs_and_of_a_folder_without_models(
    tmp_path, dataset_root, capsys
) -> None:  # type: ignore[no-untyped-def]
    from fminspect.cli import main

    d, m = _toolkit_configs(dataset_root, tmp_path / "cfg")
    out = tmp_path / "shots"
    args = ["screenshots", str(out), "--dataset-config", str(d), "--method-config", str(m)]
    assert main(args) == 0
    assert (out / "sample.png").is_file() and (out / "dataset.png").is_file()
    assert main(["screenshots", str(out), "--dataset-config", str(d)]) == 2
    assert "go together" in capsys.readouterr().err
    for method in "ABC":
        shutil.rmtree(dataset_root / "Pred" / method)
    assert main(["screenshots", str(tmp_path / "none"), "--dataset", str(dataset_root)]) == 2
    err = capsys.readouterr().err
    assert "no model's maps" in err and "--dataset-config" in err
    assert not (tmp_path / "none").exists() or not list((tmp_path / "none").glob("*.png"))


@pytest.mark.slow
def test_the_window_on_real_photographs_and_published_maps(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """SalBench DataSet1 from ../shared (never copied here): 18 photographs, five classic
    methods, CA's maps at 62 % of the GT's size. The window shows them all and its numbers
    are the scored arrays' (tests/metrics/test_parity_real_photographs.py: pysodmetrics' too)."""
    from tests.metrics.test_parity_real_photographs import SALBENCH

    if not SALBENCH.exists():
        pytest.skip(f"{SALBENCH} is not here (../shared beside the project)")
    assert window.open_path(SALBENCH)
    settle(qtbot, window)
    (ds,) = window.model.datasets
    assert ds.method_names == ["CA", "FT", "GC", "HC", "RC"] and len(ds.samples) == 18
    wait_for(qtbot, lambda: _table_shows(window, tuple(ds.method_names)))
    sample = window.model.sample
    assert all(sample.preds[m].shape == sample.gt.shape for m in ds.method_names)  # CA resized


def test_a_sample_whose_gt_cannot_be_read_still_shows_its_image_and_every_map(
    qtbot, window, dataset_root
) -> None:  # type: ignore[no-untyped-def]
    (dataset_root / "GT" / "img2.png").write_bytes(b"not a png")
    c = window.model
    window.open_path(dataset_root)
    settle(qtbot, window)
    c.step(1)  # to img2
    assert c.wait(PATIENCE_MS)
    settle(qtbot, window)
    sample = c.sample
    assert sample.name == "img2" and sample.gt is None and sample.gt_error
    assert sample.image is not None and set(sample.preds) == {"A", "B", "C"}
    grid = window.grid
    wait_for(qtbot, lambda: all(grid.cells[m].values is not None for m in ("image", "A", "B", "C")))
    assert "unreadable" in grid.cells["GT"].label.text and c.results == {}
    assert "no scores: the GT cannot be read" in window.statusBar().currentMessage()
    table = window.table.model  # no score to wait for: a dash, not "…", and why
    assert table.cell_data(0, 0)[QtCore.Qt.ItemDataRole.DisplayRole] == "–"
    assert "the GT cannot be read" in table.tooltip(0, 0)
    c.step(1)  # the next sample is scored as before
    assert c.wait(PATIENCE_MS)
    settle(qtbot, window)
    assert c.sample.name == "img3" and set(c.results) == {"A", "B", "C"}


def test_the_a_b_view_shows_two_maps_their_difference_and_flickers(
    qtbot, window, dataset_root
) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtTest import QTest

    window.open_path(dataset_root)
    settle(qtbot, window)
    window.browser.model_a.setCurrentIndex(window.browser.model_a.findData("A"))
    window.browser.model_b.setCurrentIndex(window.browser.model_b.findData("C"))
    window.grid.views[0].setRange(xRange=(2, 12), yRange=(3, 9), padding=0)  # zoomed in
    ab = window.open_ab()
    qtbot.addWidget(ab)
    qtbot.waitExposed(ab)  # the four panels equally wide (a trial: the flicker one was not)
    wait_for(qtbot, lambda: len({round(ab.panels[k][0].width()) for k in ab.panels}) == 1)
    # it opens at the grid's zoom (a trial: at the whole map)
    (x0, x1), (y0, y1) = ab.panels["A"][0].viewRange()  # (its aspect widens one side)
    assert (x0 + x1) / 2 == pytest.approx(7, abs=0.5) and (y0 + y1) / 2 == pytest.approx(6, abs=0.5)
    assert x1 - x0 == pytest.approx(10, abs=0.5) or y1 - y0 == pytest.approx(6, abs=0.5)
    assert (ab.a.currentText(), ab.b.currentText()) == ("A", "C")
    results = window.model.results
    # the maps the measures used, and their signed difference
    np.testing.assert_array_equal(ab.values("A"), results["A"].pair.pred)
    np.testing.assert_array_equal(ab.difference(), results["A"].pair.pred - results["C"].pair.pred)
    diff_image = ab.panels["A − B"][1].image
    np.testing.assert_array_equal(diff_image, ab.difference())
    assert ab.showing_a and "flicker: A" in ab.panels["flicker"][3].text
    QTest.keyClick(ab, QtCore.Qt.Key.Key_Space)  # the flicker panel shows B now
    assert not ab.showing_a and "flicker: C" in ab.panels["flicker"][3].text
    QTest.keyClick(ab, QtCore.Qt.Key.Key_F)  # focus: the flicker panel alone
    assert ab.focused and ab.focus_graphics.isVisible() and not ab.graphics.isVisible()
    np.testing.assert_array_equal(ab.focus_image.image, ab.panels["flicker"][1].image)
    QTest.keyClick(ab, QtCore.Qt.Key.Key_F)
    assert not ab.focused and ab.graphics.isVisible() and not ab.focus_graphics.isVisible()
    window.model.step(1)  # it follows the shown sample
    settle(qtbot, window)
    wait_for(qtbot, lambda: "img2" in ab.windowTitle())
    np.testing.assert_array_equal(ab.values("A"), window.model.results["A"].pair.pred)
    # a trial: D in the A/B view did nothing, and there was no scale for A − B
    QTest.keyClick(ab, QtCore.Qt.Key.Key_D)
    settle(qtbot, window)
    wait_for(qtbot, lambda: "img3" in ab.windowTitle())
    QTest.keyClick(ab, QtCore.Qt.Key.Key_Left)
    settle(qtbot, window)
    wait_for(qtbot, lambda: "img2" in ab.windowTitle())
    assert tuple(ab.difference_bar.levels()) == (-1.0, 1.0)
    QTest.keyClick(ab, QtCore.Qt.Key.Key_Escape)
    assert not ab.isVisible()
