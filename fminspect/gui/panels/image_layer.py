"""A map panel's image layer that Qt paints with no Python call.

The map grid draws a dozen panels of three layers each. As pyqtgraph ``ImageItem`` s, one
repaint of the grid called into Python ~130 times (their ``paint`` and ``boundingRect``),
and every such call waits for the interpreter lock, which the threads scoring the shown
sample hold in turns: a repaint of 5–8 ms took 15–30 ms while they ran, and the window's
longest blocks (50–70 ms) were these repaints. A layer here renders its picture once, when
its image, levels or lookup table change, into a plain ``QGraphicsPixmapItem``, which Qt
draws by itself (a repaint of the grid: 2 ms, 6–10 ms under the same load).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets


def _is_bytes_image(image: np.ndarray) -> bool:
    return image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] in (3, 4)


class ImageLayer:
    """An image with optional levels and lookup table, shown by a Qt pixmap item (``item``,
    added to a view box like any graphics item).

    ``image``, ``levels`` and ``lut`` are what was set; :meth:`rgba` gives the pixels shown.
    """

    def __init__(self) -> None:
        self.item = QtWidgets.QGraphicsPixmapItem()
        # hit tests use the rectangle, not a mask made from the pixels' alpha
        self.item.setShapeMode(QtWidgets.QGraphicsPixmapItem.ShapeMode.BoundingRectShape)
        self.item.setTransformationMode(QtCore.Qt.TransformationMode.FastTransformation)
        self.image: np.ndarray | None = None
        self.levels: tuple[float, float] | None = None
        self.lut: np.ndarray | None = None

    def set_image(
        self,
        image: np.ndarray,
        levels: tuple[float, float] | None = None,
        lut: np.ndarray | None = None,
    ) -> None:
        """Show ``image`` (rows × columns, grey or RGB(A)) with ``levels`` mapped to the
        ends of ``lut``; RGB(A) bytes without levels are shown as they are."""
        self.image, self.levels, self.lut = image, levels, lut
        self._render()

    def set_lut(self, lut: np.ndarray) -> None:
        """Another lookup table (the same array again keeps the picture)."""
        if lut is self.lut:
            return
        self.lut = lut
        if self.image is not None:
            self._render()

    def clear(self) -> None:
        """Show nothing."""
        self.image = self.levels = self.lut = None
        self._show(None, QtGui.QImage.Format.Format_Invalid)

    def set_opacity(self, opacity: float) -> None:
        """How opaque the layer is drawn (0–1)."""
        self.item.setOpacity(opacity)

    def opacity(self) -> float:
        """How opaque the layer is drawn (0–1)."""
        return float(self.item.opacity())

    def rgba(self) -> np.ndarray | None:
        """The RGBA bytes shown (rows × columns × 4), or None when empty; RGBA bytes set
        with no levels are the image itself (not to be written to)."""
        shown = self._pixels()
        if shown is None or shown.shape[2] == 4:
            return shown
        rgba = np.empty((*shown.shape[:2], 4), np.uint8)
        rgba[..., :3] = shown
        rgba[..., 3] = 255
        return rgba

    def _pixels(self) -> np.ndarray | None:
        """The RGB or RGBA bytes shown (rows × columns × 3 or 4), or None when empty."""
        image, lut = self.image, self.lut
        if image is None:
            return None
        if _is_bytes_image(image) and self.levels is None and lut is None:
            return image
        if image.dtype == np.uint8 and image.ndim == 2 and _byte_table(lut, self.levels):
            assert lut is not None
            return lut[image]  # the table indexed by the bytes: pyqtgraph's result at once
        bgra, _ = pg.functions.makeARGB(image, lut=lut, levels=self.levels)
        return bgra[..., [2, 1, 0, 3]]

    def _render(self) -> None:
        image, lut = self.image, self.lut
        if image is None:
            self._show(None, QtGui.QImage.Format.Format_Invalid)
            return
        if image.ndim == 2 and image.dtype == np.uint8 and _byte_table(lut, self.levels):
            assert lut is not None
            # one 32-bit word per pixel from the table: 0.2 ms for 400×550, where indexing
            # the table's RGB rows took 2.3 ms (×13 panels a step)
            words, opaque = _words(lut)
            kind = QtGui.QImage.Format.Format_RGB32 if opaque else QtGui.QImage.Format.Format_ARGB32
            self._show(words.take(image), kind)
            return
        shown = self._pixels()
        assert shown is not None
        kind = (
            QtGui.QImage.Format.Format_RGB888
            if shown.shape[2] == 3
            else QtGui.QImage.Format.Format_RGBA8888
        )
        self._show(np.ascontiguousarray(shown), kind)

    def _show(self, pixels: np.ndarray | None, kind: QtGui.QImage.Format) -> None:
        if pixels is None:
            self.item.setPixmap(QtGui.QPixmap())
        else:
            h, w = pixels.shape[:2]
            picture = QtGui.QImage(pixels.data, w, h, pixels.strides[0], kind)
            # a pixmap of the screen's format shares the bytes rather than copy them;
            # PySide keeps them for as long as Qt uses them
            self.item.setPixmap(QtGui.QPixmap.fromImage(picture))


def _byte_table(lut: np.ndarray | None, levels: tuple[float, float] | None) -> bool:
    """The bytes 0–255 index ``lut`` directly."""
    return lut is not None and len(lut) == 256 and levels == (0, 255)


_WORDS: dict[tuple[tuple[int, ...], bytes], tuple[np.ndarray, bool]] = {}


def _words(lut: np.ndarray) -> tuple[np.ndarray, bool]:
    """A 256-entry RGB(A) byte table as 32-bit 0xAARRGGBB words (Qt's RGB32/ARGB32), and
    whether it is opaque; made once per table (the colour maps: a handful)."""
    key = (lut.shape, lut.tobytes())
    if key not in _WORDS:
        rgb = lut.astype(np.uint32)
        alpha = rgb[:, 3] if lut.shape[1] == 4 else np.full(256, 255, np.uint32)
        words = (alpha << 24) | (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]
        words.setflags(write=False)
        _WORDS[key] = (words, bool((alpha == 255).all()))
    return _WORDS[key]
