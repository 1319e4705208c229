"""File ▸ Qualitative figure… : the tagged samples in the browser's order, the shown models
in their order under their aliases, written in the background."""

from __future__ import annotations

import cv2

from tests.datasets import make_dataset
from tests.gui.conftest import settle, wait_for


def test_the_window_s_figure_has_the_tagged_samples_and_the_shown_models(
    qtbot, window, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B", "C"), size=(60, 80))
    window.open_path(root)
    settle(qtbot, window)
    model = window.model
    order = model.walk.ordered()
    for name in (order[3], order[1]):  # tagged out of order: the figure follows the list's
        model.go_to(name)
        wait_for(qtbot, lambda n=name: model.requested is not None and model.requested.name == n)
        model.toggle_tag(1)
    model.selection.set_shown(["C", "A"])
    model.selection.set_reference("C")  # the reference comes first, as in every view
    model.selection.set_alias("C", "Ours")
    dialog = window.open_qualitative()
    assert dialog is not None
    assert dialog.source.currentData() == ("tagged", 1)
    assert [s.name for s in dialog.samples()] == [order[1], order[3]]
    assert dialog.columns.text() == "Image, GT, Ours, A"
    out = tmp_path / "fig.png"
    dialog.path.setText(str(out))
    dialog.write()
    wait_for(qtbot, lambda: dialog.made is not None, "the figure written in the background")
    assert out.exists() and out.with_suffix(".tex").exists()
    assert "written:" in dialog.status.text()
    picture = cv2.imread(str(out))
    assert picture.shape[1] == round(7.0 * 300)  # the page's width at 300 dpi
    dialog.close()
    # the map grid's zoom as an inset of the shown sample's row (a trial: the window had
    # no inset, the command line's --inset only)
    model.go_to(order[1])
    settle(qtbot, window)
    window.grid.views[0].setRange(xRange=(10, 30), yRange=(8, 23), padding=0)
    dialog = window.open_qualitative()
    assert dialog is not None and dialog.inset.isEnabled() and not dialog.inset.isChecked()
    key, region = dialog.inset_region()
    assert key == f"DS/{order[1]}" and (region.w, region.h) != (80, 60)
    assert dialog.spec().insets == {}
    dialog.inset.setChecked(True)
    dialog.inset_corner.setCurrentText("upper left")
    spec = dialog.spec()
    assert spec.insets == {key: region} and spec.inset_corner == "upper left"
    dialog.path.setText(str(tmp_path / "inset.pdf"))
    dialog.write()
    wait_for(qtbot, lambda: dialog.made is not None, "the figure written in the background")
    assert (tmp_path / "inset.pdf").exists()
    dialog.close()
    settle(qtbot, window)
