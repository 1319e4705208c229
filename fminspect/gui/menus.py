"""The inspector window's menu bar and keys, and what its File menu asks for.

:func:`build_menus` makes every menu and shortcut of the window (``F1`` lists them);
:class:`FileActions` holds the File menu's dialogs (a folder, the toolkit's configs, a case
list to export or import) and the recent folders, remembered in the window's settings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.dialogs.shortcuts import ShortcutsDialog
from fminspect.gui.theme import THEMES
from fminspect.io.discovery import ToolkitConfigs
from fminspect.pipeline.tags import TagError

#: The inspector window (:class:`~fminspect.gui.main_window.InspectorWindow`, which imports
#: this module: named, not imported, so that the package has no import cycle).
Window = Any

#: Recent folders kept in the File menu.
MAX_RECENT = 8


def add_action(
    window: QtWidgets.QMainWindow,
    menu: QtWidgets.QMenu,
    text: str,
    slot: Callable[..., object],
    shortcut: str | QtGui.QKeySequence | None = None,
) -> QtGui.QAction:
    """An entry of ``menu`` whose key works wherever the focus is in ``window``."""
    action = QtGui.QAction(text, window)
    if shortcut:
        action.setShortcut(QtGui.QKeySequence(shortcut))
    action.triggered.connect(slot)
    menu.addAction(action)
    window.addAction(action)
    return action


def build_menus(w: Window, files: FileActions) -> None:
    """The window's menus: File, View, Tags, Tools, Help."""
    bar = w.menuBar()

    def add(
        menu: QtWidgets.QMenu, text: str, slot: Callable[..., object], key: str | None = None
    ) -> None:
        add_action(w, menu, text, slot, key)

    file = bar.addMenu("&File")
    add(file, "Open dataset folder…", files.choose_folder, "Ctrl+O")
    add(file, "Open toolkit configs…", files.choose_configs)
    file.addSeparator()
    add(file, "Export case list (tags, notes)…", files.export_cases)
    add(file, "Import tags and notes…", files.import_cases)
    add(file, "Open the demo dataset", w.open_demo)
    files.recent_menu = file.addMenu("Recent folders")
    file.addSeparator()
    add(file, "Export panel grid as PNG…", w.export_grid_png, "Ctrl+E")
    add(file, "Export metrics table as CSV…", w.export_table_csv, "Ctrl+Shift+E")
    add(file, "Qualitative figure (PDF, SVG, PNG)…", w.open_qualitative)
    add(file, "Copy metrics table as CSV", w.table.copy_csv, "Ctrl+Shift+C")
    file.addSeparator()
    add(file, "Quit", w.close, "Ctrl+Q")
    view = bar.addMenu("&View")
    add(view, "Next sample", lambda: w.model.step(1), "D")
    add(view, "Next sample without a tag", w.model.next_untagged, "N")
    add(view, "Compare two maps (A/B)…", w.open_ab, "B")
    tags = bar.addMenu("&Tags")
    for slot in range(1, 10):
        add(tags, f"Tag {slot}", lambda _=False, s=slot: w.model.toggle_tag(s), str(slot))
    add(view, "Previous sample", lambda: w.model.step(-1), "A")
    for key, delta in (("Right", 1), ("Left", -1)):
        sc = QtGui.QShortcut(QtGui.QKeySequence(key), w)
        sc.activated.connect(lambda d=delta: w.model.step(d))
    add(view, "Reset zoom", w.grid.reset_view, "R")
    # (not PgUp/PgDown alone: they scroll the lists and tables)
    add(view, "Next page of models", lambda: w.grid.turn_page(1), "Ctrl+PgDown")
    add(view, "Previous page of models", lambda: w.grid.turn_page(-1), "Ctrl+PgUp")
    add(view, "Sample view", lambda: w.tabs.setCurrentIndex(0), "Ctrl+1")
    add(view, "Dataset view", lambda: w.tabs.setCurrentIndex(1), "Ctrl+2")
    add(view, "Scatter view", lambda: w.tabs.setCurrentIndex(2), "Ctrl+3")
    add(view, "Threshold + 1", lambda: w.nudge_threshold(1), "]")
    add(view, "Threshold − 1", lambda: w.nudge_threshold(-1), "[")
    add(view, "Threshold + 16", lambda: w.nudge_threshold(16), "Shift+]")
    add(view, "Threshold − 16", lambda: w.nudge_threshold(-16), "Shift+[")
    add(view, "Toggle TP/FP/FN overlay", lambda: w.params.confusion.toggle(), "C")
    add(view, "Measures…", w.choose_measures, "Ctrl+M")
    theme = view.addMenu("Theme")
    group = QtGui.QActionGroup(w)
    for name in THEMES:
        act = QtGui.QAction(name, w, checkable=True)
        act.triggered.connect(lambda _=False, n=name: w.set_theme(n))
        group.addAction(act)
        theme.addAction(act)
        if name == w.qsettings.value("theme", "system"):
            act.setChecked(True)
    view.addSeparator()
    for dock in (w.browser_dock, w.problem_dock, w.model_dock, w.param_dock):
        view.addAction(dock.toggleViewAction())
    tools = bar.addMenu("&Tools")
    add(tools, "Teaching playground (edit a model's map)…", w.open_playground, "Ctrl+P")
    add(tools, "Flaw demonstrations…", lambda: w.open_playground(demos=True))
    tools.addSeparator()
    add(tools, "Ranking study: vote…", w.choose_vote)
    add(tools, "Ranking study: analyse…", w.choose_analysis)
    tools.addSeparator()
    add(tools, "Meta-measures on this dataset…", w.open_meta)
    help_ = bar.addMenu("&Help")
    add(help_, "Keyboard shortcuts", lambda: ShortcutsDialog(w).exec(), "F1")
    add(help_, "About fminspect", w.about)


class FileActions(QtCore.QObject):
    """The File menu's dialogs and the recent folders of ``window``."""

    def __init__(self, window: Window) -> None:
        super().__init__(window)
        self.window = window
        self.recent_menu: QtWidgets.QMenu | None = None  # made by build_menus

    def choose_folder(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self.window, "Open a dataset folder")
        if folder:
            self.window.open_in_background(folder)

    def choose_configs(self) -> None:
        """PySODEvalToolkit's dataset config, then its method config."""
        json_files = "PySODEvalToolkit config (*.json);;All files (*)"
        dataset, _ = QtWidgets.QFileDialog.getOpenFileName(
            self.window, "Open the toolkit's dataset config (JSON)", "", json_files
        )
        if not dataset:
            return
        method, _ = QtWidgets.QFileDialog.getOpenFileName(
            self.window,
            "Open the toolkit's method config (JSON)",
            str(Path(dataset).parent),
            json_files,
        )
        if method:
            self.window.open_in_background(ToolkitConfigs(Path(dataset), Path(method)))

    def export_cases(self) -> None:
        """The tagged and annotated samples, or those the filter lists, as CSV (a case list
        for eval --images and --exclude-images, rank create --samples-from, qualitative
        --samples-from) or JSON, in the browser's order."""
        w = self.window
        walk, dataset = w.model.walk, w.model.dataset
        name = dataset.name if dataset is not None else ""
        listed = [(name, s) for s in walk.ordered()] if walk.filter is not None else None
        order = [(name, s) for s in walk.every_in_order()] if dataset is not None else []
        choices = w.model.cases.export_choices(listed)
        if not choices:
            return
        choice = choices[0]
        if len(choices) > 1:  # the listed ones, one tag's cases (the GT errors), every case
            label, ok = QtWidgets.QInputDialog.getItem(
                w, "Export the case list", "Cases:", [c.label for c in choices], 0, False
            )
            if not ok:
                return
            choice = next(c for c in choices if c.label == label)
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            w, "Export the case list", choice.file, "CSV (*.csv);;JSON (*.json)"
        )
        if not path:
            return
        try:
            n = w.model.cases.export(
                path, slot=choice.slot, listed=listed if choice.listed else None, order=order
            )
        except OSError as exc:
            QtWidgets.QMessageBox.warning(w, "Export", f"{path} cannot be written: {exc}")
            return
        w.statusBar().showMessage(f"{n} cases written to {path}", 8000)

    def import_cases(self) -> None:
        w = self.window
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            w, "Import tags and notes", "", "Case lists (*.csv *.json);;All files (*)"
        )
        if not path:
            return
        samples = {ds.name: {s.name for s in ds.samples} for ds in w.model.datasets}
        try:
            report = w.model.cases.import_(path, samples)
        except TagError as exc:
            QtWidgets.QMessageBox.warning(w, "Import", str(exc))
            return
        if report.moved or report.unmatched:  # not only a passing line: the user must know
            QtWidgets.QMessageBox.information(w, "Import", report.message())
        w.statusBar().showMessage(report.message(), 15000)

    def remember(self, path: Path) -> None:
        """``path`` first among the recent folders."""
        recent = [p for p in self.recent() if p != str(path)]
        recent.insert(0, str(path))
        self.window.qsettings.setValue("recent", recent[:MAX_RECENT])
        self.fill_recent()

    def recent(self) -> list[str]:
        value = self.window.qsettings.value("recent", [], list)
        return [str(p) for p in value] if isinstance(value, list) else []

    def fill_recent(self) -> None:
        if self.recent_menu is None:
            return
        self.recent_menu.clear()
        for p in self.recent():
            act = self.recent_menu.addAction(p)
            act.triggered.connect(lambda _=False, p=p: self.window.open_in_background(p))
