"""Drawing the shown sample and its results in the grid, the metrics table and the curves.

The model says what changed (a sample shown, a request started, a result in, the request
complete, a new threshold); :class:`SampleDrawing` decides *when* each panel draws it, so
that no turn of the GUI thread does the work of several repaints:

* a newly shown sample's panels are emptied one per event-loop turn (the grid now, the table
  and the curves in the next turns), and its scoring jobs are held until they have been
  drawn (:func:`~fminspect.gui.workers.hold_jobs`);
* the results of a quick request are shown together when the last one arrives (drawing each
  on arrival would compete with the scoring of the others for the interpreter); a request
  still running after :data:`PROGRESSIVE_MS` shows what it has, then each result as it comes;
* results are drawn in steps, one per turn: the table's numbers, the models' maps
  (:data:`MAPS_BUDGET_MS` a turn), then each curve plot.
"""

from __future__ import annotations

import time

from PySide6 import QtCore

from fminspect.gui.panels.curves import PLOTS, CurvesPanel
from fminspect.gui.panels.map_grid import MapGridPanel
from fminspect.gui.panels.metrics_table import MetricsTablePanel
from fminspect.gui.workers import hold_jobs, release_jobs
from fminspect.inspector.model import InspectorModel
from fminspect.inspector.settings import Settings
from fminspect.metrics import Params, SuiteResult
from fminspect.pipeline.sample import LoadedSample

#: After this long, a request still being scored shows the results it has.
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


class SampleDrawing(QtCore.QObject):
    """Puts the model's shown sample and results on the grid, the table and the curves."""

    def __init__(
        self,
        model: InspectorModel,
        grid: MapGridPanel,
        table: MetricsTablePanel,
        curves: CurvesPanel,
        parent: QtCore.QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.model, self.grid, self.table, self.curves = model, grid, table, curves
        # the models whose maps arrived and are not drawn yet; the curves not drawn yet
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
        self._held: list[str] = []
        self._progressive = QtCore.QTimer(self)
        self._progressive.setSingleShot(True)
        self._progressive.setInterval(PROGRESSIVE_MS)
        self._progressive.timeout.connect(self._release_held)
        self._showing_progress = False
        #: new settings not yet shown in the table's headers and the F plot's title: they
        #: change with the first results, not while the models are being scored
        self.relabel: Settings | None = None
        #: the shown request's results are all in; the model is told once they are drawn
        self._complete = False
        model.sample_loaded.connect(self._on_sample_loaded)
        model.request_started.connect(self._on_request)
        model.result_ready.connect(self._on_result)
        model.results_complete.connect(self._on_complete)
        grid.filled.connect(self._tell_when_drawn)

    # ------------------------------------------------------------------ the sample
    def _on_sample_loaded(self, sample: LoadedSample) -> None:
        # The panels are emptied for the new sample one per event-loop turn (the grid now,
        # the table and the curves next, see _redraw_step): Qt repaints what changed after
        # each turn, and one turn changing all of them held the GUI thread for the grid's,
        # the table's and the plots' first paint together (60–80 ms on 12 models).
        # Its scoring jobs start once they have been drawn (see workers.hold_jobs).
        hold_jobs()
        self.grid.set_sample(sample, keep_view=True, gt_notes=self.model.gt_notes())
        self.relabel = None  # the table and the F plot are labelled with the settings now
        self._steps = [*SAMPLE_STEPS, *(s for s in self._steps if s not in SAMPLE_STEPS)]
        self._redraw.start()

    def reset_for_sample(self, step: str) -> None:
        """Empty the table (``step == 'table'``) or the curves (``'curves'``) for the
        current sample's models."""
        sample = self.model.sample
        if sample is None:
            return
        models = self.model.scored_models(sample)
        selection = self.model.selection
        colours = selection.colours(models)
        if step == "table":
            self.table.model.threshold = self.model.threshold  # its headers say t
            self.reset_table(self.model.settings.params, models, colours)
        else:
            self.curves.set_beta2(self.model.settings.params.beta2)
            self.curves.reset(models, colours, selection.aliases)
            self.curves.set_threshold(self.model.threshold)

    def _flush_sample_steps(self) -> None:
        """Empty the panels still waiting for it now (before any result is shown in them)."""
        for step in [s for s in self._steps if s in SAMPLE_STEPS]:
            self._steps.remove(step)
            self.reset_for_sample(step)
        release_jobs()

    def _release_when_drawn(self) -> None:
        """Let the jobs held since the sample was shown start once the last of its panels
        has been emptied and painted (a zero timer: once the paint queued meanwhile is
        done)."""
        if not any(s in SAMPLE_STEPS for s in self._steps):
            QtCore.QTimer.singleShot(0, release_jobs)

    def reset_table(
        self,
        params: Params,
        models: list[str] | None = None,
        colours: dict[str, int] | None = None,
    ) -> None:
        """Empty the table under ``params``' labels (for these models, or the same ones)."""
        sample = self.model.sample
        # a sample whose GT cannot be read has no score to wait for: its cells say why
        self.table.model.unscored = sample.gt_error if sample is not None else ""
        self.table.reset(
            self.table.model.models if models is None else models,
            sample is not None and sample.image is not None,
            params,
            self.table.model.colours if colours is None else colours,
            self.model.selection.aliases,
            self.model.settings.measure_keys(),
        )

    # ------------------------------------------------------------------ results
    def _on_request(self) -> None:
        self._complete = False
        self._held.clear()
        self._showing_progress = False
        self._progressive.start()

    def _on_complete(self) -> None:
        """Show a request's results a moment after it completed: when every result was at
        hand (a sample read and scored ahead, one step on), the request completes in the
        turn that showed the sample's image and GT, and drawing the table in it as well held
        the GUI thread for both repaints (45–60 ms). After :data:`RELEASE_AFTER_MS` the
        sample's repaint has been done and other events (keys, the mouse) had their turn."""
        generation = self.model.generation
        self._complete = True
        QtCore.QTimer.singleShot(
            RELEASE_AFTER_MS,
            self,
            lambda: self._release_held() if generation == self.model.generation else None,
        )

    def _release_held(self) -> None:
        """Show the results held so far; from now on show each as it arrives."""
        self._progressive.stop()
        self._flush_sample_steps()
        self._showing_progress = True
        if self.relabel is not None:
            params = self.relabel.params
            self.relabel = None
            self.reset_table(params)
            self.curves.set_beta2(params.beta2)
        held, self._held = self._held, []
        for model in held:
            self._on_result(model)
        self._tell_when_drawn()

    def _tell_when_drawn(self) -> None:
        """Once every result of a complete request is on screen, tell the model (it reads
        the next sample ahead then)."""
        if self._complete and not self.drawing:
            self._complete = False
            self.model.results_drawn()

    def _on_result(self, model: str) -> None:
        result = self.model.results.get(model)
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
        """One redraw step (see the module's notes)."""
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
                self._tell_when_drawn()
            if step in SAMPLE_STEPS:
                self._release_when_drawn()

    def _do_step(self, step: str) -> None:
        results = self.model.results
        if step in SAMPLE_STEPS:
            self.reset_for_sample(step)
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
