"""Publication tables from ``fminspect eval`` results: LaTeX, Markdown, CSV, XLSX, HTML, text.

A table is built from one or more results folders (``results.json``, and
``statistics.json`` when ``eval --ci`` wrote it) — several folders merge, which is how new
methods are appended to earlier results without recomputing them: ``fminspect eval`` on the
new methods alone, then ``fminspect table old/ new/``. Folders whose measure parameters,
normalisation, resize rule or measure definitions differ are refused, naming the
difference: their numbers are not comparable.

Layout (:class:`TableSpec`): the measures and their order, the methods and their order
(aliases for display, highlighted methods), datasets as column groups, or transposed
(methods as columns); direction arrows; decimals; best **bold** and second underlined
(among the methods evaluated on every image); with statistics, the half-width of each
value's confidence interval (±) and the letters of the groups of methods not significantly
different. Every table's caption names the exact variant of every number, the
normalisation, the resize rule and, with statistics, the interval and test with n and B.

Renderers: :func:`latex` (booktabs, ``\\multicolumn`` dataset headers, compilable as a
document with :func:`latex_document`), :func:`markdown`, :func:`csv_text` (full precision,
long format with intervals), :func:`html` (one self-contained page, sortable by clicking a
header), :func:`write_xlsx` (openpyxl: the table with its formatting, and a sheet of the
values at full precision) and :func:`text` (for a terminal: blocks of columns that fit the
width, default 100).
"""

from __future__ import annotations

import csv
import html as html_lib
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fminspect.batch.outputs import tex_escape
from fminspect.batch.significance import SPREAD_NOTE, spread, spread_text
from fminspect.io.discovery import natural_key

#: LaTeX symbols of the keys papers report (the rest print their key).
SYMBOLS = {
    "MAE": r"$\mathcal{M}$",
    "Sm": r"$S_\alpha$",
    "wFm": r"$F^{\omega}_{\beta}$",
    "adpFm": r"$F^{adp}_{\beta}$",
    "meanFm": r"$F^{mean}_{\beta}$",
    "maxFm": r"$F^{max}_{\beta}$",
    "adpEm": r"$E^{adp}_{\phi}$",
    "meanEm": r"$E^{mean}_{\phi}$",
    "maxEm": r"$E^{max}_{\phi}$",
    "Cm": r"$C_{\beta}$",
    "CCm": r"$C^{\omega}_{\beta}$",
    "adpIoU": r"IoU$^{adp}$",
    "meanIoU": r"mIoU",
    "maxIoU": r"IoU$^{max}$",
    "adpDice": r"Dice$^{adp}$",
    "meanDice": r"mDice",
    "maxDice": r"Dice$^{max}$",
    "relaxFm": r"$F^{relax}_{\beta}$",
    "HCE": r"HCE$_\gamma$",
}
#: The same in plain text (Markdown, HTML, XLSX, the terminal).
PLAIN = {
    "MAE": "M",
    "Sm": "Sα",
    "wFm": "Fωβ",
    "adpFm": "Fβ adp",
    "meanFm": "Fβ mean",
    "maxFm": "Fβ max",
    "adpEm": "Eφ adp",
    "meanEm": "Eφ mean",
    "maxEm": "Eφ max",
    "Cm": "Cβ",
    "CCm": "Cωβ",
}


class TableError(ValueError):
    """Results that cannot make a table; the message names the folder and the problem."""


@dataclass(frozen=True, slots=True)
class TableSpec:
    """What the table shows and how (see the module notes)."""

    measures: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    decimals: int = 3
    arrows: bool = True
    marks: bool = True
    transpose: bool = False
    ci: bool = False
    groups: bool = False
    aliases: Mapping[str, str] = field(default_factory=dict)
    highlight: tuple[str, ...] = ()
    symbols: bool = True

    def name(self, method: str) -> str:
        return self.aliases.get(method, method)


@dataclass(slots=True)
class Results:
    """Dataset values of one or more results folders, merged."""

    config: dict[str, Any]
    measures: dict[str, dict[str, Any]]
    #: {dataset: {method: {"values": …, "complete": bool, "images": n}}}
    datasets: dict[str, dict[str, dict[str, Any]]]
    #: {dataset: statistics.json's entry} where the folders had statistics
    statistics: dict[str, dict[str, Any]]
    sources: list[str]


_COMPARED = (
    "params",
    "normalization",
    "interpolation",
    "measure_definition_version",
    "exclude_empty_gt",
    "image_list",
    "groups",
)


def load(folders: Iterable[Path | str]) -> Results:
    """Read and merge results folders (each holding ``results.json``)."""
    merged: Results | None = None
    for folder in map(Path, folders):
        path = folder / "results.json" if folder.is_dir() else folder
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            config, measures, datasets = doc["config"], doc["measures"], doc["datasets"]
        except FileNotFoundError:
            raise TableError(f"{path}: no results.json here (run `fminspect eval` first)") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise TableError(f"{path}: not an fminspect results.json ({exc})") from None
        stats_path = path.parent / "statistics.json"
        statistics: dict[str, Any] = {}
        if stats_path.exists():
            try:
                statistics = json.loads(stats_path.read_text(encoding="utf-8"))["datasets"]
            except (OSError, ValueError, KeyError) as exc:
                raise TableError(f"{stats_path}: cannot be read ({exc})") from None
        # which images make a value is part of what makes values comparable
        selection = doc.get("selection", {})
        config = {
            **config,
            "exclude_empty_gt": bool(selection.get("exclude_empty_gt", False)),
            # an image list: its name and what it kept of each dataset
            "image_list": {
                "file": Path(str(selection["image_list"]["source"])).name,
                "kept": selection["image_list"].get("kept"),
            }
            if selection.get("image_list")
            else None,
            "groups": selection.get("groups"),
        }
        part = Results(
            config=config,
            measures=dict(measures),
            datasets={
                ds: {
                    m: {
                        "values": r["values"],
                        "complete": bool(r["coverage"]["complete"]),
                        "images": r["images"],
                    }
                    for m, r in methods.items()
                }
                for ds, methods in datasets.items()
            },
            statistics=statistics,
            sources=[str(path)],
        )
        merged = part if merged is None else _merge(merged, part)
    if merged is None:
        raise TableError("no results folder given")
    return merged


def _merge(a: Results, b: Results) -> Results:
    for key in _COMPARED:
        if a.config.get(key) != b.config.get(key):
            raise TableError(
                f"{b.sources[0]} was evaluated with another {key} than {a.sources[0]} "
                f"({b.config.get(key)!r} vs {a.config.get(key)!r}): the numbers are not comparable"
            )
    for ds, methods in b.datasets.items():
        into = a.datasets.setdefault(ds, {})
        added = set(methods) - set(into)
        if added and ds in a.statistics and ds not in b.statistics:
            # the earlier tests and groups did not include the added methods: only the
            # per-method intervals stay valid
            a.statistics[ds] = _without_tests(a.statistics[ds], b.sources[0])
        for m, r in methods.items():
            if m in into and into[m]["values"] != r["values"]:
                raise TableError(
                    f"{m} on {ds} is in {a.sources[0]} and in {b.sources[0]} with other "
                    "values: give one of them"
                )
            into[m] = r
    a.measures.update(b.measures)
    setups = {
        json.dumps(
            {
                k: v
                for k, v in st["setup"].items()
                if k not in ("images", "units", "tested_methods", "reliable")
            },
            sort_keys=True,
        )
        for st in (*a.statistics.values(), *b.statistics.values())
    }
    if len(setups) > 1:
        raise TableError(
            f"{b.sources[0]} and {a.sources[0]} made their intervals and tests differently "
            f"({' vs '.join(sorted(setups))}): evaluate both with the same --resamples, "
            "--level and --test"
        )
    for ds, st in b.statistics.items():
        if ds in a.statistics:  # tests across folders were made on other resamples
            merged = _without_tests(a.statistics[ds], b.sources[0])
            for k, ks in st["keys"].items():
                merged["keys"].setdefault(k, {"intervals": {}})["intervals"].update(ks["intervals"])
            a.statistics[ds] = merged
        elif ds in a.datasets and set(a.datasets[ds]) - set(b.datasets.get(ds, {})):
            a.statistics[ds] = _without_tests(st, b.sources[0])  # tested without a's methods
        else:
            a.statistics[ds] = st
    a.sources += b.sources
    return a


def _without_tests(stats: dict[str, Any], source: str) -> dict[str, Any]:
    """Statistics keeping the intervals only (the tests and groups were made without some
    of the methods now in the table)."""
    return {
        "setup": stats["setup"],
        "keys": {k: {"intervals": dict(v.get("intervals", {}))} for k, v in stats["keys"].items()},
        "untested": f"methods from {source} were not tested with the others",
    }


@dataclass(slots=True)
class Cell:
    value: float
    incomplete: bool = False  # the method misses images of this dataset: not ranked
    rank: int | None = None
    half_width: float | None = None
    interval: tuple[float, float] | None = None
    group: str = ""


@dataclass(slots=True)
class Table:
    """The content of a table, ready for any renderer."""

    datasets: list[str]
    measures: list[str]
    methods: list[str]
    cells: dict[tuple[str, str, str], Cell]
    spec: TableSpec
    labels: dict[str, str]
    higher: dict[str, bool]
    incomplete: set[tuple[str, str]]
    caption: str

    def fmt(self, cell: Cell | None) -> str:
        if cell is None or math.isnan(cell.value):
            return "–"
        return f"{cell.value:.{self.spec.decimals}f}"

    def head(self, key: str, *, tex: bool = False) -> str:
        sym = SYMBOLS if tex else PLAIN
        text = sym.get(key, key) if self.spec.symbols else key
        if tex and key not in SYMBOLS:
            text = tex_escape(text)
        if self.spec.arrows:
            up = self.higher[key]
            text += (r"$\uparrow$" if up else r"$\downarrow$") if tex else (" ↑" if up else " ↓")
        return text


def build(results: Results, spec: TableSpec) -> Table:
    """The table ``spec`` asks for (:class:`TableError` naming what is missing)."""
    datasets = list(spec.datasets) or list(results.datasets)
    for ds in datasets:
        if ds not in results.datasets:
            raise TableError(
                f"no dataset {ds!r} in the results; there are {list(results.datasets)}"
            )
    present = {m for ds in datasets for m in results.datasets[ds]}
    methods = list(spec.methods) or sorted(present, key=natural_key)
    unknown = [m for m in methods if m not in present]
    if unknown:
        raise TableError(f"no results for {unknown}; there are {sorted(present, key=natural_key)}")
    shown = [spec.name(m) for m in methods]
    clash = sorted({n for n in shown if shown.count(n) > 1})
    if clash:
        raise TableError(f"two methods would be shown as {clash}: give them distinct aliases")
    stray = [m for m in spec.highlight if m not in present]
    if stray:
        raise TableError(f"cannot highlight {stray}: no such method in the results")
    measures = list(spec.measures) or _default_measures(results)
    missing = [k for k in measures if k not in results.measures]
    if missing:
        raise TableError(
            f"the results have no {missing} (evaluate with --measures …); they have "
            f"{list(results.measures)}"
        )
    if (spec.ci or spec.groups) and not all(ds in results.statistics for ds in datasets):
        lacking = [ds for ds in datasets if ds not in results.statistics]
        raise TableError(
            f"no statistics for {lacking}: run `fminspect eval … --ci` (intervals and groups)"
        )
    for ds in datasets if spec.groups else ():
        reason = results.statistics[ds].get("untested")
        if reason:
            raise TableError(
                f"no groups for {ds}: {reason}; run `fminspect eval … --ci` on all of them "
                "together (one results folder)"
            )
    if spec.ci:
        keys_stats = {ds: results.statistics[ds]["keys"] for ds in datasets}
        lacking = sorted(
            {
                f"{m} on {ds}"
                for ds in datasets
                for m in methods
                if m in results.datasets[ds]
                for k in measures
                if k in results.datasets[ds][m]["values"]
                and m not in keys_stats[ds].get(k, {}).get("intervals", {})
            }
        )
        if lacking:
            raise TableError(
                f"no confidence interval for {', '.join(lacking)}: evaluate with "
                "`fminspect eval … --ci`"
            )
    higher = {k: bool(results.measures[k]["higher_is_better"]) for k in measures}
    cells: dict[tuple[str, str, str], Cell] = {}
    incomplete: set[tuple[str, str]] = set()
    for ds in datasets:
        rows = results.datasets[ds]
        stats = results.statistics.get(ds, {}).get("keys", {})
        for m in methods:
            if m in rows and not rows[m]["complete"]:
                incomplete.add((ds, m))
        for k in measures:
            # ranked as shown: values equal to the digits printed share their mark
            ranked = sorted(
                {
                    round(rows[m]["values"][k], spec.decimals)
                    for m in methods
                    if m in rows and rows[m]["complete"] and _finite(rows[m]["values"].get(k))
                },
                reverse=higher[k],
            )
            st = stats.get(k, {})
            for m in methods:
                if m not in rows or k not in rows[m]["values"]:
                    continue
                v = float(rows[m]["values"][k])
                cell = Cell(v, incomplete=not rows[m]["complete"])
                if rows[m]["complete"] and _finite(v):
                    cell.rank = ranked.index(round(v, spec.decimals)) + 1
                interval = st.get("intervals", {}).get(m)
                if interval is not None and all(_finite(x) for x in interval):
                    cell.interval = (float(interval[0]), float(interval[1]))
                    cell.half_width = (cell.interval[1] - cell.interval[0]) / 2
                cell.group = st.get("groups", {}).get(m, "")
                cells[(ds, m, k)] = cell
    labels = {k: results.measures[k]["label"] for k in measures}
    return Table(
        datasets,
        measures,
        methods,
        cells,
        spec,
        labels,
        higher,
        incomplete,
        _caption(results, spec, measures, datasets),
    )


def _default_measures(results: Results) -> list[str]:
    """The keys SOD/COD papers report, where the results have them."""
    usual = ["Sm", "wFm", "MAE", "adpEm", "meanEm", "maxEm", "adpFm", "meanFm", "maxFm"]
    have = [k for k in usual if k in results.measures]
    return have or list(results.measures)


def _finite(v: Any) -> bool:
    return v is not None and isinstance(v, int | float) and math.isfinite(v)


def _caption(results: Results, spec: TableSpec, measures: list[str], datasets: list[str]) -> str:
    c = results.config
    variants = "; ".join(
        f"{PLAIN.get(k, k) if spec.symbols else k}: {results.measures[k]['label']} "
        f"({results.measures[k]['dataset_aggregation']})"
        for k in measures
    )
    parts = [
        f"Normalisation {c.get('normalization')}; predictions of another size resized to the "
        f"GT ({c.get('interpolation')}). {variants}."
    ]
    if c.get("image_list"):
        counts = c["image_list"]["kept"] or {}
        kept = ", ".join(f"{d['images']} of {d['of']} in {ds}" for ds, d in counts.items())
        parts.append(f"Only the images of {c['image_list']['file']} ({kept}).")
    if c.get("exclude_empty_gt"):
        parts.append("Images whose GT is empty are left out.")
    if c.get("groups"):
        parts.append("Grouped: each value is the mean over the groups of the groups' values.")
    if spec.ci or spec.groups:
        # the setups of the datasets shown are equal (checked when folders merge) but n
        s = results.statistics[datasets[0]]["setup"]
        what = []
        if spec.ci:
            what.append(
                f"the {s['interval']} interval (B = {s['resamples']}; the CSV gives both "
                f"ends): {SPREAD_NOTE}"
            )
        if spec.groups:
            what.append(
                f"letters: methods sharing a letter are not significantly different "
                f"({s['test']}; {s['correction']}; α = {s['alpha']}; B = {s['resamples']})"
            )
        # n: the images, or the groups of a grouped evaluation (whole groups resampled)
        unit = s.get("unit", "images")
        setups = {ds: results.statistics[ds]["setup"] for ds in datasets}
        n = {ds: st.get("units", st["images"]) for ds, st in setups.items()}
        sizes = ", ".join(f"{n[ds]} ({ds})" if len(datasets) > 1 else str(n[ds]) for ds in datasets)
        parts.append("; ".join(what) + f"; n = {sizes} {unit}.")
        few = [ds for ds in datasets if not results.statistics[ds]["setup"].get("reliable", True)]
        if few:
            parts.append(
                f"Too few {unit} in {', '.join(few)} for reliable intervals; no tests there."
            )
    return " ".join(parts)


# --------------------------------------------------------------------------- renderers
def _tex_value(table: Table, cell: Cell | None) -> str:
    text = table.fmt(cell)
    if cell is None:
        return text
    if table.spec.marks and cell.rank == 1:
        text = rf"\textbf{{{text}}}"
    elif table.spec.marks and cell.rank == 2:
        text = rf"\underline{{{text}}}"
    if table.spec.ci and cell.interval is not None:
        kind, *parts = spread(cell.value, cell.interval, table.spec.decimals)
        if kind == "±":
            text += rf"{{\scriptsize$\pm${parts[0]}}}"
        elif kind == "+-":
            text += rf"$^{{+{parts[0]}}}_{{-{parts[1]}}}$"
        else:
            text += rf"{{\scriptsize[{parts[0]}, {parts[1]}]}}"
    if table.spec.groups and cell.group:
        text += rf"$^{{\mathrm{{{cell.group}}}}}$"
    if cell.incomplete:
        text += r"$^\dagger$"
    return text


def _tex_name(table: Table, method: str) -> str:
    name = tex_escape(table.spec.name(method))
    if method in table.spec.highlight:
        name = rf"\textbf{{{name}}}"
    return name


def latex(table: Table, *, label: str = "tab:results") -> str:
    """A booktabs ``table`` environment (needs ``\\usepackage{booktabs}``)."""
    ds, keys = table.datasets, table.measures
    marks = (
        r" Best in \textbf{bold}, second \underline{underlined} (among the methods evaluated "
        r"on every image)."
        if table.spec.marks
        else ""
    )
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{tex_escape(table.caption)}{marks}}}",
        rf"\label{{{label}}}",
    ]
    if not table.spec.transpose:
        lines.append(r"\begin{tabular}{l" + ("c" * len(keys)) * len(ds) + "}")
        lines.append(r"\toprule")
        if len(ds) > 1:
            heads = [rf"\multicolumn{{{len(keys)}}}{{c}}{{{tex_escape(d)}}}" for d in ds]
            lines.append(" & " + " & ".join(heads) + r" \\")
            rules = [
                rf"\cmidrule(lr){{{2 + i * len(keys)}-{1 + (i + 1) * len(keys)}}}"
                for i in range(len(ds))
            ]
            lines.append(" ".join(rules))
        lines.append(
            "Method & " + " & ".join(table.head(k, tex=True) for _ in ds for k in keys) + r" \\"
        )
        lines.append(r"\midrule")
        for m in table.methods:
            values = [_tex_value(table, table.cells.get((d, m, k))) for d in ds for k in keys]
            lines.append(f"{_tex_name(table, m)} & " + " & ".join(values) + r" \\")
    else:  # methods as columns; a block of measure rows per dataset
        lines.append(r"\begin{tabular}{l" + "c" * len(table.methods) + "}")
        lines.append(r"\toprule")
        lines.append("Measure & " + " & ".join(_tex_name(table, m) for m in table.methods) + r" \\")
        for d in ds:
            lines.append(r"\midrule")
            if len(ds) > 1:
                span = 1 + len(table.methods)
                lines.append(rf"\multicolumn{{{span}}}{{l}}{{\textit{{{tex_escape(d)}}}}} \\")
            for k in keys:
                values = [_tex_value(table, table.cells.get((d, m, k))) for m in table.methods]
                lines.append(f"{table.head(k, tex=True)} & " + " & ".join(values) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if table.incomplete:
        lines.append(
            r"\\[2pt]{\footnotesize $^\dagger$ evaluated on a subset of this dataset's images, "
            r"so not ranked.}"
        )
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def latex_document(table: Table) -> str:
    """A compilable document holding :func:`latex` (for a quick look: ``pdflatex``)."""
    return (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[margin=1cm,"
        "landscape]{geometry}\n\\begin{document}\n" + latex(table) + "\\end{document}\n"
    )


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]|"})


def _md_escape(text: str) -> str:
    """Text shown literally by Markdown (and as text, not markup, by its HTML)."""
    return html_lib.escape(text, quote=False).translate(_MD_SPECIAL)


def _plain_value(table: Table, cell: Cell | None, *, markup: str) -> str:
    text = table.fmt(cell)
    if cell is None:
        return text
    if table.spec.ci and cell.interval is not None:
        text += " " + spread_text(cell.value, cell.interval, table.spec.decimals)
    if table.spec.groups and cell.group:
        text += f" [{cell.group}]" if markup == "text" else f"<sup>{cell.group}</sup>"
    if cell.incomplete:
        text += " †"
    if table.spec.marks and markup == "markdown":
        if cell.rank == 1:
            text = f"**{text}**"
        elif cell.rank == 2:
            text = f"<u>{text}</u>"
    elif table.spec.marks and markup == "text" and cell.rank in (1, 2):
        text += " ¹" if cell.rank == 1 else " ²"
    return text


def _plain_name(table: Table, method: str, markup: str) -> str:
    name = table.spec.name(method)
    if markup == "markdown":
        name = _md_escape(name)
    if method in table.spec.highlight and markup != "html":  # HTML: the row is shaded
        name = f"**{name}**" if markup == "markdown" else f"{name} *"
    return name


def _grid(table: Table, markup: str) -> tuple[list[str], list[str], list[list[str]]]:
    """(group row, header row, body rows) of the plain renderers."""
    ds, keys = table.datasets, table.measures
    if not table.spec.transpose:
        groups = [""] + [d for d in ds for _ in keys]
        heads = ["method"] + [table.head(k) for _ in ds for k in keys]
        body = [
            [_plain_name(table, m, markup)]
            + [
                _plain_value(table, table.cells.get((d, m, k)), markup=markup)
                for d in ds
                for k in keys
            ]
            for m in table.methods
        ]
    else:
        groups = []
        heads = ["measure"] + [_plain_name(table, m, markup) for m in table.methods]
        body = [
            [f"{d}: {table.head(k)}" if len(ds) > 1 else table.head(k)]
            + [
                _plain_value(table, table.cells.get((d, m, k)), markup=markup)
                for m in table.methods
            ]
            for d in ds
            for k in keys
        ]
    return groups, heads, body


def _notes(table: Table) -> list[str]:
    notes = [table.caption]
    if table.spec.marks:
        notes.append(
            "Best **bold**, second <u>underlined</u> (among the methods evaluated on every image)."
        )
    if table.incomplete:
        notes.append("† evaluated on a subset of this dataset's images, so not ranked.")
    return notes


def markdown(table: Table) -> str:
    """A pipe table (GitHub Markdown); datasets prefix the headers when there are several."""
    groups, heads, body = _grid(table, "markdown")
    if groups and len(table.datasets) > 1:
        heads = [h if not g else f"{g}: {h}" for g, h in zip(groups, heads, strict=True)]
    lines = ["| " + " | ".join(heads) + " |", "|---|" + "---:|" * (len(heads) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines) + "\n\n" + "\n\n".join(_notes(table)) + "\n"


def text(table: Table, width: int = 100) -> str:
    """For a terminal: columns in blocks that fit ``width`` (the name column repeated)."""
    groups, heads, body = _grid(table, "text")
    cols = len(heads)
    widths = [
        max(len(heads[c]), *(len(r[c]) for r in body), len(groups[c]) if groups else 0)
        for c in range(cols)
    ]
    blocks: list[list[int]] = []
    current: list[int] = []
    used = widths[0]
    for c in range(1, cols):
        if current and used + 2 + widths[c] > width:
            blocks.append(current)
            current, used = [], widths[0]
        current.append(c)
        used += 2 + widths[c]
    if current:
        blocks.append(current)
    out: list[str] = []
    for block in blocks:
        shown = [0, *block]

        def row(cells: Sequence[str], shown: list[int] = shown) -> str:
            return "  ".join(
                cells[c].ljust(widths[c]) if c == 0 else cells[c].rjust(widths[c]) for c in shown
            ).rstrip()

        if groups and len(table.datasets) > 1:
            out.append(row(groups))
        out.append(row(heads))
        out.append("-" * min(width, len(row(heads))))
        out += [row(r) for r in body]
        out.append("")
    notes = [table.caption]
    if table.spec.marks:
        notes.append("¹ best, ² second (among the methods evaluated on every image).")
    if table.incomplete:
        notes.append("† evaluated on a subset of this dataset's images, so not ranked.")
    if table.spec.highlight:
        notes.append("* highlighted methods.")
    import textwrap

    out += [textwrap.fill(n, width) for n in notes]
    return "\n".join(out) + "\n"


def csv_text(table: Table) -> str:
    """Long format at full precision: dataset, method, key, label, value, rank, interval,
    group."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        [
            "dataset",
            "method",
            "display name",
            "measure",
            "variant",
            "value",
            "rank",
            "ci low",
            "ci high",
            "group",
            "evaluated on every image",
        ]
    )
    for d in table.datasets:
        for m in table.methods:
            for k in table.measures:
                cell = table.cells.get((d, m, k))
                if cell is None:
                    continue
                low, high = cell.interval or ("", "")
                w.writerow(
                    [
                        d,
                        m,
                        table.spec.name(m),
                        k,
                        table.labels[k],
                        repr(cell.value),
                        cell.rank or "",
                        repr(low) if low != "" else "",
                        repr(high) if high != "" else "",
                        cell.group,
                        "no" if (d, m) in table.incomplete else "yes",
                    ]
                )
    return buf.getvalue()


_SORT_SCRIPT = """
document.querySelectorAll('th.sort').forEach(function (th) {
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0];
    var col = Number(th.dataset.col), down = th.dataset.dir !== 'desc';
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
      var p = parseFloat(x), q = parseFloat(y);
      if (!isNaN(p) && !isNaN(q)) { return down ? q - p : p - q; }
      return down ? String(y).localeCompare(x) : String(x).localeCompare(y);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    th.dataset.dir = down ? 'desc' : 'asc';
  });
});
"""


def html(table: Table, *, title: str = "fminspect results") -> str:
    """One self-contained page (no network): the table, sortable by clicking a header."""
    esc = html_lib.escape
    groups, heads, _ = _grid(table, "html")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
        "th,td{padding:.25em .6em;text-align:right;border-bottom:1px solid #ddd}"
        "th:first-child,td:first-child{text-align:left}th.sort{cursor:pointer}"
        "th.sort:hover{background:#eef}.best{font-weight:bold}.second{text-decoration:"
        "underline}.hl{background:#fff6d5}caption{caption-side:bottom;text-align:left;"
        "color:#555;max-width:60em;padding-top:.6em}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        "<table>",
        f"<caption>{esc(table.caption)}"
        + (" Best in bold, second underlined; click a header to sort." if table.spec.marks else "")
        + (
            " † evaluated on a subset of this dataset's images, so not ranked."
            if table.incomplete
            else ""
        )
        + "</caption>",
        "<thead>",
    ]
    if groups and len(table.datasets) > 1:
        out.append(
            "<tr><th></th>"
            + "".join(
                f'<th colspan="{len(table.measures)}" style="text-align:center">{esc(d)}</th>'
                for d in table.datasets
            )
            + "</tr>"
        )
    out.append(
        "<tr>"
        + "".join(
            f'<th class="sort" data-col="{c}" title="click to sort">{esc(h)}</th>'
            for c, h in enumerate(heads)
        )
        + "</tr>"
    )
    out.append("</thead><tbody>")
    if not table.spec.transpose:
        for m in table.methods:
            cls = ' class="hl"' if m in table.spec.highlight else ""
            cells = [
                f'<td data-v="{esc(table.spec.name(m))}">{esc(_plain_name(table, m, "html"))}</td>'
            ]
            for d in table.datasets:
                for k in table.measures:
                    cells.append(_html_cell(table, table.cells.get((d, m, k)), k))
            out.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    else:
        for d in table.datasets:
            for k in table.measures:
                label = f"{d}: {table.head(k)}" if len(table.datasets) > 1 else table.head(k)
                cells = [f'<td data-v="{esc(label)}">{esc(label)}</td>']
                cells += [_html_cell(table, table.cells.get((d, m, k)), k) for m in table.methods]
                out.append("<tr>" + "".join(cells) + "</tr>")
    out += ["</tbody></table>", f"<script>{_SORT_SCRIPT}</script>", "</body></html>"]
    return "\n".join(out) + "\n"


def _html_cell(table: Table, cell: Cell | None, key: str) -> str:
    esc = html_lib.escape
    if cell is None:
        return '<td data-v="">–</td>'
    classes = []
    if table.spec.marks and cell.rank == 1:
        classes.append("best")
    elif table.spec.marks and cell.rank == 2:
        classes.append("second")
    tip = table.labels[key]
    if cell.interval is not None:
        tip += f"; interval [{cell.interval[0]:.6f}, {cell.interval[1]:.6f}]"
    if cell.group:
        tip += f"; group {cell.group}"
    # sorting puts the best first whatever the direction: lower-is-better values negated
    sort_value = cell.value if table.higher[key] else -cell.value
    cls = f' class="{" ".join(classes)}"' if classes else ""
    text = (
        _plain_value(table, cell, markup="html").replace("<sup>", "\x00").replace("</sup>", "\x01")
    )
    text = esc(text).replace("\x00", "<sup>").replace("\x01", "</sup>")
    return f'<td{cls} data-v="{sort_value!r}" title="{esc(tip)}">{text}</td>'


def write_xlsx(table: Table, path: Path | str) -> None:
    """The table (bold best, underlined second, number formats) on a first sheet and every
    value at full precision, with intervals and groups, on a second (needs openpyxl)."""
    try:
        from openpyxl import Workbook
        from openpyxl.comments import Comment
        from openpyxl.styles import Alignment, Font
    except ImportError:
        raise TableError(
            "XLSX needs openpyxl: pip install openpyxl (or pip install 'fminspect[xlsx]')"
        ) from None
    from fminspect.io.atomic import atomic_open

    wb = Workbook()
    ws = wb.active
    ws.title = "table"
    number = "0." + "0" * table.spec.decimals if table.spec.decimals else "0"
    _, heads, _ = _grid(table, "text")
    row = 1
    if not table.spec.transpose and len(table.datasets) > 1:
        for i, d in enumerate(table.datasets):
            first = 2 + i * len(table.measures)
            ws.cell(row, first, d).alignment = Alignment(horizontal="center")
            ws.merge_cells(
                start_row=row,
                start_column=first,
                end_row=row,
                end_column=first + len(table.measures) - 1,
            )
        row += 1
    for c, h in enumerate(heads, start=1):
        ws.cell(row, c, h).font = Font(bold=True)
    row += 1

    def put(r: int, c: int, cell: Cell | None) -> None:
        if cell is None or math.isnan(cell.value):
            ws.cell(r, c, "–")
            return
        target = ws.cell(r, c, cell.value)
        target.number_format = number
        extra = []
        if table.spec.ci and cell.interval is not None:
            extra.append(f"interval [{cell.interval[0]:.6f}, {cell.interval[1]:.6f}]")
        if table.spec.groups and cell.group:
            extra.append(f"group {cell.group}")
        if cell.incomplete:
            extra.append("evaluated on a subset of the images: not ranked")
        if extra:
            target.comment = Comment("; ".join(extra), "fminspect")
        if table.spec.marks and cell.rank == 1:
            target.font = Font(bold=True)
        elif table.spec.marks and cell.rank == 2:
            target.font = Font(underline="single")

    if not table.spec.transpose:
        for m in table.methods:
            ws.cell(row, 1, _plain_name(table, m, "text"))
            c = 2
            for d in table.datasets:
                for k in table.measures:
                    put(row, c, table.cells.get((d, m, k)))
                    c += 1
            row += 1
    else:
        for d in table.datasets:
            for k in table.measures:
                label = f"{d}: {table.head(k)}" if len(table.datasets) > 1 else table.head(k)
                ws.cell(row, 1, label)
                for c, m in enumerate(table.methods, start=2):
                    put(row, c, table.cells.get((d, m, k)))
                row += 1
    ws.cell(row + 1, 1, table.caption)
    details = wb.create_sheet("values")
    for r, line in enumerate(csv.reader(io.StringIO(csv_text(table))), start=1):
        for c, value in enumerate(line, start=1):
            try:
                details.cell(r, c, float(value) if r > 1 and c in (6, 8, 9) and value else value)
            except ValueError:
                details.cell(r, c, value)
    with atomic_open(Path(path), "wb") as fh:
        wb.save(fh)


FORMATS = ("text", "latex", "markdown", "csv", "html", "xlsx")


def render(table: Table, fmt: str, *, width: int = 100) -> str:
    """The table as text in ``fmt`` (every format but xlsx)."""
    if fmt == "latex":
        return latex(table)
    if fmt == "markdown":
        return markdown(table)
    if fmt == "csv":
        return csv_text(table)
    if fmt == "html":
        return html(table)
    if fmt == "text":
        return text(table, width)
    raise TableError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
