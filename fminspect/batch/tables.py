"""Publication tables from ``fminspect eval`` results: what a table holds, before any format.

A table is built from one or more results folders (``results.json``, and
``statistics.json`` when ``eval --ci`` wrote it) — several folders merge, which is how new
methods are appended to earlier results without recomputing them: ``fminspect eval`` on the
new methods alone, then ``fminspect table old/ new/``. Folders whose measure parameters,
normalisation, resize rule or measure definitions differ are refused, naming the
difference: their numbers are not comparable.

Layout (:class:`TableSpec`): the measures and their order, the methods and their order
(aliases for display, highlighted methods), datasets as column groups, or transposed
(methods as columns); direction arrows; decimals; the best, second (and third) value marked
among the methods evaluated on every image; optionally the images each method was evaluated
on; with statistics, the half-width of each value's confidence interval (±) and the letters
of the groups of methods not significantly different. Every table's caption names the exact
variant of every number, the normalisation, the resize rule and, with statistics, the
interval and test with n and B. :func:`build` checks what the spec asks of the results one
step at a time (``_CHECKS``), then fills one column of cells per dataset and measure.

Every format is written by :mod:`fminspect.batch.table_formats`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    #: places marked: 2 (best bold, second underlined) or 3 (third italic too)
    places: int = 2
    #: a column with the images each method was evaluated on ('187/200 ⚠')
    images: bool = False
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
    #: {dataset: {method: {"values": …, "complete": bool, "images": n, "counts": {key: n},
    #: "coverage": '187/200 ⚠'}}}
    datasets: dict[str, dict[str, dict[str, Any]]]
    #: {dataset: statistics.json's entry} where the folders had statistics
    statistics: dict[str, dict[str, Any]]
    sources: list[str]
    #: {dataset: images whose GT is empty}
    empty_gt: dict[str, int] = field(default_factory=dict)


_COMPARED = (
    "params",
    "normalization",
    "interpolation",
    "measure_definition_version",
    "exclude_empty_gt",
    "image_list",
    "excluded_images",
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
            # an exclusion list: its name and what it left out of each dataset
            "excluded_images": {
                "file": Path(str(selection["excluded_images"]["source"])).name,
                "left_out": selection["excluded_images"].get("left_out"),
            }
            if selection.get("excluded_images")
            else None,
            "groups": selection.get("groups"),
        }
        part = Results(
            config=config,
            measures=dict(measures),
            datasets={
                ds: {m: _method_entry(r) for m, r in methods.items()}
                for ds, methods in datasets.items()
            },
            statistics=statistics,
            sources=[str(path)],
            empty_gt={ds: int(e["images"]) for ds, e in doc.get("empty_gt", {}).items()},
        )
        merged = part if merged is None else _merge(merged, part)
    if merged is None:
        raise TableError("no results folder given")
    return merged


def _method_entry(r: dict[str, Any]) -> dict[str, Any]:
    """A method's entry of results.json as a table reads it."""
    return {
        "values": r["values"],
        "complete": bool(r["coverage"]["complete"]),
        "images": r["images"],
        "counts": dict(r.get("images_per_measure", {})),
        "coverage": r["coverage"].get("label", ""),  # "" in results.json of older versions
    }


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
    a.empty_gt.update(b.empty_gt)
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
    #: (images the value averages, the method's images) when fewer than the method's
    partial: tuple[int, int] | None = None


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
    #: {(dataset, method): '187/200 ⚠'}, shown with ``spec.images``
    coverage: dict[tuple[str, str], str] = field(default_factory=dict)
    #: {dataset: what became of its images whose GT is empty}, for those that have any
    empty_gt: dict[str, str] = field(default_factory=dict)

    def fmt(self, cell: Cell | None) -> str:
        if cell is None or math.isnan(cell.value):
            return "–"
        return f"{cell.value:.{self.spec.decimals}f}"


@dataclass(frozen=True, slots=True)
class _Choice:
    """The datasets, methods and measures a table shows, before they are checked."""

    datasets: list[str]
    methods: list[str]
    measures: list[str]
    present: list[str]  # every method of those datasets, in natural order


def _choose(results: Results, spec: TableSpec) -> _Choice:
    datasets = list(spec.datasets) or list(results.datasets)
    present = sorted({m for ds in datasets for m in results.datasets.get(ds, {})}, key=natural_key)
    return _Choice(
        datasets,
        list(spec.methods) or present,
        list(spec.measures) or _default_measures(results),
        present,
    )


def _unknown_datasets(results: Results, spec: TableSpec, c: _Choice) -> str:
    unknown = [ds for ds in c.datasets if ds not in results.datasets]
    if unknown:
        return f"no dataset {unknown[0]!r} in the results; there are {list(results.datasets)}"
    return ""


def _unknown_methods(results: Results, spec: TableSpec, c: _Choice) -> str:
    unknown = [m for m in c.methods if m not in c.present]
    if unknown:
        return f"no results for {unknown}; there are {c.present}"
    return ""


def _alias_clash(results: Results, spec: TableSpec, c: _Choice) -> str:
    shown = [spec.name(m) for m in c.methods]
    clash = sorted({n for n in shown if shown.count(n) > 1})
    if clash:
        return f"two methods would be shown as {clash}: give them distinct aliases"
    return ""


def _stray_highlight(results: Results, spec: TableSpec, c: _Choice) -> str:
    stray = [m for m in spec.highlight if m not in c.present]
    if stray:
        return f"cannot highlight {stray}: no such method in the results"
    return ""


def _missing_measures(results: Results, spec: TableSpec, c: _Choice) -> str:
    missing = [k for k in c.measures if k not in results.measures]
    if missing:
        return (
            f"the results have no {missing} (evaluate with --measures …); they have "
            f"{list(results.measures)}"
        )
    return ""


def _missing_statistics(results: Results, spec: TableSpec, c: _Choice) -> str:
    lacking = [ds for ds in c.datasets if ds not in results.statistics]
    if (spec.ci or spec.groups) and lacking:
        return f"no statistics for {lacking}: run `fminspect eval … --ci` (intervals and groups)"
    return ""


def _untested_groups(results: Results, spec: TableSpec, c: _Choice) -> str:
    for ds in c.datasets if spec.groups else ():
        reason = results.statistics[ds].get("untested")
        if reason:
            return (
                f"no groups for {ds}: {reason}; run `fminspect eval … --ci` on all of them "
                "together (one results folder)"
            )
    return ""


def _missing_intervals(results: Results, spec: TableSpec, c: _Choice) -> str:
    if not spec.ci:
        return ""
    lacking = sorted(
        {
            f"{m} on {ds}"
            for ds in c.datasets
            for m in c.methods
            if m in results.datasets[ds]
            for k in c.measures
            if k in results.datasets[ds][m]["values"]
            and m not in results.statistics[ds]["keys"].get(k, {}).get("intervals", {})
        }
    )
    if lacking:
        return (
            f"no confidence interval for {', '.join(lacking)}: evaluate with "
            "`fminspect eval … --ci`"
        )
    return ""


#: What a table asks of the results, in order: each step names what is missing ("" if
#: nothing); a later step may rely on the earlier ones.
_CHECKS = (
    _unknown_datasets,
    _unknown_methods,
    _alias_clash,
    _stray_highlight,
    _missing_measures,
    _missing_statistics,
    _untested_groups,
    _missing_intervals,
)


def build(results: Results, spec: TableSpec) -> Table:
    """The table ``spec`` asks for (:class:`TableError` naming what is missing)."""
    if spec.places not in (2, 3):
        raise TableError(f"places must be 2 or 3, got {spec.places}")
    c = _choose(results, spec)
    for check in _CHECKS:
        problem = check(results, spec, c)
        if problem:
            raise TableError(problem)
    higher = {k: bool(results.measures[k]["higher_is_better"]) for k in c.measures}
    cells: dict[tuple[str, str, str], Cell] = {}
    for ds in c.datasets:
        for k in c.measures:
            cells.update(_column(results, spec, c.methods, ds, k, higher[k]))
    rows = [(ds, m, results.datasets[ds].get(m)) for ds in c.datasets for m in c.methods]
    return Table(
        c.datasets,
        c.measures,
        c.methods,
        cells,
        spec,
        {k: results.measures[k]["label"] for k in c.measures},
        higher,
        {(ds, m) for ds, m, r in rows if r is not None and not r["complete"]},
        _caption(results, spec, c.measures, c.datasets),
        coverage={(ds, m): r["coverage"] for ds, m, r in rows if r is not None},
        empty_gt={
            ds: empty_gt_words(
                ds,
                results.empty_gt[ds],
                excluded=bool(results.config.get("exclude_empty_gt")),
                wfm_empty=str(results.config.get("params", {}).get("wfm_empty", "zero")),
            )
            for ds in c.datasets
            if results.empty_gt.get(ds)
        },
    )


def _column(
    results: Results, spec: TableSpec, methods: list[str], ds: str, k: str, higher: bool
) -> dict[tuple[str, str, str], Cell]:
    """The cells of measure ``k`` on dataset ``ds``. Ranked: the methods evaluated on every
    image whose ``k`` averages as many images as the most any of them does (a value over
    fewer images — C^ω_β where some GTs have no image — is not comparable with the others;
    when every method's averages the same fewer images, they are compared on those). Ranked
    as shown: values equal to the digits printed share their mark."""
    rows = {m: r for m, r in results.datasets[ds].items() if m in methods and k in r["values"]}

    def count(r: dict[str, Any]) -> int:
        return int(r["counts"].get(k, r["images"]))

    most = max((count(r) for r in rows.values() if r["complete"]), default=0)
    comparable = {
        m for m, r in rows.items() if r["complete"] and count(r) == most and _finite(r["values"][k])
    }
    ranked = sorted(
        {round(rows[m]["values"][k], spec.decimals) for m in comparable}, reverse=higher
    )
    stats = results.statistics.get(ds, {}).get("keys", {}).get(k, {})
    cells = {}
    for m, r in rows.items():
        v = float(r["values"][k])
        cell = Cell(v, incomplete=not r["complete"])
        if m in comparable:
            cell.rank = ranked.index(round(v, spec.decimals)) + 1
        if count(r) < r["images"]:
            cell.partial = (count(r), int(r["images"]))
        interval = stats.get("intervals", {}).get(m)
        if interval is not None and all(_finite(x) for x in interval):
            cell.interval = (float(interval[0]), float(interval[1]))
            cell.half_width = (cell.interval[1] - cell.interval[0]) / 2
        cell.group = stats.get("groups", {}).get(m, "")
        cells[(ds, m, k)] = cell
    return cells


def empty_gt_words(dataset: str, n: int, *, excluded: bool, wfm_empty: str) -> str:
    """What became of a dataset's ``n`` images whose GT is empty (one sentence)."""
    images = f"{n} image{'s' if n != 1 else ''}"
    if excluded:
        return f"{dataset}: {images} with an empty GT left out."
    wfm = "; weighted F leaves them out (wfm_empty=nan)" if wfm_empty == "nan" else ""
    return (
        f"{dataset}: {images} with an empty GT, kept in the values{wfm} "
        "(--exclude-empty-gt leaves them out)."
    )


def _default_measures(results: Results) -> list[str]:
    """The keys SOD/COD papers report, where the results have them — or, for results made
    under a convention that prints values of its own (``classic-benchmark``: its max F is
    ``maxFm_meanPR``), that implementation's keys."""
    from fminspect.pipeline.conventions import CONVENTIONS  # numpy: not at the CLI's start

    named = CONVENTIONS.get(str(results.config.get("convention")))
    own = [k for k in (named.keys or {}) if k in results.measures] if named else []
    if own:
        return own
    usual = ["Sm", "wFm", "MAE", "adpEm", "meanEm", "maxEm", "adpFm", "meanFm", "maxFm"]
    have = [k for k in usual if k in results.measures]
    return have or list(results.measures)


def _finite(v: Any) -> bool:
    return v is not None and isinstance(v, int | float) and math.isfinite(v)


def _caption(results: Results, spec: TableSpec, measures: list[str], datasets: list[str]) -> str:
    c = results.config

    def variant(k: str) -> str:  # 'Fβ max: maxFm β²=0.3 (…)'; by key, 'maxFm β²=0.3 (…)'
        head, label = PLAIN.get(k, k) if spec.symbols else k, results.measures[k]["label"]
        named = label if label.split(" ")[0] == head else f"{head}: {label}"
        return f"{named} ({results.measures[k]['dataset_aggregation']})"

    variants = "; ".join(variant(k) for k in measures)
    parts = [
        f"Normalisation {c.get('normalization')}; predictions of another size resized to the "
        f"GT ({c.get('interpolation')}). {variants}."
    ]
    if c.get("image_list"):
        counts = c["image_list"]["kept"] or {}
        kept = ", ".join(f"{d['images']} of {d['of']} in {ds}" for ds, d in counts.items())
        parts.append(f"Only the images of {c['image_list']['file']} ({kept}).")
    if c.get("excluded_images"):
        counts = c["excluded_images"]["left_out"] or {}
        out = ", ".join(f"{d['images']} of {d['of']} in {ds}" for ds, d in counts.items())
        parts.append(f"The images of {c['excluded_images']['file']} left out ({out}).")
    if c.get("exclude_empty_gt"):
        parts.append("Images whose GT is empty are left out.")
    if c.get("groups"):
        parts.append(
            "Grouped: every value is the mean over the groups of each group's value (a curve's "
            "max or mean is taken on the mean of the groups' mean curves)."
        )
    if spec.ci or spec.groups:
        from fminspect.batch.significance import SPREAD_NOTE  # numpy: not when the CLI starts

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
