"""``fminspect screenshots OUTDIR``: the real window on the demo data, rendered to PNG;
``fminspect screenshots OUTDIR --dataset PATH [--sample NAME]``: on the user's own data.

Runs offscreen when there is no display. Settings come from a throw-away QSettings file,
so the pictures do not depend on the user's saved state.
"""

from __future__ import annotations

import functools
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fminspect.io.discovery import ToolkitConfigs, no_models_message

SIZE = (1600, 1000)


def _save(widget: Any, path: Path) -> None:
    """The widget as PNG, written atomically; OSError naming the file if it cannot be."""
    from fminspect.gui.export import save_image

    save_image(widget.grab(), path)


def _settle(app: Any, window: Any, controller: Any) -> None:
    """Wait until the current sample is scored and every result is on screen (results are
    drawn over several event-loop turns, a moment after the sample's image); a warning if that
    takes more than a minute (the picture may then be incomplete)."""
    scored = controller.wait(60000)
    for _ in range(10):
        app.processEvents()
    if not (_wait_until(app, lambda: not window.drawing, 60, pause_ms=1) and scored):
        warnings.warn("the window had not drawn every result after 60 s", stacklevel=2)


def _wait_until(app, ready: Callable[[], bool], timeout_s: float, pause_ms: int = 50) -> bool:  # type: ignore[no-untyped-def]
    """Process events until ``ready()`` (True) or the timeout (False)."""
    import time

    from PySide6 import QtCore

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        app.processEvents()
        if ready():
            return True
        QtCore.QThread.msleep(pause_ms)
    return False


def _wait_scored(app, window, timeout_s: float) -> bool:  # type: ignore[no-untyped-def]
    """Wait until the background evaluation of every dataset is over (or the timeout)."""

    def ready() -> bool:
        if window.model.service.running:
            return False
        app.processEvents()  # the folder's other datasets are scored one after the other
        return not window.model.service.running

    return _wait_until(app, ready, timeout_s)


class NoModels(ValueError):
    """What was opened holds GTs but no model's maps: nothing worth a picture."""


def take_dataset_screenshots(
    outdir: Path | str,
    dataset: Path | str | ToolkitConfigs,
    sample: str | None = None,
    *,
    prefix: str = "",
    timeout_s: float = 1800.0,
    log: Callable[[str], None] | None = None,
) -> list[Path]:
    """Render the window on the user's own dataset folder: the sample view and the dataset
    view, in the light and the dark theme (``{prefix}sample.png``, ``{prefix}sample_dark.png``,
    ``{prefix}dataset.png``, ``{prefix}dataset_dark.png``), and the dataset view with its
    intervals and tests (``{prefix}dataset_statistics.png``). ``sample``: the sample shown (by
    name; default the first). Scores come from the store of an earlier ``fminspect eval`` where
    it has them; the rest are computed first (at most ``timeout_s``). Returns the files
    written; raises ``ValueError`` with a message when the folder holds no dataset or no such
    sample, :class:`NoModels` when it holds no model's maps. ``dataset`` may be
    PySODEvalToolkit's configs (:class:`~fminspect.io.discovery.ToolkitConfigs`)."""
    if "DISPLAY" not in os.environ and "WAYLAND_DISPLAY" not in os.environ:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtCore

    from fminspect.gui.app import application, drop_offscreen_notices
    from fminspect.gui.main_window import InspectorWindow
    from fminspect.gui.theme import apply_theme
    from fminspect.io.discovery import sample_name

    say = log or (lambda _text: None)
    out = Path(outdir)
    app = application()
    previous = QtCore.qInstallMessageHandler(drop_offscreen_notices)
    tmp = tempfile.mkdtemp(prefix="fminspect-shots-")
    settings = QtCore.QSettings(str(Path(tmp) / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    apply_theme(app, "light")
    window = InspectorWindow(settings=settings)
    window.resize(*SIZE)
    window.show()
    written: list[Path] = []
    try:
        if not window.open_path(dataset):
            problems = [
                window.problem_list.item(i).text() for i in range(window.problem_list.count())
            ]
            raise ValueError("; ".join(problems[:3]) if problems else f"no dataset in {dataset}")
        c = window.model
        if not any(d.methods for d in c.datasets):
            raise NoModels(f"{dataset}: {no_models_message(dataset)}")
        if sample is not None:
            if not any(s.name == sample for d in c.datasets for s in d.samples):
                sample = sample_name(sample)  # given as its file's name (Crab-10.png)
            # in whichever dataset of the folder holds it (the first one that does)
            holder = next(
                (d.name for d in c.datasets if any(s.name == sample for s in d.samples)), None
            )
            if holder is None:
                names = [s.name for d in c.datasets for s in d.samples]
                hint = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
                raise ValueError(f"no sample {sample!r} in {dataset} (its samples: {hint})")
            window.go_to(sample, holder)
        say(f"scoring {dataset} (what an earlier fminspect eval stored is read, not computed)…")
        if not _wait_scored(app, window, timeout_s):
            say(f"not every score arrived within {timeout_s:.0f} s; the pictures show what did")
        out.mkdir(parents=True, exist_ok=True)

        def shot(name: str, tab: int) -> None:
            window.tabs.setCurrentIndex(tab)
            _settle(app, window, c)
            path = out / f"{prefix}{name}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            _save(window, path)
            written.append(path)

        shot("sample", 0)
        shot("dataset", 1)
        window.set_theme("dark")
        shot("dataset_dark", 1)
        shot("sample_dark", 0)
        window.set_theme("light")
        if window.model.scores.results:  # the same view with intervals, groups and a pair's test
            say("resampling for the intervals and tests…")
            view = window.dataset_view
            window.tabs.setCurrentIndex(1)
            window.model.scores.ask_statistics(view.setup())
            # until they arrive, or the job fails (the view then says why)
            _wait_until(
                app,
                lambda: bool(view.model.stats) or not window.model.scores.task_running,
                timeout_s,
            )
            if view.model.stats:
                methods = view.model.methods
                if len(methods) >= 2:
                    view.set_pair(methods[0], methods[1])
                shot("dataset_statistics", 1)
            elif window.model.scores.task_running:
                say("the intervals did not arrive in time; no dataset_statistics picture")
            else:
                say(
                    f"no intervals ({view.task_note.text() or 'the job gave none'}); "
                    "no dataset_statistics picture"
                )
    finally:
        window.close()
        QtCore.qInstallMessageHandler(previous)
    return written


def take_screenshots(
    outdir: Path | str, only: list[str] | None = None, theme: str = "light"
) -> list[Path]:
    """Render the standard set of screenshots into ``outdir`` in ``theme`` ('light' or
    'dark'; the set has one dark picture of the inspector whatever the theme); returns the
    files written."""
    if "DISPLAY" not in os.environ and "WAYLAND_DISPLAY" not in os.environ:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtCore

    from fminspect.gui.app import application, drop_offscreen_notices
    from fminspect.gui.main_window import InspectorWindow
    from fminspect.gui.theme import apply_theme

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    app = application()
    previous = QtCore.qInstallMessageHandler(drop_offscreen_notices)
    tmp = tempfile.mkdtemp(prefix="fminspect-shots-")
    settings = QtCore.QSettings(str(Path(tmp) / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    apply_theme(app, theme)
    window = InspectorWindow(settings=settings)
    window.set_theme(theme)
    window.resize(*SIZE)
    window.show()
    window.open_demo()
    c = window.model
    written: list[Path] = []

    def shot(name: str, prepare: Callable[[], None]) -> None:
        if only and name not in only:
            return
        prepare()
        _settle(app, window, c)
        # wait for the browser's background scores as well (at most a minute)
        _wait_until(app, lambda: not window.model.service.running, 60)
        _settle(app, window, c)
        path = out / f"{name}.png"
        _save(window, path)
        written.append(path)

    def pick(name: str) -> None:
        if name in c.sample_names:
            c.select_sample(c.sample_names.index(name))

    shot("inspector", lambda: pick("coffee"))

    def confusion() -> None:
        pick("chelsea")
        window.params.confusion.setChecked(True)
        c.set_threshold(100)

    shot("inspector_tp_fp_fn", confusion)

    def camouflage() -> None:
        window.params.confusion.setChecked(False)
        window.params.over_image.setChecked(True)
        window.browser.order.setCurrentIndex(3)
        camo = [n for n in c.sample_names if "camo" in n]
        pick(camo[0] if camo else c.sample_names[-1])

    shot("inspector_camouflaged", camouflage)

    def dark() -> None:
        window.params.over_image.setChecked(False)
        window.set_theme("dark")
        pick(c.sample_names[0])

    shot("inspector_dark", dark)
    window.set_theme(theme)

    def workbench() -> None:
        """The list in the order A − B (the walk), two samples tagged, a note."""
        assert c.dataset is not None
        c.set_threshold(128)
        c.cases.open(c.dataset.gt.path.parent, Path(tmp) / "tags.sqlite")  # not the user's
        window.browser.model_a.setCurrentText("FT")
        window.browser.model_b.setCurrentText("RC")
        window.browser.order.setCurrentIndex(2)
        ordered = window.browser.ordered_samples()
        for name, slots in ((ordered[1], (1,)), (ordered[0], (3, 6))):
            pick(name)
            _settle(app, window, c)
            for slot in slots:
                c.toggle_tag(slot)
        window.cases_panel.note.setPlainText("FT loses what RC keeps: for the paper's figure")
        window.browser.filter.setText("Sm[FT] - Sm[RC] < 0")
        window.browser.apply_filter()

    shot("workbench", workbench)
    window.cases_dock.raise_()
    shot("cases", lambda: None)
    window.browser_dock.raise_()
    window.browser.filter.clear()
    window.browser.apply_filter()

    shot("scatter", lambda: _scatter(app, window))
    window.scatter.clear.click()
    window.tabs.setCurrentIndex(0)

    def grab_window(
        name: str, make: Callable[[], Any], size: tuple[int, int] = (1400, 1000)
    ) -> None:
        if only and name not in only:
            return
        win = make()
        win.resize(*size)
        for _ in range(20):
            app.processEvents()
            QtCore.QThread.msleep(10)
        path = out / f"{name}.png"
        _save(win, path)
        written.append(path)
        win.close()

    views = {
        "emeasure": ("camo_grass_horse", "RC", "maxEm"),
        "weighted_fmeasure": ("coffee", "RC", "wFm"),
        "smeasure": ("coffee", "RC", "Sm"),
        "context": ("camo_grass_horse", "RC", "CCm"),
        "fmeasure": ("chelsea", "FT", "maxFm"),
        "relaxed_fmeasure": ("coffee", "GTdilate", "relaxFm"),
        "mae": ("rocket", "FG", "MAE"),
        "msiou": ("coins_two", "RW", "adpMSIoU"),
        "auc": ("coffee", "RC", "AP"),
        "size_invariance": ("coins_two", "GTnoise", "siMaxFm"),
        "hce": ("coffee", "RC", "HCE"),
        "boundary_iou": ("coffee", "GTshift", "binBIoU"),
        "boundary_accuracy": ("coffee", "GTdilate", "mBA"),
        "curves255": ("chelsea", "FT", "meanFm255"),
    }
    for name, (sample, model, key) in views.items():
        if only and f"explain_{name}" not in only:
            continue
        pick(sample)
        _settle(app, window, c)
        c.set_threshold(128)
        grab_window(f"explain_{name}", functools.partial(window.explain, model, key))

    def ab_view() -> Any:
        """The A/B view of FT and RC on the coffee."""
        pick("coffee")
        _settle(app, window, c)
        for combo, name in ((window.browser.model_a, "FT"), (window.browser.model_b, "RC")):
            combo.setCurrentIndex(combo.findData(name))
        return window.open_ab()

    grab_window("ab_view", ab_view, (1400, 560))

    if not only or "qualitative" in only:
        grab_window("qualitative", lambda: _qualitative(app, window, out, written), (620, 300))
    grab_window("playground", lambda: _playground(app, window, 0))
    grab_window("playground_demos", lambda: _playground(app, window, 1))

    grab_window("meta", lambda: _meta(app, window, Path(tmp)), (1500, 950))
    if not only or "compare" in only:
        grab_window("compare", lambda: _compare_dialog(Path(tmp), c.dataset), (1300, 720))
    if not only or {"voting", "voting_overlay", "analysis", "analysis_measures"} & set(only):
        _study_shots(app, Path(tmp), grab_window)
    if not only or {"gallery", "gallery_case"} & set(only):
        assert c.dataset is not None
        written += _gallery_shots(c.dataset, out, Path(tmp))
    window.close()
    QtCore.qInstallMessageHandler(previous)
    return written


def _scatter(app: Any, window: Any) -> None:
    """FT against RC on Sm, a rectangle of samples where FT is worse selected (the
    browser's filter)."""
    _wait_until(app, lambda: not window.model.service.running, 60)  # every score in
    window.tabs.setCurrentIndex(2)
    sc = window.scatter
    sc.a.setCurrentIndex(sc.a.findData("FT"))
    sc.b.setCurrentIndex(sc.b.findData("RC"))
    sc.redraw()
    sc.select_rect(0.5, 1.0, 0.3, 0.6)  # the demo's: RC above 0.5 where FT is below it
    sc.redraw()


def _qualitative(app: Any, window: Any, out: Path, written: list[Path]) -> Any:
    """The qualitative figure of the first four listed samples (the order A − B), and the
    figure itself beside the dialog's picture."""
    dialog = window.open_qualitative()
    assert dialog is not None  # (the demo is open)
    dialog.choose("listed")
    dialog.limit.setValue(4)
    dialog.dpi.setValue(110)
    dialog.latex.setChecked(False)
    dialog.path.setText(str(out / "qualitative_figure.png"))
    dialog.write()
    _wait_until(app, lambda: dialog.made is not None or "not written" in dialog.status.text(), 120)
    if dialog.made is not None:
        written.append(out / "qualitative_figure.png")
    return dialog


def _gallery_shots(dataset: Any, out: Path, tmp: Path) -> list[Path]:
    """The demo's gallery (`fminspect gallery`), its index and its first case, drawn by a
    headless Chromium (skipped, and said, where none is installed)."""
    import shutil
    import subprocess

    from fminspect.batch.gallery import make_gallery
    from fminspect.metrics import Params
    from fminspect.pipeline.config import EvalConfig

    browser = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
    if browser is None:
        warnings.warn("no chromium: the gallery's pictures are left out", stacklevel=2)
        return []
    site = make_gallery(
        [dataset],
        tmp / "gallery",
        EvalConfig(Params()),
        count=6,
        title="The demo's hardest samples",
        progress=False,
    )
    shots = []
    for name, page, size in (
        ("gallery", site.index, "1300,620"),
        ("gallery_case", site.index.parent / "cases" / "0001.html", "1300,900"),
    ):
        path = out / f"{name}.png"
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={tmp / 'chromium'}",
                f"--window-size={size}",
                f"--screenshot={path}",
                page.as_uri(),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=600,
        )
        shots.append(path)
    return shots


def _playground(app: Any, window: Any, tab: int) -> Any:
    """The teaching playground on the demo's coffee: an erosion swept (tab 0), or the
    flaw demonstrations on a figure of a paper (tab 1)."""
    c = window.model
    if "coffee" in c.sample_names:
        c.select_sample(c.sample_names.index("coffee"))
    _settle(app, window, c)
    win: Any = window.open_playground(demos=tab == 1)
    if tab == 0:
        win.kind.setCurrentText("erosion (−) / dilation (+)")
        win.strength.setValue(75)
        win.run_sweep()
        _wait_until(app, lambda: hasattr(win, "sweep_curves"), 60, pause_ms=25)
    else:
        keys = [d.key for d in win.demos]  # a figure of a paper, with its image
        win.demo_choice.setCurrentIndex(keys.index("context_fig2b"))
    _wait_until(app, lambda: bool(win.scores), 60, pause_ms=25)
    return win


def _meta(app: Any, window: Any, tmp: Path) -> Any:
    """The meta-measures window run on the demo dataset, the noise map's column plotted and
    its maxEm cell opened."""
    from fminspect.gui.meta_view import MetaWindow

    c = window.model
    win: Any = MetaWindow(c.dataset, c.settings.params, inspector=window, cache=tmp / "meta.sqlite")
    win.show()
    done: list[int] = []
    win.finished_run.connect(lambda: done.append(1))
    win.run()
    _wait_until(app, lambda: bool(done), 600)
    headers = [win.table.horizontalHeaderItem(j).text() for j in range(win.table.columnCount())]
    column = next(j for j, h in enumerate(headers) if h.startswith("noise_map"))
    win._plot_column(column)
    win._cell_clicked(list(win.report.labels).index("maxEm"), column)
    return win


def _compare_dialog(tmp: Path, dataset: Any) -> Any:
    """The compare window on the demo data against a made-up paper's table: the S-measure as
    the MATLAB toolbox computes it, MAE as fminspect does, the mean F over eval-co-sod's 255
    thresholds, and one maxFm typed wrongly — with intervals and the tests of the table's
    orders (``fminspect compare --ci``)."""
    from fminspect.batch.runner import evaluate_datasets
    from fminspect.batch.significance import Setup
    from fminspect.batch.tasks import compare_task
    from fminspect.gui.dialogs.compare import CompareDialog
    from fminspect.pipeline.config import EvalConfig
    from fminspect.pipeline.conventions import convention

    store = tmp / "compare.sqlite"
    keys = ("Sm", "MAE", "maxFm", "meanFm255")
    ours = evaluate_datasets([dataset], EvalConfig(keys=keys), cache_path=store, progress=False)
    matlab = evaluate_datasets(
        [dataset],
        EvalConfig(convention("matlab").apply(), keys),
        cache_path=store,
        progress=False,
    )
    lines = ["method,S_alpha,MAE,maxF,meanF"]
    for i, (r, m) in enumerate(zip(ours.results, matlab.results, strict=True)):
        typo = 0.05 if i == 0 else 0.0
        lines.append(
            f"{r.method},{m.values['Sm']:.3f},{r.values['MAE']:.3f},"
            f"{r.values['maxFm'] + typo:.3f},{r.values['meanFm255']:.3f}"
        )
    table = tmp / "paper.csv"
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    comparison = compare_task(
        [dataset],
        table,
        EvalConfig().params,
        EvalConfig().interpolation,
        store,
        significance=Setup(resamples=500),
    )
    dialog = CompareDialog(comparison)
    dialog.show()
    return dialog


def _study_shots(app, tmp: Path, grab_window) -> None:  # type: ignore[no-untyped-def]
    """The voting window (both presentations) and the analysis window, on a study of the
    demo data whose votes come from *simulated* participants (fminspect rank simulate)."""
    from PySide6 import QtCore

    from fminspect.gui.analysis import AnalysisWindow
    from fminspect.gui.voting import VotingWindow
    from fminspect.io.discovery import discover
    from fminspect.io.resources import resource
    from fminspect.ranking.build import build_design, groups_from_dataset, score_maps
    from fminspect.ranking.simulate import SimulatedParticipant, simulate, strengths_by_position
    from fminspect.ranking.store import StudyStore

    datasets, _ = discover(resource("demo"))
    scores = score_maps(datasets, "Sm", tmp / "cache.sqlite")
    groups = groups_from_dataset(datasets[0], scores=scores[datasets[0].name], per_group=3)
    stores = {}
    for presentation in ("side_by_side", "overlay"):
        path = tmp / f"{presentation}.sqlite"
        design = build_design(
            "Demo study",
            groups,
            path,
            checks=4,
            repeats=3,
            seed=1,
            presentation=presentation,
            overlay_alpha=0.55,
            allow_ties=True,
        )
        stores[presentation] = StudyStore.create(path, design)
    store = stores["side_by_side"]
    truth = strengths_by_position(store, gap=1.5)
    for k in range(12):
        simulate(store, SimulatedParticipant(f"sim-{k + 1:02d}", truth, seed=k))
    simulate(store, SimulatedParticipant("sim-left", truth, left_bias=2.5, seed=40))
    simulate(store, SimulatedParticipant("sim-lapse", truth, lapse=0.8, seed=41))

    def voting(presentation: str):  # type: ignore[no-untyped-def]
        s = stores[presentation]
        simulate(s, SimulatedParticipant("guest", truth, seed=3), stop_after=7)
        w = VotingWindow(s, participant="guest", min_view_ms=0)
        w.show()
        w._resume()  # skip the "welcome back" page
        return w

    def analysis(tab: int):  # type: ignore[no-untyped-def]
        w = AnalysisWindow(store)
        w.exclude_failing.setChecked(True)
        w.rule.setCurrentIndex(w.rule.findData("bt"))
        w.p.setValue(0.75)
        w.show()
        done: list[int] = []
        w.agreement_ready.connect(lambda: done.append(1))
        for _ in range(2400):
            if done:
                break
            app.processEvents()
            QtCore.QThread.msleep(25)
        w.groups.selectRow(4)
        w.tabs.setCurrentIndex(tab)
        return w

    grab_window("voting", lambda: voting("side_by_side"), (1500, 950))
    grab_window("voting_overlay", lambda: voting("overlay"), (1500, 950))
    grab_window("analysis", lambda: analysis(0), (1500, 950))
    grab_window("analysis_measures", lambda: analysis(2), (1500, 950))
