"""Writing a batch run's results: JSON, CSV, Markdown, LaTeX, curves and plots.

Every file names the exact variant of every number (column headers carry the variant label,
e.g. ``maxFm β²=0.3``; captions and results.json carry the normalisation and resize rule).
Nothing here depends on timing or worker order, and PNG/PDF metadata carry no dates, so the
same inputs give byte-identical files. No pickles.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fminspect import MEASURE_DEFINITION_VERSION, __version__
from fminspect.batch.plots import CURVE_PLOTS, Figure, Line, PlotProcess, render
from fminspect.batch.runner import EvalReport, MethodResult
from fminspect.io.atomic import atomic_open, write_text
from fminspect.io.discovery import natural_key
from fminspect.metrics import CURVES, MEASURES_BY_KEY


def _fmt(v: float, digits: int = 3) -> str:
    return "nan" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def _keys(report: EvalReport) -> list[str]:
    seen: list[str] = []
    for ks in report.keys_by_dataset.values():
        seen += [k for k in ks if k not in seen]
    return seen


def _ranks(results: Sequence[MethodResult], key: str) -> dict[str, int]:
    """Rank (1 = best) of each method on ``key``; ties share a rank. Only methods evaluated
    on every image whose ``key`` averages as many images as the most any such method's does
    are ranked: a value over fewer images is not comparable with the others — but when every
    method's averages the same fewer images (a NaN on each empty GT with ``wfm_empty=nan``,
    C^ω_β where some GTs have no image), they are compared on those images."""
    info = MEASURES_BY_KEY[key]
    complete = [r for r in results if r.coverage.complete]
    most = max((r.counts.get(key, r.n_images) for r in complete), default=0)
    vals = [
        (r.method, r.values.get(key, math.nan))
        for r in complete
        if r.counts.get(key, r.n_images) == most
    ]
    vals = [(m, v) for m, v in vals if not math.isnan(v)]
    ordered = sorted({round(v, 12) for _, v in vals}, reverse=info.higher_is_better)
    return {m: ordered.index(round(v, 12)) + 1 for m, v in vals}


def _partial(r: MethodResult, keys: Sequence[str]) -> dict[str, int]:
    """Measures of ``r`` averaged over fewer images than ``r.n_images`` (e.g. CCm where some
    GTs have no image), with the number of images each averages."""
    return {k: r.counts[k] for k in keys if k in r.counts and r.counts[k] < r.n_images}


def _partial_note(rs: Sequence[MethodResult], keys: Sequence[str]) -> str:
    parts = [
        f"{r.method} {k} ({n} of {r.n_images})" for r in rs for k, n in _partial(r, keys).items()
    ]
    return "averaged over fewer images than the row's: " + ", ".join(parts) if parts else ""


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


def _caption(report: EvalReport) -> str:
    c = report.config
    return (
        f"fminspect {__version__}; {c.params.norm.label}; predictions of another size "
        f"resized to the GT ({c.interpolation}); max/mean = max/mean of the image-averaged "
        "256-threshold curve; adp = adaptive threshold 2·mean." + selection_words(report.selection)
    )


def selection_words(selection: dict[str, Any]) -> str:
    """What chose the images, as a caption says it ('' when every image counts)."""
    words = ""
    image_list = selection.get("image_list") or {}
    if image_list:
        kept = ", ".join(
            f"{d['images']} of {d['of']} in {ds}" for ds, d in image_list.get("kept", {}).items()
        )
        words += f" Only the images of {Path(str(image_list['source'])).name} ({kept})."
    if selection.get("exclude_empty_gt"):
        words += " Images whose GT is empty are left out."
    if selection.get("groups"):
        words += (
            " Grouped: every value is the mean over the groups of each group's value (a curve's"
            " max or mean is taken on the mean of the groups' mean curves)."
        )
    return words


def write_markdown(report: EvalReport, out: Path) -> None:
    """summary.md: a table per dataset; best **bold**, second <u>underlined</u>, third *italic*."""
    write_text(out / "summary.md", summary_markdown(report), encoding="utf-8")


def summary_markdown(report: EvalReport, *, subsets: bool = True) -> str:
    """summary.md's text (with ``subsets=False`` without the subsets' tables, as the
    terminal shows it)."""
    params = report.config.params
    lines = [f"# fminspect evaluation\n\n{_caption(report)} ↑ higher is better, ↓ lower.\n"]
    for ds, rs in _by_dataset(report).items():
        if not subsets and ds in report.subsets:
            continue
        keys = list(report.keys_by_dataset[ds])
        ranks = {k: _ranks(rs, k) for k in keys}
        heads = [
            MEASURES_BY_KEY[k].label(params)
            + (" ↑" if MEASURES_BY_KEY[k].higher_is_better else " ↓")
            for k in keys
        ]
        lines += [
            f"\n## {ds}\n",
            "| method | images | " + " | ".join(heads) + " |",
            "|---|---:|" + "---:|" * len(keys),
        ]
        for r in rs:
            cells = []
            partial = _partial(r, keys)
            for k in keys:
                v = _fmt(r.values.get(k, math.nan))
                rank = ranks[k].get(r.method)
                v = {1: f"**{v}**", 2: f"<u>{v}</u>", 3: f"*{v}*"}.get(rank or 0, v)
                cells.append(v + (" ‡" if k in partial else ""))
            cov = r.coverage.label
            lines.append(f"| {r.method} | {cov} | " + " | ".join(cells) + " |")
        incomplete = [r.method for r in rs if not r.coverage.complete]
        lines.append(
            "\nBest **bold**, second <u>underlined</u>, third *italic*"
            + (" (among the methods evaluated on every image)." if incomplete else ".")
        )
        if incomplete:
            lines.append(
                "\n⚠ not evaluated on every image (a prediction or GT map missing or "
                f"unreadable, see problems.csv), so not ranked: {', '.join(incomplete)}"
            )
        note = _partial_note(rs, keys)
        if note:
            lines.append(f"\n‡ {note}")
        if report.empty_gt.get(ds):  # a subset's own count is not known here: not repeated
            lines.append("\n" + empty_gt_line(report, ds))
    if not subsets and report.subsets:
        lines.append(
            f"\n{len(report.subsets)} subsets are in summary.md and the other files but the "
            "plots (`fminspect table OUT --datasets 'DATASET[subset]' …`, `fminspect figure`)."
        )
    return "\n".join(lines) + "\n"


def empty_gt_line(report: EvalReport, dataset: str) -> str:
    """What became of a dataset's images whose GT is empty (one sentence)."""
    n = len(report.empty_gt.get(dataset, []))
    if report.selection.get("exclude_empty_gt"):
        return f"{dataset}: {n} image{'s' if n != 1 else ''} with an empty GT left out."
    wfm = (
        "; weighted F leaves them out (wfm_empty=nan)"
        if report.config.params.wfm_empty == "nan"
        else ""
    )
    return (
        f"{dataset}: {n} image{'s' if n != 1 else ''} with an empty GT, kept in the values"
        f"{wfm} (--exclude-empty-gt leaves them out)."
    )


_TEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "_": r"\_",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "$": r"\$",
    "^": r"\^{}",
    "~": r"\textasciitilde{}",
    ">": r"\textgreater{}",
    "<": r"\textless{}",
    "β²": r"$\beta^2$",
    "α": r"$\alpha$",
    "γ": r"$\gamma$",
    "λ": r"$\lambda$",
    "ρ": r"$\rho$",
    "θ": r"$\theta$",
    "Δ": r"$\Delta$",
    "σ": r"$\sigma$",
    "·": r"$\cdot$",
    "≥": r"$\geq$",
    "×": r"$\times$",
    "²": r"$^2$",
    "−": "-",
    "⚠": r"$\dagger$",
    "β": r"$\beta$",
    "ω": r"$\omega$",
    "φ": r"$\phi$",
    "ϕ": r"$\phi$",
    "ε": r"$\epsilon$",
    "μ": r"$\mu$",
    "ξ": r"$\xi$",
    "Φ": r"$\Phi$",
    "±": r"$\pm$",
    "√": r"$\surd$",
    "≤": r"$\leq$",
    "→": r"$\rightarrow$",
    "–": "--",
    "—": "---",
    "|": r"\textbar{}",
    "†": r"$\dagger$",
    "‡": r"$\ddagger$",
    "’": "'",
}
_TEX_PATTERN = re.compile("|".join(re.escape(k) for k in sorted(_TEX, key=len, reverse=True)))


def tex_escape(text: str) -> str:
    """Text for a LaTeX table: special characters escaped (in one pass, so no replacement is
    escaped again), the Greek and mathematical signs used in variant labels and captions
    (β², α, ρ, θ, Δ, ≥, ×, σ, ·, †) in math mode; ``<``/``>`` as text symbols, which the
    default OT1 font encoding would otherwise print as ¡ and ¿."""
    return _TEX_PATTERN.sub(lambda m: _TEX[m.group(0)], text)


def write_latex(report: EvalReport, out: Path) -> None:
    """summary.tex: booktabs tables; best \\textbf, second \\underline, third \\textit."""
    params = report.config.params
    lines = ["% fminspect evaluation — needs \\usepackage{booktabs}", f"% {_caption(report)}"]
    for ds, rs in _by_dataset(report).items():
        keys = list(report.keys_by_dataset[ds])
        ranks = {k: _ranks(rs, k) for k in keys}
        lines += [
            r"\begin{table}[t]",
            r"\centering",
            r"\small",
            rf"\caption{{{tex_escape(ds)}: {tex_escape(_caption(report))}}}",
            r"\begin{tabular}{l" + "r" * len(keys) + "}",
            r"\toprule",
            "Method & "
            + " & ".join(
                tex_escape(MEASURES_BY_KEY[k].label(params))
                + (r"$\uparrow$" if MEASURES_BY_KEY[k].higher_is_better else r"$\downarrow$")
                for k in keys
            )
            + r" \\",
            r"\midrule",
        ]
        for r in rs:
            cells = []
            partial = _partial(r, keys)
            for k in keys:
                v = _fmt(r.values.get(k, math.nan))
                rank = ranks[k].get(r.method)
                v = {1: rf"\textbf{{{v}}}", 2: rf"\underline{{{v}}}", 3: rf"\textit{{{v}}}"}.get(
                    rank or 0, v
                )
                cells.append(v + (r"$^\ddagger$" if k in partial else ""))
            name = tex_escape(r.method) + ("" if r.coverage.complete else r"$^\dagger$")
            lines.append(f"{name} & " + " & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
        lines.append(
            r"\\[2pt]{\footnotesize Best \textbf{bold}, second \underline{underlined}, "
            r"third \textit{italic}.}"
        )
        if any(not r.coverage.complete for r in rs):
            lines.append(
                r"\\{\footnotesize $^\dagger$ evaluated on a subset, so not ranked: "
                r"for some images a prediction or GT map is missing or unreadable.}"
            )
        note = _partial_note(rs, keys)
        if note:
            lines.append(r"\\{\footnotesize $^\ddagger$ " + tex_escape(note) + ".}")
        lines += [r"\end{table}", ""]
    write_text(out / "summary.tex", "\n".join(lines), encoding="utf-8")


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
    write_markdown(report, out)
    write_latex(report, out)
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
