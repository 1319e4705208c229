"""The inspector window: panels, docks, menus, shortcuts, drag-and-drop, remembered state."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

from fminspect import __version__
from fminspect._runtime import quiet_collector
from fminspect.batch import stream
from fminspect.batch.evaluation import MethodResult
from fminspect.batch.progress import clock
from fminspect.batch.scores import ScoreMatrix, score_matrix
from fminspect.batch.service import DatasetPieces, in_pieces
from fminspect.gui.app import coalesce_scene_updates, settle_garbage
from fminspect.gui.controller import InspectorController, Settings
from fminspect.gui.dataset_scorer import DatasetScorer
from fminspect.gui.dialogs.measures import MeasuresDialog, fill_combo
from fminspect.gui.dialogs.shortcuts import ShortcutsDialog
from fminspect.gui.export import export_grid
from fminspect.gui.model_selection import ModelSelection
from fminspect.gui.panels.browser import DatasetBrowserPanel
from fminspect.gui.panels.curves import PLOTS, CurvesPanel
from fminspect.gui.panels.dataset_view import DatasetViewPanel
from fminspect.gui.panels.map_grid import MapGridPanel
from fminspect.gui.panels.metrics_table import MetricsTablePanel
from fminspect.gui.panels.model_picker import ModelPickerPanel
from fminspect.gui.panels.parameters import ParameterPanel
from fminspect.gui.theme import THEMES, apply_theme
from fminspect.gui.workers import hold_jobs, release_jobs
from fminspect.io.atomic import write_text
from fminspect.io.discovery import Dataset, discover, sample_name, single_sample
from fminspect.io.validation import Problem
from fminspect.metrics import MEASURES_BY_KEY, Params, SuiteResult, default_keys, measure_keys
from fminspect.pipeline.config import EvalConfig
from fminspect.pipeline.sample import LoadedSample
from fminspect.pipeline.store import store_for

MAX_RECENT = 8
#: After this long, a request still being scored shows the results it has (see __init__).
#: Long enough that recomputing every measure of five 400×400 models (~80 ms) is drawn once:
#: at 150 ms, slower requests began drawing while still scoring and blocked the window for
#: 30–60 ms (benchmarks/bench_gui.py).
PROGRESSIVE_MS = 300
#: How long after a request completed its results are drawn (see ``_on_complete``).
RELEASE_AFTER_MS = 8
#: How long a redraw step waits while the grid is still filling its panels.
REDRAW_WAIT_MS = 5
#: Milliseconds of drawing models' maps a redraw step takes at most (past the first map): a
#: map is 1–2 ms, and each step is followed by a repaint of the grid (5–7 ms).
MAPS_BUDGET_MS = 8.0
#: The redraw steps that empty the table and the curves for a newly shown sample.
SAMPLE_STEPS = ("table", "curves")


class InspectorWindow(QtWidgets.QMainWindow):
    """Image, GT and every model side by side, all measures live."""

    # (generation, folder, (datasets, problems, first dataset pickled) or the exception),
    # from the thread that read the folder
    _discovered = QtCore.Signal(object)

    def __init__(
        self,
        controller: InspectorController | None = None,
        settings: QtCore.QSettings | None = None,
    ) -> None:
        super().__init__()
        self.controller = controller or InspectorController(self)
        self.qsettings = settings or QtCore.QSettings()
        self.setWindowTitle(f"fminspect {__version__}")
        self.setAcceptDrops(True)
        self.grid = MapGridPanel()
        self.table = MetricsTablePanel()
        self.curves = CurvesPanel()
        self.params = ParameterPanel()
        self.browser = DatasetBrowserPanel()
        self.selection = ModelSelection(self.qsettings, self)
        self.picker = ModelPickerPanel(self.selection, self._dataset_values)
        self.dataset_view = DatasetViewPanel(self.selection, self.matrices_of)
        self.problem_list = QtWidgets.QListWidget()
        self.problem_list.setObjectName("problemList")
        self._listed: set[str] = set()  # the problems in the list
        self.problem_list.setWordWrap(True)
        self.scorer = DatasetScorer(self)
        QtCore.QTimer.singleShot(0, self.scorer.warm_up)
        #: every method's dataset values, per dataset, once its background evaluation is done
        self.dataset_results: dict[str, tuple[MethodResult, ...]] = {}
        self._task_kind = ""  # the dataset view's job under way (statistics, compare)
        self._task_id: int | None = None  # its number (None: no job whose result is wanted)
        self.compare_dialog: Any = None  # the last comparison's report
        #: per-image scores of each dataset scored (the browser shows the current one's)
        self.matrices: dict[str, ScoreMatrix] = {}
        self._scoring = ""  # the dataset the background evaluation is working on
        #: datasets whose background evaluation ended without dataset values (failed or
        #: stopped): not started again by themselves (a new folder or new settings do)
        self._gave_up: set[str] = set()
        #: the measures chosen (View → Measures…; empty: the default ones)
        self.measure_choice = self._stored_measures()
        if self.measure_choice:
            self.controller.set_settings(
                dataclasses.replace(self.controller.settings, keys=self.measure_choice)
            )
        self._scored_with = self.controller.settings  # what the browser's scores were made with
        self.explain_windows: list[QtWidgets.QWidget] = []
        # Redrawing after results arrive is done in steps, one per event-loop turn: the map
        # of each model that arrived meanwhile, then each curve plot. Qt paints every changed
        # widget of the window at once, so doing it all in one turn would block the GUI
        # thread for the sum of the repaints.
        self._arrived: set[str] = set()
        self._curves_pending: dict[str, SuiteResult] = {}
        # the results not in the table yet: the table is updated once for all that arrived
        # meanwhile (held results are released together, and one update per result made
        # that turn 50–60 ms under the scoring threads)
        self._scores_pending: dict[str, SuiteResult] = {}
        # "table" and "curves" (emptied for a new sample), "scores" (the table's numbers),
        # "maps" (one model each), then the plots in PLOTS
        self._steps: list[str] = []
        self._redraw = QtCore.QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(0)
        self._redraw.timeout.connect(self._redraw_step)
        # Results of a quick request are shown together when the last one arrives: drawing
        # each on arrival would compete with the scoring of the others for the interpreter
        # (the workers are threads) and make the whole request slower. A request still running
        # after PROGRESSIVE_MS shows what it has, then each result as it comes.
        self._held: list[str] = []
        self._progressive = QtCore.QTimer(self)
        self._progressive.setSingleShot(True)
        self._progressive.setInterval(PROGRESSIVE_MS)
        self._progressive.timeout.connect(self._release_held)
        self._showing_progress = False
        self._relabel: Settings | None = None  # new settings not yet shown in the table
        self._opening = 0  # the latest opening of a folder (one read later is dropped)
        self._readings = 0  # folders being read on a thread (their result not handled yet)
        # the first dataset pickled, and its empty score matrix, made when it was read
        self._pieces: tuple[Dataset, DatasetPieces, ScoreMatrix] | None = None
        # the dataset browser is re-scored when the parameters have been still for a while
        self._browser_timer = QtCore.QTimer(self)
        self._browser_timer.setSingleShot(True)
        self._browser_timer.setInterval(1500)
        self._browser_timer.timeout.connect(self._score_browser)
        self._build_layout()
        coalesce_scene_updates(self)  # one repaint of the window per turn, not one per plot
        self._build_menus()
        self._connect()
        self._restore()
        self.curves.set_beta2(self.controller.settings.params.beta2)
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
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setObjectName("centralTabs")
        self.tabs.addTab(sample_view, "Sample")
        self.tabs.addTab(self.dataset_view, "Dataset")
        self.setCentralWidget(self.tabs)
        self.browser_dock = self._dock(
            "Dataset", self.browser, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea
        )
        self.problem_dock = self._dock(
            "Problems", self.problem_list, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea
        )
        self.tabifyDockWidget(self.browser_dock, self.problem_dock)
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

    def _dock(
        self, title: str, widget: QtWidgets.QWidget, area: QtCore.Qt.DockWidgetArea
    ) -> QtWidgets.QDockWidget:
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _action(
        self,
        menu: QtWidgets.QMenu,
        text: str,
        slot,
        shortcut: str | QtGui.QKeySequence | None = None,
    ) -> QtGui.QAction:  # type: ignore[no-untyped-def]
        action = QtGui.QAction(text, self)
        if shortcut:
            action.setShortcut(QtGui.QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        self.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        self._action(file, "Open dataset folder…", self._choose_folder, "Ctrl+O")
        self._action(file, "Open the demo dataset", self.open_demo)
        self.recent_menu = file.addMenu("Recent folders")
        file.addSeparator()
        self._action(file, "Export panel grid as PNG…", self._export_grid, "Ctrl+E")
        self._action(file, "Export metrics table as CSV…", self._export_table, "Ctrl+Shift+E")
        self._action(file, "Copy metrics table as CSV", self.table.copy_csv, "Ctrl+Shift+C")
        file.addSeparator()
        self._action(file, "Quit", self.close, "Ctrl+Q")
        view = bar.addMenu("&View")
        self._action(view, "Next sample", lambda: self.controller.step(1), "D")
        self._action(view, "Previous sample", lambda: self.controller.step(-1), "A")
        for key, delta in (("Right", 1), ("Left", -1)):
            sc = QtGui.QShortcut(QtGui.QKeySequence(key), self)
            sc.activated.connect(lambda d=delta: self.controller.step(d))
        self._action(view, "Reset zoom", self.grid.reset_view, "R")
        # (not PgUp/PgDown alone: they scroll the lists and tables)
        self._action(view, "Next page of models", lambda: self.grid.turn_page(1), "Ctrl+PgDown")
        self._action(view, "Previous page of models", lambda: self.grid.turn_page(-1), "Ctrl+PgUp")
        self._action(view, "Sample view", lambda: self.tabs.setCurrentIndex(0), "Ctrl+1")
        self._action(view, "Dataset view", lambda: self.tabs.setCurrentIndex(1), "Ctrl+2")
        self._action(view, "Threshold + 1", lambda: self._nudge(1), "]")
        self._action(view, "Threshold − 1", lambda: self._nudge(-1), "[")
        self._action(view, "Threshold + 16", lambda: self._nudge(16), "Shift+]")
        self._action(view, "Threshold − 16", lambda: self._nudge(-16), "Shift+[")
        self._action(view, "Toggle TP/FP/FN overlay", lambda: self.params.confusion.toggle(), "C")
        self._action(view, "Measures…", self.choose_measures, "Ctrl+M")
        theme = view.addMenu("Theme")
        group = QtGui.QActionGroup(self)
        for name in THEMES:
            act = QtGui.QAction(name, self, checkable=True)
            act.triggered.connect(lambda _=False, n=name: self.set_theme(n))
            group.addAction(act)
            theme.addAction(act)
            if name == self.qsettings.value("theme", "system"):
                act.setChecked(True)
        view.addSeparator()
        for dock in (self.browser_dock, self.problem_dock, self.model_dock, self.param_dock):
            view.addAction(dock.toggleViewAction())
        tools = bar.addMenu("&Tools")
        self._action(
            tools, "Teaching playground (edit a model's map)…", self.open_playground, "Ctrl+P"
        )
        self._action(tools, "Flaw demonstrations…", lambda: self.open_playground(demos=True))
        tools.addSeparator()
        self._action(tools, "Ranking study: vote…", self._choose_vote)
        self._action(tools, "Ranking study: analyse…", self._choose_analysis)
        tools.addSeparator()
        self._action(tools, "Meta-measures on this dataset…", self.open_meta)
        help_ = bar.addMenu("&Help")
        self._action(help_, "Keyboard shortcuts", lambda: ShortcutsDialog(self).exec(), "F1")
        self._action(help_, "About fminspect", self._about)

    def _connect(self) -> None:
        self._discovered.connect(self._on_discovered, QtCore.Qt.ConnectionType.QueuedConnection)
        c = self.controller
        c.sample_loaded.connect(self._on_sample_loaded)
        c.result_ready.connect(self._on_result)
        c.results_complete.connect(self._on_complete)
        c.request_started.connect(self._on_request)
        c.busy_changed.connect(self._on_busy)
        c.problems.connect(self.show_problems)
        c.threshold_changed.connect(self._on_threshold)
        self.params.settings_changed.connect(self._on_settings)
        self.params.threshold_changed.connect(c.set_threshold)
        self.params.display_changed.connect(lambda o: self.grid.set_options(**o))
        self.grid.hovered.connect(self._on_hover)
        self.table.cell_activated.connect(self.explain)
        self.browser.sample_chosen.connect(self._on_sample_chosen)
        self.scorer.news.connect(self._on_scorer_event)
        self.scorer.failed.connect(self._on_scorer_failed)
        self.scorer.finished.connect(self._on_scorer_finished)
        self.browser.dataset.currentTextChanged.connect(self._on_dataset_chosen)
        self.selection.changed.connect(self._on_models_changed)
        self.selection.highlight_changed.connect(
            lambda: self.curves.set_emphasis(
                self.selection.highlighted, self.selection.hidden_curves
            )
        )
        self.curves.highlight_toggled.connect(self.selection.toggle_highlight)
        self.curves.visibility_toggled.connect(
            lambda model, shown: self.selection.set_curve_hidden(model, not shown)
        )
        self.dataset_view.sample_chosen.connect(self._on_dataset_sample_chosen)
        self.dataset_view.statistics_requested.connect(self.ask_statistics)
        self.dataset_view.compare_requested.connect(self.ask_compare)
        self.dataset_view.stop_requested.connect(self.scorer.stop_task)
        self.scorer.task_progress.connect(self._on_task_progress)
        self.scorer.task_done.connect(self._on_task_done)
        self.scorer.task_failed.connect(self._on_task_failed)

    # ------------------------------------------------------------------ opening
    def open_path(self, path: Path | str) -> bool:
        """Open a dataset folder now: read on this thread, the first sample asked for at once
        (for scripts and tests; the window's own actions use :meth:`open_in_background`);
        problems are listed, never raised."""
        self._stop_opening()
        path = Path(path)
        datasets, problems = discover(path)
        return self._opened(path, datasets, problems)

    def open_in_background(
        self, path: Path | str, then: Callable[[], object] | None = None
    ) -> None:
        """Open a dataset folder without holding the window: its folders are read on a
        thread (20,000 files took 0.2–0.25 s, all on the GUI thread), and the samples are
        listed when they are read; then ``then()`` is called if the folder held a dataset.
        A newer opening replaces one still being read."""
        self._opening += 1
        path = Path(path)
        self.statusBar().showMessage(f"reading {path}…")
        config = self.controller.settings.eval_config()
        self._readings += 1
        threading.Thread(
            target=self._discover,
            args=(self._opening, path, config, then),
            name="fminspect-open",
            daemon=True,
        ).start()

    @property
    def reading(self) -> bool:
        """A folder is being read on a thread (see :meth:`open_in_background`)."""
        return self._readings > 0

    def _stop_opening(self) -> None:
        """Forget a folder still being read in the background (its result is dropped)."""
        self._opening += 1
        if self.statusBar().currentMessage().startswith("reading "):
            self.statusBar().clearMessage()

    def _discover(
        self,
        generation: int,
        path: Path,
        config: EvalConfig,
        then: Callable[[], object] | None,
    ) -> None:
        """On the reading thread: discover, then hand the result to the GUI thread."""
        found: (
            tuple[list[Dataset], list[Problem], tuple[DatasetPieces, ScoreMatrix] | None]
            | Exception
        )
        try:
            # no collection while it reads: the window would wait for it (one took 60–90 ms)
            with quiet_collector():
                datasets, problems = discover(path)
                # the first dataset pickled for the scoring service here, while the window
                # waits anyway: pickled later, it competed with the first sample's display
                pieces = None
                if datasets and datasets[0].gt:
                    # and its score matrix made here, for the same reason (NumPy fills it
                    # without holding the interpreter lock)
                    pieces = (in_pieces(datasets[0]), score_matrix(datasets[0], config))
                found = (datasets, problems, pieces)
        except Exception as exc:  # shown in the window: a thread's error would be lost
            found = exc
        with contextlib.suppress(RuntimeError):  # the window was deleted meanwhile
            self._discovered.emit((generation, path, found, then))

    def _on_discovered(self, message: tuple[int, Path, Any, Callable[[], object] | None]) -> None:
        generation, path, found, then = message
        self._readings -= 1
        if generation != self._opening:
            return  # a newer opening, or the window was closed
        self.statusBar().clearMessage()
        if isinstance(found, Exception):
            self.show_problems([Problem(path, f"cannot be read ({found})", "error")], replace=True)
            self.statusBar().showMessage(f"cannot read {path} — see Problems", 8000)
            self.problem_dock.raise_()
            return
        datasets, problems, pieces = found
        self._pieces = (datasets[0], *pieces) if pieces is not None else None
        self._opened(path, datasets, problems, background=True, then=then)

    def _opened(
        self,
        path: Path,
        datasets: list[Dataset],
        problems: list[Problem],
        background: bool = False,
        then: Callable[[], object] | None = None,
    ) -> bool:
        """Show the datasets read from ``path`` (``background``: by :meth:`open_in_background`,
        which calls ``then`` after the list is painted)."""
        self.show_problems(problems, replace=True)
        if not datasets:
            self.statusBar().showMessage(f"no dataset in {path} — see Problems", 8000)
            self.problem_dock.raise_()
            return False
        self._remember(path)
        self.setWindowTitle(f"fminspect {__version__} — {path}")
        if not background:
            self._set_datasets(datasets)
            settle_garbage()  # now, not while the first sample is shown
            self._paint_now()  # the list, now
            return True
        # The sample list is painted at the start of the next event-loop turn, and the first
        # sample (or the one ``then`` asks for) is read right after that paint (their timers
        # come next, in the order they were started): painted later, the list fell in the
        # same turn as the first sample's panels (a 60–80 ms block); painted while the
        # sample was being read, it waited for the reading threads to let go of the
        # interpreter (50–63 ms, against 20–27); painted here, it added itself to this
        # turn's work (50–70 ms in all). The reading thread left its objects out of the
        # collections (see quiet_collector).
        QtCore.QTimer.singleShot(0, self, self._paint_now)
        if then is not None:
            QtCore.QTimer.singleShot(0, self, then)
        self._set_datasets(datasets, defer_first=True)
        # laid out now: a repaint of the window queued before the folder was read (the
        # "reading…" line) comes before that timer, and painted the list before its layouts
        self._lay_out_now()
        return True

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
        sample = single_sample(Path(gt), [Path(p) for p in preds], Path(image) if image else None)
        ds = Dataset("files", None, None, {}, [sample])  # type: ignore[arg-type]
        self.setWindowTitle(f"fminspect {__version__} — {Path(gt).name}")
        self._set_datasets([ds], score_browser=False)

    def open_demo(self) -> bool:
        """Open the bundled demo dataset."""
        from fminspect.io.resources import resource

        return self.open_path(resource("demo"))

    def _set_datasets(
        self, datasets: list[Dataset], score_browser: bool = True, defer_first: bool = False
    ) -> None:
        self.browser.dataset.blockSignals(True)
        self.browser.dataset.clear()
        self.browser.dataset.addItems([d.name for d in datasets])
        self.browser.dataset.blockSignals(False)
        self.dataset_results.clear()
        self.matrices.clear()
        self._gave_up.clear()
        self.dataset_view.set_results({})
        self._forget_statistics()
        if datasets:
            self._select_models(datasets[0])
        self.controller.open_datasets(datasets, defer_first)
        if score_browser:
            self._score_browser()
        else:
            self.scorer.cancel()  # the dataset shown before is no longer wanted
            self._scoring = ""

    def _select_models(self, ds: Dataset) -> None:
        """The models of ``ds`` and what was chosen for it before; the controller reads and
        scores the shown ones (set before it loads a sample: no second reading)."""
        key = str(ds.gt.path) if ds.gt is not None else ""
        self.selection.blockSignals(True)
        self.selection.set_models(ds.method_names, key)
        self.selection.blockSignals(False)
        self.controller.models = self.selection.shown if ds.gt is not None else None
        self.picker.refresh()
        self._apply_models()
        self.dataset_view.names_changed()

    def _on_models_changed(self) -> None:
        ds = self.controller.dataset
        if ds is None or ds.gt is None:
            return
        self._apply_models()
        self.controller.set_models(self.selection.shown)

    def _apply_models(self) -> None:
        """Show the chosen models (and names) everywhere but in the controller."""
        names = dict(self.selection.aliases)
        shown = self.selection.shown
        self.grid.set_models(
            shown if self.controller.models is not None else None,
            names,
            pinned=self.selection.reference,
        )
        if self.browser.model.matrix.methods:
            self.browser.set_columns(shown, names)
        self.curves.set_emphasis(self.selection.highlighted, self.selection.hidden_curves)
        self.table.set_names(names)
        self.curves.set_names(names)

    def _dataset_values(self, key: str) -> dict[str, float] | None:
        """Each method's dataset value of ``key`` on the current dataset (None until scored)."""
        ds = self.controller.dataset
        results = self.dataset_results.get(ds.name) if ds is not None else None
        if not results:
            return None
        return {r.method: r.values[key] for r in results if key in r.values}

    def matrices_of(self, dataset: str) -> ScoreMatrix | None:
        """The per-image scores of ``dataset`` (None if it has not been scored)."""
        return self.matrices.get(dataset)

    def _score_browser(self) -> None:
        """Show the current dataset's samples now, and its scores as the background
        evaluation reads them from the store or computes them."""
        ds = self.controller.dataset
        if ds is None:
            return
        settings = self.controller.settings  # the scores are labelled with what made them
        if settings != self._scored_with:  # other numbers: every dataset is scored again
            self.dataset_results.clear()
            self.matrices.clear()
            self._gave_up.clear()
            self.dataset_view.set_results({})
            self._forget_statistics()
        self._scored_with = settings
        self.dataset_results.pop(ds.name, None)
        self._start_scoring(ds)
        self.browser.set_matrix(
            self.matrices[ds.name], self.selection.shown, self.selection.aliases
        )
        self.browser.status.setText(
            f"reading {len(ds.samples)} samples × {len(ds.method_names)} models…"
        )
        self.browser.show_progress(0, 0)
        if self.controller.sample is not None:
            self.browser.select(self.controller.sample.name)

    def _start_scoring(self, ds: Dataset) -> None:
        config = self._scored_with.eval_config()
        self._scoring = ds.name
        made = self._pieces if self._pieces and self._pieces[0] is ds else None
        self._pieces = None  # used once: scoring it again (new parameters) pickles it anew
        self.matrices[ds.name] = self.scorer.start(
            ds,
            config,
            store_for(ds.gt.path),
            made[1] if made else None,
            made[2] if made else None,
        )

    def _score_next_dataset(self) -> bool:
        """Score the first other dataset of the folder without dataset values (so that the
        dataset view shows them side by side); False when every one has them."""
        for ds in self.controller.datasets:
            if (
                ds.name not in self.dataset_results
                and ds.name not in self._gave_up
                and ds.samples
                and ds.gt is not None
            ):
                self._start_scoring(ds)
                self.dataset_view.set_note(f"scoring {ds.name} in the background…")
                return True
        return False

    def _on_scorer_event(self, event: Any) -> None:
        ds = self.controller.dataset
        current = ds is not None and self._scoring == ds.name
        if isinstance(event, stream.Results):
            self.dataset_results[event.dataset] = event.results
            order = [d.name for d in self.controller.datasets if d.name in self.dataset_results]
            others = len(self.controller.datasets) - len(order)
            self.dataset_view.set_results(
                {d: self.dataset_results[d] for d in order},
                note=f"{others} more dataset{'s' if others != 1 else ''} being scored"
                if others
                else "",
            )
        if not current:
            return  # another dataset of the folder, scored for the dataset view
        if isinstance(event, stream.Scores):
            self.browser.scores_changed(event.samples)
        elif isinstance(event, stream.Planned):
            # files that cannot be read anywhere in the dataset, not only in the samples visited
            self.show_problems([p for p in event.problems if p.severity == "error"])
            todo = event.pairs - event.stored
            self.browser.status.setText(
                f"{event.pairs} pairs: {event.stored} from the store"
                + (f", scoring the other {todo} ({event.units} images)…" if event.units else "")
            )
            if event.units:
                self.browser.show_progress(0, event.units)
        elif isinstance(event, stream.Progress) and ds is not None:
            self.show_problems(list(event.problems))
            self.browser.show_progress(event.done, event.total)
            self.browser.status.setText(
                f"scoring: {event.done}/{event.total} images, {event.rate:.1f}/s, "
                f"ETA {clock(event.eta)}"
            )
            self.dataset_view.set_note(
                f"{ds.name}: {event.done}/{event.total} images scored, ETA {clock(event.eta)}"
            )
        elif isinstance(event, stream.Results):
            p = self._scored_with.params
            n = len(ds.samples) if ds else 0
            models = len(ds.method_names) if ds else 0
            self.browser.status.setText(
                f"{n} samples, {models} models · {p.norm.label} · F β²={p.beta2:g}, S α={p.alpha:g}"
            )

    # ------------------------------------------------------------------ dataset jobs
    def _scored_datasets(self) -> list[Dataset]:
        return [d for d in self.controller.datasets if d.name in self.dataset_results]

    def ask_statistics(self, setup: Any) -> None:
        """Bootstrap intervals and paired tests of every dataset with values, in the
        scoring service (as ``fminspect eval --ci``)."""
        datasets = self._scored_datasets()
        if not datasets:
            return
        config = self._scored_with.eval_config()
        self._task_kind = "statistics"
        self._task_id = self.scorer.run_task(
            "statistics", [(d, store_for(d.gt.path)) for d in datasets], config, setup
        )
        self.dataset_view.task_started(
            f"making intervals and tests ({setup.resamples} resamples of the images)…"
        )

    def ask_compare(self, reference: Path) -> None:
        """Compare the dataset values with the table at ``reference`` under every
        convention, in the scoring service (as ``fminspect compare``)."""
        datasets = self._scored_datasets()
        ds = self.controller.dataset
        if not datasets or ds is None or ds.gt is None:
            return
        settings = self._scored_with
        self._task_kind = "compare"
        self._task_id = self.scorer.run_task(
            "compare",
            datasets,
            reference,
            settings.params,
            settings.interpolation,
            store_for(ds.gt.path),
            significance=self.dataset_view.setup(),  # the tests chosen beside the button
        )
        self.dataset_view.task_started(f"comparing with {reference.name}…")

    @property
    def task_running(self) -> bool:
        """A job of the dataset view (intervals and tests, or a comparison) is under way."""
        return self._task_id is not None

    def _forget_statistics(self) -> None:
        """The values the statistics were made for are gone: so are they, and what the job
        under way would give is dropped (another folder may have the same names)."""
        self.dataset_view.set_statistics({})
        if self._task_id is not None:
            self._task_id = None
            self.scorer.stop_task()
            self.dataset_view.task_ended("")

    def _on_task_progress(self, task: int, text: str) -> None:
        if task == self._task_id:
            self.dataset_view.task_progress(text)

    def _on_task_done(self, task: int, value: Any) -> None:
        if task != self._task_id:
            return  # a job for values no longer shown (other parameters, another folder)
        self._task_id = None
        if self._task_kind == "statistics":
            self.dataset_view.set_statistics(value)
            return
        from fminspect.gui.dialogs.compare import CompareDialog

        counts = value.counts()
        self.dataset_view.task_ended(
            f"compared: {counts.get('agrees', 0)} agree, {counts.get('explained', 0)} "
            f"explained, {counts.get('unexplained', 0)} unexplained"
        )
        self.compare_dialog = CompareDialog(value, self)
        self.compare_dialog.show()

    def _on_task_failed(self, task: int, why: str) -> None:
        if task != self._task_id:
            return
        self._task_id = None
        what = "intervals and tests" if self._task_kind == "statistics" else "compare"
        self.dataset_view.task_ended(f"{what}: {why}")

    def _on_scorer_failed(self, message: str) -> None:
        self.browser.status.setText(f"scoring failed: {message}")
        self.dataset_view.set_note(f"scoring {self._scoring} failed: {message}")

    def _on_scorer_finished(self) -> None:
        ds = self.controller.dataset
        if ds is not None and self._scoring == ds.name:
            self.browser.progress.hide()
        if self._scoring and self._scoring not in self.dataset_results:
            self._gave_up.add(self._scoring)  # failed or stopped: not retried in a loop
        self._scoring = ""
        self._score_next_dataset()

    @property
    def scoring(self) -> bool:
        """A dataset of the folder is being scored in the background."""
        return bool(self._scoring) or self.scorer.running

    def _on_dataset_sample_chosen(self, dataset: str, sample: str) -> None:
        self.tabs.setCurrentIndex(0)
        self.go_to(sample, dataset)

    def _choose_folder(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Open a dataset folder")
        if folder:
            self.open_in_background(folder)

    def _remember(self, path: Path) -> None:
        recent = [p for p in self._recent() if p != str(path)]
        recent.insert(0, str(path))
        self.qsettings.setValue("recent", recent[:MAX_RECENT])
        self._fill_recent()

    def _recent(self) -> list[str]:
        value = self.qsettings.value("recent", [], list)
        return [str(p) for p in value] if isinstance(value, list) else []

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for p in self._recent():
            act = self.recent_menu.addAction(p)
            act.triggered.connect(lambda _=False, p=p: self.open_in_background(p))

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
        # The panels are emptied for the new sample one per event-loop turn (the grid now,
        # the table and the curves next, see _redraw_step): Qt repaints what changed after
        # each turn, and one turn changing all of them held the GUI thread for the grid's,
        # the table's and the plots' first paint together (60–80 ms on 12 models).
        # Its scoring jobs start once they have been drawn (see workers.hold_jobs).
        hold_jobs()
        self.grid.set_sample(sample, keep_view=True, gt_notes=self.controller.gt_notes())
        self._relabel = None  # the table and the F plot are labelled with the settings now
        self._steps = [*SAMPLE_STEPS, *(s for s in self._steps if s not in SAMPLE_STEPS)]
        self._redraw.start()
        self.browser.select(sample.name)
        ds = self.controller.dataset
        n = len(ds.samples) if ds else 1
        errors = sum(p.severity == "error" for p in sample.problems)
        # the sample's errors were just put in the status bar: keep saying so
        note = f"  ⚠ {errors} error{'s' if errors != 1 else ''}: see Problems" if errors else ""
        self.statusBar().showMessage(
            f"{sample.key}  ({self.controller.sample_index + 1}/{n}){note}",
            10000 if errors else 4000,
        )

    def _reset_for_sample(self, step: str) -> None:
        """Empty the table (``step == 'table'``) or the curves (``'curves'``) for the
        current sample's models."""
        sample = self.controller.sample
        if sample is None:
            return
        models = self.controller.scored_models(sample)
        colours = self.selection.colours(models)
        if step == "table":
            self.table.model.threshold = self.controller.threshold  # its headers say t
            self._reset_table(self.controller.settings.params, models, colours)
        else:
            self.curves.set_beta2(self.controller.settings.params.beta2)
            self.curves.reset(models, colours, self.selection.aliases)
            self.curves.set_threshold(self.controller.threshold)

    def _flush_sample_steps(self) -> None:
        """Empty the panels still waiting for it now (before any result is shown in them)."""
        for step in [s for s in self._steps if s in SAMPLE_STEPS]:
            self._steps.remove(step)
            self._reset_for_sample(step)
        release_jobs()

    def _release_when_drawn(self) -> None:
        """Let the jobs held since the sample was shown start once the last of its panels
        has been emptied and painted (a zero timer: once the paint queued meanwhile is
        done)."""
        if not any(s in SAMPLE_STEPS for s in self._steps):
            QtCore.QTimer.singleShot(0, release_jobs)

    def _reset_table(
        self,
        params: Params,
        models: list[str] | None = None,
        colours: dict[str, int] | None = None,
    ) -> None:
        """Empty the table under ``params``' labels (for these models, or the same ones)."""
        sample = self.controller.sample
        self.table.reset(
            self.table.model.models if models is None else models,
            sample is not None and sample.image is not None,
            params,
            self.table.model.colours if colours is None else colours,
            self.selection.aliases,
            self.controller.settings.measure_keys(),
        )

    def _on_request(self) -> None:
        self._held.clear()
        self._showing_progress = False
        self._progressive.start()

    def _on_complete(self) -> None:
        """Show a request's results a moment after it completed: when every result was at
        hand (a sample read and scored ahead, one step on), the request completes in the
        turn that showed the sample's image and GT, and drawing the table in it as well held
        the GUI thread for both repaints (45–60 ms). After :data:`RELEASE_AFTER_MS` the
        sample's repaint has been done and other events (keys, the mouse) had their turn."""
        generation = self.controller.generation
        QtCore.QTimer.singleShot(
            RELEASE_AFTER_MS,
            self,
            lambda: self._release_held() if generation == self.controller.generation else None,
        )

    def _release_held(self) -> None:
        """Show the results held so far; from now on show each as it arrives."""
        self._progressive.stop()
        self._flush_sample_steps()
        self._showing_progress = True
        if self._relabel is not None:
            params = self._relabel.params
            self._relabel = None
            self._reset_table(params)
            self.curves.set_beta2(params.beta2)
        held, self._held = self._held, []
        for model in held:
            self._on_result(model)

    def _on_result(self, model: str) -> None:
        result = self.controller.results.get(model)
        if result is None:
            return
        if not self._showing_progress:
            self._held.append(model)
            if self.grid.fills_later(model):  # its panel is drawn with it, once
                self.grid.set_result(model, result)
            return
        self._flush_sample_steps()
        self._scores_pending[model] = result
        if self.grid.fills_later(model):  # drawn with its panel, once
            self.grid.set_result(model, result)
            self._curves_pending[model] = result
        else:
            self._arrived.add(model)
        self._steps = ["scores", "maps", *PLOTS]  # from the start: the numbers, the maps…
        self._redraw.start()

    @property
    def drawing(self) -> bool:
        """The current sample's results are still being put on screen: held a moment after
        its image (:meth:`_on_complete`), waiting for their redraw steps, or the grid's
        panels being filled (screenshots and the benchmark wait for it to end)."""
        return bool(self._held or self._steps or self._arrived) or self.grid.filling

    def _redraw_step(self) -> None:
        """One redraw step (see ``__init__``)."""
        if not self._steps:
            return
        if self.grid.filling:
            # the grid makes and fills its panels one per turn: the table and the plots
            # wait, so that a turn does one of these things, never two of them with their
            # repaints (a result for a panel not filled yet is shown when it is filled)
            self._redraw.start(REDRAW_WAIT_MS)
            return
        self._redraw.setInterval(0)
        step = self._steps.pop(0)
        try:
            self._do_step(step)
        finally:  # the next step even if this one failed: `drawing` must not stay True
            if self._steps:
                self._redraw.start()
            else:
                self._curves_pending.clear()
            if step in SAMPLE_STEPS:
                self._release_when_drawn()

    def _do_step(self, step: str) -> None:
        results = self.controller.results
        if step in SAMPLE_STEPS:
            self._reset_for_sample(step)
        elif step == "scores":  # every result that arrived since: one update of the table
            pending, self._scores_pending = self._scores_pending, {}
            self.table.set_results({m: r for m, r in pending.items() if results.get(m) is r})
        elif step == "maps":  # models' maps in the grid's order, MAPS_BUDGET_MS a turn
            start = time.perf_counter()
            order = [m for m in self.curves.order if m in self._arrived]
            order += [m for m in self._arrived if m not in order]
            for model in order:
                if (time.perf_counter() - start) * 1e3 >= MAPS_BUDGET_MS:
                    break
                self._arrived.discard(model)
                if model in results:
                    self.grid.set_result(model, results[model])
                    self._curves_pending[model] = results[model]
            if self._arrived:
                self._steps.insert(0, "maps")
        else:
            pending = {m: r for m, r in self._curves_pending.items() if results.get(m) is r}
            self.curves.set_results(pending, plots=(step,))

    def _on_settings(self, settings: Settings) -> None:
        # the measures are the window's choice (View → Measures…), not the parameter panel's
        settings = dataclasses.replace(settings, keys=self.measure_choice)
        # the table's headers and the F-plot's title change with the first results, not
        # now: repainting them while the models are being scored would slow both down
        self._relabel = settings
        self.controller.set_settings(settings)
        for window in self.explain_windows:
            if hasattr(window, "mark_settings"):
                window.mark_settings(settings.params)
        if self.controller.dataset is not None and self.controller.dataset.name != "files":
            self._browser_timer.start()

    def _stored_measures(self) -> tuple[str, ...]:
        """The measures chosen before (QSettings ``measures``; the default ones at first),
        without any that no longer exists."""
        stored: Any = self.qsettings.value("measures", None)
        if not stored:
            return ()
        words = [stored] if isinstance(stored, str) else [str(k) for k in stored]
        return tuple(k for k in words if k in MEASURES_BY_KEY)

    def choose_measures(self) -> None:
        """View → Measures…: tick the measures the window computes and shows."""
        dialog = MeasuresDialog(
            self.controller.settings.measure_keys(), self.controller.settings.params, self
        )
        if dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted:
            self.set_measures(dialog.chosen())

    def set_measures(self, keys: Sequence[str]) -> None:
        """Compute and show ``keys`` (empty: the default measures), remembered."""
        chosen = tuple(keys) if set(keys) != set(default_keys()) else ()
        self.measure_choice = chosen
        self.qsettings.setValue("measures", list(chosen))
        shown = measure_keys(chosen or None)
        fill_combo(self.picker.top_measure, shown, "Sm")
        fill_combo(self.dataset_view.pair_measure, shown, "Sm")
        self.dataset_view.update_pair()
        self._on_settings(self.controller.settings)
        self._reset_table(self.controller.settings.params)

    def explain(self, model: str, key: str) -> QtWidgets.QMainWindow | None:
        """Open the explain view of measure ``key`` for ``model`` on the current sample."""
        from fminspect.gui.views.registry import ExplainWindow

        result = self.controller.results.get(model)
        sample = self.controller.sample
        if result is None or sample is None:
            self.statusBar().showMessage(f"{model}: still being scored", 3000)
            return None
        window = ExplainWindow(
            key, result, model, sample.name, sample.image, self.controller.threshold, self
        )
        window.show()
        self.explain_windows.append(window)
        return window

    def open_playground(self, demos: bool = False) -> QtWidgets.QMainWindow | None:
        """Open the teaching playground on the current sample's first (or selected) model."""
        from fminspect.gui.playground import PlaygroundWindow

        sample = self.controller.sample
        if sample is None or sample.gt is None or not sample.preds:
            self.statusBar().showMessage("open a sample with at least one model first", 4000)
            return None
        rows = self.table.view.selectionModel().selectedIndexes()
        models = self.table.model.models or list(sample.preds)  # the table's rows
        model = models[self.table.proxy.mapToSource(rows[0]).row()] if rows else models[0]
        window = PlaygroundWindow(
            sample.gt, sample.preds[model], sample.image, self.controller.settings.params, self
        )
        window.setWindowTitle(f"fminspect — teaching playground ({model} on {sample.name})")
        window.resize(1400, 900)
        central = window.centralWidget()
        if demos and isinstance(central, QtWidgets.QTabWidget):
            central.setCurrentIndex(1)
        window.show()
        self.explain_windows.append(window)
        return window

    def _choose_study(self, title: str, packs: bool) -> str | None:
        filters = "Studies (*.sqlite" + (" *.zip)" if packs else ")") + ";;All files (*)"
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, title, "", filters)
        return path or None

    def _choose_vote(self) -> None:
        path = self._choose_study("Open a study or a study pack to vote on", packs=True)
        if path:
            self.open_voting(path)

    def _choose_analysis(self) -> None:
        path = self._choose_study("Open a study to analyse", packs=False)
        if path:
            self.open_analysis(path)

    def open_voting(self, path: str, participant: str | None = None) -> QtWidgets.QWidget | None:
        """Open the voting window (full screen) on a study file or a study pack."""
        from fminspect.gui.voting import VotingWindow, prepare_study
        from fminspect.ranking.store import StudyError

        try:
            store, paths, results_dir = prepare_study(path)
        except StudyError as exc:
            QtWidgets.QMessageBox.warning(self, "fminspect", str(exc))
            return None
        window = VotingWindow(store, participant=participant, paths=paths, results_dir=results_dir)
        window.showFullScreen()
        self.explain_windows.append(window)
        return window

    def open_meta(self) -> QtWidgets.QMainWindow | None:
        """Open the meta-measures window on the current dataset."""
        from fminspect.gui.meta_view import MetaWindow

        ds = self.controller.dataset
        if ds is None or len(ds.samples) < 2 or not ds.methods:
            self.statusBar().showMessage(
                "open a dataset with at least two images and a model first", 6000
            )
            return None
        window = MetaWindow(ds, self.controller.settings.params, inspector=self)
        window.resize(1400, 900)
        window.show()
        self.explain_windows.append(window)
        return window

    def open_analysis(self, path: str) -> QtWidgets.QMainWindow | None:
        """Open the analysis window of a study."""
        from fminspect.gui.analysis import AnalysisWindow
        from fminspect.ranking.store import StudyError, StudyStore

        try:
            window = AnalysisWindow(StudyStore(path))
        except StudyError as exc:
            QtWidgets.QMessageBox.warning(self, "fminspect", str(exc))
            return None
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

    def _nudge(self, delta: int) -> None:
        self.controller.set_threshold(self.controller.threshold + delta)

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
        if dataset and self.browser.dataset.findText(dataset) >= 0:
            self.browser.dataset.setCurrentText(dataset)
        if sample not in self.controller.sample_names:
            sample = sample_name(sample)  # given as its file's name (Crab-10.png)
        if sample not in self.controller.sample_names:
            self.statusBar().showMessage(f"no sample {sample!r} in this dataset", 8000)
            return False
        self.controller.select_sample(self.controller.sample_names.index(sample))
        return True

    def _on_sample_chosen(self, name: str) -> None:
        if self.controller.sample is None or name != self.controller.sample.name:
            self.controller.select_sample(self.controller.sample_names.index(name))

    def _on_dataset_chosen(self, name: str) -> None:
        if name and (self.controller.dataset is None or name != self.controller.dataset.name):
            ds = next(d for d in self.controller.datasets if d.name == name)
            self._select_models(ds)
            self.controller.select_dataset(name)
            matrix = self.matrices.get(name)
            if matrix is not None and name in self.dataset_results:
                # scored already under the same settings: shown at once, not scored again
                self.browser.set_matrix(matrix, self.selection.shown, self.selection.aliases)
                self.browser.progress.hide()
                self.browser.status.setText(
                    f"{len(ds.samples)} samples, {len(ds.method_names)} models"
                )
            else:
                self._score_browser()

    def show_problems(self, problems: list[Problem], replace: bool = False) -> None:
        """List problems (errors first) and point the user at them."""
        if replace:
            self.problem_list.clear()
            self._listed.clear()
        added = []
        for p in sorted(problems, key=lambda p: p.severity != "error"):
            # a file is unreadable for one reason, which the loader and the browser's batch
            # word differently; a file can have several warnings (16-bit and resized)
            key = f"error: {p.path}" if p.severity == "error" else str(p)
            if key in self._listed:
                continue  # shown already (a sample visited again reports it again)
            self._listed.add(key)
            added.append(p)
            item = QtWidgets.QListWidgetItem(str(p))
            icon = (
                QtWidgets.QStyle.StandardPixmap.SP_MessageBoxCritical
                if p.severity == "error"
                else QtWidgets.QStyle.StandardPixmap.SP_MessageBoxWarning
            )
            item.setIcon(self.style().standardIcon(icon))
            self.problem_list.addItem(item)
        n = self.problem_list.count()
        self.problem_dock.setWindowTitle(f"Problems ({n})" if n else "Problems")
        errors = [p for p in added if p.severity == "error"]
        if errors:  # only news: the browser lists the same errors again after every rescoring
            self.statusBar().showMessage(f"{errors[0]}  (see Problems)", 10000)

    # ------------------------------------------------------------------ export, theme, state
    def _export_grid(self) -> None:
        name = self.controller.sample.name if self.controller.sample else "grid"
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self, "Export panel grid", f"{name}_panels.png", "PNG (*.png)"
        )
        if path:
            export_grid(self.grid, path)
            self.statusBar().showMessage(f"saved {path}", 5000)

    def _export_table(self) -> None:
        name = self.controller.sample.name if self.controller.sample else "table"
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
        for plot in [*self.curves.plots.values(), *self.dataset_view.plots.values()]:
            plot.setBackground(bg)
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setPen(fg)
                axis.setTextPen(fg)
            plot.getPlotItem().titleLabel.setText(plot.getPlotItem().titleLabel.text, color=fg)
        self.qsettings.setValue("theme", theme)

    def _about(self) -> None:
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
        if state is not None:
            self.restoreState(state)
        self._fill_recent()

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:
        self._stop_opening()  # a folder still being read is not shown in a closed window
        self.scorer.close()
        release_jobs()
        self.qsettings.setValue("geometry", self.saveGeometry())
        self.qsettings.setValue("state", self.saveState())
        super().closeEvent(event)
