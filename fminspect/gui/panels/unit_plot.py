"""Plots of the unit square ([0, 1] on both axes) whose end ticks keep their labels.

pyqtgraph draws a tick's label only when it lies wholly inside its axis. With the range
padded by a share of itself (0.04–0.1), a plot ~150 px wide or ~90 px high — a 1366 × 768
laptop's — left the labels "1.0" (and the left axis's "0") a pixel short of room, and dropped
them. The margins here are in pixels, measured from the labels in the plot's own font, and
kept when the plot is resized.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtGui


def keep_unit_square(plot: pg.PlotWidget, *, spare_px: float = 3.0) -> None:
    """Show [0, 1] × [0, 1] in ``plot`` with margins just wide enough for the end ticks'
    labels ("0" and "1.0") and ``spare_px`` more (room for a marker on the edge), at every
    size. The range is fixed: auto-range is switched off."""
    metrics = QtGui.QFontMetricsF(plot.font())
    # pyqtgraph measures a label with its text's bounding box and takes 0.8 of its height
    half_wide = metrics.boundingRect("1.0").width() / 2 + spare_px
    half_high = 0.8 * metrics.height() / 2 + spare_px
    view = plot.getViewBox()
    view.disableAutoRange()

    def fit(*_: object) -> None:
        width, height = view.width(), view.height()
        if width <= 2 * half_wide or height <= 2 * half_high:
            return  # not laid out yet
        dx = 1.0 / (width - 2 * half_wide)  # data units per pixel
        dy = 1.0 / (height - 2 * half_high)
        view.setRange(
            xRange=(-half_wide * dx, 1 + half_wide * dx),
            yRange=(-half_high * dy, 1 + half_high * dy),
            padding=0,
        )

    view.sigResized.connect(fit)
    fit()
