"""Writing a batch run's results: JSON, CSV, curves and plots; the Markdown and LaTeX
summaries through :mod:`fminspect.batch.table_formats`.

Every file names the exact variant of every number (the CSVs' column headers carry the
variant label, e.g. ``maxFm β²=0.3``; the tables' captions and results.json name it, with the
normalisation and resize rule).
Nothing here depends on timing or worker order, and PNG/PDF metadata carry no dates, so the
same inputs give byte-identical files. No pickles.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from fminspect import MEASURE_DEFINITION_VERSION, __version__
from fminspect.batch.plots import CURVE_PLOTS, Figure, Line, PlotProcess, render
from fminspect.batch.runner import EvalReport, MethodResult
from fminspect.batch.table_formats import write_summaries
from fminspect.io.atomic import atomic_open, write_text
from fminspect.io.discovery import natural_key
from fminspect.metrics import CURVES, MEASURES_BY_KEY


def _keys(report: EvalReport) -> list[str]:
    seen: list[str] = []
    for ks in report.keys_by_dataset.values():
        seen += [k for k in ks if k not in seen]
    return seen


def _partial(r: MethodResult, keys: Sequence[str]) -> dict[str, int]:
    """Measures of ``r`` averaged over fewer images than ``r.n_images`` (e.g. CCm where some
    GTs have no image), with the number of images each averages."""
    return {k: r.counts[k] for k in keys if k in r.counts and r.counts[k] < r.n_images}


def _by_dataset(report: EvalReport) -> dict[str, list[MethodResult]]:
    out: dict[str, list[MethodResult]] = {}
    for r in report.results:
        out.setdefault(r.dataset, []).append(r)
    return out


def write_json(report: EvalReport, out: Path) -> None:
    """summary.json ({dataset: {method: {measure: value}}}) and results.json (everything)."""
    write_text(out / "summary.json", json.dumps(report.summary(), indent=2, sort_keys=False) + "\n")
    params = report.config.params
    results = {
        "fminspect": __version__,
        "measure_definition_version": MEASURE_DEFINITION_VERSION,
        "config": report.config.as_dict(),
        "measures": {
            k: {
                "label": MEASURES_BY_KEY[k].label(params),
                "family": MEASURES_BY_KEY[k].family,
                "higher_is_better": MEASURES_BY_KEY[k].higher_is_better,
                "dataset_aggregation": MEASURES_BY_KEY[k].aggregation,
            }
            for k in _keys(report)
        },
        "datasets": {
            ds: {
                r.method: {
                    "values": r.values,
                    "images": r.n_images,
                    "images_per_measure": r.counts,
                    "coverage": r.coverage.as_dict(),
                }
                for r in rs
            }
            for ds, rs in _by_dataset(report).items()
        },
        "selection": report.selection,
        "empty_gt": {
            ds: {"images": len(names), "names": names} for ds, names in report.empty_gt.items()
        },
        "subsets": report.subsets,
        "groups": report.groups,
        "input_digests_blake2b": dict(sorted(report.digests.items())),
        "problems": [p.as_dict() for p in report.problems],
    }
    if report.cluster is not None:  # where it was computed, and with what
        results["cluster"] = report.cluster
    write_text(out / "results.json", json.dumps(results, indent=2) + "\n")


def write_csv(report: EvalReport, out: Path) -> None:
    """per_image.csv, summary.csv, curves.csv, problems.csv."""
    params = report.config.params
    keys = _keys(report)
    labels = [MEASURES_BY_KEY[k].label(params) for k in keys]
    with atomic_open(out / "per_image.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "method", "image", *labels, "notes"])
        for row in report.per_image:
            w.writerow(
                [
                    row["dataset"],
                    row["method"],
                    row["image"],
                    *[repr(float(row[k])) if k in row else "" for k in keys],
                    row["notes"],
                ]
            )
    with atomic_open(out / "summary.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "method", "images", "coverage", *labels, "fewer images"])
        for r in report.results:
            w.writerow(
                [
                    r.dataset,
                    r.method,
                    r.n_images,
                    r.coverage.label,
                    *[repr(float(r.values[k])) if k in r.values else "" for k in keys],
                    "; ".join(f"{k} {n}/{r.n_images}" for k, n in _partial(r, keys).items()),
                ]
            )
    with atomic_open(out / "curves.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "method", "curve", "threshold", "value"])
        for r in report.results:
            for name in CURVES:  # registry order: P, R, F, E, IoU, Dice, TNR, …
                if name in r.mean_curves:
                    for t, v in enumerate(r.mean_curves[name]):
                        w.writerow([r.dataset, r.method, name, t, repr(float(v))])
    with atomic_open(out / "problems.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["severity", "dataset", "method", "image", "path", "message"])
        for p in report.problems:
            w.writerow([p.severity, p.dataset, p.method, p.name, str(p.path), p.message])


def _axis(values: list[np.ndarray], margin: float = 0.03) -> tuple[float, float]:
    lo = min(float(np.nanmin(v)) for v in values)
    hi = max(float(np.nanmax(v)) for v in values)
    pad = max((hi - lo) * margin, 1e-3)
    return max(lo - pad, 0.0), min(hi + pad, 1.05)


def plot_figures(report: EvalReport) -> list[Figure]:
    """The mean curves over images, per dataset: PR and ROC, F-measure, E-measure, IoU and
    Dice against the threshold — each plot made for the methods that have its curves (the
    ROC's come with every run that asks for a confusion-count measure:
    :data:`fminspect.batch.evaluation.ROC_CURVES`)."""
    beta2 = report.config.params.beta2
    figures = []
    for ds, rs in _by_dataset(report).items():
        if ds in report.subsets:  # `fminspect figure --datasets 'DS[subset]'` draws them
            continue
        for plot in CURVE_PLOTS:
            lines = []
            for r in sorted(rs, key=lambda r: natural_key(r.method)):
                xy = plot.xy(r.mean_curves)
                if xy is None:
                    continue
                label = r.method + ("" if r.coverage.complete else " ⚠")
                lines.append(Line(label, *xy))
            if not lines:
                continue
            figures.append(
                Figure(
                    f"{ds}_{plot.tag}",
                    f"{ds}: {plot.title.format(beta2=beta2)}",
                    plot.xlabel,
                    plot.ylabel,
                    _axis([ln.x for ln in lines]) if plot.tag == "pr" else (0.0, 1.0),
                    (0.0, 1.0) if plot.tag == "roc" else _axis([ln.y for ln in lines]),
                    tuple(lines),
                )
            )
    return figures


def write_plots(report: EvalReport, out: Path) -> None:
    """The curve plots of :func:`plot_figures` per dataset, as PNG and PDF (automatic
    ranges), in ``out/plots``."""
    render(plot_figures(report), out / "plots")


#: The tags of :func:`plot_figures`' files (``<dataset>_<tag>.png|pdf``).
PLOT_TAGS = tuple(p.tag for p in CURVE_PLOTS)
_PLOT_NAME = re.compile(rf".+_({'|'.join(PLOT_TAGS)})\.(png|pdf)")


def _remove_old_plots(folder: Path) -> None:
    """Remove plots an earlier run wrote into this output folder (they may show other
    datasets or parameters than the tables about to be written), then the folder if empty."""
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        if path.is_file() and _PLOT_NAME.fullmatch(path.name):
            path.unlink()
    if not any(folder.iterdir()):
        folder.rmdir()


def write_all(
    report: EvalReport, out: Path | str, *, plots: bool = True, plotter: PlotProcess | None = None
) -> Path:
    """Write every output file into ``out`` (created if needed). With ``plotter`` (see
    :class:`fminspect.batch.plots.PlotProcess`) the plots are rendered in its process, which
    has imported Matplotlib while the images were being scored, while the tables are
    written here."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _remove_old_plots(out / "plots")
    if plots and report.results and plotter is not None:
        plotter.start(plot_figures(report), out / "plots")  # drawn while the tables are written
        _write_tables(report, out)
        plotter.finish()
    else:
        _write_tables(report, out)
        if plots and report.results:
            write_plots(report, out)
    return out


def _write_tables(report: EvalReport, out: Path) -> None:
    write_json(report, out)
    write_csv(report, out)
    write_summaries(out)  # summary.md and .tex, from results.json, as `fminspect table` does
    write_statistics(report, out)


STATISTICS_FILES = ("statistics.json", "significance.csv")


def write_statistics(report: EvalReport, out: Path) -> None:
    """statistics.json (per dataset: the method, n and B; per key: each method's interval,
    every pair's difference, p, Holm-adjusted p and verdict, the groups) and
    significance.csv (the pairs, one per row). Without statistics in ``report``, files an
    earlier run wrote are removed: they would describe other results."""
    if report.statistics is None:
        for name in STATISTICS_FILES:
            (out / name).unlink(missing_ok=True)
        return
    params = report.config.params
    document = {
        "fminspect": __version__,
        "labels": {k: MEASURES_BY_KEY[k].label(params) for k in _keys(report)},
        "datasets": report.statistics,
    }
    write_text(out / "statistics.json", json.dumps(document, indent=1, allow_nan=True) + "\n")
    with atomic_open(out / "significance.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "dataset",
                "measure",
                "method a",
                "method b",
                "a − b",
                "p",
                "p (Holm)",
                "significant",
                "test",
                "images",
                "resamples",
            ]
        )
        for ds, st in report.statistics.items():
            setup = st["setup"]
            for k, ks in st["keys"].items():
                for pair in ks["pairs"]:
                    w.writerow(
                        [
                            ds,
                            MEASURES_BY_KEY[k].label(params),
                            pair["a"],
                            pair["b"],
                            repr(float(pair["difference"])),
                            repr(float(pair["p"])),
                            repr(float(pair["p_holm"])),
                            "yes" if pair["significant"] else "no",
                            setup["test"],
                            setup["images"],
                            setup["resamples"],
                        ]
                    )
