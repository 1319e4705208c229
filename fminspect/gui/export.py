"""Exporting what the inspector shows: the panel grid at native resolution."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui

from fminspect.gui.panels.map_grid import MapCell, MapGridPanel
from fminspect.io.atomic import replacing

TITLE_HEIGHT = 22


def _over(dst: np.ndarray, src: np.ndarray, opacity: float = 1.0) -> np.ndarray:
    a = src[..., 3:4].astype(np.float32) / 255 * opacity
    out = dst.astype(np.float32)
    out[..., :3] = src[..., :3] * a + out[..., :3] * (1 - a)
    out[..., 3] = 255
    return out.astype(np.uint8)


def compose_cell(cell: MapCell) -> np.ndarray | None:
    """A panel's layers (base, map with its opacity, overlay) composited at native size."""
    all_layers = [
        (cell.base.rgba(), 1.0),
        (cell.map.rgba(), cell.map.opacity()),
        (cell.overlay.rgba(), 1.0),
    ]
    layers = [(rgba, op) for rgba, op in all_layers if rgba is not None]
    if not layers:
        return None
    h, w = layers[0][0].shape[:2]
    out = np.zeros((h, w, 4), np.uint8)
    out[..., 3] = 255
    for rgba, op in layers:
        out = _over(out, rgba, op)
    return out


def export_grid(panel: MapGridPanel, path: Path | str) -> Path:
    """Write every panel at the sample's native resolution, tiled with titles, as PNG."""
    composed = [(name, compose_cell(cell)) for name, cell in panel.cells.items()]
    tiles = [(n, t) for n, t in composed if t is not None]
    if not tiles:
        raise ValueError("nothing to export")
    h, w = tiles[0][1].shape[:2]
    cols = max(1, min(len(tiles), math.ceil(math.sqrt(len(tiles) * 1.7))))
    rows = math.ceil(len(tiles) / cols)
    gap = 4
    image = QtGui.QImage(
        cols * (w + gap), rows * (h + TITLE_HEIGHT + gap), QtGui.QImage.Format.Format_RGBA8888
    )
    image.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(image)
    painter.setPen(QtGui.QColor("black"))
    font = painter.font()
    font.setPointSize(10)
    painter.setFont(font)
    for i, (name, tile) in enumerate(tiles):
        x, y = (i % cols) * (w + gap), (i // cols) * (h + TITLE_HEIGHT + gap)
        painter.drawText(
            QtCore.QRect(x, y, w, TITLE_HEIGHT), QtCore.Qt.AlignmentFlag.AlignCenter, name
        )
        data = np.ascontiguousarray(tile)
        q = QtGui.QImage(data.data, w, h, 4 * w, QtGui.QImage.Format.Format_RGBA8888).copy()
        painter.drawImage(x, y + TITLE_HEIGHT, q)
    painter.end()
    path = Path(path)
    save_image(image, path)
    return path


def save_image(image: QtGui.QImage | QtGui.QPixmap, path: Path | str) -> None:
    """Write ``image`` to ``path`` atomically (format from the suffix); :class:`OSError`
    naming the file if Qt cannot write it (Qt only returns False)."""
    with replacing(path) as tmp:
        if not image.save(str(tmp)):  # the format from the suffix, which tmp keeps
            raise OSError(f"{path}: could not be written")
