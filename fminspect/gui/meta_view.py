"""The meta-measures window: run them on the inspector's dataset, read the table, open the
cases behind a surprising number.

The run happens on the thread pool (the models' scores come from the same cache as
``fminspect eval``, kept in the user's cache folder); the table is the one ``fminspect meta``
writes. Clicking a column draws it as a bar chart; clicking a cell lists the cases behind
it, errors first; double-clicking a case shows that image in the inspector.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Protocol

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from fminspect.gui.workers import submit
from fminspect.io.discovery import Dataset
from fminspect.meta import META_MEASURES, Case, MetaConfig, MetaReport, run_meta
from fminspect.meta.outputs import columns, measures, protocol_caption, table, write_meta
from fminspect.meta.protocols import PROTOCOLS
from fminspect.metrics import Params


def cache_path() -> Path:
    """The GUI's result cache (in the user's cache folder)."""
    base = QtCore.QStandardPaths.writableLocation(
        QtCore.QStandardPaths.StandardLocation.CacheLocation
    )
    folder = Path(base or Path.home() / ".cache" / "fminspect")
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "meta-cache.sqlite"


class Inspector(Protocol):
    """What the window needs of the inspector (the main window) to show a case there."""

    def go_to(self, sample: str, dataset: str | None = None) -> bool: ...
    def raise_(self) -> None: ...
    def activateWindow(self) -> None: ...


class MetaWindow(QtWidgets.QMainWindow):
    """See the module notes."""

    finished_run = QtCore.Signal()

    def __init__(
        self,
        dataset: Dataset,
        params: Params,
        inspector: Inspector | None = None,
        cache: Path | None = None,
    ) -> None:
        super().__init__()
        self.dataset = dataset
        self.params = params
        self.inspector = inspector
        self.cache = cache
        self.report: MetaReport | None = None
        self._generation = 0
        self.setWindowTitle(f"fminspect — meta-measures on {dataset.name}")
        central = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(central)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("protocol"))
        self.protocol = QtWidgets.QComboBox()
        self.protocol.setObjectName("metaProtocol")
        for i, (name, preset) in enumerate(PROTOCOLS.items()):
            self.protocol.addItem(name)
            self.protocol.setItemData(i, preset.title, QtCore.Qt.ItemDataRole.ToolTipRole)
        self.protocol.currentTextChanged.connect(self._protocol_changed)
        row.addWidget(self.protocol)
        self.boxes: dict[str, QtWidgets.QCheckBox] = {}
        for meta in META_MEASURES:
            if meta == "human":
                continue  # needs human-ranked data: fminspect meta --ranked
            box = QtWidgets.QCheckBox(meta if meta != "application" else "application (GrabCut)")
            box.setChecked(meta not in ("application",))
            self.boxes[meta] = box
            row.addWidget(box)
        row.addWidget(QtWidgets.QLabel("seed"))
        self.seed = QtWidgets.QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        row.addWidget(self.seed)
        self.run_button = QtWidgets.QPushButton("Run")
        self.run_button.clicked.connect(self.run)
        row.addWidget(self.run_button)
        self.busy = QtWidgets.QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.hide()
        row.addWidget(self.busy)
        row.addStretch(1)
        export = QtWidgets.QPushButton("Export…")
        export.clicked.connect(self._export)
        row.addWidget(export)
        lay.addLayout(row)
        self.caption = QtWidgets.QLabel(
            f"{len(dataset.samples)} images, {len(dataset.methods)} models. Press Run."
        )
        self.caption.setWordWrap(True)
        lay.addWidget(self.caption)
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        self.table = QtWidgets.QTableWidget()
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.cellClicked.connect(self._cell_clicked)
        self.table.horizontalHeader().sectionClicked.connect(self._plot_column)
        split.addWidget(self.table)
        bottom = QtWidgets.QSplitter()
        self.plot = pg.PlotWidget()
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        bottom.addWidget(self.plot)
        right = QtWidgets.QWidget()
        rl = QtWidgets.QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        self.cases_title = QtWidgets.QLabel(
            "Click a cell to list its cases; double-click a case to open it."
        )
        self.cases_title.setWordWrap(True)
        rl.addWidget(self.cases_title)
        self.cases = QtWidgets.QTableWidget(0, 7)
        self.cases.setHorizontalHeaderLabels(
            ["image", "case", "model", "reference", "test", "outcome", "detail"]
        )
        self.cases.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.cases.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.cases.verticalHeader().setVisible(False)
        self.cases.horizontalHeader().setStretchLastSection(True)
        self.cases.cellDoubleClicked.connect(self._open_case)
        rl.addWidget(self.cases)
        bottom.addWidget(right)
        bottom.setSizes([760, 740])
        split.addWidget(bottom)
        split.setSizes([430, 400])
        lay.addWidget(split, 1)
        self.setCentralWidget(central)
        self.statusBar()

    # ------------------------------------------------------------------ running
    def _protocol_changed(self, name: str) -> None:
        """Only the meta-measures of the chosen paper's protocol can be ticked."""
        has = PROTOCOLS[name].metas
        for meta, box in self.boxes.items():
            box.setEnabled(meta in has)
            box.setChecked(meta in has and meta != "application")
            box.setToolTip("" if meta in has else f"not part of the {name} protocol")

    def config(self) -> MetaConfig:
        """The protocol chosen in the controls (the preset's settings)."""
        from fminspect.meta.workflow import meta_config

        metas = [m for m, box in self.boxes.items() if box.isChecked() and box.isEnabled()]
        return meta_config(
            protocol=self.protocol.currentText(),
            params=self.params,
            metas=metas or None,
            seed=self.seed.value(),
            application="grabcut" if "application" in metas else None,
        )

    def run(self) -> None:
        """Run the chosen meta-measures on the thread pool."""
        try:
            config = self.config()
        except ValueError as exc:
            self.caption.setText(str(exc))
            return
        self._generation += 1
        generation = self._generation
        self.busy.show()
        self.run_button.setEnabled(False)
        self.caption.setText(
            "running… (the models' scores come from the cache when they were computed before)"
        )
        dataset, cache = self.dataset, self.cache or cache_path()
        jobs = max(1, min(4, (os.cpu_count() or 2) - 1))

        def work() -> MetaReport:
            return run_meta([dataset], config, cache_path=cache, jobs=jobs, progress=False)

        def done(report: MetaReport) -> None:
            if generation != self._generation:
                return
            self.busy.hide()
            self.run_button.setEnabled(True)
            self.report = report
            self._fill()
            self.finished_run.emit()

        def failed(message: str) -> None:
            self.busy.hide()
            self.run_button.setEnabled(True)
            self.caption.setText(f"the run failed: {message}")

        submit(work, done, failed, owner=self)

    # ------------------------------------------------------------------ showing
    def _fill(self) -> None:
        assert self.report is not None
        header, rows = table(self.report)
        self.table.setColumnCount(len(header))
        self.table.setRowCount(len(rows))
        self.table.setHorizontalHeaderLabels([h.replace(" · ", "\n") for h in header])
        for i, r in enumerate(rows):
            for j, v in enumerate(r):
                item = QtWidgets.QTableWidgetItem(v)
                if j:
                    item.setTextAlignment(
                        QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self.table.resizeRowsToContents()
        problems = len(self.report.problems)
        self.caption.setText(
            protocol_caption(self.report)
            + (f" {problems} problem(s): see Export → protocol.json." if problems else "")
        )
        if len(header) > 1:
            self._plot_column(1)

    def _plot_column(self, column: int) -> None:
        if self.report is None or column < 1:
            return
        meta, stat, ds = columns(self.report)[column - 1]
        keys = measures(self.report)
        values = {
            r.measure: r.value
            for r in self.report.summary
            if (r.meta, r.statistic, r.dataset) == (meta, stat, ds)
        }
        v = np.array([values.get(k, math.nan) for k in keys], float) * (
            100 if "rate" in stat else 1
        )
        self.plot.clear()
        y = np.arange(len(keys))
        ok = ~np.isnan(v)
        self.plot.addItem(
            pg.BarGraphItem(x0=0, y=y[ok], height=0.65, width=v[ok], brush=(76, 114, 176))
        )
        axis = self.plot.getAxis("left")
        axis.setTicks([[(i, self.report.labels.get(k, k)) for i, k in enumerate(keys)]])
        axis.setStyle(hideOverlappingLabels=False)  # every measure's name, however many
        bottom = self.plot.getAxis("bottom")
        # the values' ticks: fewer, and none drawn over another (1 − ρ ticks such as 0.005
        # overlapped at the density pyqtgraph picks)
        bottom.setTickDensity(0.6)
        bottom.setStyle(hideOverlappingLabels=True)
        self.plot.invertY(True)
        unit = " (%)" if "rate" in stat else ""
        better = (
            "  — lower is better"
            if "rate" in stat or "ρ" in stat or "θ" in stat
            else "  — closer to 0 is better"
        )
        self.plot.setTitle(f"{meta}: {stat}{unit} · {ds}{better}")

    def _cell_clicked(self, row: int, column: int) -> None:
        if self.report is None or column < 1:
            return
        meta, stat, ds = columns(self.report)[column - 1]
        key = measures(self.report)[row]
        if meta == "generic":
            case: str | None = stat.removeprefix("error rate (").removesuffix(")")
        elif meta in ("annotation", "application"):
            case = stat.removeprefix("mean ")
        else:
            case = None  # every case of the meta-measure
        cases = [
            c
            for c in self.report.cases
            if c.dataset == ds
            and c.meta == meta
            and c.measure == key
            and (case is None or c.case == case)
        ]
        cases.sort(key=lambda c: (-(c.outcome or 0), c.image, c.model))
        self.cases_title.setText(
            f"{len(cases)} cases of {meta} ({stat}) for {self.report.labels.get(key, key)} "
            f"on {ds}; errors first. Double-click to open the image in the inspector."
        )
        self.cases.setRowCount(len(cases))
        self._shown_cases = cases
        for i, c in enumerate(cases):
            vals = [
                c.image,
                c.case,
                c.model,
                f"{c.reference:.6f}",
                f"{c.test:.6f}",
                _outcome(c),
                c.detail,
            ]
            for j, v in enumerate(vals):
                self.cases.setItem(i, j, QtWidgets.QTableWidgetItem(v))
        self.cases.resizeColumnsToContents()

    def _open_case(self, row: int, _column: int) -> None:
        cases = getattr(self, "_shown_cases", [])
        if self.inspector is None or row >= len(cases):
            return
        if self.inspector.go_to(cases[row].image, cases[row].dataset):
            self.inspector.raise_()
            self.inspector.activateWindow()

    def _export(self) -> None:
        if self.report is None:
            return
        folder = QtWidgets.QFileDialog.getExistingDirectory(
            self, "Write the meta-measure results into"
        )
        if folder:
            write_meta(self.report, folder)
            self.statusBar().showMessage(f"written to {folder}", 8000)


def _outcome(case: Case) -> str:
    """'error' / 'ok' for one comparison, 'k of n errors' for many."""
    if case.outcome is None:
        return ""
    if case.trials != 1:
        return f"{case.outcome} of {case.trials} errors"
    return "error" if case.outcome else "ok"
