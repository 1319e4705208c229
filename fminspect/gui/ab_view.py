"""The A/B view: two models' maps of the shown sample side by side, their signed difference,
one panel that flickers between them, and a focus mode that shows that panel alone.

The maps are those the measures used (stretched, resized: the scored pair's prediction), or
the maps as read while a model is still being scored. The difference A − B is drawn with a
diverging colour map, white at zero (A higher: red; B higher: blue), on the fixed range
[−1, 1] so that two samples' differences look alike. The four panels zoom and pan together;
the GT contour lies over the maps, and a colour bar gives the difference's scale. The view
opens at the zoom of the window's map grid. ``Space`` flickers, ``F`` toggles the focus mode,
``D``/``→`` and ``A``/``←`` step through the samples as in the window (the A/B view follows
the shown sample), ``Esc`` or ``Ctrl+W`` closes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.app import resize_for_screen
from fminspect.gui.colours import CONTOUR_RGB
from fminspect.gui.panels.map_grid import display_bytes, lookup_table
from fminspect.inspector.model import InspectorModel
from fminspect.metrics import unit_map
from fminspect.metrics.boundary_fmeasure import boundary

#: The difference's colour map: blue (B higher) — white (equal) — red (A higher).
DIFFERENCE = pg.ColorMap(
    pos=[0.0, 0.5, 1.0], color=[(33, 102, 172), (255, 255, 255), (178, 24, 43)], name="AminusB"
)


class ABWindow(QtWidgets.QWidget):
    """Two maps of the shown sample compared (see the module notes)."""

    def __init__(
        self, model: InspectorModel, a: str, b: str, parent: QtWidgets.QWidget | None = None
    ) -> None:
        super().__init__(parent, QtCore.Qt.WindowType.Window)
        self.setObjectName("abView")
        self.model = model
        self.showing_a = True  # what the flicker panel shows
        self._contour_of: tuple[object, np.ndarray | None] = (None, None)  # (sample, overlay)
        self.focused = False
        bar = QtWidgets.QHBoxLayout()
        self.a, self.b = QtWidgets.QComboBox(), QtWidgets.QComboBox()
        for combo, name in ((self.a, a), (self.b, b)):
            combo.addItems(self._models())
            combo.setCurrentText(name)
            combo.currentTextChanged.connect(lambda _t: self.refresh())
        bar.addWidget(QtWidgets.QLabel("A"))
        bar.addWidget(self.a, 1)
        bar.addWidget(QtWidgets.QLabel("B"))
        bar.addWidget(self.b, 1)
        self.flicker_button = QtWidgets.QPushButton("flicker (Space)")
        self.flicker_button.clicked.connect(self.flicker)
        self.focus_button = QtWidgets.QPushButton("focus (F)")
        self.focus_button.setCheckable(True)
        self.focus_button.toggled.connect(self.set_focus)
        bar.addWidget(self.flicker_button)
        bar.addWidget(self.focus_button)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(self.palette().color(QtGui.QPalette.ColorRole.Window))
        self.panels: dict[str, tuple[pg.ViewBox, pg.ImageItem, pg.ImageItem, Any]] = {}
        for col, name in enumerate(("A", "B", "A − B", "flicker")):
            title = self.graphics.addLabel(name, row=0, col=col)
            view = self.graphics.addViewBox(row=1, col=col, lockAspect=True, invertY=True)
            image, contour = pg.ImageItem(), pg.ImageItem()
            view.addItem(image)
            view.addItem(contour)
            contour.setZValue(5)
            if self.panels:
                first = next(iter(self.panels.values()))[0]
                view.setXLink(first)
                view.setYLink(first)
            self.panels[name] = (view, image, contour, title)
        # the difference's scale: −1 (B higher, blue) … 0 (white) … +1 (A higher, red)
        self.difference_bar = pg.ColorBarItem(
            values=(-1.0, 1.0), colorMap=DIFFERENCE, interactive=False, width=14, label="A − B"
        )
        self.graphics.addItem(self.difference_bar, row=1, col=4)
        # the four panels equally wide, whatever their titles ask for (a trial: the flicker
        # panel, titled with a model's name, was narrower and showed another part of the map)
        grid = self.graphics.ci.layout
        for col in range(4):
            grid.setColumnStretchFactor(col, 1)
            grid.setColumnMinimumWidth(col, 120)
        for _view, _image, _contour, title in self.panels.values():
            title.setSizePolicy(
                QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred
            )
        # the focus mode: the flicker panel alone, as large as the window, at the same zoom
        self.focus_graphics = pg.GraphicsLayoutWidget()
        self.focus_graphics.setBackground(self.palette().color(QtGui.QPalette.ColorRole.Window))
        self.focus_title = self.focus_graphics.addLabel("", row=0, col=0)
        self.focus_view = self.focus_graphics.addViewBox(
            row=1, col=0, lockAspect=True, invertY=True
        )
        self.focus_image, self.focus_contour = pg.ImageItem(), pg.ImageItem()
        self.focus_view.addItem(self.focus_image)
        self.focus_view.addItem(self.focus_contour)
        self.focus_contour.setZValue(5)
        self.focus_graphics.hide()
        self.summary = QtWidgets.QLabel("")
        self.summary.setWordWrap(True)
        box = QtWidgets.QVBoxLayout(self)
        box.addLayout(bar)
        box.addWidget(self.graphics, 1)
        box.addWidget(self.focus_graphics, 1)
        box.addWidget(self.summary)
        for keys in ("Esc", "Ctrl+W"):
            QtGui.QShortcut(QtGui.QKeySequence(keys), self).activated.connect(self.close)
        for button in (self.flicker_button, self.focus_button):
            button.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)  # Space is the flicker's
        self.graphics.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        self.graphics.setFocus()
        model.sample_loaded.connect(self._on_sample)
        model.result_ready.connect(self._on_result)
        resize_for_screen(self, 1400, 560)
        self.refresh(fit=True)

    def _models(self) -> list[str]:
        s = self.model.sample
        return list(s.preds) if s is not None else []

    # ------------------------------------------------------------------ following
    def _on_sample(self, *_: object) -> None:
        if not self.isVisible():
            return
        models = self._models()
        for combo in (self.a, self.b):
            if [combo.itemText(i) for i in range(combo.count())] != models:
                chosen = combo.currentText()
                with QtCore.QSignalBlocker(combo):
                    combo.clear()
                    combo.addItems(models)
                    if chosen in models:
                        combo.setCurrentText(chosen)
        self.refresh()

    def _on_result(self, name: str, *_: object) -> None:
        if self.isVisible() and name in (self.a.currentText(), self.b.currentText()):
            self.refresh()

    # ------------------------------------------------------------------ drawing
    def values(self, name: str) -> np.ndarray | None:
        """The map of ``name`` the measures used (as read while it is being scored)."""
        s = self.model.sample
        if s is None or name not in s.preds:
            return None
        result = self.model.results.get(name)
        return result.pair.pred if result is not None else unit_map(s.preds[name])

    def difference(self) -> np.ndarray | None:
        """A − B of the two maps (None when either is missing or their sizes differ)."""
        a, b = self.values(self.a.currentText()), self.values(self.b.currentText())
        if a is None or b is None or a.shape != b.shape:
            return None
        return np.asarray(a - b, dtype=np.float64)

    def refresh(self, fit: bool = False) -> None:
        """Draw the shown sample's two maps, their difference and the flicker panel."""
        s = self.model.sample
        name_a, name_b = self.a.currentText(), self.b.currentText()
        self.setWindowTitle(
            f"fminspect — A/B: {name_a} vs {name_b}" + (f" on {s.name}" if s is not None else "")
        )
        lut = lookup_table("viridis")  # the maps' colour map, as in the grid by default
        a, b, diff = self.values(name_a), self.values(name_b), self.difference()
        for key, values in (("A", a), ("B", b)):
            self._draw(key, values, lut)
        diff_lut = DIFFERENCE.getLookupTable(nPts=256)
        image = self.panels["A − B"][1]
        if diff is None:
            image.clear()
        else:
            image.setImage(diff, levels=(-1.0, 1.0), lut=diff_lut, autoLevels=False)
        self._draw("flicker", a if self.showing_a else b, lut)
        shown = name_a if self.showing_a else name_b
        self.panels["A"][3].setText(f"A: {name_a}")
        self.panels["B"][3].setText(f"B: {name_b}")
        self.panels["flicker"][3].setText(f"flicker: {shown}")
        self.focus_title.setText(f"{shown} (Space: the other, F: all four)")
        flickered = a if self.showing_a else b
        if flickered is None:
            self.focus_image.clear()
        else:
            self.focus_image.setImage(
                display_bytes(flickered), levels=(0, 255), lut=lut, autoLevels=False
            )
        contour = self._contour()
        for layer in (*(self.panels[k][2] for k in ("A", "B", "flicker")), self.focus_contour):
            if contour is None:
                layer.clear()
            else:
                layer.setImage(contour, autoLevels=False)
        if diff is not None:
            self.summary.setText(
                f"A − B: mean {diff.mean():+.4f}, |A − B| mean {np.abs(diff).mean():.4f}; "
                f"A higher on {np.count_nonzero(diff > 0):,} pixels (red), B on "
                f"{np.count_nonzero(diff < 0):,} (blue)"
            )
        else:
            self.summary.setText("pick two models of this sample")
        if fit and a is not None:
            self.panels["A"][0].autoRange(padding=0.01)

    def _draw(self, key: str, values: np.ndarray | None, lut: np.ndarray) -> None:
        image = self.panels[key][1]
        if values is None:
            image.clear()
        else:
            image.setImage(display_bytes(values), levels=(0, 255), lut=lut, autoLevels=False)

    def _contour(self) -> np.ndarray | None:
        """The GT contour as an overlay, made once per sample (not at each flicker)."""
        s = self.model.sample
        if s is None or s.gt is None:
            return None
        if self._contour_of[0] is not s:
            edge = boundary(unit_map(s.gt) > 128 / 255)
            rgba = np.zeros((*edge.shape, 4), np.uint8)
            rgba[edge] = (*CONTOUR_RGB, 255)
            self._contour_of = (s, rgba)
        return self._contour_of[1]

    # ------------------------------------------------------------------ actions
    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:
        """``Space`` flickers, ``F`` toggles the focus mode, ``D``/``→`` and ``A``/``←``
        step through the samples in the window's order (this view follows)."""
        key, k = event.key(), QtCore.Qt.Key
        plain = not event.modifiers() & ~QtCore.Qt.KeyboardModifier.KeypadModifier
        if key == k.Key_Space:
            self.flicker()
        elif key == k.Key_F:
            self.focus_button.toggle()
        elif plain and key in (k.Key_D, k.Key_Right):
            self.model.step(1)
        elif plain and key in (k.Key_A, k.Key_Left):
            self.model.step(-1)
        else:
            super().keyPressEvent(event)

    def show_range(self, x: tuple[float, float], y: tuple[float, float]) -> None:
        """Show this part of the maps (the window's zoom) in every panel."""
        self.panels["A"][0].setRange(xRange=x, yRange=y, padding=0)
        self.focus_view.setRange(xRange=x, yRange=y, padding=0)

    def flicker(self) -> None:
        """Show the other map in the flicker panel."""
        self.showing_a = not self.showing_a
        self.refresh()

    def set_focus(self, on: bool) -> None:
        """Show the flicker panel alone, as large as the window allows (or all four)."""
        self.focused = on
        linked = self.panels["A"][0]
        if on:  # the part of the map the four panels show, as large as the window allows
            x, y = linked.viewRange()
            shape = self.model.sample.shape if self.model.sample is not None else None
            if shape is not None:
                h, w = shape
                x = (max(x[0], 0.0), min(x[1], float(w)))
                y = (max(y[0], 0.0), min(y[1], float(h)))
            self.focus_view.setRange(xRange=x, yRange=y, padding=0)
        else:
            x, y = self.focus_view.viewRange()
            linked.setRange(xRange=x, yRange=y, padding=0)
        self.graphics.setVisible(not on)
        self.focus_graphics.setVisible(on)
