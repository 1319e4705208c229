"""Curve figures for a paper from ``fminspect eval`` results: one file per kind of curve,
one panel per dataset, one shared legend.

The curves are the mean curves ``eval`` wrote to ``curves.csv`` (pysodmetrics' 256
thresholds): precision–recall, ROC, and F-measure, E-measure, IoU and Dice against the
threshold (:data:`fminspect.batch.plots.CURVE_PLOTS`). Several results folders merge as for
tables (:func:`fminspect.batch.tables.load`, which refuses folders evaluated differently).

Layout (:class:`FigureSpec`): the datasets as a grid of panels (``columns`` per row), with a
shared y axis or not; one legend for the whole figure, below or beside the grid, in a file
of its own, or none; method aliases and dataset aliases (a PySODEvalToolkit alias file's
``dataset`` section also chooses and orders the panels, as its ``plot.py`` does); highlighted
methods ("ours") thick, red, on top and first in the legend; a Matplotlib style file (a YAML
mapping of rcParams, as PySODEvalToolkit's ``--style-cfg`` files are); PDF, SVG and PNG.
Lines are told apart by colour, line style and marker for up to 40 methods, also in
greyscale (:func:`fminspect.batch.plots.line_style`). Axis ranges fit the curves unless
given. Files carry no dates, so the same results give the same bytes.

A method evaluated on fewer images than the dataset has is marked † in the legend (and
:attr:`Figures.notes` says which), as the tables do.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fminspect.batch import tables
from fminspect.batch.plots import CURVE_PLOTS_BY_TAG, CurvePlot, line_style, plot_line
from fminspect.io.atomic import replacing
from fminspect.io.discovery import natural_key

#: Formats written, and the default.
FORMATS = ("pdf", "svg", "png")
DEFAULT_CURVES = ("pr", "fm", "em")
#: The measures whose evaluation stores each kind of curve.
NEEDS = {
    "pr": "an F-measure key (maxFm, meanFm or adpFm)",
    "fm": "an F-measure key (maxFm, meanFm or adpFm)",
    "em": "an E-measure key (maxEm, meanEm or adpEm)",
    "iou": "an IoU key (maxIoU, meanIoU)",
    "dice": "a Dice key (maxDice, meanDice)",
    "roc": "a confusion-count key (maxFm, maxIoU, …)",
}
LEGENDS = ("bottom", "right", "separate", "none")
#: PNG resolution when neither the options nor the style file give one.
DEFAULT_DPI = 200
#: Largest style file read (bytes).
MAX_STYLE_FILE = 1 << 20
#: Size of one panel in inches when the style file does not set ``figure.figsize``.
PANEL_SIZE = (3.3, 3.0)


class FigureError(ValueError):
    """Results or options that cannot make the figures; the message says which and why."""


@dataclass(frozen=True, slots=True)
class FigureSpec:
    """What the figures show and how (see the module notes)."""

    curves: tuple[str, ...] = DEFAULT_CURVES
    methods: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)
    dataset_aliases: Mapping[str, str] = field(default_factory=dict)
    highlight: tuple[str, ...] = ()
    columns: int = 0  # 0: every dataset in one row, up to 4
    legend: str = "bottom"
    legend_columns: int = 0  # 0: as many as fit the figure's width
    sharey: bool = False
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    #: False: a kind of curve the results lack is left out with a note (the default curves);
    #: True: it is an error (curves asked for by name)
    strict: bool = True
    formats: tuple[str, ...] = ()  # (): the style's savefig.format, else PDF and PNG
    dpi: int = 0  # PNG resolution; 0: the style's savefig.dpi, else DEFAULT_DPI
    style: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Curves:
    """Mean curves of one or more results folders: ``{dataset: {method: {curve: y}}}``,
    with the folders' merged :class:`~fminspect.batch.tables.Results`."""

    results: tables.Results
    curves: dict[str, dict[str, dict[str, np.ndarray]]]


def load(folders: Iterable[Path | str]) -> Curves:
    """Read the results folders' ``results.json`` (merged as for tables) and ``curves.csv``."""
    paths = [Path(f) for f in folders]
    try:
        results = tables.load(paths)
    except tables.TableError as exc:
        raise FigureError(str(exc)) from None
    curves: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    for folder in paths:
        path = (folder if folder.is_dir() else folder.parent) / "curves.csv"
        rows: dict[tuple[str, str, str], dict[int, float]] = {}
        try:
            with open(path, newline="", encoding="utf-8") as fh:
                for row in csv.DictReader(fh):
                    key = (row["dataset"], row["method"], row["curve"])
                    rows.setdefault(key, {})[int(row["threshold"])] = float(row["value"])
        except FileNotFoundError:
            raise FigureError(f"{path}: not found (the results folder's mean curves)") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise FigureError(f"{path}: not an fminspect curves.csv ({exc})") from None
        for (ds, method, curve), values in rows.items():
            n = max(values) + 1
            if sorted(values) != list(range(n)):
                raise FigureError(f"{path}: the {curve} curve of {method} on {ds} has gaps")
            y = np.array([values[t] for t in range(n)], float)
            curves.setdefault(ds, {}).setdefault(method, {}).setdefault(curve, y)
    return Curves(results, curves)


def read_style(path: Path | str) -> dict[str, Any]:
    """Matplotlib rcParams from a YAML (or JSON) mapping, e.g. PySODEvalToolkit's
    ``single_row_style.yml``; every key and value is checked by Matplotlib itself."""
    import yaml

    from fminspect.io.aliases import yaml_problem

    path = Path(path)
    try:
        if path.stat().st_size > MAX_STYLE_FILE:
            raise FigureError(f"{path}: too large for a style file")
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise FigureError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FigureError(f"{path}: cannot be read ({exc})") from None
    except yaml.YAMLError as exc:
        raise FigureError(f"{path}: not valid YAML ({yaml_problem(exc)})") from None
    if data is None:
        return {}
    return checked_style(data, str(path))


def checked_style(data: object, source: str) -> dict[str, Any]:
    """``data`` as Matplotlib rcParams, each key and value checked by Matplotlib itself;
    :class:`FigureError` names ``source`` (a file, or the API's argument)."""
    if not isinstance(data, Mapping):
        raise FigureError(f"{source}: expected a mapping of Matplotlib rcParams")
    import_matplotlib()
    import matplotlib

    style: dict[str, Any] = {}
    params: Any = matplotlib.rcParams  # typed with its literal keys; these are checked here
    with matplotlib.rc_context():
        for key, value in data.items():
            try:
                params[str(key)] = value
            except KeyError:
                raise FigureError(f"{source}: {key!r} is not a Matplotlib rcParam") from None
            except (ValueError, TypeError) as exc:
                raise FigureError(f"{source}: {key}: {exc}") from None
            style[str(key)] = value
    return style


@dataclass(frozen=True, slots=True)
class Panel:
    dataset: str
    title: str
    lines: tuple[tuple[str, np.ndarray, np.ndarray], ...]  # (method, x, y)


@dataclass(frozen=True, slots=True)
class Plan:
    """One figure: a kind of curve over the datasets' panels."""

    plot: CurvePlot
    panels: tuple[Panel, ...]
    methods: tuple[str, ...]  # legend order: highlighted first, then the rest
    labels: Mapping[str, str]
    rows: int
    columns: int
    xlim: tuple[float, float]
    ylims: tuple[tuple[float, float], ...]  # per panel


@dataclass(frozen=True, slots=True)
class Figures:
    plans: tuple[Plan, ...]
    #: what a reader of the figures must know (methods marked †, curves missing)
    notes: tuple[str, ...]


def _names(what: str, names: Sequence[str]) -> str:
    """ "method A" / "methods A, B"."""
    return f"{what}{'' if len(names) == 1 else 's'} {', '.join(names)}"


def _axis(values: Sequence[np.ndarray], margin: float = 0.03) -> tuple[float, float]:
    finite = [v[np.isfinite(v)] for v in values]
    finite = [v for v in finite if v.size]
    if not finite:
        return 0.0, 1.0
    lo = min(float(v.min()) for v in finite)
    hi = max(float(v.max()) for v in finite)
    pad = max((hi - lo) * margin, 1e-3)
    return max(lo - pad, 0.0), min(hi + pad, 1.02)


def plan(data: Curves, spec: FigureSpec) -> Figures:
    """What to draw (see the module notes); :class:`FigureError` for unknown names."""
    unknown = [c for c in spec.curves if c not in CURVE_PLOTS_BY_TAG]
    if unknown:
        raise FigureError(
            f"unknown {_names('curve', unknown)} (choose from {', '.join(CURVE_PLOTS_BY_TAG)})"
        )
    datasets = _datasets(data, spec)
    methods = _methods(data, spec, datasets)
    highlight = list(dict.fromkeys(spec.highlight))
    order = highlight + [m for m in methods if m not in highlight]
    columns = spec.columns or min(len(datasets), 4)
    rows = math.ceil(len(datasets) / columns)
    notes: list[str] = []
    if len(order) - len(highlight) > 40:
        notes.append(
            f"{len(order) - len(highlight)} methods: beyond 40, lines repeat colour and line "
            "style with filled markers — choose fewer with --methods for a readable figure"
        )
    labels = _labels(data, spec, datasets, methods, order, notes)
    plans = []
    for tag in spec.curves:
        plot = CURVE_PLOTS_BY_TAG[tag]
        panels = _panels(data, spec, plot, datasets, order, notes)
        if not any(p.lines for p in panels):
            message = (
                f"no {tag} curves in these results: evaluate with {NEEDS[tag]} among the measures"
            )
            if spec.strict:
                raise FigureError(message)
            notes.append(message)
            continue
        xlim, ylims = _limits(spec, plot, panels)
        plans.append(Plan(plot, panels, tuple(order), labels, rows, columns, xlim, ylims))
    if not plans:
        raise FigureError("; ".join(n for n in notes if n.startswith("no ")))
    return Figures(tuple(plans), tuple(dict.fromkeys(notes)))


def _datasets(data: Curves, spec: FigureSpec) -> list[str]:
    """The datasets drawn, in their order: given, the alias file's, or all of them."""
    available = list(data.curves)
    if not available:
        raise FigureError("these results hold no curves (no dataset was evaluated)")
    if spec.datasets:
        datasets = list(dict.fromkeys(spec.datasets))
    elif spec.dataset_aliases:  # a PySODEvalToolkit alias file: its datasets, in its order
        datasets = [d for d in spec.dataset_aliases if d in data.curves]
        if not datasets:
            raise FigureError(
                "none of the alias file's datasets "
                f"({', '.join(spec.dataset_aliases)}) is in these results "
                f"({', '.join(available)})"
            )
    else:
        datasets = sorted(available, key=natural_key)
    missing = [d for d in datasets if d not in data.curves]
    if missing:
        raise FigureError(
            f"no curves for {_names('dataset', missing)} in these results "
            f"(they have {', '.join(available) or 'none'})"
        )
    return datasets


def _methods(data: Curves, spec: FigureSpec, datasets: list[str]) -> list[str]:
    """The methods drawn: given, or every one with curves on the datasets."""
    every = {m for d in datasets for m in data.curves[d]}
    if spec.methods:
        methods = list(dict.fromkeys(spec.methods))
        absent = [m for m in methods if m not in every]
        if absent:
            raise FigureError(f"no curves for {_names('method', absent)} in these results")
    else:
        methods = sorted(every, key=natural_key)
    absent = [m for m in spec.highlight if m not in methods]
    if absent:
        raise FigureError(
            f"{_names('highlighted method', absent)} {'is' if len(absent) == 1 else 'are'} "
            "not among the methods drawn "
            "(give them in --methods too)"
        )
    return methods


def _labels(
    data: Curves,
    spec: FigureSpec,
    datasets: list[str],
    methods: list[str],
    order: list[str],
    notes: list[str],
) -> dict[str, str]:
    """The legend's labels: aliases, with † (and a note) for a method not evaluated on every
    image of a dataset."""
    incomplete: dict[str, list[str]] = {}
    for d in datasets:
        for m in methods:
            info = data.results.datasets.get(d, {}).get(m)
            if info is not None and not info["complete"]:
                incomplete.setdefault(m, []).append(d)
    for m, ds in incomplete.items():
        notes.append(f"† {m} was not evaluated on every image of {', '.join(ds)}")
    return {m: spec.aliases.get(m, m) + (" †" if m in incomplete else "") for m in order}


def _panels(
    data: Curves,
    spec: FigureSpec,
    plot: CurvePlot,
    datasets: list[str],
    order: list[str],
    notes: list[str],
) -> tuple[Panel, ...]:
    """One panel per dataset with a line per method that has this curve (a note for those
    that have not)."""
    panels = []
    for d in datasets:
        lines = []
        for m in order:
            xy = plot.xy(data.curves[d].get(m, {}))
            if xy is not None:
                lines.append((m, *xy))
        lacking = [m for m in order if m in data.curves[d] and plot.xy(data.curves[d][m]) is None]
        if lacking:
            notes.append(f"{plot.tag}: no {plot.ylabel} curve for {', '.join(lacking)} on {d}")
        panels.append(Panel(d, spec.dataset_aliases.get(d, d), tuple(lines)))
    return tuple(panels)


def _limits(
    spec: FigureSpec, plot: CurvePlot, panels: tuple[Panel, ...]
) -> tuple[tuple[float, float], tuple[tuple[float, float], ...]]:
    """The x range of the figure and the y range of each panel."""
    if spec.xlim is not None:
        xlim = spec.xlim
    elif plot.tag == "pr":
        xlim = _axis([ln[1] for p in panels for ln in p.lines])
    else:
        xlim = (0.0, 1.0)
    if spec.ylim is not None:
        ylims = tuple(spec.ylim for _ in panels)
    elif plot.tag == "roc":
        ylims = tuple((0.0, 1.02) for _ in panels)
    elif spec.sharey:
        shared = _axis([ln[2] for p in panels for ln in p.lines])
        ylims = tuple(shared for _ in panels)
    else:
        ylims = tuple(_axis([ln[2] for ln in p.lines]) for p in panels)
    return xlim, ylims


def import_matplotlib() -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)


#: Settings of every figure written: the same ids in every SVG (so the same files),
#: TrueType text in PDFs, as publishers ask, and text in SVGs as text (editable in Inkscape
#: or Illustrator), not as drawn outlines.
STABLE_RC: dict[str, Any] = {
    "svg.hashsalt": "fminspect",
    "pdf.fonttype": 42,
    "svg.fonttype": "none",
}
#: Saved cropped to what is drawn, so that nothing (a long legend entry) is cut off.
_TIGHT: dict[str, Any] = {"bbox_inches": "tight", "pad_inches": 0.03}
_METADATA = {
    "png": {"Software": None},
    "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
    "svg": {"Date": None, "Creator": None},
}


def _legend_shape(
    spec: FigureSpec, labels: Sequence[str], size: tuple[float, float], font_pt: float
) -> tuple[int, float, float]:
    """The legend's columns and the width and height (inches) it adds to the figure.

    A column is as wide as the longest label (about 0.6 em a character) with its handle and
    gaps (about 5 em); a row is 1.4 em high.
    """
    em = font_pt / 72
    col_w = (0.6 * max((len(t) for t in labels), default=1) + 5.0) * em
    row_h = 1.4 * em
    n = max(1, len(labels))
    if spec.legend == "right":
        cols = spec.legend_columns or max(1, math.ceil(n / max(1, int(size[1] / row_h))))
        return cols, cols * col_w, 0.0
    cols = spec.legend_columns or max(1, min(n, int(size[0] / col_w)))
    return cols, 0.0, math.ceil(n / cols) * row_h + 2 * em


def draw(figures: Figures, spec: FigureSpec, out: Path | str, *, stem: str = "") -> list[Path]:
    """Write every planned figure into ``out`` as ``<stem><tag>.<format>`` (and with
    ``legend="separate"`` the legend as ``<stem><tag>_legend.<format>``); the paths
    written, in order."""
    import_matplotlib()
    import matplotlib
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    formats = spec.formats or (
        (str(spec.style["savefig.format"]).lower(),)
        if "savefig.format" in spec.style
        else ("pdf", "png")
    )
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise FigureError(f"format {', '.join(bad)} is not one of {', '.join(FORMATS)}")
    written: list[Path] = []
    rc: Any = {
        **STABLE_RC,
        "savefig.dpi": DEFAULT_DPI,
        **spec.style,
    }
    if spec.dpi:
        rc["savefig.dpi"] = spec.dpi
    with matplotlib.rc_context(rc):
        font = float(matplotlib.font_manager.FontProperties(size="small").get_size_in_points())
        for p in figures.plans:
            if "figure.figsize" in spec.style:
                w, h = matplotlib.rcParams["figure.figsize"]
            else:
                w, h = PANEL_SIZE[0] * p.columns, PANEL_SIZE[1] * p.rows
            shown = [p.labels[m] for m in p.methods]
            ncols, extra_w, extra_h = _legend_shape(spec, shown, (w, h), font)
            inline = spec.legend in ("bottom", "right")
            size = (w + extra_w, h + extra_h) if inline else (w, h)
            fig, axes = plt.subplots(
                p.rows,
                p.columns,
                figsize=size,
                squeeze=False,
                sharey=spec.sharey,
                layout="constrained",
            )
            handles: dict[str, Any] = {}
            for k, panel in enumerate(p.panels):
                ax = axes[k // p.columns][k % p.columns]
                n_ours = len(dict.fromkeys(spec.highlight))
                for m, x, y in panel.lines:
                    i = p.methods.index(m)
                    hl = i if i < n_ours else None
                    style = line_style(i - n_ours, highlighted=hl)
                    handles[m] = plot_line(ax, x, y, p.labels[m], style)
                ax.set_title(panel.title)
                ax.set_xlim(*p.xlim)
                ax.set_ylim(*p.ylims[k])
                ax.grid(True, alpha=0.3)
                if k // p.columns == p.rows - 1 or k + p.columns >= len(p.panels):
                    ax.set_xlabel(p.plot.xlabel)
                if k % p.columns == 0 or not spec.sharey:
                    ax.set_ylabel(p.plot.ylabel)
            for k in range(len(p.panels), p.rows * p.columns):
                axes[k // p.columns][k % p.columns].set_axis_off()
            ordered = [m for m in p.methods if m in handles]
            legend_args: dict[str, Any] = {
                "handles": [handles[m] for m in ordered],
                "labels": [p.labels[m] for m in ordered],
                "fontsize": "small",
                "frameon": False,
            }
            name = f"{stem}{p.plot.tag}"
            if inline:
                if spec.legend == "bottom":
                    legend = fig.legend(loc="outside lower center", ncols=ncols, **legend_args)
                else:
                    legend = fig.legend(loc="outside right upper", ncols=ncols, **legend_args)
                _bold(legend, len(dict.fromkeys(spec.highlight)))
            for fmt in formats:
                path = out / f"{name}.{fmt}"
                save(fig, path, fmt)
                written.append(path)
            plt.close(fig)
            if spec.legend == "separate":
                lf = plt.figure(figsize=(w, extra_h))
                legend = lf.legend(loc="center", ncols=ncols, **legend_args)
                _bold(legend, len(spec.highlight))
                for fmt in formats:
                    path = out / f"{name}_legend.{fmt}"
                    save(lf, path, fmt)
                    written.append(path)
                plt.close(lf)
    return written


def save(fig: Any, path: Path, fmt: str, *, tight: bool = True) -> None:
    """Write one file atomically, with no dates in it (the same figure, the same bytes);
    cropped to what is drawn unless ``tight`` is false (a figure laid out to an exact
    width). What Matplotlib cannot do (a style asking for LaTeX where none is installed, a
    font it cannot find) is a :class:`FigureError`."""
    try:
        with replacing(path) as tmp:
            fig.savefig(tmp, format=fmt, metadata=_METADATA[fmt], **(_TIGHT if tight else {}))
    except (RuntimeError, ValueError, OSError) as exc:
        import matplotlib.pyplot as plt

        plt.close(fig)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FigureError(f"{path.name} could not be drawn: {first}") from None


def _bold(legend: Any, n: int) -> None:
    """The highlighted methods' names (the first ``n`` entries) in bold."""
    for text in legend.get_texts()[:n]:
        text.set_fontweight("bold")
