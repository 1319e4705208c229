"""Responsiveness of the inspector: parameter change → table shows every new value.

    python benchmarks/bench_gui.py [--repeats 20] [--models 5] [--size 400]

Offscreen window on a generated sample (SIZE² with an image and MODELS models). After the
first full scoring (which includes the camouflage degree, excluded as the issue asks), each
repeat changes one parameter to a value never used before (so no cache can answer) and
measures, on the GUI thread:

* latency: from the change (the spin box / check box emitting) to the table holding every
  model's new values (the window draws them a moment after the controller's
  ``results_complete``), including the 30 ms debounce;
* stall: the longest gap between ticks of a 2 ms heartbeat timer while that happens.

Three kinds of change: β² (F-measure family only), α (S-measure only) and the min–max
stretch (every measure of every model recomputed: the controller's result cache is emptied
before each repeat, or it would update a cached result under the same stretch setting and
recompute the F-measure family only). β² and α go through the 30 ms debounce of the spin
boxes; the stretch check box starts scoring at once. Targets (issue #5): median latency
< 100 ms, longest stall < 30 ms. ``--verbose`` prints every repeat.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6 import QtCore

from fminspect.gui.app import application
from fminspect.gui.main_window import InspectorWindow
from tests.datasets import make_dataset

ALPHAS = [round(0.01 * k, 2) for k in range(1, 100) if k != 50]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--models", type=int, default=5)
    ap.add_argument("--size", type=int, default=400)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    app = application()
    with tempfile.TemporaryDirectory() as tmp:
        root = make_dataset(
            Path(tmp) / "G",
            n_images=1,
            size=(args.size, args.size),
            methods=tuple(f"M{i}" for i in range(args.models)),
            seed=11,
        )
        settings = QtCore.QSettings(str(Path(tmp) / "s.ini"), QtCore.QSettings.Format.IniFormat)
        w = InspectorWindow(settings=settings)
        w.resize(1500, 950)
        w.show()
        t = time.perf_counter()
        w.open_path(root)
        w.model.wait(120000)
        print(
            f"first scoring incl. the camouflage degree: {(time.perf_counter() - t) * 1e3:.0f} ms "
            f"({args.models} models, {args.size}×{args.size}, with image)"
        )
        beats: list[float] = []
        heart = QtCore.QTimer()
        heart.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
        heart.timeout.connect(lambda: beats.append(time.perf_counter()))
        heart.start(2)
        done: list[float] = []
        complete: list[bool] = []
        w.model.results_complete.connect(lambda: complete.append(True))
        release = w.drawer._release_held

        def released() -> None:
            """The window draws the table with every new value (a moment after the
            controller completed the request)."""
            release()
            if complete:
                done.append(time.perf_counter())

        w.drawer._release_held = released  # type: ignore[method-assign]

        def measure(change) -> tuple[float, float]:  # type: ignore[no-untyped-def]
            done.clear()
            complete.clear()
            beats.clear()
            t0 = time.perf_counter()
            change()
            while not done:
                app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 5)
                if time.perf_counter() - t0 > 30:
                    raise RuntimeError("no results 30 s after the change (was it a change?)")
            for _ in range(5):  # let the table repaint
                app.processEvents()
            latency = (done[-1] - t0) * 1e3
            ticks = [t0, *beats, time.perf_counter()]
            stall = max(b - a for a, b in itertools.pairwise(ticks)) * 1e3
            return latency, stall

        kinds = {
            "β² (F family)": lambda i: w.params.beta2.setValue(0.3 + 0.05 * (i + 1)),
            # α from 0.01 to 0.99, skipping the default 0.5: a new value every repeat
            "α (S-measure)": lambda i: w.params.alpha.setValue(ALPHAS[i % len(ALPHAS)]),
            "stretch (everything)": lambda i: w.params.stretch.toggle(),
        }
        for name, change in kinds.items():
            lat, stall = [], []
            for i in range(args.repeats):
                if name.startswith("stretch"):
                    # a never-seen setting each time: stretch toggles while β² moves by 0.01
                    w.params.beta2.blockSignals(True)
                    w.params.beta2.setValue(w.params.beta2.value() + 0.01)
                    w.params.beta2.blockSignals(False)
                    w.model._cache.clear()  # no cached result to update (see above)
                a, b = measure(lambda i=i, change=change: change(i))
                lat.append(a)
                if args.verbose:
                    print(f"    {name} #{i}: latency {a:.1f} ms, stall {b:.1f} ms")
                stall.append(b)
            print(
                f"{name:<22} latency median {statistics.median(lat):6.1f} ms "
                f"(max {max(lat):6.1f})   longest GUI stall {max(stall):5.1f} ms "
                f"(median {statistics.median(stall):4.1f})"
            )
        heart.stop()
        w.close()


if __name__ == "__main__":
    main()
