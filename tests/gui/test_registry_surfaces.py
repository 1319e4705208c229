"""One registry entry reaches every surface of the window: a measure family registered in
one call (tests/toy_measure.py) and ticked in View → Measures… gets a metrics-table column,
the browser's and the dataset view's measure lists and values (scored by the background
service process, which loads it through FMINSPECT_MEASURE_MODULES), the model picker's top-k
list and an explain view — none of them is told about it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtTest, QtWidgets

from fminspect.metrics import default_keys
from tests.gui.conftest import settle, wait_for
from tests.toy_measure import FAMILY as TOY


def test_a_measure_that_needs_the_image_is_given_it_in_the_window(  # type: ignore[no-untyped-def]
    toy_image, qtbot, window, dataset_root: Path
) -> None:
    """Only ``Family.needs_image`` tells the window to read and pass the image: the table's
    value of every model and the browser's column are the image's mean grey level."""
    assert window.open_path(dataset_root)
    settle(qtbot, window)
    window.set_measures([*default_keys(), "ToyImg"])
    wait_for(qtbot, lambda: "ToyImg" in window.browser.model.matrix.keys)
    settle(qtbot, window)
    wait_for(qtbot, lambda: bool(window.model.scores.results.get("DS")))
    sample = window.model.sample
    assert sample is not None and sample.image is not None
    grey = float(sample.image.astype(np.float64).mean() / 255)
    for model in window.model.results:
        assert window.table.model.scores[model]["ToyImg"] == pytest.approx(grey, abs=1e-15)
    column = window.browser.model.matrix.column("A", "ToyImg")
    assert column[window.browser.model.matrix.sample_index[sample.name]] == pytest.approx(
        grey, abs=1e-15
    )


def _items(combo: QtWidgets.QComboBox) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


@pytest.mark.slow
def test_a_registered_measure_reaches_every_surface_of_the_window(
    toy,
    qtbot,
    window,
    dataset_root: Path,  # type: ignore[no-untyped-def]
) -> None:
    assert window.open_path(dataset_root)
    settle(qtbot, window)
    assert "Toy" not in window.table.model.keys  # not a default measure
    window.set_measures([*default_keys(), "Toy"])
    wait_for(qtbot, lambda: "Toy" in window.browser.model.matrix.keys)
    settle(qtbot, window)
    wait_for(qtbot, lambda: bool(window.model.scores.results.get("DS")))
    # the metrics table: a column with the toy's value for every model
    table = window.table.model
    assert "Toy" in table.keys and table.label("Toy") == "Toy thr=0.5"
    sample = window.model.sample
    for model, result in window.model.results.items():
        expected = TOY.compute(result.pair, result.params, None).score
        assert table.scores[model]["Toy"] == expected
    # the browser: its measure lists and its scores (from the service process)
    assert "Toy" in _items(window.browser.measure)
    matrix = window.browser.model.matrix
    column = matrix.column("A", "Toy")
    assert np.isfinite(column).all()
    row = matrix.sample_index[sample.name]
    assert column[row] == pytest.approx(table.scores["A"]["Toy"], abs=1e-15)
    # the dataset view: a column of dataset values, and its pair measure list
    window.dataset_view.refresh()
    assert ("DS", "Toy") in window.dataset_view.model.columns
    assert "Toy" in _items(window.dataset_view.pair_measure)
    # the model picker's top-k list
    assert "Toy" in _items(window.picker.top_measure)
    # an explain view (the one the family names)
    view = window.explain("A", "Toy")
    assert view is not None and view.view.TITLE == "MAE"
    # the choice is remembered for the next window
    assert "Toy" in window.model._stored_measures()


def test_every_registered_parameter_has_an_editor_that_reaches_the_scoring(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    from fminspect.metrics import DEFAULT_PARAMS, parameters

    panel = window.params
    assert set(panel.extra) == set(parameters()) - {"beta2", "alpha"}
    assert panel._extra_values() == {n: getattr(DEFAULT_PARAMS, n) for n in panel.extra}
    panel.more.setChecked(True)
    panel.extra["ap_interpolation"].setCurrentText("11pt")
    panel.extra["hce_relax"].setValue(3)
    assert window.model.settings.params.ap_interpolation == "11pt"
    assert window.model.settings.params.hce_relax == 3


def test_a_convention_chosen_in_the_panel_sets_every_knob_and_reaches_the_scoring(
    qtbot, window
) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from fminspect.metrics import DEFAULT_PARAMS
    from fminspect.pipeline.conventions import CONVENTION_KNOBS, CONVENTIONS

    panel = window.params
    assert panel.convention.currentText() == "pysodmetrics"  # the defaults are that one
    panel.beta2.setValue(1.0)  # a knob no convention fixes: kept through every choice
    for name, c in CONVENTIONS.items():
        panel.convention.setCurrentText(name)
        panel.convention.activated.emit(panel.convention.currentIndex())
        defaults = {k: getattr(DEFAULT_PARAMS, k) for k in CONVENTION_KNOBS}
        want = replace(DEFAULT_PARAMS, beta2=1.0, **{**defaults, **c.params})
        assert window.model.settings.params == want, name
        assert window.model.settings.interpolation == c.interpolation, name
        assert panel.convention.currentText() == name
    # one knob changed by hand: no convention any more, and the box says so
    assert list(CONVENTIONS)[-1] == "context-original"  # no stretch, GT >= 128
    panel.stretch.setCurrentIndex(1)  # ÷ max
    assert panel.convention.currentText() == "custom"
    assert window.model.settings.params.stretch_rule == "max"


def test_f1_lists_every_shortcut_of_the_window(window) -> None:  # type: ignore[no-untyped-def]
    from fminspect.gui.dialogs.shortcuts import SHORTCUTS

    listed = " ".join(keys for keys, _ in SHORTCUTS)
    shortcuts = [a.shortcut().toString() for a in window.actions() if not a.shortcut().isEmpty()]
    assert {"D", "A", "N", "1", "9"} <= set(shortcuts)
    for key in shortcuts:
        assert key in listed or (key.isdigit() and "1 … 9" in listed), key
    # and the A/B view's and the explain windows' own (a trial: not listed)
    assert "Esc" in listed and "Ctrl+W" in listed


def test_the_shortcuts_list_opens_with_every_row_whole(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """A trial: at its fixed 560 px the actions were cut behind a horizontal scroll bar."""
    from fminspect.gui.dialogs.shortcuts import SHORTCUTS, ShortcutsDialog

    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    table = dialog.table
    assert not table.horizontalScrollBar().isVisible()
    assert not table.verticalScrollBar().isVisible()  # the screen is tall enough here
    widths = [table.fontMetrics().horizontalAdvance(action) for _, action in SHORTCUTS]
    assert table.columnWidth(1) >= max(widths)
    dialog.activateWindow()
    wait_for(qtbot, dialog.isActiveWindow, "the list active")
    QtTest.QTest.keyClick(dialog, QtCore.Qt.Key.Key_W, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert not dialog.isVisible()
