"""The model picker: which of the dataset's models are shown, their short names, the
reference model, and "top k by a measure" over the whole dataset."""

from __future__ import annotations

from collections.abc import Callable

from PySide6 import QtCore, QtWidgets

from fminspect.gui.panels.curves import legend_icon
from fminspect.inspector.selection import ModelSelection
from fminspect.io.aliases import AliasError, read_aliases
from fminspect.metrics import MEASURES_BY_KEY, default_keys

#: ``measure key -> {model: dataset value}``, or None while the dataset is being scored.
DatasetValues = Callable[[str], "dict[str, float] | None"]

_MODEL = QtCore.Qt.ItemDataRole.UserRole


class ModelPickerPanel(QtWidgets.QWidget):
    """A checkable, searchable list of the dataset's models.

    Checking a model shows it (grid, table, curves, browser columns); the context menu pins a
    reference model, renames (alias) and highlights; "top k" shows the k best models by a
    measure's dataset value (as ``fminspect eval`` computes it), once the dataset is scored.
    Changes of the checks are applied a moment after the last click, so that ticking several
    models scores the sample once.
    """

    APPLY_MS = 350

    def __init__(
        self,
        selection: ModelSelection,
        dataset_values: DatasetValues | None = None,
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("modelPicker")
        self.selection = selection
        self.dataset_values = dataset_values
        self.search = QtWidgets.QLineEdit()
        self.search.setObjectName("modelSearch")
        self.search.setPlaceholderText("filter models…")
        self.search.setClearButtonEnabled(True)
        self.list = QtWidgets.QListWidget()
        self.list.setObjectName("modelList")
        self.list.setIconSize(QtCore.QSize(28, 12))
        self.list.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setToolTip("check: show · right-click: reference, alias, highlight")
        self.all_button = QtWidgets.QPushButton("all")
        self.none_button = QtWidgets.QPushButton("none")
        self.top_k = QtWidgets.QSpinBox()
        self.top_k.setRange(1, 99)
        self.top_k.setValue(8)
        self.top_k.setPrefix("top ")
        self.top_measure = QtWidgets.QComboBox()
        self.top_measure.addItems(default_keys())
        self.top_measure.setCurrentText("Sm")
        self.top_button = QtWidgets.QPushButton("show")
        self.top_button.setToolTip(
            "show the k best models by this measure's dataset value (the reference stays)"
        )
        self.alias_button = QtWidgets.QPushButton("aliases from file…")
        self.alias_button.setToolTip(
            "short names from a JSON or YAML file (PySODEvalToolkit alias or method configs)"
        )
        self.status = QtWidgets.QLabel("")
        self.status.setWordWrap(True)
        self.status.setObjectName("modelPickerStatus")
        buttons = QtWidgets.QHBoxLayout()
        for w in (self.all_button, self.none_button, self.alias_button):
            buttons.addWidget(w)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.top_k)
        top.addWidget(QtWidgets.QLabel("by"))
        top.addWidget(self.top_measure, 1)
        top.addWidget(self.top_button)
        box = QtWidgets.QVBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        box.addWidget(self.search)
        box.addWidget(self.list, 1)
        box.addLayout(buttons)
        box.addLayout(top)
        box.addWidget(self.status)
        self._apply = QtCore.QTimer(self)
        self._apply.setSingleShot(True)
        self._apply.setInterval(self.APPLY_MS)
        self._apply.timeout.connect(self.apply_checks)
        self.search.textChanged.connect(self._filter)
        self.list.itemChanged.connect(lambda _item: self._apply.start())
        self.list.customContextMenuRequested.connect(self._menu)
        self.all_button.clicked.connect(lambda: self._check_all(True))
        self.none_button.clicked.connect(lambda: self._check_all(False))
        self.top_button.clicked.connect(self.show_top_k)
        self.alias_button.clicked.connect(self._choose_aliases)
        selection.changed.connect(self.refresh)
        selection.highlight_changed.connect(self.refresh)

    # ------------------------------------------------------------------ list
    def refresh(self) -> None:
        """Rebuild the list from the selection."""
        sel = self.selection
        self.list.blockSignals(True)
        self.list.clear()
        for model in sel.all:
            name = sel.name(model)
            text = name if name == model else f"{name}  ({model})"
            if model == sel.reference:
                text = "★ " + text
            item = QtWidgets.QListWidgetItem(legend_icon(sel.colour_index(model)), text)
            item.setData(_MODEL, model)
            item.setFlags(item.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(
                QtCore.Qt.CheckState.Checked
                if sel.is_shown(model)
                else QtCore.Qt.CheckState.Unchecked
            )
            if model in sel.highlighted:
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            item.setToolTip(
                model + (" — the reference (always shown)" if model == sel.reference else "")
            )
            self.list.addItem(item)
        self.list.blockSignals(False)
        self._filter(self.search.text())
        self._count()

    def _count(self) -> None:
        n, shown = len(self.selection.all), len(self.selection.shown)
        ref = self.selection.reference
        self.status.setText(
            f"{shown} of {n} models shown"
            + (f" · reference ★ {self.selection.name(ref)}" if ref else "")
        )

    def _filter(self, text: str) -> None:
        needle = text.strip().lower()
        for i in range(self.list.count()):
            item = self.list.item(i)
            model = item.data(_MODEL)
            hay = f"{model} {self.selection.name(model)}".lower()
            item.setHidden(bool(needle) and needle not in hay)

    def checked(self) -> list[str]:
        """The models checked in the list."""
        return [
            self.list.item(i).data(_MODEL)
            for i in range(self.list.count())
            if self.list.item(i).checkState() == QtCore.Qt.CheckState.Checked
        ]

    def apply_checks(self) -> None:
        """Show the checked models (called a moment after the last click)."""
        self._apply.stop()
        self.selection.set_shown(self.checked())
        self.refresh()  # the reference cannot be unchecked

    def _check_all(self, state: bool) -> None:
        """Check (or uncheck) every model the filter lets through."""
        self.list.blockSignals(True)
        for i in range(self.list.count()):
            item = self.list.item(i)
            if not item.isHidden():
                item.setCheckState(
                    QtCore.Qt.CheckState.Checked if state else QtCore.Qt.CheckState.Unchecked
                )
        self.list.blockSignals(False)
        self.apply_checks()

    # ------------------------------------------------------------------ top k
    def show_top_k(self) -> list[str]:
        """Show the k best models by the chosen measure's dataset value."""
        key = self.top_measure.currentText()
        values = self.dataset_values(key) if self.dataset_values else None
        if values is None:
            self.status.setText(
                f"top {self.top_k.value()} by {key}: the dataset values are not ready yet "
                "(the browser's progress bar shows the scoring)"
            )
            return []
        if not values:
            needs = " (it needs the images)" if MEASURES_BY_KEY[key].needs_image else ""
            self.status.setText(f"top {self.top_k.value()} by {key}: no dataset value{needs}")
            return []
        best = self.selection.top_k(
            values, self.top_k.value(), MEASURES_BY_KEY[key].higher_is_better
        )
        self.refresh()
        self.status.setText(
            self.status.text()
            + f" · top {len(best)} by dataset {key}: "
            + ", ".join(self.selection.name(m) for m in best)
        )
        return best

    # ------------------------------------------------------------------ menu, aliases
    def _menu(self, pos: QtCore.QPoint) -> None:
        item = self.list.itemAt(pos)
        if item is None:
            return
        model = item.data(_MODEL)
        sel = self.selection
        menu = QtWidgets.QMenu(self)
        if model == sel.reference:
            menu.addAction("Unpin the reference", lambda: sel.set_reference(None))
        else:
            menu.addAction(
                "Pin as reference (always shown, first)", lambda: sel.set_reference(model)
            )
        menu.addAction("Rename (alias)…", lambda: self.rename(model))
        if sel.is_shown(model):
            menu.addAction(
                "Remove highlight" if model in sel.highlighted else "Highlight in the curves",
                lambda: sel.toggle_highlight(model),
            )
        menu.addAction("Show only this one", lambda: sel.set_shown([model]))
        menu.exec(self.list.mapToGlobal(pos))

    def rename(self, model: str, alias: str | None = None) -> None:
        """Give ``model`` a short name (asks for it when ``alias`` is None)."""
        if alias is None:
            text, ok = QtWidgets.QInputDialog.getText(
                self,
                "Alias",
                f"Display name of {model} (empty: its own name):",
                text=self.selection.name(model),
            )
            if not ok:
                return
            alias = text
        try:
            self.selection.set_alias(model, alias)
        except ValueError as exc:
            self.status.setText(f"alias not set: {exc}")

    def _choose_aliases(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Read aliases", "", "Aliases (*.json *.yaml *.yml);;All files (*)"
        )
        if path:
            self.load_aliases(path)

    def load_aliases(self, path: str) -> int:
        """Take this dataset's models' aliases from a JSON/YAML file; returns how many.
        A bad file is reported in the status line, never raised."""
        try:
            aliases = read_aliases(path)
        except AliasError as exc:
            self.status.setText(f"aliases not read: {exc}")
            return 0
        try:
            n = self.selection.merge_aliases(aliases)
        except ValueError as exc:
            self.status.setText(f"aliases not read from {path}: {exc}")
            return 0
        if n == 0:
            self.status.setText(
                f"no alias taken from {path}: none of its {len(aliases)} names is a model of "
                "this dataset (or each is its own alias)"
            )
            return 0
        self.status.setText(
            self.status.text() + f" · {n} alias{'es' if n != 1 else ''} from {path}"
        )
        return n
