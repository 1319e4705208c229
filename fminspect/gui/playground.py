"""The teaching playground: edit a map (or the GT), perturb it, and watch every measure.

* **Edit**: a brush paints or erases on the prediction or on the GT (pyqtgraph's draw
  kernel; pan and zoom with the brush switched off).
* **Perturb**: blur, erosion/dilation, additive noise, translation, a hole, salt noise — on
  the prediction or the GT — with a strength slider; the plot shows every chosen measure
  against the strength of the perturbation.
* **Flaw demos**: the synthetic pairs of :mod:`fminspect.teaching`; the table shows which
  measures rank A and B the way a person would.

Scores are computed on the thread pool, the newest request winning (generation numbers).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.panels.curves import model_colour
from fminspect.gui.views.base import MatrixPanel
from fminspect.gui.workers import submit
from fminspect.io.loading import to_u8
from fminspect.metrics import (
    DEFAULT_PARAMS,
    MEASURES,
    MEASURES_BY_KEY,
    Params,
    compute_suite,
    unit_map,
)
from fminspect.teaching import PERTURBATIONS, FlawDemo, flaw_demos, rank_demo, sweep

SWEEP_KEYS = ("MAE", "Sm", "wFm", "maxEm", "maxFm", "maxIoU", "Cm")
AGREE, TIE, DISAGREE = (
    QtGui.QColor(70, 160, 90, 120),
    QtGui.QColor(160, 160, 160, 60),
    QtGui.QColor(220, 70, 60, 110),
)


class PaintableImageItem(pg.ImageItem):
    """An ImageItem that says when its draw kernel painted on it."""

    sigPainted = QtCore.Signal()

    def drawAt(self, pos: QtCore.QPointF, ev: object | None = None) -> None:
        super().drawAt(pos, ev)
        self.sigPainted.emit()


class EditablePanel(MatrixPanel):
    """A matrix panel whose image can be painted with a square brush."""

    edited = QtCore.Signal()

    def __init__(self, title: str, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(title, parent, item=PaintableImageItem())
        self.image.sigPainted.connect(self.edited)
        self.brush_size, self.brush_value, self.drawing = 7, 1.0, False

    def set_brush(self, on: bool, size: int, value: float) -> None:
        """Paint with a size×size square of ``value`` (or pan/zoom when off)."""
        self.drawing, self.brush_size, self.brush_value = on, size, value
        if on:
            kernel = np.full((size, size), value)
            self.image.setDrawKernel(kernel, mask=None, center=(size // 2, size // 2), mode="set")
        else:
            self.image.setDrawKernel(None)

    def paint_at(self, row: int, col: int) -> None:
        """One brush dab at (row, col) — what a mouse click does (used by tests and demos)."""
        half = self.brush_size // 2
        data = self.image.image
        data[max(row - half, 0) : row + half + 1, max(col - half, 0) : col + half + 1] = (
            self.brush_value
        )
        self.image.updateImage()
        self.edited.emit()


class PlaygroundWindow(QtWidgets.QMainWindow):
    """Edit, perturb and compare maps; every measure updates live."""

    def __init__(
        self,
        gt: np.ndarray,
        pred: np.ndarray,
        image: np.ndarray | None = None,
        params: Params = DEFAULT_PARAMS,
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("fminspect — teaching playground")
        self.params = params
        self.generation = 0
        self.scores: dict[str, float] = {}
        self._load(gt, pred, image)
        self._initial = (self.base_pred.copy(), self.base_gt.copy())
        tabs = QtWidgets.QTabWidget()
        tabs.addTab(self._edit_tab(), "Edit and perturb")
        tabs.addTab(self._demo_tab(), "Flaw demonstrations")
        self.setCentralWidget(tabs)
        self._debounce = QtCore.QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(60)
        self._debounce.timeout.connect(self.rescore)
        self.show_maps()
        self.rescore()

    # ------------------------------------------------------------------ data
    def _load(self, gt: np.ndarray, pred: np.ndarray, image: np.ndarray | None) -> None:
        """Keep float copies in [0, 1] of the GT and the map; the edits apply to these."""
        self.base_gt, self.base_pred, self.image = unit_map(gt), unit_map(pred), image
        self.gt, self.pred = self.base_gt.copy(), self.base_pred.copy()

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        """The edited and perturbed (prediction, GT) as uint8 maps."""
        return to_u8(self.pred), to_u8(self.gt)

    # ------------------------------------------------------------------ edit tab
    def _edit_tab(self) -> QtWidgets.QWidget:
        self.pred_panel = EditablePanel("prediction (paint here)")
        self.gt_panel = EditablePanel("GT")
        for panel in (self.pred_panel, self.gt_panel):
            panel.edited.connect(self._on_edited)
        self.brush_on = QtWidgets.QCheckBox("brush")
        self.brush_target = QtWidgets.QComboBox()
        self.brush_target.addItems(["prediction", "GT"])
        self.brush_size = QtWidgets.QSpinBox()
        self.brush_size.setRange(1, 61)
        self.brush_size.setValue(9)
        self.brush_value = QtWidgets.QDoubleSpinBox()
        self.brush_value.setRange(0, 1)
        self.brush_value.setSingleStep(0.1)
        self.brush_value.setValue(1.0)
        self.brush_on.toggled.connect(self._apply_brush)
        self.brush_target.currentIndexChanged.connect(self._apply_brush)
        self.brush_size.valueChanged.connect(self._apply_brush)
        self.brush_value.valueChanged.connect(self._apply_brush)
        self.kind = QtWidgets.QComboBox()
        self.kind.addItems(list(PERTURBATIONS))
        self.target = QtWidgets.QComboBox()
        self.target.addItems(["prediction", "GT"])
        self.strength = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.strength.setRange(0, 100)
        self.strength_label = QtWidgets.QLabel()
        self.kind.currentIndexChanged.connect(self._on_perturbation)
        self.target.currentIndexChanged.connect(self._on_perturbation)
        self.strength.valueChanged.connect(self._on_perturbation)
        reset = QtWidgets.QPushButton("Reset edits")
        reset.clicked.connect(self.reset)
        run_sweep = QtWidgets.QPushButton("Plot measures against strength")
        run_sweep.clicked.connect(self.run_sweep)
        self.table = QtWidgets.QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["measure (variant)", "value"])
        # the values always whole; a label longer than the room left is elided (in full in
        # its tooltip)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().hide()
        # the legend beside the plot, not over the curves
        self.sweep_view = pg.GraphicsLayoutWidget()
        self.sweep_view.setMinimumHeight(220)
        self.sweep_plot = self.sweep_view.addPlot(
            row=0, col=0, title="measures vs perturbation strength"
        )
        self.sweep_legend = pg.LegendItem(labelTextSize="8pt")
        self.sweep_view.addItem(self.sweep_legend, row=0, col=1)
        form = QtWidgets.QFormLayout()
        brush = QtWidgets.QHBoxLayout()
        for label, w in (
            ("", self.brush_on),
            ("on", self.brush_target),
            ("size", self.brush_size),
            ("value", self.brush_value),
        ):
            if label:
                brush.addWidget(QtWidgets.QLabel(label))
            brush.addWidget(w)
        form.addRow("Brush", brush)
        pert = QtWidgets.QHBoxLayout()
        pert.addWidget(self.kind)
        pert.addWidget(QtWidgets.QLabel("on"))
        pert.addWidget(self.target)
        form.addRow("Perturbation", pert)
        strength = QtWidgets.QHBoxLayout()
        strength.addWidget(self.strength, 1)
        strength.addWidget(self.strength_label)
        form.addRow("strength", strength)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(reset)
        buttons.addWidget(run_sweep)
        form.addRow(buttons)
        maps = QtWidgets.QHBoxLayout()
        maps.addWidget(self.pred_panel, 1)
        maps.addWidget(self.gt_panel, 1)
        left = QtWidgets.QVBoxLayout()
        left.addLayout(form)
        left.addLayout(maps, 3)
        left.addWidget(self.sweep_view, 2)
        host = QtWidgets.QWidget()
        box = QtWidgets.QHBoxLayout(host)
        box.addLayout(left, 3)
        box.addWidget(self.table, 1)
        self._on_perturbation(emit=False)
        return host

    def _apply_brush(self, *_: object) -> None:
        on = self.brush_on.isChecked()
        size, value = self.brush_size.value(), self.brush_value.value()
        target = self.brush_target.currentText()
        self.pred_panel.set_brush(on and target == "prediction", size, value)
        self.gt_panel.set_brush(on and target == "GT", size, value)

    def _strength(self) -> float:
        p = PERTURBATIONS[self.kind.currentText()]
        return p.lo + (p.hi - p.lo) * self.strength.value() / 100

    def _on_perturbation(self, *_: object, emit: bool = True) -> None:
        p = PERTURBATIONS[self.kind.currentText()]
        s = self._strength()
        self.strength_label.setText(f"{s:.1f} {p.unit}")
        if not emit:
            return
        pred8, gt8 = to_u8(self.base_pred), to_u8(self.base_gt)
        if self.target.currentText() == "prediction":
            self.pred = p.apply(pred8, s) / 255.0
            self.gt = self.base_gt.copy()
        else:
            self.gt = p.apply(gt8, s) / 255.0
            self.pred = self.base_pred.copy()
        self.show_maps()
        self._debounce.start()

    def show_maps(self) -> None:
        """Draw the current (edited) maps; the panels edit these arrays in place."""
        self.pred_panel.show_matrix(self.pred)
        self.gt_panel.show_matrix(self.gt, cmap="gray")
        self._apply_brush()

    def _on_edited(self) -> None:
        self.pred = np.asarray(self.pred_panel.image.image, dtype=np.float64)
        self.gt = np.asarray(self.gt_panel.image.image, dtype=np.float64)
        self.base_pred, self.base_gt = self.pred.copy(), self.gt.copy()  # edits become the base
        self._debounce.start()

    def reset(self) -> None:
        """Back to the maps the playground opened with."""
        self.strength.blockSignals(True)
        self.strength.setValue(0)
        self.strength.blockSignals(False)
        self.pred, self.gt = self._initial
        self.pred, self.gt = self.pred.copy(), self.gt.copy()
        self.base_pred, self.base_gt = self.pred.copy(), self.gt.copy()
        self.show_maps()
        self.rescore()

    # ------------------------------------------------------------------ scoring
    def rescore(self) -> None:
        """Score the current maps (newest request wins)."""
        self.generation += 1
        gen = self.generation
        pred, gt = self.current()
        submit(
            lambda: compute_suite(pred, gt, self.params, img=self.image).scores(),
            lambda scores: self._on_scores(gen, scores),
            owner=self,
        )

    def _on_scores(self, gen: int, scores: dict[str, float]) -> None:
        if gen != self.generation:
            return
        self.scores = scores
        self.table.setRowCount(len(scores))
        for r, key in enumerate(scores):
            info = MEASURES_BY_KEY[key]
            label = f"{info.label(self.params)} {'↑' if info.higher_is_better else '↓'}"
            item = QtWidgets.QTableWidgetItem(label)
            item.setToolTip(label)
            self.table.setItem(r, 0, item)
            self.table.setItem(r, 1, QtWidgets.QTableWidgetItem(f"{scores[key]:.4f}"))

    def run_sweep(self) -> None:
        """Plot the chosen measures for 11 strengths of the current perturbation."""
        p = PERTURBATIONS[self.kind.currentText()]
        strengths = np.linspace(p.lo, p.hi, 11)
        # the sweep starts from the edited, unperturbed maps
        pred8, gt8 = to_u8(self.base_pred), to_u8(self.base_gt)
        on_gt = self.target.currentText() == "GT"
        keys = [k for k in SWEEP_KEYS if k in MEASURES_BY_KEY]
        self.sweep_plot.setTitle(
            f"measures vs {p.name} ({p.unit}) on the {self.target.currentText()}"
        )
        submit(
            lambda: sweep(
                pred8,
                gt8,
                p.name,
                strengths,
                keys=keys,
                img=self.image,
                params=self.params,
                on_gt=on_gt,
            ),
            lambda curves: self._on_sweep(strengths, curves),
            owner=self,
        )

    def _on_sweep(self, strengths: np.ndarray, curves: dict[str, list[float]]) -> None:
        self.sweep_plot.clear()
        self.sweep_legend.clear()
        self.sweep_curves = curves
        for i, (key, values) in enumerate(curves.items()):
            item = self.sweep_plot.plot(
                strengths,
                values,
                pen=pg.mkPen(model_colour(i), width=2),
                symbol="o",
                symbolSize=5,
                symbolBrush=model_colour(i),
            )
            info = MEASURES_BY_KEY[key]
            arrow = "↑" if info.higher_is_better else "↓"
            self.sweep_legend.addItem(item, f"{info.label(self.params)} {arrow}")

    # ------------------------------------------------------------------ demos tab
    def _demo_tab(self) -> QtWidgets.QWidget:
        self.demos = flaw_demos()
        self.demo_choice = QtWidgets.QComboBox()
        self.demo_choice.addItems([d.title for d in self.demos])
        self.demo_text = QtWidgets.QLabel()
        self.demo_text.setWordWrap(True)
        self.demo_panels = [MatrixPanel("GT"), MatrixPanel("A"), MatrixPanel("B")]
        self.demo_image = MatrixPanel("image")
        self.demo_table = QtWidgets.QTableWidget(0, 5)
        self.demo_table.setHorizontalHeaderLabels(["measure", "A", "B", "prefers", "the paper"])
        self.demo_table.setToolTip(
            "'the paper': what the paper reports for this figure (A, B, tie, or ≈: almost "
            "the same); green: the measure agrees with the person, red: it does not"
        )
        self.demo_table.verticalHeader().hide()
        self.demo_table.horizontalHeader().setStretchLastSection(True)
        open_button = QtWidgets.QPushButton("Edit A in the playground")
        open_button.clicked.connect(self._edit_demo)
        self.demo_choice.currentIndexChanged.connect(self.show_demo)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.demo_choice, 1)
        top.addWidget(open_button)
        panels = QtWidgets.QHBoxLayout()
        for p in (self.demo_image, *self.demo_panels):
            panels.addWidget(p)
        left = QtWidgets.QVBoxLayout()
        left.addLayout(top)
        left.addWidget(self.demo_text)
        left.addLayout(panels, 1)
        host = QtWidgets.QWidget()
        box = QtWidgets.QHBoxLayout(host)
        box.addLayout(left, 3)
        box.addWidget(self.demo_table, 2)
        self.show_demo(0)
        return host

    def show_demo(self, index: int) -> None:
        """Show demo ``index``: its maps, the story, and every measure's verdict."""
        demo: FlawDemo = self.demos[index]
        self.demo = demo
        self.demo_text.setText(
            f"<b>{demo.title}</b> — {demo.paper}, {demo.figure}<br>{demo.description}<br>"
            f"<i>A person prefers {demo.preferred}; the paper proposes "
            f"{MEASURES_BY_KEY[demo.proposed].label(self.params)}.</i>"
        )
        self.demo_panels[0].show_matrix(demo.gt / 255.0, cmap="gray")
        self.demo_image.setVisible(demo.image is not None)
        if demo.image is not None:
            self.demo_image.show_matrix(demo.image)
        for panel, name, arr in (
            (self.demo_panels[1], f"A: {demo.label_a}", demo.a),
            (self.demo_panels[2], f"B: {demo.label_b}", demo.b),
        ):
            panel.title.setText(f"<b>{name}</b>")
            values = arr if arr.dtype == np.float64 else arr / 255.0
            panel.show_matrix(values)
        self.demo_verdicts = rank_demo(demo, self.params)
        claims, unmet = dict(demo.claims), dict(demo.unmet)
        # the measures the paper discusses first, then its proposal, then every other
        keys = list(
            dict.fromkeys(
                [*claims, demo.proposed, *(m.key for m in MEASURES if m.key in self.demo_verdicts)]
            )
        )
        self.demo_table.setRowCount(len(keys))
        for r, key in enumerate(keys):
            a, b, verdict = self.demo_verdicts[key]
            colour = TIE if verdict == "tie" else AGREE if verdict == demo.preferred else DISAGREE
            label = key + ("  ← proposed" if key == demo.proposed else "")
            claim = claims.get(key, "")
            for c, text in enumerate((label, f"{a:.4f}", f"{b:.4f}", verdict, claim)):
                item = QtWidgets.QTableWidgetItem(text)
                item.setBackground(colour)
                if c == 4 and key in unmet:  # the paper says so; the rebuilt pair cannot
                    item.setToolTip(f"not reproducible: {unmet[key]}")
                self.demo_table.setItem(r, c, item)
        self.demo_table.resizeColumnsToContents()

    def _edit_demo(self) -> None:
        d = self.demo
        self._load(d.gt, d.a, d.image)
        self._initial = (self.base_pred.copy(), self.base_gt.copy())
        tabs = self.centralWidget()
        assert isinstance(tabs, QtWidgets.QTabWidget)
        tabs.setCurrentIndex(0)
        self.show_maps()
        self.rescore()
