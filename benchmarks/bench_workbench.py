"""The failure-case workbench at the scale of a real benchmark: 2,000 images × 40 methods.

    python benchmarks/bench_workbench.py [--images 2000] [--methods 40] [--root DIR]
        [--size 320x440] [--steps 20]

Generates (or takes, with ``--root``) a dataset like COD10K-test (``make_benchmark.py``),
runs ``fminspect eval ROOT --jobs 2`` on it once, and then measures, in the same run, what a
person waits for (absolute times: there is no reference to divide by; the issue's targets in
brackets):

1. in the window opened on ROOT after that eval (a fresh process, offscreen, 12 of the
   models shown, the measures eval computed): applying a filter (three kinds) and toggling
   a tag with the filter ``untagged`` on (≤ 100 ms each); the longest block of the GUI
   thread while tagging and walking (a 2 ms heartbeat; ≤ 50 ms); a walk step until every
   number of the shown models is on screen (≤ 150 ms), after a pause, with D held down
   (each step as soon as the last one is drawn) and 150 ms after the last; the scatter of
   every sample drawn (≤ 100 ms) and a rectangle's selection applied to the list
   (≤ 100 ms); the window's peak memory (≤ 1.5 GB);
2. ``fminspect qualitative``: 8 samples × 10 methods as PDF (≤ 5 s);
3. ``fminspect gallery``: 100 cases × 20 methods with 2 jobs (≤ 60 s) and its size
   (≤ 50 MB).

Nothing here asserts: it prints the figures measured in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

MEASURES = ["Sm", "MAE", "maxFm", "wFm"]


def _ms(seconds: list[float]) -> str:
    return f"median {statistics.median(seconds) * 1e3:.1f} ms, max {max(seconds) * 1e3:.1f} ms"


def window_run(root: str, steps: int, why: bool = False) -> dict[str, str | float]:
    """In this process: the window on ``root`` (scores stored by eval), measured."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtCore

    from fminspect.gui.app import application
    from fminspect.gui.main_window import InspectorWindow

    app = application()
    QtCore.qInstallMessageHandler(lambda *a: None)

    def run_for(seconds: float, until=lambda: False) -> None:  # type: ignore[no-untyped-def]
        loop = QtCore.QEventLoop()
        end = time.perf_counter() + seconds
        check = QtCore.QTimer()
        check.setInterval(10)
        check.timeout.connect(lambda: loop.quit() if until() or time.perf_counter() > end else None)
        check.start()
        loop.exec()
        check.stop()

    ini = Path(tempfile.mkdtemp()) / "settings.ini"
    window = InspectorWindow(settings=QtCore.QSettings(str(ini), QtCore.QSettings.Format.IniFormat))
    window.resize(1600, 1000)
    window.show()
    window.model.set_measures(MEASURES)  # eval's: its stored scores are read, none computed
    window.open_in_background(root)
    run_for(1200, lambda: window.model.sample is not None)
    matrix = window.browser.model.matrix
    run_for(1200, lambda: matrix.filled.all() and not window.model.service.running)
    run_for(1)
    model, browser, scatter = window.model, window.browser, window.scatter
    out: dict[str, str | float] = {
        "samples": len(matrix.samples),
        "methods": len(matrix.methods),
        "models shown": len(model.selection.shown),
    }
    a, b = model.selection.shown[:2]
    # filters
    times: dict[str, list[float]] = {}
    for text in (f"Sm[{a}] < 0.6", f"Sm[{a}] - Sm[{b}] < -0.05 and name ~ Crab", "cod10k=Aquatic"):
        for _ in range(5):
            browser.filter.setText(text)
            t = time.perf_counter()
            browser.apply_filter()
            times.setdefault("filter", []).append(time.perf_counter() - t)
            browser.filter.setText("")
            browser.apply_filter()
    out["filter applied"] = _ms(times["filter"])
    # heartbeat: the longest block while tagging and walking
    gaps: list[float] = []
    last = [time.perf_counter()]

    def beat() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    heartbeat = QtCore.QTimer()
    heartbeat.setInterval(2)
    heartbeat.timeout.connect(beat)
    samples: list[tuple[float, str]] = []
    watching = [why]
    if why:
        from bench_browser import _watch_blocks

        _watch_blocks(last, watching, samples)
    browser.filter.setText("untagged")
    browser.apply_filter()
    run_for(0.5)
    last[0] = time.perf_counter()
    heartbeat.start()
    tag_times, step_times = [], []
    toggled = []
    for _ in range(steps):
        run_for(0.3)
        toggled.append(model.requested)
        t = time.perf_counter()
        model.toggle_tag(1)  # written to disk, the list filtered again: the sample leaves it
        tag_times.append(time.perf_counter() - t)
        run_for(0.3)
        start = time.perf_counter()
        model.step(1)
        ahead = model.sample is not None and not model.busy  # shown from the read-ahead
        model.wait(60000)
        while window.drawing and time.perf_counter() - start < 60:
            app.processEvents()
            QtCore.QThread.msleep(1)
        step_times.append(time.perf_counter() - start)
        if why:
            print(
                f"step to {model.requested.name if model.requested else '-'}: "
                f"{step_times[-1] * 1e3:.0f} ms{'' if ahead else ' (not read ahead)'}",
                file=sys.stderr,
            )
    held, quick = [], []  # D pressed as soon as the last sample is drawn, or 150 ms later
    for i in range(2 * steps):
        if i >= steps:
            run_for(0.15)
        start = time.perf_counter()
        model.step(1)
        model.wait(60000)
        while window.drawing and time.perf_counter() - start < 60:
            app.processEvents()
            QtCore.QThread.msleep(1)
        (held if i < steps else quick).append(time.perf_counter() - start)
    heartbeat.stop()
    watching[0] = False
    for sample in toggled:  # the folder's tags as they were (a rerun walks the same cases)
        if sample is not None:
            model.cases.toggle(sample.dataset, sample.name, 1)
    for t, where in samples:
        print(f"block at {t:.3f}: {where}", file=sys.stderr)
    out["tag toggled (filter untagged on)"] = _ms(tag_times)
    out["walk step, every number shown"] = _ms(step_times)
    out["walk step, D held down"] = _ms(held)
    out["walk step, 150 ms after the last"] = _ms(quick)
    out["longest GUI block, tagging and walking"] = f"{max(gaps) * 1e3:.1f} ms"
    browser.filter.setText("")
    browser.apply_filter()
    # the scatter of every sample, and a rectangle's selection
    window.tabs.setCurrentIndex(2)
    run_for(0.5)
    scatter.a.setCurrentIndex(scatter.a.findData(a))
    scatter.b.setCurrentIndex(scatter.b.findData(b))
    draws, selections = [], []
    for _ in range(5):
        t = time.perf_counter()
        scatter.redraw()
        scatter.plot.viewport().repaint()
        draws.append(time.perf_counter() - t)
        t = time.perf_counter()
        scatter.select_rect(0.0, 0.6, 0.0, 0.6)
        selections.append(time.perf_counter() - t)
        scatter.clear.click()
        run_for(0.5)
    out["scatter points"] = len(scatter.data)
    out["scatter drawn"] = _ms(draws)
    out["selection into the list"] = _ms(selections)
    out["window peak memory"] = (
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )
    window.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--methods", type=int, default=40)
    ap.add_argument("--size", default="320x440", help="rows×cols of the generated images")
    ap.add_argument("--root", type=Path, help="an existing dataset (default: generate one)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument(
        "--cache", type=Path, help="keep eval's store here (a second run reads every score)"
    )
    ap.add_argument(
        "--why", action="store_true", help="print where the GUI thread was in its long blocks"
    )
    ap.add_argument("--window-run", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.window_run:
        print(json.dumps(window_run(args.window_run, args.steps, args.why)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        root = args.root
        if root is None:
            from make_benchmark import make_benchmark

            root = tmp_path / "Bench"
            h, w = (int(v) for v in args.size.split("x"))
            t = time.perf_counter()
            make_benchmark(root, images=args.images, methods=args.methods, size=(h, w))
            print(
                f"generated {args.images} × {args.methods} in {time.perf_counter() - t:.0f} s",
                file=sys.stderr,
            )
        keep = args.cache or tmp_path  # eval's outputs and store, and the user's cache
        env = {
            **os.environ,
            "FMINSPECT_CACHE_DIR": str(keep / "cache"),
            "FMINSPECT_DATA_DIR": str(tmp_path / "data"),
        }
        t = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "fminspect",
                "eval",
                str(root),
                "--out",
                str(keep / "out"),
                "--jobs",
                "2",
                "--quiet",
                "--no-plots",
                "--measures",
                *MEASURES,
            ],
            env=env,
            check=True,
        )
        print(f"eval ({', '.join(MEASURES)}): {time.perf_counter() - t:.0f} s", file=sys.stderr)
        shown = subprocess.run(
            [
                sys.executable,
                __file__,
                "--window-run",
                str(root),
                "--steps",
                str(args.steps),
                *(["--why"] if args.why else []),
            ],
            env={**env, "QT_QPA_PLATFORM": "offscreen"},
            capture_output=True,
            text=True,
            check=True,
        )
        if args.why:
            print(shown.stderr, file=sys.stderr)
        figures = json.loads(shown.stdout.strip().splitlines()[-1])
        print("the window, after eval")
        for k, v in figures.items():
            print(f"  {k:<40} {v}")
        from fminspect.batch.qualitative import QualitativeSpec, find_methods, make
        from fminspect.io.discovery import discover

        datasets, _ = discover(root)
        ds = datasets[0]
        methods = find_methods(datasets, [])[:10]
        picked = ds.samples[:: max(1, len(ds.samples) // 8)][:8]
        t = time.perf_counter()
        made = make(picked, QualitativeSpec(methods=methods), tmp_path / "fig.pdf")
        pdf_s = time.perf_counter() - t
        size = made.written[0].stat().st_size / 1e6
        print("fminspect qualitative")
        print(f"  {'8 samples × 10 methods, PDF':<40} {pdf_s:.2f} s, {size:.1f} MB")
        t = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "fminspect",
                "gallery",
                str(root),
                "--out",
                str(tmp_path / "site"),
                "--count",
                "100",
                "--jobs",
                "2",
                "--measures",
                *MEASURES,
                "--methods",
                *ds.method_names[:20],
            ],
            env=env,
            check=True,
            capture_output=True,
        )
        gallery_s = time.perf_counter() - t
        total = sum(p.stat().st_size for p in (tmp_path / "site").rglob("*") if p.is_file())
        print("fminspect gallery")
        print(f"  {'100 cases × 20 methods, 2 jobs':<40} {gallery_s:.1f} s, {total / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
