"""The Cases panel: the tags (keys 1–9, named here), their counts, and the notes on the shown
sample and on one model's map of it. Holds no state: the inspector model's
:class:`~fminspect.inspector.cases.Cases` does, and writes every change to disk first."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from fminspect.gui.window_fit import narrow_combos
from fminspect.inspector.model import InspectorModel
from fminspect.pipeline.tags import SLOTS


class CasesPanel(QtWidgets.QWidget):
    """Tags of the shown sample (tick or press 1–9), their names and counts, and notes."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("casesPanel")
        self.model: InspectorModel | None = None
        box = QtWidgets.QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        self.sample_label = QtWidgets.QLabel("no sample")
        self.sample_label.setTextInteractionFlags(
            QtCore.Qt.TextInteractionFlag.TextSelectableByMouse
        )
        box.addWidget(self.sample_label)
        grid = QtWidgets.QGridLayout()
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(1)
        self.checks: dict[int, QtWidgets.QCheckBox] = {}
        self.names: dict[int, QtWidgets.QLineEdit] = {}
        self.counts: dict[int, QtWidgets.QLabel] = {}
        for row, slot in enumerate(SLOTS):
            check = QtWidgets.QCheckBox(str(slot))
            check.setToolTip(f"tag the shown sample (key {slot})")
            check.clicked.connect(lambda _=False, s=slot: self._toggle(s))
            name = QtWidgets.QLineEdit()
            name.setToolTip("the tag's name (kept with the folder's tags)")
            name.editingFinished.connect(lambda s=slot: self._rename(s))
            count = QtWidgets.QLabel("")
            count.setToolTip("samples of the dataset with this tag")
            count.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight)
            self.checks[slot], self.names[slot], self.counts[slot] = check, name, count
            grid.addWidget(check, row, 0)
            grid.addWidget(name, row, 1)
            grid.addWidget(count, row, 2)
        box.addLayout(grid)
        box.addWidget(QtWidgets.QLabel("note on the sample"))
        self.note = QtWidgets.QPlainTextEdit()
        self.note.setPlaceholderText("what is wrong here, what to show in the paper…")
        self.note.setMaximumHeight(90)
        self.note.textChanged.connect(self._save_note)
        box.addWidget(self.note)
        row_box = QtWidgets.QHBoxLayout()
        row_box.addWidget(QtWidgets.QLabel("note on the map of"))
        self.note_model = QtWidgets.QComboBox()
        narrow_combos(self.note_model)
        self.note_model.currentTextChanged.connect(self._show_model_note)
        row_box.addWidget(self.note_model, 1)
        box.addLayout(row_box)
        self.model_note = QtWidgets.QPlainTextEdit()
        self.model_note.setMaximumHeight(70)
        self.model_note.textChanged.connect(self._save_model_note)
        box.addWidget(self.model_note)
        self.where = QtWidgets.QLabel("")
        self.where.setWordWrap(True)
        self.where.setStyleSheet("color: gray")
        box.addWidget(self.where)
        box.addStretch(1)
        self._filling = False  # the editors are being filled: not the user typing

    def bind(self, model: InspectorModel) -> None:
        """Show ``model``'s cases for its shown sample."""
        self.model = model
        model.cases.opened.connect(self._on_opened)
        model.cases.changed.connect(lambda *_: self.refresh())
        model.cases.names_changed.connect(self.refresh)
        model.sample_loaded.connect(lambda *_: self.refresh())
        self.refresh()

    def _on_opened(self, where: str) -> None:
        self.where.setText(where)
        self.refresh()

    def _current(self) -> tuple[str, str] | None:
        m = self.model
        if m is None or m.requested is None:
            return None
        return m.requested.dataset, m.requested.name

    def refresh(self) -> None:
        """Show the names, counts, the shown sample's tags and its notes."""
        if self.model is None:
            return
        cases, current = self.model.cases, self._current()
        self._filling = True
        try:
            names = cases.names
            counts = cases.store.counts(current[0]) if cases.store and current else {}
            held = cases.tags(*current) if current else frozenset()
            for slot in SLOTS:
                if not self.names[slot].hasFocus():
                    self.names[slot].setText(names[slot])
                self.checks[slot].setChecked(slot in held)
                self.checks[slot].setEnabled(current is not None and cases.store is not None)
                self.counts[slot].setText(str(counts.get(slot, 0)) if counts else "")
            self.sample_label.setText(current[1] if current else "no sample")
            note = cases.note(*current) if current else ""
            if note != self.note.toPlainText():
                self.note.setPlainText(note)
            sample = self.model.requested
            models = list(sample.preds) if sample is not None else []
            if models != [self.note_model.itemText(i) for i in range(self.note_model.count())]:
                chosen = self.note_model.currentText()
                self.note_model.clear()
                self.note_model.addItems(models)
                if chosen in models:
                    self.note_model.setCurrentText(chosen)
            self._fill_model_note()
        finally:
            self._filling = False

    def _fill_model_note(self) -> None:
        current, model = self._current(), self.note_model.currentText()
        text = self.model.cases.note(*current, model) if (current and model and self.model) else ""
        if text != self.model_note.toPlainText():
            self.model_note.setPlainText(text)

    def _toggle(self, slot: int) -> None:
        if self.model is not None:
            self.model.toggle_tag(slot)
        self.refresh()

    def _rename(self, slot: int) -> None:
        if self.model is not None:
            self.model.cases.rename(slot, self.names[slot].text())

    def _save_note(self) -> None:
        """Every change of the text is written at once (nothing typed is lost)."""
        current = self._current()
        if not self._filling and current and self.model is not None:
            self.model.cases.set_note(*current, self.note.toPlainText())

    def _show_model_note(self, *_: object) -> None:
        was, self._filling = self._filling, True
        try:
            self._fill_model_note()
        finally:
            self._filling = was

    def _save_model_note(self) -> None:
        current, model = self._current(), self.note_model.currentText()
        if not self._filling and current and model and self.model is not None:
            self.model.cases.set_note(*current, self.model_note.toPlainText(), model)
