"""Rendering the curve plots of a batch run (PNG and PDF), in this process or in another.

Importing Matplotlib and rendering six files takes about two seconds, most of a batch run's
fixed cost. :class:`PlotProcess` starts a separate process at the beginning of a run, which
imports Matplotlib while the images are being scored and renders the figures at the end.
The figures are plain data (:class:`Figure`), so the same function draws them either way
and the files are byte-identical. This module imports nothing heavy at import time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


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
    """Import Matplotlib with its non-interactive backend (the slow part of plotting)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot


def render(figures: Sequence[Figure], folder: Path | str) -> None:
    """Write every figure into ``folder`` as PNG and PDF, with no dates in the metadata."""
    if not figures:
        return
    import_matplotlib()
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    # 20 distinct colours (tab20's dark shades, then its light ones), and a new line style
    # for every 20 methods, so that no two curves look alike
    tab20 = plt.get_cmap("tab20").colors
    colours = list(tab20[0::2]) + list(tab20[1::2])
    styles = ("-", "--", "-.", ":")
    for f in figures:
        fig, ax = plt.subplots(figsize=(6.4, 4), dpi=150)
        fig.subplots_adjust(left=0.1, right=0.74, bottom=0.12, top=0.92)
        for i, line in enumerate(f.lines):
            ax.plot(
                line.x,
                line.y,
                lw=1.5,
                color=colours[i % len(colours)],
                linestyle=styles[(i // len(colours)) % len(styles)],
                label=line.label,
            )
        ax.set_xlim(*f.xlim)
        ax.set_ylim(*f.ylim)
        ax.set_xlabel(f.xlabel)
        ax.set_ylabel(f.ylabel)
        ax.set_title(f.title, fontsize=10)
        ax.grid(alpha=0.3)
        # beside the axes, never over the curves
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        fig.savefig(folder / f"{f.stem}.png", metadata={"Software": None})
        fig.savefig(
            folder / f"{f.stem}.pdf",
            metadata={"CreationDate": None, "Producer": None, "Creator": None},
        )
        plt.close(fig)


class PlotError(RuntimeError):
    """The plotting process could not write the plots (the message says why)."""


class PlotProcess:
    """A child process (``python -m fminspect.batch.plots``) that imports Matplotlib now and
    renders figures later.

    The figures travel as JSON on its standard input (floats round-trip exactly), so the
    files are the same as those :func:`render` writes here; nothing is pickled and nothing
    depends on how the caller's ``__main__`` is written. The child sees the parent's module
    search path, not the current directory. One :meth:`render` call per process; what the
    child printed (Matplotlib's warnings) is kept in :attr:`messages`.
    """

    def __init__(self) -> None:
        env = {
            **os.environ,
            "PYTHONIOENCODING": "utf-8",
            "PYTHONSAFEPATH": "1",  # -m would otherwise put the current directory first
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-m", "fminspect.batch.plots"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.messages: list[str] = []

    def render(self, figures: Sequence[Figure], folder: Path | str) -> None:
        """Render ``figures`` into ``folder``; raises :class:`PlotError` with the child's last
        message if it fails."""
        proc = self._proc
        if proc is None:
            raise PlotError("this PlotProcess has already rendered or been closed")
        payload = {"folder": str(folder), "figures": [_to_json(f) for f in figures]}
        _, err = proc.communicate(json.dumps(payload).encode())
        self._proc = None  # finished (if communicate raised, close() still stops it)
        self.messages = err.decode("utf-8", errors="replace").strip().splitlines()
        if proc.returncode != 0:
            last = self.messages[-1] if self.messages else f"exit status {proc.returncode}"
            raise PlotError(f"the plotting process failed: {last}")

    def close(self) -> None:
        """Stop the process if it has not rendered (e.g. the run failed): an empty input
        makes it exit by itself; it is killed if it has not within 5 s."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()

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
        render([_from_json(f) for f in job["figures"]], job["folder"])
