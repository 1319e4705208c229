"""Writing a meta-measure run: per-case records, the summary (CSV, Markdown, LaTeX), the
protocol (JSON) and a plot.

The summary is in the shape of the papers' tables: one row per measure (named by its exact
variant), one column per meta-measure statistic and dataset. Lower is better in every
column except the signed mean score change, where closer to 0 is better.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict
from pathlib import Path

from fminspect import MEASURE_DEFINITION_VERSION
from fminspect.batch.table_formats import grid_latex, grid_markdown
from fminspect.io.atomic import atomic_open, replacing, write_text
from fminspect.meta import META_MEASURES
from fminspect.meta.runner import MetaReport


def _fmt(v: float, pct: bool) -> str:
    if v is None or math.isnan(v):
        return "–"
    return f"{100 * v:.1f}" if pct else f"{v:.3f}"


def columns(report: MetaReport) -> list[tuple[str, str, str]]:
    """(meta, statistic, dataset) of every summary column, in protocol order."""
    order = {m: i for i, m in enumerate(META_MEASURES)}
    seen = {(r.meta, r.statistic, r.dataset) for r in report.summary}
    ds_order = {d: i for i, d in enumerate(report.datasets)}
    return sorted(seen, key=lambda c: (order.get(c[0], 99), c[1], ds_order.get(c[2], 99)))


def measures(report: MetaReport) -> list[str]:
    """Measure keys present, in the order of the measure registry."""
    from fminspect.metrics import MEASURE_KEYS

    present = {r.measure for r in report.summary}
    return [k for k in MEASURE_KEYS if k in present]


def table(report: MetaReport) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the wide summary (rates in %)."""
    cols = columns(report)
    values = {(r.meta, r.statistic, r.dataset, r.measure): r for r in report.summary}
    header = ["measure"] + [
        f"{meta}: {stat} · {ds}" + (" (%)" if "rate" in stat else "") for meta, stat, ds in cols
    ]
    rows = []
    for key in measures(report):
        row = [report.labels.get(key, key)]
        for meta, stat, ds in cols:
            r = values.get((meta, stat, ds, key))
            row.append(_fmt(r.value, "rate" in stat) if r else "")
        rows.append(row)
    return header, rows


def write_meta(report: MetaReport, out: Path | str, *, plot: bool = True) -> Path:
    """cases.csv, summary.csv/.md/.tex, protocol.json and meta.png/.pdf into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / "cases.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "dataset",
                "image",
                "meta",
                "case",
                "model",
                "measure",
                "reference",
                "test",
                "outcome",
                "trials",
                "detail",
            ]
        )
        for c in report.cases:
            w.writerow(
                [
                    c.dataset,
                    c.image,
                    c.meta,
                    c.case,
                    c.model,
                    c.measure,
                    repr(c.reference),
                    repr(c.test),
                    "" if c.outcome is None else c.outcome,
                    c.trials,
                    c.detail,
                ]
            )
    with atomic_open(out / "summary.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "meta", "statistic", "measure", "variant", "value", "n"])
        for r in report.summary:
            w.writerow(
                [
                    r.dataset,
                    r.meta,
                    r.statistic,
                    r.measure,
                    report.labels.get(r.measure, r.measure),
                    repr(r.value),
                    r.n,
                ]
            )
    header, rows = table(report)
    caption = protocol_caption(report)
    write_text(
        out / "summary.md",
        "# Meta-measures\n\n" + grid_markdown(header, rows) + f"\n\n{caption}\n",
        encoding="utf-8",
    )
    write_text(out / "summary.tex", grid_latex(header, rows, caption=caption), encoding="utf-8")
    protocol = {
        "fminspect": report.version,
        "measure_definition_version": MEASURE_DEFINITION_VERSION,
        "protocol": report.config.as_dict(),
        "datasets": report.datasets,
        "gt_switch_pseudo_gts": report.switched_with,
        "labels": report.labels,
        "problems": [
            {
                "path": str(p.path),
                "message": p.message,
                "severity": p.severity,
                "dataset": p.dataset,
                "method": p.method,
                "name": p.name,
            }
            for p in report.problems
        ],
        "summary": [asdict(r) for r in report.summary],
    }
    write_text(
        out / "protocol.json", json.dumps(protocol, indent=1, default=str) + "\n", encoding="utf-8"
    )
    if plot and report.summary:
        write_plot(report, out)
    return out


def protocol_caption(report: MetaReport) -> str:
    """One paragraph stating the exact protocol of the meta-measures that ran."""
    from fminspect.meta.protocols import PROTOCOLS

    c = report.config

    def chosen(meta: str) -> str:
        sel = c.select_for(meta)
        if sel is None:
            return "every model's map"
        return sel.describe() if sel.rule == "top" else f"maps with {sel.describe()}"

    ran = set(c.metas)
    preset = PROTOCOLS[c.protocol]
    changed = c.as_dict()["differs_from_preset"]
    parts = [
        f"Protocol {c.protocol} ({preset.title})"
        + (f", changed: {', '.join(changed)}" if changed else ""),
        f"normalisation {c.params.norm.label}; seed {c.seed}",
    ]
    if "generic" in ran:
        shapes = {
            "circle": f"centred circle r = {c.circle_radius:g}·min(h, w)",
            "gaussian": f"centred Gaussian σ = {c.gaussian_sigma:g}·min(h, w)",
        }
        parts.append(
            f"generic maps: {', '.join(shapes[g] for g in c.generic_maps)}; error = scores "
            f"better than the mean of {chosen('generic')} on the image"
        )
    if "noise_map" in ran:
        parts.append(
            f"noise map: N({c.noise_mean:g}, {c.noise_std:g}²) clipped to [0, 1], against the "
            f"mean of {chosen('noise_map')}"
        )
    if "gt_switch" in ran:
        how = (
            "one derangement of the dataset"
            if c.switches == 1
            else f"{c.switches} random other GTs per image"
        )
        parts.append(f"GT switch: {chosen('gt_switch')}, {how} (nearest resize)")
    if "noise_injection" in ran:
        of = "the whole image's pixels" if c.inject_of == "image" else "the region's pixels"
        parts.append(
            f"noise injection: {chosen('noise_injection')}; N(0, {c.inject_std:g}²) on "
            f"{100 * c.inject_fraction:g} % of {of}, drawn where map > "
            f"{c.inject_fg_threshold:g} on GT background, negative noise truncated, capped at 1"
        )
    if "annotation" in ran:
        meaning = {
            "mean |Δ|": "mean |Δ| = mean absolute score change",
            "mean Δ": "mean Δ = signed mean score change (closer to 0 is better)",
            "1 − ρ": "1 − ρ = change of the models' ranking",
        }
        parts.append(
            f"annotation: GT dilated/eroded by a {c.morph_size}×{c.morph_size} kernel "
            f"×{c.morph_iterations}; " + ", ".join(meaning[m] for m in c.annotation_stats)
        )
    if "application" in ran:
        parts.append(
            f"application: {c.application}, θ = 1 − ρ between the orders by measure and by "
            "application"
        )
    if "human" in ran:
        meaning = {
            "θ": "θ = 1 − ρ against the people's order",
            "error rate": "error rate = groups ordered differently",
        }
        parts.append("human: " + ", ".join(meaning[m] for m in c.human_stats))
    return (
        "Error rates in %, lower is better. "
        + "; ".join(parts)
        + f". Every step is cited in protocol.json. fminspect {report.version}."
    )


def write_plot(report: MetaReport, out: Path) -> None:
    """One panel per meta-measure statistic: a bar per measure, grouped by dataset."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import numpy as np

    stats = sorted(
        {(r.meta, r.statistic) for r in report.summary},
        key=lambda s: columns(report).index(next(c for c in columns(report) if c[:2] == s)),
    )
    keys = measures(report)
    datasets = [d for d in report.datasets if any(r.dataset == d for r in report.summary)]
    values = {(r.meta, r.statistic, r.dataset, r.measure): r.value for r in report.summary}
    ncols = min(3, len(stats))
    nrows = math.ceil(len(stats) / ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(4.2 * ncols, 0.22 * len(keys) * nrows + 1.2 * nrows),
        dpi=120,
        squeeze=False,
    )
    y = np.arange(len(keys))
    height = 0.8 / max(1, len(datasets))
    for ax, (meta, stat) in zip(axes.flat, stats, strict=False):
        for j, ds in enumerate(datasets):
            scale = 100.0 if "rate" in stat else 1.0  # rates in %, as in the tables
            v = scale * np.array([values.get((meta, stat, ds, k), np.nan) for k in keys])
            ax.barh(y + j * height, v, height=height, label=ds)
        ax.set_yticks(
            y + height * (len(datasets) - 1) / 2,
            [report.labels.get(k, k) for k in keys],
            fontsize=6,
        )
        ax.invert_yaxis()
        ax.set_title(f"{meta}: {stat}" + (" (%)" if "rate" in stat else ""), fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.3)
        if "mean Δ" in stat:
            ax.axvline(0, color="k", lw=0.6)
    for ax in list(axes.flat)[len(stats) :]:
        ax.axis("off")
    if len(datasets) > 1:
        axes.flat[0].legend(fontsize=6)
    fig.tight_layout()
    with replacing(out / "meta.png") as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    with replacing(out / "meta.pdf") as tmp:
        fig.savefig(
            tmp, format="pdf", metadata={"CreationDate": None, "Producer": None, "Creator": None}
        )
    plt.close(fig)
