"""Many models: choosing the shown ones, aliases, reference, pages, legend, the dataset view."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore

from fminspect.batch.scores import ScoreMatrix
from fminspect.cli import main
from fminspect.gui.controller import QtPreferences
from fminspect.gui.panels.curves import DISTINCT_STYLES, model_colour, model_line_style
from fminspect.inspector.selection import DEFAULT_SHOWN, ModelSelection
from tests.datasets import make_dataset
from tests.gui.conftest import PATIENCE_MS, settle, wait_for

MODELS = tuple(f"M{i:02d}" for i in range(14))


@pytest.fixture
def many_root(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "Many", n_images=4, methods=MODELS, size=(30, 40))


def test_palette_gives_40_distinct_colour_and_style_pairs() -> None:
    pairs = {(model_colour(i), model_line_style(i)) for i in range(40)}
    assert DISTINCT_STYLES == 40 and len(pairs) == 40


@pytest.mark.slow
def test_only_the_shown_models_are_read_scored_and_listed(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    window.open_path(many_root)
    settle(qtbot, window)
    shown = list(MODELS[:DEFAULT_SHOWN])
    assert window.selection.shown == shown
    assert set(window.model.results) == set(shown)  # the other two are neither scored…
    assert set(window.model.sample.preds) == set(shown)  # …nor read
    assert window.table.model.models == shown
    assert window.browser.model.models == shown
    assert [
        window.curves.legend.item(i).text() for i in range(window.curves.legend.count())
    ] == shown
    # the browser's background evaluation still covers every model (dataset view, top k)
    assert {r.method for r in window.model.scores.results["Many"]} == set(MODELS)
    # the picker: tick two more, untick one; applied together, a moment after the last click
    picker = window.picker
    for i in range(picker.list.count()):
        item = picker.list.item(i)
        model = item.data(QtCore.Qt.ItemDataRole.UserRole)
        if model in ("M12", "M13"):
            item.setCheckState(QtCore.Qt.CheckState.Checked)
        elif model == "M00":
            item.setCheckState(QtCore.Qt.CheckState.Unchecked)
    wait_for(qtbot, lambda: "M13" in window.model.results)
    settle(qtbot, window)
    now = [m for m in MODELS if m != "M00"]
    assert window.selection.shown == now
    assert set(window.model.results) == set(now)
    assert window.table.model.models == now
    # the browser: models A and B first (the orders by their scores sort by those columns:
    # in view beside the names), shown or not, then the other shown models
    a, b = window.browser.model.walk.pair
    assert a == "M00"  # still model A, though no longer shown
    assert window.browser.model.models == [a, b, *(m for m in now if m not in (a, b))]
    # the search box filters the list
    picker.search.setText("m1")
    visible = [
        picker.list.item(i).data(QtCore.Qt.ItemDataRole.UserRole)
        for i in range(picker.list.count())
        if not picker.list.item(i).isHidden()
    ]
    assert visible == ["M10", "M11", "M12", "M13"]


@pytest.mark.slow
def test_top_k_by_dataset_value_aliases_and_reference(qtbot, window, many_root, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window.open_path(many_root)
    settle(qtbot, window)
    picker = window.picker
    picker.top_k.setValue(3)
    picker.top_measure.setCurrentText("MAE")
    best = picker.show_top_k()
    mae = {r.method: r.values["MAE"] for r in window.model.scores.results["Many"]}
    assert best == sorted(mae, key=mae.get)[:3]  # lower MAE is better
    settle(qtbot, window)
    assert set(window.model.results) == set(best)
    # aliases from a PySODEvalToolkit-style file: grid titles, table, browser headers
    path = tmp_path / "aliases.yaml"
    path.write_text(f"method: {{'{best[0]}': 'Best', 'M99': 'Nobody'}}\n", encoding="utf-8")
    assert picker.load_aliases(str(path)) == 1  # M99 is not in this dataset
    settle(qtbot, window)
    row = window.table.model.models.index(best[0])
    assert window.table.model.headerData(row, QtCore.Qt.Orientation.Vertical) == "Best"
    column = 1 + window.browser.model.models.index(best[0])
    assert window.browser.model.headerData(column, QtCore.Qt.Orientation.Horizontal) == "Best"
    assert "Best" in [
        window.curves.legend.item(i).text() for i in range(window.curves.legend.count())
    ]
    assert window.grid.cells[best[0]].label.text.startswith("Best")
    assert f"{best[0]},Best," in window.table.model.to_csv()
    # a bad alias file is a message, not an exception
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert picker.load_aliases(str(bad)) == 0
    assert "aliases not read" in picker.status.text() and str(bad) in picker.status.text()
    # the reference: always shown and first
    window.selection.set_reference("M13")
    settle(qtbot, window)
    assert window.table.model.models[0] == "M13" and "M13" in window.model.results


@pytest.mark.slow
def test_grid_pages_and_legend_highlight(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    window.open_path(many_root)
    settle(qtbot, window)
    grid = window.grid

    def filled() -> None:  # the panels of a new page are made and filled one per turn
        wait_for(qtbot, lambda: not grid.filling)

    grid.set_page_size(5)
    filled()
    shown = window.selection.shown
    assert list(grid.cells) == ["image", "GT", *shown[:5]]
    assert grid.page_count() == 3 and grid.pager.isVisibleTo(window)
    grid.turn_page(1)
    filled()
    assert list(grid.cells) == ["image", "GT", *shown[5:10]]
    cell = grid.cells[shown[5]]
    assert np.array_equal(cell.values, window.model.results[shown[5]].pair.pred)
    grid.turn_page(1)
    grid.turn_page(1)  # wraps around
    filled()
    assert list(grid.cells)[2] == shown[0]
    # markers: none for 12 curves until some are highlighted, then for those only
    curves = window.curves
    wait_for(qtbot, lambda: len(curves.results) == len(shown))
    assert curves.marked() == []
    curves.legend.itemClicked.emit(curves.legend.item(1))  # a click on the second model
    assert window.selection.highlighted == {shown[1]}
    assert curves.marked() == [shown[1]]
    assert (
        curves.curves[shown[1]]["pr"].pen().widthF() > curves.curves[shown[0]]["pr"].pen().widthF()
    )
    item = curves.legend.item(1)
    item.setCheckState(QtCore.Qt.CheckState.Unchecked)  # hides its curves
    assert not curves.curves[shown[1]]["pr"].isVisible() and curves.marked() == []


@pytest.mark.slow
def test_dataset_view_side_by_side_and_pair_disagreement(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "Multi"
    for i, name in enumerate(("CAMO", "COD10K")):
        make_dataset(
            root,
            n_images=5,
            methods=("A", "B", "C"),
            size=(30, 40),
            layout="multi",
            dataset=name,
            seed=i,
        )
    out = tmp_path / "results"
    assert main(["eval", str(root), "--out", str(out), "--quiet", "--no-plots"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    window.open_path(root)
    wait_for(qtbot, lambda: len(window.model.scores.results) == 2)
    settle(qtbot, window)
    assert window.model.go_to("img2", "COD10K")  # a script's choice: the browser follows
    assert window.browser.dataset.currentText() == "COD10K"
    assert window.go_to("img1", "CAMO") and window.model.dataset.name == "CAMO"
    assert window.browser.dataset.currentText() == "CAMO"
    view = window.dataset_view
    model = view.model
    assert model.datasets == []  # drawn when the view is shown, not while it is hidden
    window.tabs.setCurrentIndex(1)
    assert model.datasets == ["CAMO", "COD10K"]
    wait_for(qtbot, lambda: len(view._curve_items) == 3 * 3)  # 3 methods × 3 plots
    # the third plot: the ROC of the mean curves (hit rate = recall against FPR)
    view.third.setCurrentText("ROC")
    wait_for(qtbot, lambda: len(view._curve_items) == 3 * 3)  # one plot a turn
    third = [item for k, item in view._curve_items if k == "em"]
    assert len(third) == 3 and "ROC" in view.plots["em"].getPlotItem().titleLabel.text
    curves = view.results[view.curve_dataset.currentText()][0].mean_curves  # the first line's
    x, y = third[0].xData, third[0].yData
    assert np.array_equal(x, curves["FPR"]) and np.array_equal(y, curves["Recall"])
    view.third.setCurrentText("IoU")
    wait_for(qtbot, lambda: len(view._curve_items) == 3 * 3)
    em = next(item for k, item in view._curve_items if k == "em")
    x, y = em.xData, em.yData
    assert np.array_equal(y, curves["IoU"]) and x[-1] == 1.0
    for col, (ds, key) in enumerate(model.columns):
        for row, method in enumerate(model.methods):
            value = model.value(row, col)
            if key == "coverage":
                assert value == 5
            else:
                assert value == summary[ds][method][key]  # exactly eval's numbers
    lines = view.model.to_csv().splitlines()
    assert len(lines) == 1 + 2 * 3 and lines[0].startswith("dataset,method,alias,images")
    # a method's row selected: its curves highlighted (thicker, with markers), as the legend
    # of the sample view's curves does
    first = model.methods[view.proxy.mapToSource(view.proxy.index(0, 0)).row()]
    view.table.selectRow(0)
    assert window.selection.highlighted == {first}
    window.selection.set_highlighted(())
    # a method pair: where A and B differ most on the chosen dataset
    view.set_pair("A", "B", "Sm", "COD10K")
    rows = view.pair_rows()
    matrix: ScoreMatrix = window.model.scores.matrices["COD10K"]
    diffs = matrix.column("A", "Sm") - matrix.column("B", "Sm")
    assert [r[3] for r in rows] == sorted(diffs.tolist(), key=lambda d: -abs(d))
    assert view.pair_list.rowCount() == 5
    tip = view.pair_list.item(0, 0).toolTip()  # the whole name, if elided, and A's and B's
    assert tip == f"{rows[0][0]}\nA {rows[0][1]:.4f}, B {rows[0][2]:.4f}"
    # a trial: the browser's filter left the list unchanged; it keeps to what is listed
    window.go_to(rows[0][0], "COD10K")
    settle(qtbot, window)
    window.browser.filter.setText(f"not name ~ {rows[0][0]}")
    window.browser.apply_filter()
    assert [r[0] for r in view.pair_rows()] == [r[0] for r in rows[1:]]
    assert view.pair_list.rowCount() == 4 and "listed by the filter" in view.pair_summary.text()
    window.browser.filter.setText("")
    window.browser.apply_filter()
    assert view.pair_list.rowCount() == 5
    with qtbot.waitSignal(view.sample_chosen, timeout=PATIENCE_MS) as signal:
        view.pair_list.cellClicked.emit(0, 0)
    assert signal.args == ["COD10K", rows[0][0]]
    settle(qtbot, window)
    assert window.model.dataset.name == "COD10K"
    assert window.model.sample.name == rows[0][0]
    assert window.tabs.currentIndex() == 0


def test_the_pair_list_is_wide_enough_to_read_until_the_user_drags_it(qtbot, qsettings) -> None:  # type: ignore[no-untyped-def]
    """COD10K's image names (…-Aquatic-3-Crab-28) were cut to "…rab-28": the list now gets
    35 % of the view (within 270–460 px) as the view is resized, and the width the user drags
    it to is kept."""
    from fminspect.gui.panels.dataset_view import DatasetViewPanel

    view = DatasetViewPanel(ModelSelection(QtPreferences(qsettings)), lambda name: None)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    qtbot.waitExposed(view)
    # a name too long for its column keeps its end (…Aquatic-3-Crab-28: at 1366 px, both
    # ends kept showed "COD1…-210", what every name shares and too little of the rest)
    assert view.pair_list.textElideMode() == QtCore.Qt.TextElideMode.ElideLeft
    width = view.splitter.width()
    assert abs(view.splitter.sizes()[1] - 0.35 * width) <= 2
    view.resize(1200, 700)  # it follows the view's width
    wait_for(qtbot, lambda: view.splitter.width() > width)
    width = view.splitter.width()
    assert abs(view.splitter.sizes()[1] - 0.35 * width) <= 2
    # narrower than 330 px it shows the names and A's lead, not A's and B's values (a trial
    # at 1366 px: ten characters of each name beside them)
    assert view.pair_list.isColumnHidden(1) == (view.pair_list.width() < 330)
    view.splitter.moveSplitter(700, 1)  # the user drags it wider
    dragged = view.splitter.sizes()[1]
    assert dragged > 0.4 * width
    view.resize(1150, 700)
    wait_for(qtbot, lambda: view.splitter.width() < width)
    assert view.splitter.sizes()[1] == dragged
    assert not view.pair_list.isColumnHidden(1) and not view.pair_list.isColumnHidden(2)
    view.splitter.moveSplitter(view.splitter.width() - 250, 1)  # dragged narrow
    wait_for(qtbot, lambda: view.pair_list.isColumnHidden(1) and view.pair_list.isColumnHidden(2))


@pytest.mark.slow
def test_review_cases_none_shown_legend_box_playground_and_browser_order(
    qtbot, window, many_root
) -> None:  # type: ignore[no-untyped-def]
    window.open_path(many_root)
    settle(qtbot, window)
    # a click on a legend check box hides the curves without highlighting the model
    curves = window.curves
    item = curves.legend.item(0)
    item.setCheckState(QtCore.Qt.CheckState.Unchecked)  # Qt: a change, then a click
    curves.legend.itemClicked.emit(item)
    assert window.selection.hidden_curves == {MODELS[0]} and window.selection.highlighted == set()
    # the playground opens the model of the selected table row (the reference is row 0)
    window.selection.set_reference("M13")
    settle(qtbot, window)
    window.table.view.selectRow(0)
    playground = window.open_playground()
    assert playground is not None and "M13" in playground.windowTitle()
    playground.close()
    # ordering the browser by a model that is not shown adds its column
    window.browser.model_a.setCurrentIndex(window.browser.model_a.findData("M12"))
    window.browser.order.setCurrentIndex(1)
    model = window.browser.model
    assert "M12" in model.models and model.sort_column == 1 + model.models.index("M12")
    # "none": no model map, no row
    window.selection.set_shown([])
    settle(qtbot, window)
    assert list(window.grid.cells) == ["image", "GT", "M13"]  # the reference stays
    window.selection.set_reference(None)
    window.selection.set_shown([])
    settle(qtbot, window)
    assert list(window.grid.cells) == ["image", "GT"] and window.table.model.models == []


@pytest.mark.slow
def test_the_result_cache_counts_the_maps_behind_a_result(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    from fminspect.inspector.memory import array_bytes

    window.open_path(many_root)
    settle(qtbot, window)
    result = window.model.results["M00"]
    held = result.pair.pred.nbytes + result.pair.gt.mask.nbytes
    assert array_bytes(result) >= held + array_bytes(result.fmeasure)


@pytest.mark.slow
def test_panels_made_one_per_turn_show_the_whole_image(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    # 14 panels: made and filled over several event-loop turns; every one shows the image
    # whole (a panel linked before it had a size once pulled every range out to ±7,000 px)
    window.open_path(many_root)
    settle(qtbot, window)
    h, w = window.model.sample.shape
    for view in window.grid.views:
        (x0, x1), (y0, y1) = view.viewRange()
        whole_x = -0.2 * w <= x0 <= 0 and w <= x1 <= 1.2 * w
        whole_y = -0.2 * h <= y0 <= 0 and h <= y1 <= 1.2 * h
        assert whole_x or whole_y  # the image fits one way, with margins the other
        assert x1 - x0 < 3 * w and y1 - y0 < 3 * h
    # also after a change of the shown models and a page turn
    window.selection.set_shown(MODELS[:9])
    settle(qtbot, window)
    window.grid.set_page_size(4)
    window.grid.turn_page(1)
    settle(qtbot, window)
    for view in window.grid.views:
        (x0, x1), (y0, y1) = view.viewRange()
        assert x1 - x0 < 3 * w and y1 - y0 < 3 * h


def test_resizing_the_window_keeps_every_panel_on_the_image(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    """A trial: each resize (a maximise) widened every panel's range more — ±650, ±5,000,
    then ±41,000 px on a 400-px image — until the maps were dots (pyqtgraph's two-way
    links between aspect-locked panels of different sizes during the resize)."""
    from PySide6 import QtWidgets

    window.resize(1400, 800)
    window.open_path(many_root)
    settle(qtbot, window)
    h, w = window.model.sample.shape

    def on_the_image(view) -> bool:  # type: ignore[no-untyped-def]
        (x0, x1), (y0, y1) = view.viewRange()
        fits_x = x1 - x0 <= 1.2 * w and x0 <= 0 and x1 >= w
        fits_y = y1 - y0 <= 1.2 * h and y0 <= 0 and y1 >= h
        return fits_x or fits_y  # the whole image, filling the panel one way

    grid = window.grid
    ends = []
    for _ in range(2):  # the same resizes twice: the same ranges (nothing accumulates)
        for size in [(1600, 900), (1920, 1080), (1366, 768), (1700, 1000), (1400, 800)]:
            window.resize(*size)
            # (the layout gives the panels their sizes over a few turns of the event loop,
            # and lays them out again in other columns if those show them larger)
            wait_for(qtbot, lambda: not grid.columns.pending and not grid.filling, str(size))
            wait_for(qtbot, lambda: all(on_the_image(v) for v in grid.views), str(size))
            QtWidgets.QApplication.processEvents()
            ranges = [v.viewRange() for v in grid.views if not on_the_image(v)]
            assert not ranges, (size, ranges)  # and it stays so once the layout has settled
        ends.append(grid.views[0].viewRange())
    np.testing.assert_allclose(ends[1], ends[0], atol=1.0)


@pytest.mark.slow
def test_stepping_to_a_sample_read_ahead_draws_each_map_once_with_its_result(
    qtbot, window, many_root
) -> None:  # type: ignore[no-untyped-def]
    window.open_path(many_root)
    settle(qtbot, window)
    c = window.model
    shown = window.grid.page_models()
    assert len(shown) > 6  # the panels are filled over several turns (staged)
    wait_for(qtbot, lambda: c.cached_models("Many/img2") >= set(shown))
    wait_for(qtbot, lambda: not c.prefetching and not window.drawing)
    drawn: list[tuple[str, object]] = []
    show_map = window.grid._show_map

    def counted(name, cell, values):  # type: ignore[no-untyped-def]
        drawn.append((name, values))
        show_map(name, cell, values)

    window.grid._show_map = counted
    c.step(1)
    assert c.sample.name == "img2"
    wait_for(qtbot, lambda: not window.drawing)
    # every model's panel was drawn once, with the map its measures used (not the map as
    # read, then again with the result's)
    assert sorted(n for n, _ in drawn) == sorted(shown)
    assert all(values is c.results[n].pair.pred for n, values in drawn)
    # and every number is on screen once the window says it has drawn everything
    for m in shown:
        got = window.table.model.scores.get(m, {})
        expected = c.results[m].scores()
        assert expected and all(
            np.array_equal(got.get(k), v, equal_nan=True) for k, v in expected.items()
        )
    for m in shown:  # every curve plot drawn from this sample's results
        f = c.results[m].fmeasure
        assert all(window.curves._drawn[(m, k)][0] is f for k in ("pr", "fm", "em"))


@pytest.mark.slow
def test_the_reference_is_on_every_page(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    window.open_path(many_root)
    settle(qtbot, window)
    window.selection.set_reference("M13")
    settle(qtbot, window)
    grid = window.grid
    grid.set_page_size(4)  # the reference and 3 others a page
    pages = []
    for _ in range(grid.page_count()):
        wait_for(qtbot, lambda: not grid.filling)
        pages.append(list(grid.cells)[2:])
        grid.turn_page(1)
    assert all(page[0] == "M13" for page in pages)
    others = [m for page in pages for m in page[1:]]
    assert others == [m for m in window.selection.shown if m != "M13"]  # each once
    assert "reference" in grid.pager.label.text()


def _fill(window) -> float:  # type: ignore[no-untyped-def]
    """How much of its panel's limiting side the image takes: 1 when it fills it."""
    h, w = window.model.sample.shape
    (x0, x1), (y0, y1) = window.grid.views[0].viewRange()
    return 1 / min((x1 - x0) / w, (y1 - y0) / h)


@pytest.mark.slow
def test_a_new_layout_fits_the_maps_to_their_panels_again(qtbot, window, many_root) -> None:  # type: ignore[no-untyped-def]
    """The zoom kept across a new layout is the range asked for, not the one shown: the
    range shown in a wide panel is widened to keep the image's aspect, and kept in the
    smaller panels of a fuller page it drew every map at about half their size."""
    window.open_path(many_root)
    settle(qtbot, window)
    window.selection.set_shown(MODELS[:1])  # 3 panels in a row: wide ones
    settle(qtbot, window)
    assert _fill(window) > 0.95
    window.selection.set_shown(MODELS)  # a page of 12 models
    settle(qtbot, window)
    assert len(window.grid.cells) == 14
    assert _fill(window) > 0.95
