"""Choosing the measures the window computes and shows (View → Measures…).

Every registered measure is listed under its family (the registry's order), with its exact
variant, how its dataset value is formed, the paper it implements and its reference
implementation in the tooltip. The choice is the window's: the metrics table's columns, the
browser's and the dataset view's measures, and what the background scoring computes.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6 import QtCore, QtWidgets

from fminspect.metrics import REGISTRY, Params, default_keys
from fminspect.metrics.registry import SWEEP_FAMILY


def fill_combo(combo: QtWidgets.QComboBox, keys: Sequence[str], fallback: str) -> None:
    """Offer ``keys`` in ``combo``, keeping its current choice if it is still offered
    (else ``fallback``, else the first). Its signals are blocked meanwhile: the caller
    updates what depends on it."""
    if [combo.itemText(i) for i in range(combo.count())] == list(keys):
        return
    current = combo.currentText()
    combo.blockSignals(True)
    combo.clear()
    combo.addItems(list(keys))
    for choice in (current, fallback):
        if choice in keys:
            combo.setCurrentText(choice)
            break
    combo.blockSignals(False)


class MeasuresDialog(QtWidgets.QDialog):
    """A checkable tree of every registered measure, by family."""

    def __init__(
        self, chosen: Sequence[str], params: Params, parent: QtWidgets.QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("measuresDialog")
        self.setWindowTitle("Measures")
        self.tree = QtWidgets.QTreeWidget()
        self.tree.setObjectName("measureTree")
        self.tree.setHeaderLabels(["measure", "variant", "dataset value"])
        self.items: dict[str, QtWidgets.QTreeWidgetItem] = {}
        for name, fam in REGISTRY.families.items():
            if name == SWEEP_FAMILY or not fam.measures:
                continue
            top = QtWidgets.QTreeWidgetItem([fam.name])
            top.setToolTip(0, f"{fam.paper}\nreference: {fam.reference}\n\n{fam.teaching}")
            top.setFlags(top.flags() | QtCore.Qt.ItemFlag.ItemIsAutoTristate)
            self.tree.addTopLevelItem(top)
            for m in fam.measures:
                item = QtWidgets.QTreeWidgetItem(
                    [m.key, m.label(params)[len(m.key) :].strip(), m.aggregation]
                )
                item.setFlags(item.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(
                    0,
                    QtCore.Qt.CheckState.Checked
                    if m.key in chosen
                    else QtCore.Qt.CheckState.Unchecked,
                )
                item.setToolTip(
                    0,
                    f"{m.key}: {m.family} ({'higher' if m.higher_is_better else 'lower'} is "
                    f"better){' — needs the image' if m.needs_image else ''}",
                )
                top.addChild(item)
                self.items[m.key] = item
        self.tree.expandAll()
        for col in range(3):
            self.tree.resizeColumnToContents(col)
        buttons = QtWidgets.QDialogButtonBox(
            QtWidgets.QDialogButtonBox.StandardButton.Ok
            | QtWidgets.QDialogButtonBox.StandardButton.Cancel
        )
        default = buttons.addButton("default", QtWidgets.QDialogButtonBox.ButtonRole.ResetRole)
        every = buttons.addButton("all", QtWidgets.QDialogButtonBox.ButtonRole.ActionRole)
        default.clicked.connect(lambda: self.check(default_keys()))
        every.clicked.connect(lambda: self.check(list(self.items)))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        note = QtWidgets.QLabel(
            "The metrics table, the browser and the dataset view show the ticked measures, "
            "and only those are computed. Hover a family for its paper and reference."
        )
        note.setWordWrap(True)
        box = QtWidgets.QVBoxLayout(self)
        box.addWidget(note)
        box.addWidget(self.tree)
        box.addWidget(buttons)
        self.resize(760, 640)

    def check(self, keys: Sequence[str]) -> None:
        """Tick exactly ``keys``."""
        for key, item in self.items.items():
            item.setCheckState(
                0, QtCore.Qt.CheckState.Checked if key in keys else QtCore.Qt.CheckState.Unchecked
            )

    def chosen(self) -> tuple[str, ...]:
        """The ticked keys, in registry order."""
        return tuple(
            k
            for k, item in self.items.items()
            if item.checkState(0) == QtCore.Qt.CheckState.Checked
        )
