"""The analysis window of a human-ranking study.

Controls on top choose the consensus rule and which participants count; three tabs show
the groups (consensus or the reason it failed, Bradley–Terry strengths with ±1 s.d., the
win matrix and the maps, named by model), the participants (attention, consistency, side
bias, speed; a tick excludes one) and the measures against the people (θ = 1 − ρ and the
error rate with 95 % intervals — θ by betting, error rates by Clopper–Pearson — as a table
and a bar chart).

Aggregation (its slow part, the Bradley–Terry fits, ~1.5 s for 20 groups when the set of
participants changes) and the scoring of every measure on every map for the
measures-vs-humans tab run on the thread pool; a result for an outdated choice of rule or
participants is dropped. Each map's scores are kept for the window's lifetime, so a new
rule only re-ranks, and each thumbnail is read once.
"""

from __future__ import annotations

import dataclasses
import html
import math
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.workers import submit
from fminspect.ranking.aggregate import BT_PRIOR, Rule, StudyResult, aggregate
from fminspect.ranking.agreement import HumanAgreementReport, measures_vs_humans
from fminspect.ranking.report import (
    AGREEMENT_COLUMNS,
    TIED_NOTE,
    agreement_cells,
    agreement_rows,
    group_rows,
    participant_rows,
    ranked_groups,
    tied_with_best,
)
from fminspect.ranking.store import StudyStore
from fminspect.ranking.workflow import report_basis


def _f(v: float, digits: int = 3) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def _table(headers: list[str]) -> QtWidgets.QTableWidget:
    t = QtWidgets.QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(headers)
    t.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
    t.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
    t.verticalHeader().setVisible(False)
    t.horizontalHeader().setStretchLastSection(True)
    t.setAlternatingRowColors(True)
    return t


def _item(text: str, align_right: bool = False) -> QtWidgets.QTableWidgetItem:
    it = QtWidgets.QTableWidgetItem(text)
    if align_right:
        it.setTextAlignment(
            QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter
        )
    return it


class AnalysisWindow(QtWidgets.QMainWindow):
    """See the module notes."""

    agreement_ready = QtCore.Signal()

    def __init__(self, store: StudyStore, measure_keys: list[str] | None = None) -> None:
        super().__init__()
        self.store = store
        self.measure_keys = measure_keys
        self.result: StudyResult | None = None
        self.agreement: HumanAgreementReport | None = None
        self._generation = 0
        self._scores: dict[tuple[object, ...], dict[str, float]] = {}  # see measures_vs_humans
        self._thumbs: dict[str, np.ndarray | str] = {}  # picture, or why it cannot be read
        self._aggregating = False
        self.setWindowTitle(f"fminspect — study analysis: {store.design.name}")
        central = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(central)
        lay.addLayout(self._controls())
        self.summary = QtWidgets.QLabel()
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.addTab(self._groups_tab(), "Groups")
        self.tabs.addTab(self._participants_tab(), "Participants")
        self.tabs.addTab(self._measures_tab(), "Measures vs humans")
        lay.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        self.statusBar()
        self.refresh()

    # ------------------------------------------------------------------ layout
    def _controls(self) -> QtWidgets.QHBoxLayout:
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Consensus rule:"))
        self.rule = QtWidgets.QComboBox()
        for name, label in (
            ("unanimous", "unanimous (FMDatabase)"),
            ("k_of_n", "at least k participants agree"),
            ("majority", "pairwise majority, transitive"),
            ("bt", "Bradley–Terry P ≥ p"),
        ):
            self.rule.addItem(label, name)
        if self.store.design.sampling != "full":
            # nobody ranks every pair of a group: only the pooled rules apply
            model = self.rule.model()
            for name in ("unanimous", "k_of_n"):
                item = model.item(self.rule.findData(name))  # type: ignore[attr-defined]
                item.setEnabled(False)
                item.setToolTip(
                    f"needs each participant's complete order; this study's "
                    f"{self.store.design.sampling} design gives none"
                )
            self.rule.setCurrentIndex(self.rule.findData("bt"))
        row.addWidget(self.rule)
        self.k = QtWidgets.QSpinBox()
        self.k.setRange(1, max(1, len(self.store.participants())))
        self.k.setValue(max(1, len(self.store.participants()) - 1))
        self.k.setPrefix("k = ")
        self.p = QtWidgets.QDoubleSpinBox()
        self.p.setRange(0.501, 0.999)  # p ≤ 0.5 would accept any order
        self.p.setSingleStep(0.05)
        self.p.setDecimals(3)
        self.p.setValue(0.9)
        self.p.setPrefix("p = ")
        row.addWidget(self.k)
        row.addWidget(self.p)
        self.exclude_failing = QtWidgets.QCheckBox("exclude participants passing fewer checks than")
        self.min_attention = QtWidgets.QDoubleSpinBox()
        self.min_attention.setRange(0.0, 1.0)
        self.min_attention.setSingleStep(0.1)
        self.min_attention.setValue(1.0)
        row.addWidget(self.exclude_failing)
        row.addWidget(self.min_attention)
        self.prior = QtWidgets.QDoubleSpinBox()
        self.prior.setRange(0.001, 100.0)
        self.prior.setDecimals(3)
        self.prior.setSingleStep(0.05)
        self.prior.setValue(BT_PRIOR)
        self.prior.setPrefix("prior precision ")
        self.prior.setToolTip(
            "precision of the Gaussian prior of the Bradley–Terry and JOD scales (logit "
            "units); it sets the distances of separated groups"
        )
        row.addWidget(self.prior)
        row.addStretch(1)
        export_ds = QtWidgets.QPushButton("Export ranked dataset…")
        export_ds.clicked.connect(self._export_dataset)
        export_rep = QtWidgets.QPushButton("Export report…")
        export_rep.clicked.connect(self._export_report)
        row.addWidget(export_ds)
        row.addWidget(export_rep)
        self.rule.currentIndexChanged.connect(self._rule_changed)
        for w in (self.k, self.p, self.min_attention, self.prior):
            w.valueChanged.connect(self.refresh)
        self.exclude_failing.toggled.connect(self.refresh)
        self._rule_changed()
        return row

    def _groups_tab(self) -> QtWidgets.QWidget:
        split = QtWidgets.QSplitter()
        self.groups = _table(
            ["group", "sample", "consensus (best first)", "reason", "votes", "W", "κ", "circular"]
        )
        self.groups.horizontalHeader().setStretchLastSection(False)
        self.groups.horizontalHeader().setSectionResizeMode(
            3, QtWidgets.QHeaderView.ResizeMode.Stretch
        )
        self.groups.itemSelectionChanged.connect(self._show_group)
        split.addWidget(self.groups)
        detail = QtWidgets.QWidget()
        dl = QtWidgets.QVBoxLayout(detail)
        self.group_title = QtWidgets.QLabel()
        dl.addWidget(self.group_title)
        self.thumbs = QtWidgets.QWidget()
        self.thumbs.setMinimumHeight(150)
        QtWidgets.QHBoxLayout(self.thumbs).setContentsMargins(0, 0, 0, 0)
        dl.addWidget(self.thumbs, 2)
        self.scale_plot = pg.PlotWidget()
        self.scale_plot.setLabel("left", "JOD (1 = 75 % preference), 95 % interval")
        self.scale_plot.setMouseEnabled(False, False)
        self.scale_plot.hideButtons()
        dl.addWidget(self.scale_plot, 2)
        self.wins = _table([])
        self.wins.horizontalHeader().setStretchLastSection(False)  # square cells, not a wide last
        dl.addWidget(QtWidgets.QLabel("Votes: row preferred over column (ties count ½)"))
        dl.addWidget(self.wins, 1)
        split.addWidget(detail)
        split.setSizes([760, 560])
        return split

    def _participants_tab(self) -> QtWidgets.QWidget:
        self.participants = _table(
            [
                "exclude",
                "participant",
                "votes",
                "attention",
                "consistency",
                "left share",
                "side-bias p (Holm)",
                "ties",
                "median RT (ms)",
            ]
        )
        self.participants.itemChanged.connect(self._exclusion_toggled)
        return self.participants

    def _measures_tab(self) -> QtWidgets.QWidget:
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        self.measures = _table(["measure (exact variant)", *AGREEMENT_COLUMNS[1:]])
        self.measures.horizontalHeader().setStretchLastSection(False)
        split.addWidget(self.measures)
        self.measure_plot = pg.GraphicsLayoutWidget()
        split.addWidget(self.measure_plot)
        self.measures_note = QtWidgets.QLabel()
        self.measures_note.setWordWrap(True)
        box = QtWidgets.QWidget()
        bl = QtWidgets.QVBoxLayout(box)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.measures_note)
        bl.addWidget(split, 1)
        split.setSizes([250, 430])
        return box

    # ------------------------------------------------------------------ state
    def rule_choice(self) -> Rule:
        """The rule chosen in the controls."""
        name = self.rule.currentData()
        return Rule(name, k=self.k.value(), p=self.p.value())

    def _rule_changed(self) -> None:
        name = self.rule.currentData()
        self.k.setVisible(name == "k_of_n")
        self.p.setVisible(name == "bt")
        if hasattr(self, "groups"):
            self.refresh()

    def excluded(self) -> list[str]:
        """Participants ticked as excluded."""
        out = []
        for r in range(self.participants.rowCount()):
            box = self.participants.item(r, 0)
            if (
                box is not None
                and box.checkState() == QtCore.Qt.CheckState.Checked
                and box.data(QtCore.Qt.ItemDataRole.UserRole + 1) == "manual"
            ):
                out.append(box.data(QtCore.Qt.ItemDataRole.UserRole))
        return out

    def refresh(self) -> None:
        """Aggregate again with the chosen rule and participants (on the thread pool); then
        update every tab."""
        manual = self.excluded() if hasattr(self, "participants") else []
        self._generation += 1
        generation = self._generation
        path, rule = self.store.path, self.rule_choice()
        exclude_failing, min_attention, prior = (
            self.exclude_failing.isChecked(),
            self.min_attention.value(),
            self.prior.value(),
        )
        self.summary.setText(f"aggregating the votes ({rule})…")
        self._aggregating = True  # until then, what is shown is the previous choice's

        def work() -> StudyResult:
            store = StudyStore(path)  # SQLite connections stay in the thread that made them
            try:
                return aggregate(
                    store,
                    rule,
                    exclude_failing=exclude_failing,
                    min_attention=min_attention,
                    exclude=manual,
                    prior=prior,
                )
            finally:
                store.close()

        def done(result: StudyResult) -> None:
            if generation == self._generation:
                self._aggregating = False
                self._show_result(result, manual)

        def failed(message: str) -> None:
            if generation == self._generation:
                self._aggregating = False
                self.summary.setText(f"could not aggregate the votes: {message}")

        submit(work, done, failed, owner=self)

    def _show_result(self, result: StudyResult, manual: list[str]) -> None:
        self.result = r = result
        kept = sum(not p.excluded for p in r.participants)
        excluded = html.escape(", ".join(r.excluded))  # participants' names as they typed them
        self.summary.setText(
            f"<b>{len(r.groups)}</b> groups · <b>{len(r.participants)}</b> participants ({kept} counted"
            f"{', excluded: ' + excluded if r.excluded else ''}) · consensus (<b>{r.rule}</b>): "
            f"<b>{len(r.consensual)}</b> of {len(r.groups)} groups · Kendall's W {_f(r.kendall_w)} · "
            f"free-marginal κ {_f(r.kappa)}"
        )
        self._fill_groups()
        self._fill_participants(manual)
        self._start_agreement()

    def _fill_groups(self) -> None:
        assert self.result is not None
        rows = group_rows(self.result)
        selected = self.groups.currentRow()
        self.groups.setRowCount(len(rows))
        for i, r in enumerate(rows):
            vals = [
                r["group"],
                r["sample"],
                r["consensus"] or "—",
                r["reason"] + ("  · separated" if r["separated"] else ""),
                str(r["votes"]),
                _f(r["kendall_w"], 2),
                _f(r["kappa_free_marginal"], 2),
                str(r["circular_triads"]),
            ]
            for j, v in enumerate(vals):
                self.groups.setItem(i, j, _item(v, j >= 4))
        self.groups.resizeColumnsToContents()
        if rows:
            self.groups.selectRow(max(0, selected))
            self._show_group()

    def _show_group(self) -> None:
        if self.result is None:
            return
        row = self.groups.currentRow()
        if row < 0 or row >= len(self.result.groups):
            return
        g = self.result.groups[row]
        grp = self.store.design.group(g.group)
        order = list(np.argsort(-g.bt, kind="stable"))
        note = f"<br><i>{g.separation}</i>" if g.separation else ""
        group, sample, reason = (html.escape(t) for t in (g.group, g.sample, g.reason))
        self.group_title.setText(f"<b>{group}</b> — {sample}: {reason}{note}")
        self.group_title.setWordWrap(True)
        from fminspect.gui.voting import Picture
        from fminspect.io.loading import load_map, to_u8
        from fminspect.io.validation import LoadError

        lay = self.thumbs.layout()
        assert isinstance(lay, QtWidgets.QHBoxLayout)  # made in __init__
        while lay.count():
            item = lay.takeAt(0)
            old = item.widget() if item is not None else None
            if old is not None:  # only pictures are added
                old.setParent(None)  # gone now, not at the next event loop turn
                old.deleteLater()
        panels = [("GT", grp.gt)] if grp.gt else []
        panels += [
            (f"{g.models[k]}\nBT {round(float(g.bt[k]), 2) + 0.0:+.2f}", grp.items[k].path)
            for k in order
        ]
        for title, path in panels:
            pic = Picture(title, 9, colour=None)
            if path not in self._thumbs:
                try:
                    arr = to_u8(load_map(path).array)
                    self._thumbs[path] = np.repeat(arr[..., None], 3, axis=2)
                except LoadError as exc:
                    self._thumbs[path] = str(exc)
            thumb = self._thumbs[path]
            if isinstance(thumb, str):
                pic.set_image(None, message=thumb)
            else:
                pic.set_image(thumb)
            lay.addWidget(pic, 1)
        self.scale_plot.clear()
        x = np.arange(len(order))
        if g.jod is not None:  # the scale people read, with its bootstrap interval
            means = g.jod.scores[order]
            self.scale_plot.addItem(
                pg.BarGraphItem(x=x, height=means, width=0.6, brush=(76, 114, 176))
            )
            self.scale_plot.addItem(
                pg.ErrorBarItem(
                    x=x,
                    y=means,
                    top=np.nan_to_num(g.jod.high[order] - means),
                    bottom=np.nan_to_num(means - g.jod.low[order]),
                    beam=0.2,
                    pen=pg.mkPen(pg.getConfigOption("foreground"), width=1.5),
                )
            )
            self.scale_plot.setToolTip(g.jod.method)
        self.scale_plot.getAxis("bottom").setTicks(
            [[(i, g.models[k]) for i, k in enumerate(order)]]
        )
        n = len(g.items)
        self.wins.setColumnCount(n)
        self.wins.setRowCount(n)
        self.wins.setHorizontalHeaderLabels(g.models)
        self.wins.setVerticalHeaderLabels(g.models)
        self.wins.verticalHeader().setVisible(True)
        for i in range(n):
            for j in range(n):
                self.wins.setItem(i, j, _item("" if i == j else f"{g.wins[i, j]:g}", True))
        self.wins.resizeRowsToContents()
        self.wins.setFixedHeight(
            self.wins.horizontalHeader().height()
            + sum(self.wins.rowHeight(i) for i in range(n))
            + 4
        )

    def _fill_participants(self, manual: list[str]) -> None:
        assert self.result is not None
        self.participants.blockSignals(True)
        rows = participant_rows(self.result)
        self.participants.setRowCount(len(rows))
        for i, r in enumerate(rows):
            box = QtWidgets.QTableWidgetItem()
            box.setFlags(QtCore.Qt.ItemFlag.ItemIsUserCheckable | QtCore.Qt.ItemFlag.ItemIsEnabled)
            box.setCheckState(
                QtCore.Qt.CheckState.Checked if r["excluded"] else QtCore.Qt.CheckState.Unchecked
            )
            box.setData(QtCore.Qt.ItemDataRole.UserRole, r["participant"])
            box.setData(
                QtCore.Qt.ItemDataRole.UserRole + 1,
                "manual" if r["participant"] in manual else "auto",
            )
            self.participants.setItem(i, 0, box)
            bias = r["left_bias_p_holm"]  # adjusted over the participants: flagged below 0.05
            vals = [
                r["participant"],
                str(r["votes"]),
                r["attention"],
                r["consistency"],
                _f(r["left_share"], 2),
                _f(bias, 4) + (" ⚠" if not math.isnan(bias) and bias < 0.05 else ""),
                str(r["ties"]),
                _f(r["median_rt_ms"], 0),
            ]
            for j, v in enumerate(vals, start=1):
                self.participants.setItem(i, j, _item(v, j >= 2))
        self.participants.resizeColumnsToContents()
        self.participants.blockSignals(False)

    def _exclusion_toggled(self, item: QtWidgets.QTableWidgetItem) -> None:
        if item.column() == 0:
            item.setData(
                QtCore.Qt.ItemDataRole.UserRole + 1,
                "manual" if item.checkState() == QtCore.Qt.CheckState.Checked else "auto",
            )
            self.refresh()

    # ------------------------------------------------------------------ measures vs humans
    def _start_agreement(self) -> None:
        assert self.result is not None
        generation = self._generation
        result = self.result
        scores = self._scores
        self.agreement = None  # the previous rule's numbers must not be exported under this one
        self.measures_note.setText("computing every measure on the consensual groups…")
        keys = self.measure_keys
        basis = report_basis(
            result, exclude=self.excluded(), min_attention=self.min_attention.value()
        )
        by = result.design.selection.get("by")

        def work() -> tuple[HumanAgreementReport | None, list[str]]:
            from fminspect.metrics import measure_keys

            groups, problems = ranked_groups(result)
            if not groups:
                return None, problems
            chosen = keys or measure_keys(with_images=all(g.image is not None for g in groups))
            report = measures_vs_humans(groups, chosen, cache=scores)
            return dataclasses.replace(report, basis=basis, selected_by=by), problems

        def done(value: tuple[HumanAgreementReport | None, list[str]]) -> None:
            if generation != self._generation:
                return  # a newer rule or exclusion is being computed
            self.agreement, problems = value
            self._fill_measures(problems)
            self.agreement_ready.emit()

        def failed(message: str) -> None:
            if generation == self._generation:
                self.measures_note.setText(f"could not compute: {message}")

        submit(work, done, failed, owner=self)

    def _fill_measures(self, problems: list[str]) -> None:
        rep = self.agreement
        self.measure_plot.clear()
        if rep is None:
            self.measures.setRowCount(0)
            self.measures_note.setText(
                "No group reaches consensus under this rule: nothing to compare with."
                + "".join(f"\n{p}" for p in problems)
            )
            return
        rows = agreement_rows(rep)
        cells = agreement_cells(rep)
        self.measures.setRowCount(len(cells))
        for i, vals in enumerate(cells):
            for j, text in enumerate(vals[: self.measures.columnCount()]):
                self.measures.setItem(i, j, _item(text, j >= 1))
        self.measures.resizeColumnsToContents()
        n = max((r["groups"] for r in rows), default=0)
        skipped = "".join(f" Skipped {g}: {why}." for g, why in rep.skipped) + "".join(
            f" {p}." for p in problems
        )
        self.measures_note.setText(
            f"{n} consensual groups. θ = 1 − Spearman ρ between each measure's and the people's order, averaged "
            f"over groups; error rate = groups ordered differently (ties count as errors); 95 % "
            f"intervals over the {n} groups: θ by betting, error rates by Clopper–Pearson (valid "
            f"at any number of groups); 'θ not different from': paired tests, "
            f"Holm-adjusted. {TIED_NOTE}. Normalisation: {rep.normalization}.{skipped}\n"
            + "\n".join(f"• {line}" for line in rep.basis)
        )
        ticks = [[(i, r["measure"]) for i, r in enumerate(rows)]]
        for col, (key, lo_key, hi_key, title, colours) in enumerate(
            (
                (
                    "theta",
                    "theta_ci_low",
                    "theta_ci_high",
                    "θ = 1 − ρ (lower is better)",
                    ((43, 74, 126), (169, 191, 224)),
                ),
                (
                    "error_rate",
                    "error_ci_low",
                    "error_ci_high",
                    "error rate in % (lower is better)",
                    ((163, 80, 31), (240, 194, 163)),
                ),
            )
        ):
            plot = self.measure_plot.addPlot(row=0, col=col, title=title)
            plot.invertY(True)
            plot.setMouseEnabled(False, False)
            plot.hideButtons()
            y = np.arange(len(rows))
            scale = 100.0 if key == "error_rate" else 1.0  # as in the table
            v = scale * np.array([r[key] for r in rows])
            lo = np.nan_to_num(v - scale * np.array([r[lo_key] for r in rows]))
            hi = np.nan_to_num(scale * np.array([r[hi_key] for r in rows]) - v)
            brushes = [colours[0] if t else colours[1] for t in tied_with_best(rep, rows, key)]
            plot.addItem(pg.BarGraphItem(x0=0, y=y, height=0.65, width=v, brushes=brushes))
            plot.addItem(
                pg.ErrorBarItem(
                    x=v,
                    y=y,
                    left=lo,
                    right=hi,
                    beam=0.2,
                    pen=pg.mkPen(pg.getConfigOption("foreground"), width=1.2),
                )
            )
            axis = plot.getAxis("left")
            axis.setTicks(ticks if col == 0 else [[(i, "") for i in range(len(rows))]])
            axis.setStyle(hideOverlappingLabels=False, tickFont=self._small_font())
            if col == 0:
                axis.setWidth(
                    QtGui.QFontMetrics(self._small_font()).horizontalAdvance(
                        max((r["measure"] for r in rows), key=len)
                    )
                    + 16
                )
            plot.setXRange(0, max(1e-3, float((v + hi).max())) * 1.05)

    def _small_font(self) -> QtGui.QFont:
        font = QtGui.QFont(self.font())
        font.setPointSizeF(max(6.5, font.pointSizeF() - 1.5))
        return font

    # ------------------------------------------------------------------ exports
    def _still_aggregating(self) -> bool:
        if self._aggregating:
            self.statusBar().showMessage(
                "the votes are being aggregated under the new choice: export in a moment", 5000
            )
        return self._aggregating

    def _export_dataset(self) -> None:
        from fminspect.ranking.export import export_ranked

        if self._still_aggregating():
            return

        folder = QtWidgets.QFileDialog.getExistingDirectory(
            self, "Export the human-ranked dataset into"
        )
        if folder and self.result is not None:
            out = export_ranked(self.result, Path(folder))
            self.statusBar().showMessage(
                f"{len(self.result.consensual)} groups written to {out}", 8000
            )

    def _export_report(self) -> None:
        from fminspect.ranking.export import write_votes_csv
        from fminspect.ranking.report import write_agreement, write_study_report

        if self._still_aggregating():
            return

        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Write the study report into")
        if folder and self.result is not None:
            write_study_report(self.result, folder)
            write_votes_csv(self.store, Path(folder) / "votes.csv")
            if self.agreement is not None:
                write_agreement(
                    self.agreement, folder, f"{self.store.design.name} ({self.result.rule})"
                )
            self.statusBar().showMessage(f"report written to {folder}", 8000)
