"""Rendering the curve plots of a batch run (PNG and PDF), in this process or in another.

Importing Matplotlib and rendering six files takes about two seconds, most of a batch run's
fixed cost. :class:`PlotProcess` starts a separate process at the beginning of a run, which
imports Matplotlib while the images are being scored and renders the figures at the end,
while the tables are written; on Linux it forks, and the two copies draw half of the files
each (0.8 s → 0.5 s for six files on two cores). The figures are plain data
(:class:`Figure`), so the same function draws them either way and the files are
byte-identical. This module imports nothing heavy at import time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fminspect.io.atomic import replacing


@dataclass(frozen=True, slots=True)
class CurvePlot:
    """One kind of curve plot: which stored mean curve gives x (``None``: the threshold,
    0..255 over 255) and which gives y."""

    tag: str
    title: str
    xlabel: str
    ylabel: str
    x: str | None
    y: str

    def xy(self, curves: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
        """This plot's line from a method's mean curves (``None`` if they lack one)."""
        if self.y not in curves or (self.x is not None and self.x not in curves):
            return None
        y = np.asarray(curves[self.y], float)
        x = np.arange(y.size) / (y.size - 1) if self.x is None else curves[self.x]
        return np.asarray(x, float), y


#: Every curve plot the batch outputs draw, in file order; the F-measure title is formatted
#: with ``beta2``. PR and ROC are traced over the thresholds (pysodmetrics' 256 bins).
CURVE_PLOTS = (
    CurvePlot("pr", "Precision–recall", "Recall", "Precision", "Recall", "Precision"),
    CurvePlot(
        "roc",
        "ROC (TPR = recall against FPR)",
        "False positive rate",
        "True positive rate",
        "FPR",
        "Recall",
    ),
    CurvePlot("fm", "F-measure (β²={beta2:g})", "threshold", "F-measure", None, "Fm"),
    CurvePlot("em", "E-measure", "threshold", "E-measure", None, "Em"),
    CurvePlot("iou", "IoU", "threshold", "IoU", None, "IoU"),
    CurvePlot("dice", "Dice", "threshold", "Dice", None, "Dice"),
)
CURVE_PLOTS_BY_TAG = {p.tag: p for p in CURVE_PLOTS}

#: Ten colours: Matplotlib's tab10 with its red given to highlighted methods (see
#: :func:`line_style`) and a near-black in its place.
COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#222222",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
HIGHLIGHT_COLOURS = ("#d62728", "#000000", "#0b3d91")
MARKERS = ("o", "s", "^", "v", "D", "<", ">", "p", "h", "X")
LINE_STYLES = ("-", "--", ":", "-.")
#: The distance between two markers of a line (fraction of the axes' diagonal).
MARK_EVERY = 0.1


@dataclass(frozen=True, slots=True)
class LineStyle:
    color: str
    linestyle: str
    marker: str
    #: where the markers start along the line (fraction of the axes' diagonal), so that
    #: neighbouring methods' markers do not sit on one another
    mark_offset: float
    linewidth: float
    zorder: int
    #: filled markers: methods 40 to 79 (0 to 39 have hollow ones)
    filled: bool = False


def line_style(i: int, *, highlighted: int | None = None, scale: float = 1.0) -> LineStyle:
    """The look of the ``i``-th method's line, or of the ``highlighted``-th highlighted
    method's.

    Method ``i`` has colour ``i mod 10``, the marker of the same index and line style
    ``i div 10`` (mod 4): 40 methods are told apart by colour and line style, and also by
    line style and marker alone, which is what remains in greyscale; methods 40 to 79 repeat
    those with filled markers. Highlighted methods are thicker, solid, drawn on top, in red
    (then black, then dark blue), markerless.
    """
    if highlighted is not None:
        colour = HIGHLIGHT_COLOURS[highlighted % len(HIGHLIGHT_COLOURS)]
        style = LINE_STYLES[(highlighted // len(HIGHLIGHT_COLOURS)) % len(LINE_STYLES)]
        return LineStyle(colour, style, "", 0.0, 2.4 * scale, 10 + highlighted)
    k = i % len(COLOURS)
    return LineStyle(
        COLOURS[k],
        LINE_STYLES[(i // len(COLOURS)) % len(LINE_STYLES)],
        MARKERS[k],
        (k / len(COLOURS)) * MARK_EVERY,
        1.2 * scale,
        2,
        filled=(i // (len(COLOURS) * len(LINE_STYLES))) % 2 == 1,
    )


def plot_line(ax: Any, x: np.ndarray, y: np.ndarray, label: str, style: LineStyle) -> Any:
    """Draw one method's line on a Matplotlib axes in ``style``."""
    (artist,) = ax.plot(
        x,
        y,
        label=label,
        color=style.color,
        linestyle=style.linestyle,
        linewidth=style.linewidth,
        marker=style.marker or None,
        markevery=(style.mark_offset, MARK_EVERY) if style.marker else None,
        markersize=4,
        markerfacecolor=style.color if style.filled else "none",
        markeredgewidth=1.0,
        zorder=style.zorder,
    )
    return artist


@dataclass(frozen=True, slots=True)
class Line:
    label: str
    x: np.ndarray
    y: np.ndarray


@dataclass(frozen=True, slots=True)
class Figure:
    """One plot: written as ``<stem>.png`` and ``<stem>.pdf``."""

    stem: str
    title: str
    xlabel: str
    ylabel: str
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    lines: tuple[Line, ...]


def import_matplotlib() -> None:
    """Import Matplotlib with its non-interactive backend and its PDF backend (otherwise
    imported by the first PDF written), the slow part of plotting."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.backends.backend_pdf
    import matplotlib.pyplot


def _formats(figures: Sequence[Figure], part: int, parts: int) -> list[tuple[str, ...]]:
    """The formats of each figure that part ``part`` of ``parts`` writes.

    The files are dealt out in turn, each figure's PNG and PDF in alternating order, so that
    two parts get about the same work (a PNG costs more to draw than a PDF).
    """
    files = []
    for k in range(len(figures)):
        files += [(k, "png"), (k, "pdf")] if k % 2 == 0 else [(k, "pdf"), (k, "png")]
    mine = files[part::parts]
    return [tuple(fmt for j, fmt in mine if j == k) for k in range(len(figures))]


def render(figures: Sequence[Figure], folder: Path | str, *, part: int = 0, parts: int = 1) -> None:
    """Write every figure into ``folder`` as PNG and PDF, with no dates in the metadata; with
    ``parts`` > 1 only this ``part``'s share of the files (see :func:`_formats`)."""
    if not figures:
        return
    import_matplotlib()
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    metadata = {
        "png": {"Software": None},
        "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
    }
    for f, formats in zip(figures, _formats(figures, part, parts), strict=True):
        if not formats:
            continue
        fig, ax = plt.subplots(figsize=(6.4, 4), dpi=150)
        fig.subplots_adjust(left=0.1, right=0.74, bottom=0.12, top=0.92)
        for i, line in enumerate(f.lines):
            plot_line(ax, line.x, line.y, line.label, line_style(i))
        ax.set_xlim(*f.xlim)
        ax.set_ylim(*f.ylim)
        ax.set_xlabel(f.xlabel)
        ax.set_ylabel(f.ylabel)
        ax.set_title(f.title, fontsize=10)
        ax.grid(alpha=0.3)
        # beside the axes, never over the curves
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        for fmt in formats:
            with replacing(folder / f"{f.stem}.{fmt}") as tmp:
                fig.savefig(tmp, format=fmt, metadata=metadata[fmt])
        plt.close(fig)


def _die_with_parent(parent: int) -> None:
    """Have Linux kill this process when ``parent`` exits, so that a killed plotting process
    takes its forked half with it."""
    import contextlib
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):  # a libc without prctl
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent was gone before that
        os._exit(1)


def render_in_two(figures: Sequence[Figure], folder: Path | str) -> None:
    """:func:`render`, with half of the files written by a forked copy of this process.

    Drawing is most of a batch run's fixed cost, and both cores are idle when the plots are
    drawn at its end. Only on Linux, in the plotting process (whose only other threads are
    OpenBLAS's, which handles fork itself); elsewhere, or if the fork fails, the files are
    written here one after another. An error in the copy is raised here with its message.
    """
    if not figures or not sys.platform.startswith("linux"):
        render(figures, folder)
        return
    import_matplotlib()  # before forking: both halves use it
    Path(folder).mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        render(figures, folder)
        return
    if pid == 0:  # the copy: write its half, report an error to the parent, never return
        os.close(read_end)
        code = 1
        try:
            _die_with_parent(parent)
            render(figures, folder, part=1, parts=2)
            code = 0
        except BaseException as exc:
            import traceback

            traceback.print_exc()
            # one short line: the pipe holds it even before the parent reads
            os.write(write_end, f"{type(exc).__name__}: {exc}"[:2000].encode("utf-8", "replace"))
        finally:
            sys.stderr.flush()
            os._exit(code)
    os.close(write_end)
    try:
        render(figures, folder, part=0, parts=2)
    finally:
        _, status = os.waitpid(pid, 0)
        with os.fdopen(read_end, "rb") as fh:
            why = fh.read().decode("utf-8", "replace").strip()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(
            f"the forked plotting process failed: {why or f'exit status {code}'} (its half of "
            "the files may be missing)"
        )


class PlotError(RuntimeError):
    """The plotting process could not write the plots (the message says why)."""


class PlotProcess:
    """A child process (``python -m fminspect.batch.plots``) that imports Matplotlib now and
    renders figures later.

    The figures travel as JSON on its standard input (floats round-trip exactly), so the
    files are the same as those :func:`render` writes here; nothing is pickled and nothing
    depends on how the caller's ``__main__`` is written. The child sees the parent's module
    search path, not the current directory. One :meth:`render` (or :meth:`start`, other work,
    then :meth:`finish`) per process; what the child printed (Matplotlib's warnings) is kept
    in :attr:`messages`.
    """

    def __init__(self) -> None:
        env = {
            **os.environ,
            "PYTHONIOENCODING": "utf-8",
            "PYTHONSAFEPATH": "1",  # -m would otherwise put the current directory first
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(var, "1")  # drawing needs no BLAS threads (and it forks)
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-m", "fminspect.batch.plots"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.messages: list[str] = []
        self._started = False
        self._sender: threading.Thread | None = None

    def render(self, figures: Sequence[Figure], folder: Path | str) -> None:
        """Render ``figures`` into ``folder``; raises :class:`PlotError` with the child's last
        message if it fails."""
        self.start(figures, folder)
        self.finish()

    def start(self, figures: Sequence[Figure], folder: Path | str) -> None:
        """Send the figures to the child, which starts drawing them; :meth:`finish` waits."""
        proc = self._proc
        if proc is None or self._started:
            raise PlotError("this PlotProcess has already rendered or been closed")
        payload = {"folder": str(folder), "figures": [_to_json(f) for f in figures]}
        data = json.dumps(payload).encode()
        stdin = proc.stdin
        assert stdin is not None

        def send() -> None:  # blocks while the child is still importing Matplotlib
            try:
                stdin.write(data)
                stdin.close()
            except OSError:  # the child has died: finish() reports what it said
                pass

        self._started = True
        self._sender = threading.Thread(target=send, daemon=True)
        self._sender.start()

    def finish(self) -> None:
        """Wait for the files sent by :meth:`start`; raises :class:`PlotError` with the
        child's last message if it failed."""
        proc = self._proc
        if proc is None or not self._started:
            raise PlotError("nothing is being rendered")
        assert proc.stderr is not None
        err = proc.stderr.read()  # until the child exits
        proc.wait()
        if self._sender is not None:
            self._sender.join()
        proc.stderr.close()
        self._proc = None
        self.messages = err.decode("utf-8", errors="replace").strip().splitlines()
        if proc.returncode != 0:
            last = self.messages[-1] if self.messages else f"exit status {proc.returncode}"
            raise PlotError(f"the plotting process failed: {last}")

    def close(self) -> None:
        """Stop the process if it has not rendered (e.g. the run failed): an empty input
        makes it exit by itself, figures already sent are finished; it is killed if it has
        not exited within 5 s."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if self._started:  # input sent and closed: let it finish drawing
                proc.wait(timeout=5)
            else:
                proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        finally:
            if self._sender is not None:
                self._sender.join()
            if proc.stderr is not None:
                proc.stderr.close()

    def __enter__(self) -> PlotProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _to_json(f: Figure) -> dict[str, Any]:
    return {
        "stem": f.stem,
        "title": f.title,
        "xlabel": f.xlabel,
        "ylabel": f.ylabel,
        "xlim": list(f.xlim),
        "ylim": list(f.ylim),
        "lines": [{"label": ln.label, "x": ln.x.tolist(), "y": ln.y.tolist()} for ln in f.lines],
    }


def _from_json(d: dict[str, Any]) -> Figure:
    return Figure(
        d["stem"],
        d["title"],
        d["xlabel"],
        d["ylabel"],
        (d["xlim"][0], d["xlim"][1]),
        (d["ylim"][0], d["ylim"][1]),
        tuple(
            Line(ln["label"], np.asarray(ln["x"], float), np.asarray(ln["y"], float))
            for ln in d["lines"]
        ),
    )


if __name__ == "__main__":
    import_matplotlib()
    job = json.loads(sys.stdin.buffer.read() or b"null")
    if job is not None:
        render_in_two([_from_json(f) for f in job["figures"]], job["folder"])
    # the files are closed; skip tearing down Matplotlib's modules (~0.1 s the parent waits)
    sys.stderr.flush()
    os._exit(0)
