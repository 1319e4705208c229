"""The parameter panel: threshold, measure parameters, normalisation and display options."""

from __future__ import annotations

import math
from dataclasses import replace

from PySide6 import QtCore, QtWidgets

from fminspect.gui.panels.map_grid import COLORMAPS
from fminspect.gui.window_fit import narrow_combos
from fminspect.inspector.settings import Settings
from fminspect.io.loading import INTERPOLATIONS
from fminspect.metrics import DEFAULT_PARAMS, Parameter, Params, parameters
from fminspect.pipeline.conventions import CONVENTION_KNOBS, CONVENTIONS, convention_of

#: The GT rules offered: (label, threshold on 0–255, inclusive).
GT_RULES = (
    ("GT > 128  (pysodmetrics, MATLAB)", 128.0, False),
    ("GT ≥ 128  (original Context-measure)", 128.0, True),
    ("GT ≥ 25.5  (classic benchmark: ≥ 0.1)", 25.5, True),
)
#: The prediction stretches offered: (label, stretch, stretch_rule).
STRETCHES = (
    ("min–max  (pysodmetrics, MATLAB)", True, "min-max"),
    ("÷ max  (classic benchmark)", True, "max"),
    ("none  (original Context-measure)", False, "min-max"),
)
#: The curves' thresholds offered: (label, rule).
THRESHOLDS = (
    ("t/255  (pysodmetrics)", "t/255"),
    ("MATLAB's 1:-1/255:0", "matlab"),
)
CUSTOM = "custom"
#: The characters a list asks room for at least (it grows to the dock's width).
COMBO_CHARACTERS = 8


class ParameterPanel(QtWidgets.QWidget):
    """Widgets for every parameter; emits changes, holds no maths.

    Signals
    -------
    settings_changed(object)
        New :class:`Settings` (β², α, every other measure parameter, the convention's
        knobs: GT rule, stretch, curve thresholds, interpolation).
    threshold_changed(int)
        Curve point 0–255.
    display_changed(dict)
        Overlay options: contour, confusion, over_image, opacity, colormap.
    """

    settings_changed = QtCore.Signal(object)
    threshold_changed = QtCore.Signal(int)
    display_changed = QtCore.Signal(dict)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = Settings()
        form = QtWidgets.QFormLayout(self)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        self.threshold = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.threshold.setRange(0, 255)
        self.threshold.setValue(128)
        self.threshold_label = QtWidgets.QLabel()
        self.threshold.valueChanged.connect(self._on_threshold)
        form.addRow(QtWidgets.QLabel("<b>Binarisation</b>"))
        form.addRow("threshold t", self.threshold)
        form.addRow("", self.threshold_label)
        self._on_threshold(128, emit=False)

        form.addRow(QtWidgets.QLabel("<b>Measures</b>"))
        info = parameters()
        self.beta2 = self._spin(0.05, 10.0, DEFAULT_PARAMS.beta2, 0.05, info["beta2"].description)
        form.addRow("F-measure β²", self.beta2)
        self.alpha = self._spin(0.0, 1.0, DEFAULT_PARAMS.alpha, 0.05, info["alpha"].description)
        form.addRow("S-measure α", self.alpha)
        # every other parameter of a registered measure, made from its registry entry
        self.more = QtWidgets.QGroupBox("more measure parameters")
        self.more.setObjectName("moreParameters")
        self.more.setCheckable(True)
        self.more.setChecked(False)  # folded: the defaults are the papers'
        more_form = QtWidgets.QFormLayout(self.more)
        self.extra: dict[str, QtWidgets.QWidget] = {}
        for name, p in info.items():
            if name in ("beta2", "alpha"):
                continue
            widget = self._editor(p)
            self.extra[name] = widget
            more_form.addRow(f"{p.symbol} ({name})", widget)
        self.more.toggled.connect(self._fold_more)
        self._fold_more(False)
        form.addRow(self.more)

        form.addRow(QtWidgets.QLabel("<b>Normalisation</b>"))
        # its lists' entries are long ("GT > 128  (pysodmetrics, MATLAB)"): each under its
        # label, as wide as the dock
        outer, form = form, QtWidgets.QFormLayout()
        form.setRowWrapPolicy(QtWidgets.QFormLayout.RowWrapPolicy.WrapAllRows)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        outer.addRow(form)
        self.convention = QtWidgets.QComboBox()
        self.convention.addItems([*CONVENTIONS, CUSTOM])
        self.convention.setToolTip(
            "compute as one implementation does: every knob below (and the measures' "
            "parameters it fixes) set as that code sets it; 'custom' when they match none"
        )
        self.convention.activated.connect(self._on_convention)
        form.addRow("convention", self.convention)
        self.gt_rule = QtWidgets.QComboBox()
        self.gt_rule.addItems([label for label, _, _ in GT_RULES])
        self.gt_rule.currentIndexChanged.connect(self._emit_settings)
        form.addRow("GT binarisation", self.gt_rule)
        self.stretch = QtWidgets.QComboBox()
        self.stretch.addItems([label for label, _, _ in STRETCHES])
        self.stretch.setToolTip(
            "how each map is stretched to [0, 1]: pysodmetrics and MATLAB min–max (a constant "
            "map kept), the classic saliency benchmark divides by the maximum"
        )
        self.stretch.currentIndexChanged.connect(self._emit_settings)
        form.addRow("stretch", self.stretch)
        self.thresholds = QtWidgets.QComboBox()
        self.thresholds.addItems([label for label, _ in THRESHOLDS])
        self.thresholds.setToolTip("the 256 thresholds of the curves")
        self.thresholds.currentIndexChanged.connect(self._emit_settings)
        form.addRow("curve thresholds", self.thresholds)
        self.interpolation = QtWidgets.QComboBox()
        self.interpolation.addItems(list(INTERPOLATIONS))
        self.interpolation.setToolTip("how a map of another size is resized to its GT")
        self.interpolation.currentTextChanged.connect(self._emit_settings)
        form.addRow("resize", self.interpolation)

        form = outer
        form.addRow(QtWidgets.QLabel("<b>Display</b>"))
        self.contour = QtWidgets.QCheckBox("GT contour")
        self.contour.setChecked(True)
        self.confusion = QtWidgets.QCheckBox("TP / FP / FN at t")
        self.over_image = QtWidgets.QCheckBox("maps over the image")
        self.opacity = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.opacity.setRange(0, 100)
        self.opacity.setValue(60)
        self.colormap = QtWidgets.QComboBox()
        self.colormap.addItems(list(COLORMAPS))
        for w in (self.contour, self.confusion, self.over_image):
            w.toggled.connect(self._emit_display)
            form.addRow("", w)
        self.opacity.valueChanged.connect(self._emit_display)
        self.colormap.currentTextChanged.connect(self._emit_display)
        form.addRow("map opacity", self.opacity)
        form.addRow("colour map", self.colormap)
        # (their colours' legend is above the maps, in view whatever this dock's height)
        # no list asks for more than the dock's width (the full text in its popup), so that
        # the dock needs no horizontal scroll bar at 1366 × 768
        narrow_combos(*self.findChildren(QtWidgets.QComboBox), letters=COMBO_CHARACTERS, grow=False)
        self.threshold_label.setWordWrap(True)

    def _spin(
        self, lo: float, hi: float, value: float, step: float, tip: str
    ) -> QtWidgets.QDoubleSpinBox:
        spin = QtWidgets.QDoubleSpinBox()
        spin.setRange(lo, hi)
        spin.setSingleStep(step)
        spin.setDecimals(2)
        spin.setValue(value)
        spin.setToolTip(tip)
        spin.valueChanged.connect(self._emit_settings)
        return spin

    def _editor(self, p: Parameter) -> QtWidgets.QWidget:
        """An editor of one registry parameter: a list for a choice, a spin box for a number
        (its range and default from the registry)."""
        widget: QtWidgets.QWidget
        if p.choices:
            combo = QtWidgets.QComboBox()
            combo.addItems(list(p.choices))
            combo.setCurrentText(str(p.default))
            combo.currentTextChanged.connect(self._emit_settings)
            widget = combo
        elif p.integer:
            spin = QtWidgets.QSpinBox()
            spin.setRange(int(max(p.low, -1e9)), int(min(p.high, 1e9)))
            spin.setValue(int(p.default))
            spin.valueChanged.connect(self._emit_settings)
            widget = spin
        else:
            dspin = QtWidgets.QDoubleSpinBox()
            dspin.setDecimals(3)
            step = 10 ** (math.floor(math.log10(abs(p.default))) - 1) if p.default else 0.1
            low = p.low + step if p.open_low else p.low
            dspin.setRange(max(low, -1e9), min(p.high, 1e9))
            dspin.setSingleStep(step)
            dspin.setValue(float(p.default))
            dspin.valueChanged.connect(self._emit_settings)
            widget = dspin
        widget.setToolTip(p.description)
        return widget

    def _fold_more(self, shown: bool) -> None:
        for widget in self.extra.values():
            widget.setVisible(shown)
            label = self.more.layout().labelForField(widget)  # type: ignore[union-attr]
            if label is not None:
                label.setVisible(shown)

    def _extra_values(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for name, widget in self.extra.items():
            if isinstance(widget, QtWidgets.QComboBox):
                out[name] = widget.currentText()
            elif isinstance(widget, QtWidgets.QSpinBox):
                out[name] = widget.value()
            elif isinstance(widget, QtWidgets.QDoubleSpinBox):
                out[name] = round(widget.value(), 6)
        return out

    def _on_threshold(self, value: int, emit: bool = True) -> None:
        self.threshold_label.setText(f"floor(255·p) ≥ {value}  (p ≥ {value / 255:.3f})")
        if emit:
            self.threshold_changed.emit(value)

    def _emit_settings(self, *_: object) -> None:
        gt_threshold, gt_inclusive = GT_RULES[self.gt_rule.currentIndex()][1:]
        stretch, stretch_rule = STRETCHES[self.stretch.currentIndex()][1:]
        params = replace(
            self.settings.params,
            beta2=round(self.beta2.value(), 4),
            alpha=round(self.alpha.value(), 4),
            gt_threshold=gt_threshold,
            gt_inclusive=gt_inclusive,
            stretch=stretch,
            stretch_rule=stretch_rule,
            thresholds=THRESHOLDS[self.thresholds.currentIndex()][1],
            **self._extra_values(),  # type: ignore[arg-type]
        )
        self.settings = Settings(params, self.interpolation.currentText())
        self._name_convention()
        self.settings_changed.emit(self.settings)

    def _name_convention(self) -> None:
        """The convention box names the convention the knobs make (or 'custom')."""
        name = convention_of(self.settings.params, self.settings.interpolation)
        blocked = self.convention.blockSignals(True)
        self.convention.setCurrentText(name if name in CONVENTIONS else CUSTOM)
        self.convention.blockSignals(blocked)

    def _on_convention(self, index: int) -> None:
        name = self.convention.itemText(index)
        if name == CUSTOM:
            return
        c = CONVENTIONS[name]
        defaults = {k: getattr(DEFAULT_PARAMS, k) for k in CONVENTION_KNOBS}
        self.show_params(replace(self.settings.params, **{**defaults, **c.params}), c.interpolation)

    def show_params(self, params: Params, interpolation: str) -> None:
        """Set every editor to ``params`` and ``interpolation``, then emit the settings once."""
        editors = [
            self.beta2, self.alpha, self.gt_rule, self.stretch, self.thresholds,
            self.interpolation, *self.extra.values(),
        ]  # fmt: skip
        blocked = [w.blockSignals(True) for w in editors]
        try:
            self.beta2.setValue(params.beta2)
            self.alpha.setValue(params.alpha)
            self.gt_rule.setCurrentIndex(
                next(
                    i
                    for i, (_, t, inc) in enumerate(GT_RULES)
                    if (t, inc) == (params.gt_threshold, params.gt_inclusive)
                )
            )
            self.stretch.setCurrentIndex(
                next(
                    i
                    for i, (_, on, rule) in enumerate(STRETCHES)
                    if on == params.stretch and (rule == params.stretch_rule or not on)
                )
            )
            self.thresholds.setCurrentIndex(
                next(i for i, (_, rule) in enumerate(THRESHOLDS) if rule == params.thresholds)
            )
            self.interpolation.setCurrentText(interpolation)
            for name, widget in self.extra.items():
                value = getattr(params, name)
                if isinstance(widget, QtWidgets.QComboBox):
                    widget.setCurrentText(str(value))
                elif isinstance(widget, (QtWidgets.QSpinBox, QtWidgets.QDoubleSpinBox)):
                    widget.setValue(value)
        finally:
            for w, b in zip(editors, blocked, strict=True):
                w.blockSignals(b)
        self._emit_settings()

    def _emit_display(self, *_: object) -> None:
        self.display_changed.emit(self.display_options())

    def display_options(self) -> dict[str, object]:
        """The current overlay options."""
        return {
            "contour": self.contour.isChecked(),
            "confusion": self.confusion.isChecked(),
            "over_image": self.over_image.isChecked(),
            "opacity": self.opacity.value() / 100,
            "colormap": self.colormap.currentText(),
        }
