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
    settle(qtbot, window)
