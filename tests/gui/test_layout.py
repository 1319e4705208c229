"""The window at a laptop's 1366 × 768 and at 1920 × 1080: no dock needs a horizontal scroll
bar, the overlays' colour legend is in view, the metrics table shows 12 models without
scrolling when the screen is tall enough, and the dataset view keeps its plots' titles."""

from __future__ import annotations

import pytest
from PySide6 import QtWidgets

from tests.datasets import make_dataset
from tests.gui.conftest import settle

# names as long as real ones (a trial: `BSA-Net-v2`; published folders such as
# `SINet-V2_CVPR2022`): the choices sized to them widened the window
METHODS = (*(f"Method-{k:02d}" for k in range(13)), "SINet-V2_CVPR2022")


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_docks_legends_and_the_table_fit_the_screen(qtbot, window, tmp_path, size) -> None:  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=3, methods=METHODS, size=(60, 80))
    window.resize(*size)
    window.open_path(root)
    settle(qtbot, window)
    # the window is as small as asked: a trial found it 1,401 px wide at least (the curves'
    # minimum widths), wider than a 1366-px laptop screen
    assert window.minimumSizeHint().width() <= 1366
    assert (window.width(), window.height()) == size
    window.params.confusion.setChecked(True)
    QtWidgets.QApplication.processEvents()
    for dock in window.findChildren(QtWidgets.QDockWidget):
        if not dock.isVisible() or dock.visibleRegion().isEmpty():
            continue  # (a tab behind another)
        for area in dock.findChildren(QtWidgets.QAbstractScrollArea):
            if isinstance(area, QtWidgets.QScrollArea):
                assert not area.horizontalScrollBar().isVisible(), (dock.objectName(), size)
    legend = window.grid.legend
    assert legend.isVisible() and not legend.visibleRegion().isEmpty()
    assert all(t in legend.text() for t in ("TP", "FP", "FN", "GT contour"))
    assert legend.sizeHint().width() <= legend.width()
    # a wide window widens the list (a trial: 305 px at 1920 too, two models' columns)
    list_width = window.browser_dock.width()
    assert list_width >= 0.2 * size[0] if size[0] >= 1920 else list_width < 0.25 * size[0], (
        list_width
    )
    table = window.table.view
    assert len(window.selection.shown) == 12
    if size[1] >= 1080:  # every shown model's row in view
        assert not table.verticalScrollBar().isVisible()
        assert table.rowAt(table.viewport().height() - 1) in (-1, 11)
    _titles_and_axes_whole(window.curves.plots, size)  # the sample view's curves
    assert not window.curves.legend.horizontalScrollBar().isVisible()  # names elided
    window.tabs.setCurrentIndex(1)
    settle(qtbot, window)
    QtWidgets.QApplication.processEvents()
    _titles_and_axes_whole(window.dataset_view.plots, size)
    # every tab in every theme keeps the window's width (a trial: a theme, then the scatter
    # tab, made it 1,409 px wide at 1366: its choices sized to the models' names)
    try:
        for theme in ("dark", "light"):
            window.set_theme(theme)
            for tab in range(window.tabs.count()):
                window.tabs.setCurrentIndex(tab)
                QtWidgets.QApplication.processEvents()
                where = (theme, window.tabs.tabText(tab), size)
                assert window.width() == size[0], where
                assert window.minimumSizeHint().width() <= 1366, where
    finally:
        window.set_theme("system")


def _titles_and_axes_whole(plots, size) -> None:  # type: ignore[no-untyped-def]
    """Each plot's title inside it, and its layout within the widget: a wider title pushed
    the plot's layout past the widget's right edge, which cut the title and the axis's last
    tick ("PR (mean curves", "F-measure (β²=0.3", "1." at 1366 × 768)."""
    for name, plot in plots.items():
        title = plot.getPlotItem().titleLabel
        text = title.item.mapRectToScene(title.item.boundingRect())
        assert text.left() >= 0 and text.right() <= plot.viewport().width(), (name, size)
        layout = plot.getPlotItem().sceneBoundingRect()
        assert layout.right() <= plot.viewport().width() + 0.5, (name, size, layout)
        # both ends of both axes labelled: pyqtgraph drops a label not wholly inside its
        # axis, and at 1366 × 768 it dropped every "1.0" and the left axes' "0"
        for side in ("bottom", "left"):
            drawn = _tick_labels_drawn(plot.getAxis(side))
            assert drawn[0] == "0" and drawn[-1] == "1.0", (name, side, size, drawn)


def _tick_labels_drawn(axis) -> list[str]:  # type: ignore[no-untyped-def]
    """The tick labels ``axis`` draws, from low to high values."""
    from PySide6 import QtGui

    image = QtGui.QImage(8, 8, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    try:
        texts = axis.generateDrawSpecs(painter)[2]
    finally:
        painter.end()
    labels = [(rect.center(), text) for rect, _flags, text in texts]
    if axis.orientation == "bottom":
        return [t for c, t in sorted(labels, key=lambda ct: ct[0].x())]
    return [t for c, t in sorted(labels, key=lambda ct: -ct[0].y())]


def test_the_grid_s_columns_show_the_maps_largest_in_its_area() -> None:
    """A trial: at 1920 × 1080 the 13 panels were 5 × 3 in a wide, low area (maps 90 px
    high) where 7 × 2 shows them 1.5× larger; at 1366 × 768, 5 × 3 is best."""
    from fminspect.gui.panels.map_grid import COLORBAR_WIDTH, TITLE_HEIGHT, grid_columns

    def map_height(n: int, cols: int, width: float, height: float, aspect: float) -> float:
        rows = -(-n // cols)
        return min(height / rows - TITLE_HEIGHT, (width - COLORBAR_WIDTH) / cols / aspect)

    for n, width, height, aspect in [
        (13, 1302, 363, 522 / 432),  # a full-HD window's grid (the trial's)
        (13, 700, 290, 4 / 3),  # 1366 × 768
        (13, 600, 900, 4 / 3),  # tall: few columns
        (4, 1000, 300, 1.0),  # one row
        (14, 900, 600, 0.75),  # portrait images
    ]:
        cols = grid_columns(n, width, height, aspect)
        best = max(map_height(n, c, width, height, aspect) for c in range(1, n + 1))
        assert map_height(n, cols, width, height, aspect) >= best - 0.1, (n, width, height)
    assert grid_columns(13, 1302, 363, 522 / 432) == 7
    assert grid_columns(13, 700, 290, 4 / 3) == 5
    assert grid_columns(1, 1000, 1000, 1.0) == 1
    assert grid_columns(13, 0, 0, 1.0) == 5  # no area yet: about 1.7 columns per row
    # the current number is kept while it is nearly as good: a walk through images of
    # slightly different shapes does not lay the panels out anew at every step
    assert grid_columns(13, 1302, 363, 1.0) == 7  # maps 163.5 px high; 8 columns: 154
    assert grid_columns(13, 1302, 363, 1.0, current=8) == 8  # 94 %: kept
    assert grid_columns(13, 1302, 363, 1.0, current=4) == 7  # 4 × 4: 73 px, not kept
