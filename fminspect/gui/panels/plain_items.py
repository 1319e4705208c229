"""Curves and straight lines that Qt paints by itself, with no call into Python.

pyqtgraph's ``PlotDataItem`` and ``InfiniteLine`` answer Qt's ``boundingRect`` and ``paint``
in Python: stepping to the next sample of 12 models made ~250 ``boundingRect`` calls into
the curves and ~130 into the lines (most of them into hidden crosshairs), ~25 ms of the GUI
thread per step, each call waiting for the interpreter lock that the threads scoring the
next sample hold in turns. The items here are plain ``QGraphicsPathItem`` and
``QGraphicsLineItem`` with cosmetic pens (a width in screen pixels, as pyqtgraph's), placed
in a ``ViewBox`` like any other item; the plots that hold them have fixed ranges, so they
never need to report data bounds.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets


class CurveItem(QtWidgets.QGraphicsPathItem):
    """A polyline through (x, y), painted by Qt; non-finite points break the line (as
    pyqtgraph's curves do). :attr:`xData` and :attr:`yData` are the points drawn."""

    def __init__(self, pen: QtGui.QPen | None = None) -> None:
        super().__init__()
        self.xData: np.ndarray | None = None
        self.yData: np.ndarray | None = None
        # Qt measures its bounds and shape with the pen's width in data units, not pixels:
        # on a [0, 1] plot a curve's "shape" covers the plot. It takes no mouse events (the
        # view box under it gets them) and carries no tooltip.
        self.setAcceptedMouseButtons(QtCore.Qt.MouseButton.NoButton)
        self.setAcceptHoverEvents(False)
        if pen is not None:
            self.setPen(pen)

    def set_data(self, x: np.ndarray, y: np.ndarray) -> None:
        """Draw the line through these points."""
        self.xData, self.yData = np.asarray(x), np.asarray(y)
        self.setPath(pg.arrayToQPath(self.xData, self.yData, connect="finite"))

    def clear(self) -> None:
        """Draw nothing."""
        self.xData = self.yData = None
        self.setPath(QtGui.QPainterPath())


def line_item(pen: QtGui.QPen, z: float = 0.0) -> QtWidgets.QGraphicsLineItem:
    """A straight line in ``pen`` (made cosmetic), placed with ``setLine``."""
    line = QtWidgets.QGraphicsLineItem()
    line.setAcceptedMouseButtons(QtCore.Qt.MouseButton.NoButton)  # (see CurveItem)
    pen = QtGui.QPen(pen)
    pen.setCosmetic(True)
    line.setPen(pen)
    line.setZValue(z)
    return line
