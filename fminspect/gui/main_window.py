"""The inspector window: panels, docks, menus, shortcuts, drag-and-drop, remembered state.

What the window shows lives in its :class:`~fminspect.inspector.model.InspectorModel`
(``window.model``, no Qt): the window lays the panels out and binds each to the model's
events; :class:`~fminspect.gui.sample_view.SampleDrawing` draws the shown sample.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6 import QtCore, QtGui, QtWidgets

from fminspect import __version__
from fminspect.gui import window_fit
from fminspect.gui.app import coalesce_scene_updates, settle_garbage
from fminspect.gui.controller import window_model
from fminspect.gui.dialogs.measures import MeasuresDialog, fill_combo
from fminspect.gui.export import export_grid
from fminspect.gui.menus import FileActions, build_menus
from fminspect.gui.panels.browser import DatasetBrowserPanel
from fminspect.gui.panels.cases import CasesPanel
from fminspect.gui.panels.curves import CurvesPanel
from fminspect.gui.panels.dataset_view import DatasetViewPanel
from fminspect.gui.panels.map_grid import MapGridPanel
from fminspect.gui.panels.metrics_table import MetricsTablePanel
from fminspect.gui.panels.model_picker import ModelPickerPanel
from fminspect.gui.panels.parameters import ParameterPanel
from fminspect.gui.panels.problems import ProblemsPanel
from fminspect.gui.panels.scatter import ScatterPanel
from fminspect.gui.sample_view import SampleDrawing
from fminspect.gui.study_windows import choose_study, open_analysis, open_voting
from fminspect.gui.theme import apply_theme
from fminspect.gui.workers import release_jobs
from fminspect.inspector.settings import Settings
from fminspect.io.atomic import write_text
from fminspect.io.discovery import Dataset, ToolkitConfigs
from fminspect.io.validation import Problem
from fminspect.pipeline.sample import LoadedSample

if TYPE_CHECKING:
    from fminspect.gui.dialogs.qualitative import QualitativeDialog


class InspectorWindow(QtWidgets.QMainWindow):
    """Image, GT and every model side by side, all measures live."""

    def __init__(
        self, settings: QtCore.QSettings | None = None, *, scoring_in_process: bool = False
    ) -> None:
        super().__init__()
        self.qsettings = settings or QtCore.QSettings()
        self.model = window_model(self, self.qsettings, scoring_in_process)
        self.selection = self.model.selection
        self.setWindowTitle(f"fminspect {__version__}")
        self.setAcceptDrops(True)
        self.grid = MapGridPanel()
        self.table = MetricsTablePanel()
        self.curves = CurvesPanel()
        self.params = ParameterPanel()
        self.browser = DatasetBrowserPanel()
        self.picker = ModelPickerPanel(self.selection, self.model.scores.values)
        self.dataset_view = DatasetViewPanel(self.selection, self.model.scores.matrix_of)
        self.drawer = SampleDrawing(self.model, self.grid, self.table, self.curves, self)
        self.problem_list = ProblemsPanel()
        self.cases_panel = CasesPanel()
        QtCore.QTimer.singleShot(0, self.model.service.warm_up)
        self.compare_dialog: Any = None  # the last comparison's report
        self.explain_windows: list[QtWidgets.QWidget] = []
        self._build_layout()
        coalesce_scene_updates(self)  # one repaint of the window per turn, not one per plot
        self.files = FileActions(self)
        build_menus(self, self.files)
        self._connect()
        self._restore()
        self.curves.set_beta2(self.model.settings.params.beta2)
        settle_garbage()

    # ------------------------------------------------------------------ layout
    def _build_layout(self) -> None:
        sample_view = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        sample_view.addWidget(self.grid)
        sample_view.addWidget(self.table)
        sample_view.addWidget(self.curves)
        sample_view.setStretchFactor(0, 6)
        sample_view.setStretchFactor(1, 2)
        sample_view.setStretchFactor(2, 3)
        sample_view.setSizes([540, 250, 210])
        self.sample_view = sample_view
        self._sized_by_user = False  # the splitter dragged: its sizes are the user's
        sample_view.splitterMoved.connect(lambda *_: setattr(self, "_sized_by_user", True))
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setObjectName("centralTabs")
        self.tabs.addTab(sample_view, "Sample")
        self.tabs.addTab(self.dataset_view, "Dataset")
        self.scatter = ScatterPanel()
        self.tabs.addTab(self.scatter, "Scatter")
        self.setCentralWidget(self.tabs)
        self.browser_dock = self._dock(
            "Dataset", self.browser, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea
        )
        self.problem_dock = self._dock(
            "Problems", self.problem_list, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea
        )
        # the cases (tag names, counts, notes) a tab beside the list; the keys tag at any time
        self.cases_dock = self._dock(
            "Cases", self.cases_panel, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea
        )
        self.tabifyDockWidget(self.browser_dock, self.problem_dock)
        self.tabifyDockWidget(self.problem_dock, self.cases_dock)
        self.browser_dock.raise_()
        scroll = QtWidgets.QScrollArea()
        scroll.setWidget(self.params)
        scroll.setWidgetResizable(True)
        self.param_dock = self._dock(
            "Parameters", scroll, QtCore.Qt.DockWidgetArea.RightDockWidgetArea
        )
        self.model_dock = self._dock(
            "Models", self.picker, QtCore.Qt.DockWidgetArea.RightDockWidgetArea
        )
        self.splitDockWidget(self.model_dock, self.param_dock, QtCore.Qt.Orientation.Vertical)
        self.hover_label = QtWidgets.QLabel("")
        self.busy_label = QtWidgets.QLabel("")
        self.busy = QtWidgets.QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        # neither the changing busy text nor showing/hiding the bar may re-lay out the status
        # bar and the window: that took up to 12 ms on the GUI thread for every result
        self.busy_label.setFixedWidth(
            self.busy_label.fontMetrics().horizontalAdvance("computing the camouflage degree…") + 8
        )
        policy = self.busy.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.busy.setSizePolicy(policy)
        self.busy.hide()
        self.statusBar().addWidget(self.hover_label, 1)
        self.statusBar().addPermanentWidget(self.busy_label)
        self.statusBar().addPermanentWidget(self.busy)

    def fit_sample_view(self) -> None:
        """Fit the metrics table's rows, the grid and the curves (:mod:`.window_fit`)."""
        window_fit.fit_sample_view(self)

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_sample_view()
        if event.size().width() != event.oldSize().width():
            self.fit_list()

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        if not self._list_fitted:  # the first time (not at each restore from the taskbar)
            self._list_fitted = True
            QtCore.QTimer.singleShot(0, self.fit_list)  # once the docks are laid out

    _list_fitted = False

    def fit_list(self) -> None:
        """Widen the dataset list on a wide window (:mod:`.window_fit`)."""
        window_fit.fit_list(self)

    def _dock(
        self, title: str, widget: QtWidgets.QWidget, area: QtCore.Qt.DockWidgetArea
    ) -> QtWidgets.QDockWidget:
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _connect(self) -> None:
        m = self.model
        self.browser.bind(m)
        self.cases_panel.bind(m)
        self.dataset_view.bind(m)
        self.scatter.bind(m)
        self.scatter.selected.connect(self._on_scatter_selected)
        self.browser.model.modelReset.connect(self.scatter.follow_list)
        self.browser.model.modelReset.connect(self.dataset_view.listing_changed)
        # a narrower table may wrap its caption onto another line, titles take two or three
        # lines: its rows fitted again
        self.table.rows_room_changed.connect(
            lambda: QtCore.QTimer.singleShot(0, self.fit_sample_view)
        )
        m.sample_loaded.connect(self._on_sample_loaded)
        m.busy_changed.connect(self._on_busy)
        m.problems.connect(self.show_problems)
        m.threshold_changed.connect(self._on_threshold)
        m.message.connect(self.statusBar().showMessage)
        m.reading.connect(lambda path: self.statusBar().showMessage(f"reading {path}…"))
        m.folder_read.connect(self._on_folder_read)
        m.folder_failed.connect(self._on_folder_failed)
        m.datasets_opened.connect(self._on_datasets_opened)
        m.models_listed.connect(self._on_models_listed)
        m.models_changed.connect(self._apply_models)
        m.measures_changed.connect(self._on_measures_changed)
        m.scores.problems.connect(self.show_problems)
        m.scores.compare_ready.connect(self._show_comparison)
        self.params.settings_changed.connect(self._on_settings)
        self.params.threshold_changed.connect(m.set_threshold)
        self.params.display_changed.connect(lambda o: self.grid.set_options(**o))
        self.grid.hovered.connect(self._on_hover)
        self.table.cell_activated.connect(self.explain)
        self.dataset_view.sample_chosen.connect(self._on_dataset_sample_chosen)
        self.selection.highlight_changed.connect(
            lambda: self.curves.set_emphasis(
                self.selection.highlighted, self.selection.hidden_curves
            )
        )
        self.curves.highlight_toggled.connect(self.selection.toggle_highlight)
        self.curves.visibility_toggled.connect(
            lambda model, shown: self.selection.set_curve_hidden(model, not shown)
        )

    # ------------------------------------------------------------------ opening
    def open_path(self, path: Path | str | ToolkitConfigs) -> bool:
        """Open a dataset folder now: read on this thread, the first sample asked for at once
        (for scripts and tests; the window's own actions use :meth:`open_in_background`);
        problems are listed, never raised."""
        self._stop_opening()
        return self.model.open_path(path)

    def open_in_background(
        self, path: Path | str | ToolkitConfigs, then: Callable[[], object] | None = None
    ) -> None:
        """Open a dataset folder (or PySODEvalToolkit's configs) without holding the window: its folders are read on a
        thread, and the samples are listed when they are read; then ``then()`` is called if
        the folder held a dataset. A newer opening replaces one still being read."""
        self.model.open_folder(path, then)

    @property
    def reading(self) -> bool:
        """A folder is being read on a thread (see :meth:`open_in_background`)."""
        return self.model.folder_reading

    def _stop_opening(self) -> None:
        """Forget a folder still being read in the background (its result is dropped)."""
        self.model.stop_opening()
        if self.statusBar().currentMessage().startswith("reading "):
            self.statusBar().clearMessage()

    def _on_folder_failed(self, path: Path, why: str) -> None:
        self.statusBar().clearMessage()
        self.show_problems([Problem(path, f"cannot be read ({why})", "error")], replace=True)
        self.statusBar().showMessage(f"cannot read {path} — see Problems", 8000)
        self.problem_dock.raise_()

    def _on_folder_read(
        self,
        path: Path | ToolkitConfigs,
        datasets: list[Dataset],
        problems: list[Problem],
        background: bool,
    ) -> None:
        if background:
            self.statusBar().clearMessage()
        self.show_problems(problems, replace=True)
        if not datasets:
            self.statusBar().showMessage(f"no dataset in {path} — see Problems", 8000)
            self.problem_dock.raise_()
            return
        if not any(ds.methods for ds in datasets):
            self.statusBar().showMessage(f"no model's maps in {path} — see Problems", 15000)
            self.problem_dock.raise_()
        if isinstance(path, Path):
            self.files.remember(path)
        self.setWindowTitle(f"fminspect {__version__} — {path}")
        if background:
            # The sample list is painted at the start of the next event-loop turn, and the
            # first sample (or the one asked for) is read right after that paint (their
            # timers come next, in the order they were started): painted later, the list
            # fell in the same turn as the first sample's panels (a 60–80 ms block); painted
            # while the sample was being read, it waited for the reading threads to let go of
            # the interpreter (50–63 ms, against 20–27); painted here, it added itself to
            # this turn's work (50–70 ms in all). The reading thread left its objects out of
            # the collections (see quiet_collector).
            QtCore.QTimer.singleShot(0, self, self._paint_now)

    def _on_datasets_opened(self, datasets: list[Dataset], background: bool) -> None:
        if background:
            # laid out now: a repaint of the window queued before the folder was read (the
            # "reading…" line) comes before the timer above, and painted the list before
            # its layouts
            self._lay_out_now()
        else:
            settle_garbage()  # now, not while the first sample is shown
            self._paint_now()  # the list, now

    def _lay_out_now(self) -> None:
        """Do the layouts that opening asked for (the browser's progress bar shown, the
        status bar's) and the view's own delayed layout of its rows. The list painted
        before them was painted whole twice more in the next turns, as its frame moved by a
        pixel or two (15–25 ms each at 1,000 samples)."""
        QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)
        self.browser.view.doItemsLayout()

    def _paint_now(self) -> None:
        """Paint what changed in the window now (once), laid out first."""
        self._lay_out_now()
        QtCore.QCoreApplication.sendPostedEvents(self, QtCore.QEvent.Type.UpdateRequest)

    def open_files(self, gt: Path, preds: list[Path], image: Path | None = None) -> None:
        """Open one sample from explicit files."""
        self.setWindowTitle(f"fminspect {__version__} — {Path(gt).name}")
        self.model.open_files(gt, preds, image)

    def open_demo(self) -> bool:
        """Open the bundled demo dataset."""
        from fminspect.io.resources import resource

        return self.open_path(resource("demo"))

    # ------------------------------------------------------------------ models
    def _on_models_listed(self) -> None:
        self.picker.refresh()
        self._apply_models()

    def _apply_models(self) -> None:
        """Show the chosen models (and names) in the sample's panels."""
        names = dict(self.selection.aliases)
        shown = self.selection.shown
        self.grid.set_models(
            shown if self.model.models is not None else None,
            names,
            pinned=self.selection.reference,
        )
        self.curves.set_emphasis(self.selection.highlighted, self.selection.hidden_curves)
        self.table.set_names(names)
        self.curves.set_names(names)
        self.fit_sample_view()

    # ------------------------------------------------------------------ dataset scores
    def _show_comparison(self, report: Any) -> None:
        from fminspect.gui.dialogs.compare import CompareDialog

        self.compare_dialog = CompareDialog(report, self)
        self.compare_dialog.show()

    def _on_dataset_sample_chosen(self, dataset: str, sample: str) -> None:
        self.tabs.setCurrentIndex(0)
        self.go_to(sample, dataset)

    def dragEnterEvent(self, event: QtGui.QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QtGui.QDropEvent) -> None:
        for url in event.mimeData().urls():
            path = Path(url.toLocalFile())
            if path.is_dir():
                self.open_in_background(path)
                return
        self.statusBar().showMessage("drop a dataset folder to open it", 5000)

    # ------------------------------------------------------------------ reactions
    def _on_sample_loaded(self, sample: LoadedSample) -> None:
        ds = self.model.dataset
        n = len(ds.samples) if ds else 1
        errors = sum(p.severity == "error" for p in sample.problems)
        # the sample's errors were just put in the status bar: keep saying so
        note = f"  ⚠ {errors} error{'s' if errors != 1 else ''}: see Problems" if errors else ""
        if sample.gt_error:  # its image and maps are shown; nothing can be scored
            note = f"  ⚠ no scores: the GT cannot be read ({sample.gt_error})"
        self.statusBar().showMessage(
            f"{sample.key}  ({self._place_of(sample.name, n)}){note}", 10000 if errors else 4000
        )

    def _place_of(self, name: str, n: int) -> str:
        """Where the sample is in the list the browser shows (its order and filter), as
        stepping walks it; in name order before the browser has its list."""
        walk = self.model.walk
        if walk.total != n:
            return f"{self.model.sample_index + 1}/{n}"
        row = walk.row_of(name)
        listed = len(walk.order)
        if row is None:
            return f"not listed: the filter leaves it out; {listed} of {n} listed"
        return f"{row + 1}/{listed}" + (f" listed of {n}" if listed != n else "")

    @property
    def drawing(self) -> bool:
        """The current sample's results are still being put on screen (see
        :attr:`SampleDrawing.drawing`)."""
        return self.drawer.drawing

    def _on_settings(self, settings: Settings) -> None:
        # the table's headers and the F-plot's title change with the first results, not
        # now: repainting them while the models are being scored would slow both down
        self.drawer.relabel = dataclasses.replace(settings, keys=self.model.measure_choice)
        self.model.set_settings(settings)
        for window in self.explain_windows:
            if hasattr(window, "mark_settings"):
                window.mark_settings(self.model.settings.params)

    def choose_measures(self) -> None:
        """View → Measures…: tick the measures the window computes and shows."""
        dialog = MeasuresDialog(
            self.model.settings.measure_keys(), self.model.settings.params, self
        )
        if dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted:
            self.set_measures(dialog.chosen())

    def set_measures(self, keys: Sequence[str]) -> None:
        """Compute and show ``keys`` (empty: the default measures), remembered."""
        self.model.set_measures(keys)
        self.drawer.relabel = self.model.settings
        self.drawer.reset_table(self.model.settings.params)

    def _on_measures_changed(self, chosen: tuple[str, ...]) -> None:
        from fminspect.metrics import measure_keys

        shown = measure_keys(chosen or None)
        fill_combo(self.picker.top_measure, shown, "Sm")
        fill_combo(self.dataset_view.pair_measure, shown, "Sm")
        self.dataset_view.update_pair()

    def explain(self, model: str, key: str) -> QtWidgets.QMainWindow | None:
        """Open the explain view of measure ``key`` for ``model`` on the current sample."""
        from fminspect.gui.views.registry import ExplainWindow

        result = self.model.results.get(model)
        sample = self.model.sample
        if result is None or sample is None:
            self.statusBar().showMessage(f"{model}: still being scored", 3000)
            return None
        window = ExplainWindow(
            key, result, model, sample.name, sample.image, self.model.threshold, self
        )
        window.show()
        self.explain_windows.append(window)
        return window

    def _on_scatter_selected(self, names: frozenset[str]) -> None:
        """The scatter's rectangle: its samples are the browser's filter ``selected`` (the
        clause added to what the filter says, or taken out when the selection is cleared)."""
        self.model.select_samples(names)
        text = self.browser.filter.text().strip()
        parts = [p for p in re.split(r"\s+and\s+", text, flags=re.IGNORECASE) if p]
        others = [p for p in parts if p.strip().lower() != "selected"]
        self.browser.filter.setText(" and ".join([*others, *(["selected"] if names else [])]))
        self.browser.apply_filter()

    def open_qualitative(self) -> QualitativeDialog | None:
        """The qualitative figure of the tagged or listed samples and the shown models."""
        from fminspect.gui.dialogs.qualitative import QualitativeDialog

        if self.model.dataset is None or not self.model.dataset.samples:
            self.statusBar().showMessage("open a dataset first", 4000)
            return None
        dialog = QualitativeDialog(self.model, self, zoom=self.grid_zoom)
        dialog.show()
        return dialog

    def grid_zoom(self) -> Any:
        """The region of the shown sample the map grid is zoomed on (:mod:`.window_fit`)."""
        return window_fit.grid_zoom(self)

    def open_ab(self) -> QtWidgets.QWidget | None:
        """Open the A/B view on the shown sample: the browser's models A and B (or the first
        two shown)."""
        from fminspect.gui.ab_view import ABWindow

        sample = self.model.sample
        if sample is None or len(sample.preds) < 2:
            self.statusBar().showMessage("open a sample with two models first", 4000)
            return None
        pair = [self.browser.model_a.currentData(), self.browser.model_b.currentData()]
        shown = [m for m in self.table.model.models if m in sample.preds]
        if len(shown) < 2:
            shown = list(sample.preds)
        a, b = pair if all(m in sample.preds for m in pair) and pair[0] != pair[1] else shown[:2]
        window = ABWindow(self.model, a, b, self)
        views = self.grid.views
        if views:  # at the grid's zoom ("zoom linked as everywhere")
            x, y = views[0].viewRange()
            window.show_range((x[0], x[1]), (y[0], y[1]))
        window.show()
        self.explain_windows.append(window)
        return window

    def open_playground(self, demos: bool = False) -> QtWidgets.QMainWindow | None:
        """Open the teaching playground on the current sample's first (or selected) model."""
        from fminspect.gui.playground import PlaygroundWindow

        sample = self.model.sample
        if sample is None or sample.gt is None or not sample.preds:
            self.statusBar().showMessage("open a sample with at least one model first", 4000)
            return None
        rows = self.table.view.selectionModel().selectedIndexes()
        models = self.table.model.models or list(sample.preds)  # the table's rows
        model = models[self.table.proxy.mapToSource(rows[0]).row()] if rows else models[0]
        window = PlaygroundWindow(
            sample.gt, sample.preds[model], sample.image, self.model.settings.params, self
        )
        window.setWindowTitle(f"fminspect — teaching playground ({model} on {sample.name})")
        window.resize(1400, 900)
        central = window.centralWidget()
        if demos and isinstance(central, QtWidgets.QTabWidget):
            central.setCurrentIndex(1)
        window.show()
        self.explain_windows.append(window)
        return window

    def choose_vote(self) -> None:
        path = choose_study(self, "Open a study or a study pack to vote on", packs=True)
        if path:
            self._keep(open_voting(self, path))

    def choose_analysis(self) -> None:
        path = choose_study(self, "Open a study to analyse", packs=False)
        if path:
            self._keep(open_analysis(self, path))

    def _keep(self, window: QtWidgets.QWidget | None) -> None:
        if window is not None:
            self.explain_windows.append(window)

    def open_meta(self) -> QtWidgets.QMainWindow | None:
        """Open the meta-measures window on the current dataset."""
        from fminspect.gui.meta_view import MetaWindow

        ds = self.model.dataset
        if ds is None or len(ds.samples) < 2 or not ds.methods:
            self.statusBar().showMessage(
                "open a dataset with at least two images and a model first", 6000
            )
            return None
        window = MetaWindow(ds, self.model.settings.params, inspector=self)
        window.resize(1400, 900)
        window.show()
        self.explain_windows.append(window)
        return window

    def _on_threshold(self, index: int) -> None:
        for window in list(self.explain_windows):
            if window.isVisible() and hasattr(window, "view"):
                window.view.set_threshold(index)
            else:
                self.explain_windows.remove(window)
        if self.params.threshold.value() != index:
            self.params.threshold.setValue(index)
        self.grid.set_threshold(index)
        self.curves.set_threshold(index)
        self.table.set_threshold(index)

    def nudge_threshold(self, delta: int) -> None:
        self.model.set_threshold(self.model.threshold + delta)

    def _on_busy(self, text: str) -> None:
        self.busy_label.setText(text)
        self.busy.setVisible(bool(text))

    def _on_hover(self, info) -> None:  # type: ignore[no-untyped-def]
        if info is None:
            self.hover_label.setText("")
            return
        row, col, values = info
        parts = [f"row {row}, col {col}"] + [f"{k}: {v}" for k, v in values.items()]
        self.hover_label.setText("   ".join(parts))

    def go_to(self, sample: str, dataset: str | None = None) -> bool:
        """Show ``sample`` (of ``dataset``); False, with a message, when there is none."""
        return self.model.go_to(sample, dataset)

    def show_problems(self, problems: list[Problem], replace: bool = False) -> None:
        """List problems (errors first) and point the user at them."""
        added = self.problem_list.add(problems, replace)
        n = self.problem_list.count()
        self.problem_dock.setWindowTitle(f"Problems ({n})" if n else "Problems")
        errors = [p for p in added if p.severity == "error"]
        if errors:  # only news: the browser lists the same errors again after every rescoring
            self.statusBar().showMessage(f"{errors[0]}  (see Problems)", 10000)

    # ------------------------------------------------------------------ export, theme, state
    def export_grid_png(self) -> None:
        name = self.model.sample.name if self.model.sample else "grid"
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Export panel grid", f"{name}_panels.png", "PNG (*.png)"
        )
        if path:
            export_grid(self.grid, path)
            self.statusBar().showMessage(f"saved {path}", 5000)

    def export_table_csv(self) -> None:
        name = self.model.sample.name if self.model.sample else "table"
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Export metrics table", f"{name}_metrics.csv", "CSV (*.csv)"
        )
        if path:
            write_text(path, self.table.model.to_csv(), encoding="utf-8")
            self.statusBar().showMessage(f"saved {path}", 5000)

    def set_theme(self, theme: str) -> None:
        """Switch the colour theme and remember it."""
        dark = apply_theme(QtWidgets.QApplication.instance(), theme)  # type: ignore[arg-type]
        bg, fg = ((30, 30, 33), (220, 220, 220)) if dark else ("w", (20, 20, 20))
        self.grid.graphics.setBackground(bg)
        self.grid.set_foreground(fg)
        plots = [*self.curves.plots.values(), *self.dataset_view.plots.values(), self.scatter.plot]
        for plot in plots:
            plot.setBackground(bg)
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setPen(fg)
                axis.setTextPen(fg)
            plot.getPlotItem().titleLabel.setText(plot.getPlotItem().titleLabel.text, color=fg)
        self.qsettings.setValue("theme", theme)

    def about(self) -> None:
        QtWidgets.QMessageBox.about(
            self,
            "About fminspect",
            f"<b>fminspect {__version__}</b><br>Inspect, explain and rank foreground maps.<br>"
            "Measures exact to pysodmetrics 1.6.2; every number names its variant.",
        )

    def _restore(self) -> None:
        geometry = self.qsettings.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.qsettings.value("state")
        self._docks_sized = state is not None  # (a saved layout is the user's)
        if state is not None:
            self.restoreState(state)
        self.files.fill_recent()

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:
        self._stop_opening()  # a folder still being read is not shown in a closed window
        self.model.close()
        release_jobs()
        self.qsettings.setValue("geometry", self.saveGeometry())
        self.qsettings.setValue("state", self.saveState())
        super().closeEvent(event)
