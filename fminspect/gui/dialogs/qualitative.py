"""File ▸ Qualitative figure…: the paper's "Image | GT | methods" figure from the window.

The rows are the samples with a tag, those the browser lists, or the shown one
(:func:`fminspect.inspector.figure.figure_samples`); the columns the shown models in their
order under their aliases (:func:`~fminspect.inspector.figure.figure_spec`). The figure is
drawn in the background by :func:`fminspect.batch.qualitative.make`, as ``fminspect
qualitative`` draws it, and the dialog says what was written and what was missing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6 import QtCore, QtWidgets

from fminspect.batch.qualitative import (
    DEFAULT_DPI,
    INSET_CORNERS,
    WIDTHS,
    Made,
    QualitativeError,
    Region,
    make,
)
from fminspect.gui import workers
from fminspect.inspector.figure import DEFAULT_ROWS, figure_samples, figure_spec
from fminspect.inspector.model import InspectorModel
from fminspect.pipeline.tags import SLOTS

#: The most rows the dialog offers.
MAX_ROWS = 40


class QualitativeDialog(QtWidgets.QDialog):
    """Choose the rows and the layout, and write the figure."""

    def __init__(
        self,
        model: InspectorModel,
        parent: QtWidgets.QWidget | None = None,
        zoom: Callable[[], Region | None] = lambda: None,
    ) -> None:
        """``zoom``: the part of the shown sample the window's map grid is zoomed on (None:
        the whole image), offered as that row's inset."""
        super().__init__(parent)
        self._zoom = zoom
        self.setObjectName("qualitativeDialog")
        self.setWindowTitle("Qualitative figure")
        self.model = model
        self.made: Made | None = None
        self._job: Any = None
        form = QtWidgets.QFormLayout(self)
        self.source = QtWidgets.QComboBox()
        self.source.setObjectName("figureSource")
        self._fill_sources()
        self.source.currentIndexChanged.connect(self._update)
        form.addRow("rows", self.source)
        self.limit = QtWidgets.QSpinBox()
        self.limit.setRange(1, MAX_ROWS)
        self.limit.setValue(DEFAULT_ROWS)
        self.limit.valueChanged.connect(self._update)
        form.addRow("at most", self.limit)
        self.columns = QtWidgets.QLabel()
        self.columns.setWordWrap(True)
        self.columns.setToolTip("the shown models in their order; choose them in the model list")
        form.addRow("columns", self.columns)
        self.width_box = QtWidgets.QComboBox()
        for name, inches in WIDTHS.items():
            self.width_box.addItem(f"{name} ({inches:g} in)", inches)
        self.width_box.setCurrentIndex(list(WIDTHS).index("page"))
        form.addRow("width", self.width_box)
        self.dpi = QtWidgets.QSpinBox()
        self.dpi.setRange(50, 1200)
        self.dpi.setValue(DEFAULT_DPI)
        self.dpi.setSuffix(" dpi")
        self.dpi.setToolTip("resolution of the pictures in the file, and of a PNG")
        form.addRow("resolution", self.dpi)
        self.image = QtWidgets.QCheckBox("image")
        self.gt = QtWidgets.QCheckBox("GT")
        self.names = QtWidgets.QCheckBox("sample names")
        self.transpose = QtWidgets.QCheckBox("one column per sample")
        for box in (self.image, self.gt):
            box.setChecked(True)
            box.toggled.connect(self._update)
        shown = QtWidgets.QHBoxLayout()
        for box in (self.image, self.gt, self.names, self.transpose):
            shown.addWidget(box)
        form.addRow("show", shown)
        # a zoomed inset: the region the map grid is zoomed on, in the shown sample's row
        self.inset = QtWidgets.QCheckBox()
        self.inset.setObjectName("figureInset")
        self.inset.toggled.connect(self._update)
        self.inset_corner = QtWidgets.QComboBox()
        self.inset_corner.addItems(INSET_CORNERS)
        inset_row = QtWidgets.QHBoxLayout()
        inset_row.addWidget(self.inset, 1)
        inset_row.addWidget(self.inset_corner)
        form.addRow("inset", inset_row)
        self.path = QtWidgets.QLineEdit(str(self._default_path()))
        self.path.setObjectName("figurePath")
        browse = QtWidgets.QPushButton("…")
        browse.clicked.connect(self._browse)
        where = QtWidgets.QHBoxLayout()
        where.addWidget(self.path, 1)
        where.addWidget(browse)
        form.addRow("file", where)
        self.latex = QtWidgets.QCheckBox("and a LaTeX snippet (.tex) beside it")
        self.latex.setChecked(True)
        form.addRow("", self.latex)
        self.status = QtWidgets.QLabel("")
        self.status.setObjectName("figureStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.status)
        self.buttons = QtWidgets.QDialogButtonBox(
            QtWidgets.QDialogButtonBox.StandardButton.Save
            | QtWidgets.QDialogButtonBox.StandardButton.Close
        )
        self.buttons.accepted.connect(self.write)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self._update()

    def _fill_sources(self) -> None:
        cases = self.model.cases
        ds = self.model.dataset
        counts = cases.store.counts(ds.name) if (cases.store and ds) else {}
        for slot in SLOTS:
            if counts.get(slot):
                self.source.addItem(
                    f"tagged {slot} “{cases.names[slot]}” ({counts[slot]})", ("tagged", slot)
                )
        listed = len(self.model.walk.order) if ds is not None else 0
        self.source.addItem(f"listed in the browser, in its order ({listed})", ("listed", 0))
        self.source.addItem("the shown sample", ("shown", 0))

    def _default_path(self) -> Path:
        ds = self.model.dataset
        return Path.home() / f"qualitative_{ds.name if ds else 'figure'}.pdf"

    def choose(self, source: str) -> None:
        """Take the rows from ``source`` ("listed", "shown", or "tagged N")."""
        for i in range(self.source.count()):
            kind, slot = self.source.itemData(i)
            if source in (kind, f"{kind} {slot}"):
                self.source.setCurrentIndex(i)
                return
        raise ValueError(f"no source {source!r} here")

    def samples(self) -> list[Any]:
        source, slot = self.source.currentData()
        return figure_samples(self.model, source, slot or 1, self.limit.value())

    def inset_region(self) -> tuple[str, Region] | None:
        """The shown sample's key and the region the map grid is zoomed on, when the sample
        is a row of the figure and the grid is zoomed."""
        sample, ds, region = self.model.sample, self.model.dataset, self._zoom()
        if sample is None or ds is None or region is None:
            return None
        if all(s.name != sample.name for s in self.samples()):
            return None
        return f"{ds.name}/{sample.name}", region

    def spec(self) -> Any:
        inset = self.inset_region() if self.inset.isChecked() else None
        return figure_spec(
            self.model,
            insets=dict([inset]) if inset else {},
            inset_corner=self.inset_corner.currentText(),
            show_image=self.image.isChecked(),
            show_gt=self.gt.isChecked(),
            transpose=self.transpose.isChecked(),
            width=float(self.width_box.currentData()),
            sample_labels=self.names.isChecked(),
            dpi=self.dpi.value(),
        )

    def _update(self) -> None:
        inset = self.inset_region()
        if inset is None:
            self.inset.setText("zoom into the map grid on a sample of the figure to add one")
        else:
            self.inset.setText(f"the map grid's zoom on {inset[0].split('/', 1)[1]} ({inset[1]})")
        self.inset.setEnabled(inset is not None)
        self.inset_corner.setEnabled(inset is not None)
        spec = self.spec()
        n = len(self.samples())
        self.columns.setText(", ".join(spec.columns) or "none")
        self.status.setText(f"{n} row{'s' if n != 1 else ''} × {len(spec.columns)} columns")
        save = self.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Save)
        save.setEnabled(bool(n and spec.columns) and self._job is None)

    def _browse(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Save the figure", self.path.text(), "PDF (*.pdf);;SVG (*.svg);;PNG (*.png)"
        )
        if path:
            self.path.setText(path)

    def write(self) -> None:
        """Draw and write the figure in the background."""
        samples, spec = self.samples(), self.spec()
        out = Path(self.path.text().strip()).expanduser()
        latex = self.latex.isChecked()
        self._job = True
        self._update()
        self.status.setText(f"drawing {len(samples)} rows × {len(spec.columns)} columns…")

        def run() -> Made | str:
            try:
                return make(samples, spec, out, latex=latex)
            except (QualitativeError, OSError) as exc:
                return str(exc)

        self._job = workers.submit(run, self._done, self._failed, owner=self)

    def _done(self, made: Made | str) -> None:
        self._job = None
        self._update()
        if isinstance(made, str):
            self.status.setText(f"not written: {made}")
            return
        self.made = made
        lines = [f"written: {', '.join(str(p) for p in made.written)}"]
        lines += [f"warning: {note}" for note in made.notes]
        self.status.setText("\n".join(lines))

    def _failed(self, message: str) -> None:
        self._job = None
        self._update()
        self.status.setText(f"not written: {message}")
