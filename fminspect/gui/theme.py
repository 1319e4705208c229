"""Light and dark palettes (Fusion), following the operating system by default."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

THEMES = ("system", "light", "dark")


def system_is_dark(app: QtWidgets.QApplication) -> bool:
    """Whether the OS asks for a dark colour scheme (Qt ≥ 6.5), else the palette's lightness."""
    hints = app.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is not None:
        value = scheme()
        if value == QtCore.Qt.ColorScheme.Dark:
            return True
        if value == QtCore.Qt.ColorScheme.Light:
            return False
    return app.palette().color(QtGui.QPalette.ColorRole.Window).lightness() < 128


def _dark_palette() -> QtGui.QPalette:
    p = QtGui.QPalette()
    role, c = QtGui.QPalette.ColorRole, QtGui.QColor
    p.setColor(role.Window, c(37, 37, 40))
    p.setColor(role.WindowText, c(225, 225, 225))
    p.setColor(role.Base, c(28, 28, 30))
    p.setColor(role.AlternateBase, c(44, 44, 48))
    p.setColor(role.ToolTipBase, c(50, 50, 55))
    p.setColor(role.ToolTipText, c(230, 230, 230))
    p.setColor(role.Text, c(225, 225, 225))
    p.setColor(role.Button, c(48, 48, 52))
    p.setColor(role.ButtonText, c(225, 225, 225))
    p.setColor(role.BrightText, c(255, 90, 90))
    p.setColor(role.Highlight, c(58, 110, 180))
    p.setColor(role.HighlightedText, c(255, 255, 255))
    p.setColor(role.Link, c(110, 170, 255))
    p.setColor(role.PlaceholderText, c(140, 140, 140))
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(QtGui.QPalette.ColorGroup.Disabled, r, c(120, 120, 120))
    return p


#: Widgets whose check boxes Fusion draws from the palette: outlined with the Window colour
#: darkened and filled with Base, which on the dark palette is a dark square on a dark
#: ground. For these classes alone the palette gives a light Window (the outline; they do not
#: paint their own ground with it) and a lighter Base (the box).
_CHECKABLE = ("QCheckBox", "QGroupBox", "QListWidget", "QTreeWidget")


def _dark_check_palette(base: QtGui.QPalette, list_ground: bool) -> QtGui.QPalette:
    p = QtGui.QPalette(base)
    role, c = QtGui.QPalette.ColorRole, QtGui.QColor
    p.setColor(role.Window, c(190, 190, 195))  # outline: this darkened (×1/1.4)
    if not list_ground:
        p.setColor(role.Base, c(58, 58, 62))
    return p


def apply_theme(app: QtWidgets.QApplication, theme: str = "system") -> bool:
    """Apply ``theme`` ('system', 'light' or 'dark'); returns True when dark."""
    if theme not in THEMES:
        raise ValueError(f"theme must be one of {THEMES}, got {theme!r}")
    app.setStyle("Fusion")
    dark = system_is_dark(app) if theme == "system" else theme == "dark"
    palette = _dark_palette() if dark else app.style().standardPalette()
    app.setPalette(palette)
    for name in _CHECKABLE:
        # (the light theme: the palette for all classes, undoing a dark one set before)
        app.setPalette(
            _dark_check_palette(palette, name in ("QListWidget", "QTreeWidget"))
            if dark
            else palette,
            name,  # type: ignore[arg-type]  # the stub says bytes; PySide6 takes str
        )
    pg.setConfigOptions(
        background=(30, 30, 33) if dark else "w", foreground="#ddd" if dark else "k"
    )
    return dark
