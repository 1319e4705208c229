"""Tables and files describing a study's result and how measures agree with people.

Used by ``fminspect rank aggregate``/``report`` and by the analysis window (which draws the
same rows). Every measure is named by its exact variant label; files carry the study, the
consensus rule, the excluded participants and the normalisation.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fminspect import __version__
from fminspect.batch.table_formats import grid_markdown, md_cell
from fminspect.io.atomic import atomic_open, replacing, strict_json, write_text
from fminspect.ranking.aggregate import GroupResult, StudyResult
from fminspect.ranking.agreement import ALPHA, HumanAgreementReport, RankedGroup
from fminspect.ranking.design import Design
from fminspect.ranking.intervals import MEAN_METHOD, PROPORTION_METHOD


def _f(v: float, digits: int = 3) -> str:
    return "–" if v is None or math.isnan(v) else f"{v:.{digits}f}"


def group_rows(result: StudyResult) -> list[dict[str, Any]]:
    """One row per group: consensus (as model names), reason, votes and agreement."""
    rows = []
    for g in result.groups:
        models = dict(zip(g.items, g.models, strict=True))
        rows.append(
            {
                "group": g.group,
                "sample": g.sample,
                "consensus": " > ".join(models[i] for i in g.consensus) if g.consensus else "",
                "reason": g.reason,
                "bt_order": " > ".join(models[i] for i in g.bt_order),
                "bt": "; ".join(
                    f"{models[i]} {b:+.2f}±{s:.2f}"
                    for i, b, s in zip(g.items, g.bt, g.bt_sd, strict=True)
                ),
                "jod": _jod_text(g, models),
                "jod_interval": g.jod.method if g.jod is not None else "",
                "separated": g.separation,
                "votes": g.votes,
                "participants": g.voters,
                "complete_orders": len(g.participant_orders),
                "circular_triads": g.circular_triads,
                "kendall_w": g.kendall_w,
                "kappa_free_marginal": g.kappa,
            }
        )
    return rows


def _jod_text(g: GroupResult, models: dict[str, str]) -> str:
    """A group's JOD scale, best first: "A +0.62 [+0.31, +0.95]; B …" (no interval when the
    group is separated or has one participant)."""
    if g.jod is None:
        return ""
    jod = g.jod
    return "; ".join(
        f"{models[g.items[k]]} {jod.scores[k]:+.2f}"
        + ("" if math.isnan(jod.low[k]) else f" [{jod.low[k]:+.2f}, {jod.high[k]:+.2f}]")
        for k in sorted(range(len(g.items)), key=lambda k: -jod.scores[k])
    )


def participant_rows(result: StudyResult) -> list[dict[str, Any]]:
    """One row per participant: attention, consistency, side bias, speed, exclusion."""
    return [
        {
            "participant": s.participant,
            "votes": s.votes,
            "attention": f"{s.checks_passed}/{s.checks}",
            "attention_rate": s.attention,
            "consistency": f"{s.consistent}/{s.repeats}",
            "consistency_rate": s.consistency,
            "left_share": s.left_share,
            "left_bias_p": s.left_bias_p,
            "left_bias_p_holm": s.left_bias_p_holm,
            "ties": s.ties,
            "median_rt_ms": s.median_rt_ms,
            "excluded": s.excluded,
        }
        for s in result.participants
    ]


def agreement_rows(report: HumanAgreementReport) -> list[dict[str, Any]]:
    """One row per measure, best θ first."""
    rows = [
        {
            "measure": report.labels[r.key],
            "key": r.key,
            "theta": r.theta,
            "theta_ci_low": r.theta_ci[0],
            "theta_ci_high": r.theta_ci[1],
            "error_rate": r.error_rate,
            "error_ci_low": r.error_ci[0],
            "error_ci_high": r.error_ci[1],
            "top1_error_rate": r.top1_error_rate,
            "top1_ci_low": r.top1_ci[0],
            "top1_ci_high": r.top1_ci[1],
            "groups": r.groups,
            "theta_not_different": " ".join(report.not_different(r.key, "theta")),
            "error_not_different": " ".join(report.not_different(r.key, "error")),
        }
        for r in report.rows
    ]
    return sorted(rows, key=lambda r: (r["theta"], r["error_rate"], r["key"]))


def _write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    with atomic_open(path, "w", newline="", encoding="utf-8") as fh:
        if not rows:
            return
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def study_summary(result: StudyResult) -> str:
    """A Markdown summary of a study's result."""
    d = result.design
    kept = [p for p in result.participants if not p.excluded]
    head = (
        f"# {d.name}: human ranking\n\n"
        f"{len(result.groups)} groups, {len(result.participants)} participants "
        f"({len(kept)} kept, excluded: {', '.join(result.excluded) or 'none'}), "
        f"consensus rule **{result.rule}**: {len(result.consensual)} of {len(result.groups)} "
        f"groups reach consensus.\n\nKendall's W (mean over groups) {_f(result.kendall_w)}, "
        f"free-marginal κ (Randolph; all pairs) {_f(result.kappa)}. Presentation: {d.presentation}"
        f"{f' (α={d.overlay_alpha:g})' if d.presentation == 'overlay' else ''}, GT "
        f"{'shown' if d.show_gt else 'hidden'}, "
        f"ties {'allowed' if d.allow_ties else 'not allowed'}, "
        f"{d.repeats} repeated pairs, {len(d.checks)} attention checks, seed {d.seed}. "
        f"Design: {_design_text(d)}.\n\n"
        f"{scales_basis(result)[0].upper()}{scales_basis(result)[1:]}.\n"
    )
    parts = grid_markdown(
        [
            "participant",
            "votes",
            "attention",
            "consistency",
            "left share",
            "side-bias p (Holm)",
            "median RT (ms)",
            "excluded",
        ],
        [
            [
                r["participant"],
                str(r["votes"]),
                r["attention"],
                r["consistency"],
                _f(r["left_share"], 2),
                f"{_f(r['left_bias_p'], 4)} ({_f(r['left_bias_p_holm'], 4)})",
                _f(r["median_rt_ms"], 0),
                "yes" if r["excluded"] else "",
            ]
            for r in participant_rows(result)
        ],
    )
    groups = grid_markdown(
        ["group", "sample", "consensus", "reason", "JOD [95 % interval]", "W", "κ", "circular"],
        [
            [
                md_cell(r["group"]),
                md_cell(r["sample"]),
                md_cell(r["consensus"] or "—"),
                md_cell(r["reason"]),
                md_cell(r["jod"] or "–")
                + (
                    f" — **{md_cell(r['separated'].split(' — ')[0])}**, no interval"
                    if r["separated"]
                    else ""
                ),
                _f(r["kendall_w"], 2),
                _f(r["kappa_free_marginal"], 2),
                str(r["circular_triads"]),
            ]
            for r in group_rows(result)
        ],
        escape=False,
    )
    separated = [g for g in result.groups if g.separation]
    if separated:
        groups += (
            f"\n\n**Separated** ({len(separated)} groups): every vote between some of the maps "
            "went one way (or some maps were never compared), so no scale has a finite distance "
            "there — the JOD and Bradley–Terry distances across the split, and their "
            "intervals, come from the prior."
        )
    return f"{head}\n## Participants\n\n{parts}\n\n## Groups\n\n{groups}\n"


def scales_basis(result: StudyResult) -> str:
    """How the study's scales were made, in one sentence (reports and the window)."""
    from fminspect.ranking.scaling import LOGIT_PER_JOD

    prior = result.prior
    return (
        "scales: Bradley–Terry strengths (rank aggregate, and the rule bt:P) by expectation "
        f"propagation (choix) with an isotropic Gaussian prior of precision {prior:g} "
        f"(variance {1 / prior:g}), ± one posterior s.d.; JOD (Thurstone Case V, 1 JOD = 75 % "
        f"preference as in pwcmp) by maximum a posteriori with the same prior "
        f"(precision {prior * LOGIT_PER_JOD**2:.3g} in JOD units), 95 % intervals by the "
        "expanded percentile bootstrap over participants"
    )


def _design_text(d: Design) -> str:
    if d.sampling == "full":
        return "full (every participant sees every pair)"
    if d.sampling == "incomplete":
        return (
            f"incomplete ({d.pairs_per_participant} pairs per participant; {d.slots} "
            f"participants see every pair {d.coverage}×)"
        )
    return (
        f"active ({d.pairs_per_participant} pairs per participant, chosen by expected "
        "information gain from the votes before them)"
    )


def write_study_report(result: StudyResult, out: Path | str) -> Path:
    """groups.csv, participants.csv, summary.md and summary.json into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(out / "groups.csv", group_rows(result))
    _write_csv(out / "participants.csv", participant_rows(result))
    write_text(out / "summary.md", study_summary(result), encoding="utf-8")
    write_text(
        out / "summary.json",
        strict_json(
            {
                "fminspect": __version__,
                "study": result.design.name,
                "study_id": result.design.study_id,
                "design_fingerprint": result.design.fingerprint,
                "rule": str(result.rule),
                "design": result.design.sampling,
                "scales": scales_basis(result),
                "prior_precision": result.prior,
                "excluded_participants": result.excluded,
                "kendall_w": result.kendall_w,
                "kappa_free_marginal": result.kappa,
                "consensual_groups": len(result.consensual),
                "groups": group_rows(result),
                "participants": participant_rows(result),
            }
        ),
        encoding="utf-8",
    )
    return out


#: The columns of :func:`agreement_cells` (the Markdown report and the analysis window).
AGREEMENT_COLUMNS = (
    "measure",
    "θ = 1 − ρ ↓",
    "95 % CI",
    "error rate ↓",
    "95 % CI",
    "top-1 error",
    "groups",
    "θ not different from",
)


def agreement_cells(report: HumanAgreementReport) -> list[list[str]]:
    """The measures-vs-humans table as text, one row per measure (best θ first), in the
    columns of :data:`AGREEMENT_COLUMNS`; the measure that picked the maps is flagged."""
    return [
        [
            r["measure"] + (" (picked the maps)" if r["key"] == report.selected_by else ""),
            _f(r["theta"]),
            f"[{_f(r['theta_ci_low'])}, {_f(r['theta_ci_high'])}]",
            f"{100 * r['error_rate']:.1f} %",
            f"[{100 * r['error_ci_low']:.1f}, {100 * r['error_ci_high']:.1f}] %"
            if not math.isnan(r["error_ci_low"])
            else "–",
            f"{100 * r['top1_error_rate']:.1f} %",
            str(r["groups"]),
            _others(r["theta_not_different"].split(), len(report.rows)),
        ]
        for r in agreement_rows(report)
    ]


def _others(keys: list[str], measures: int) -> str:
    """The measures a row is not significantly different from, in a table cell: their keys,
    or "all N others" when that is every one of them (with 20 measures and a handful of
    groups, the usual case)."""
    if not keys:
        return "–"
    if len(keys) == measures - 1 and measures > 2:
        return f"all {len(keys)} others"
    return ", ".join(keys)


def agreement_markdown(report: HumanAgreementReport, title: str) -> str:
    """The measures-vs-humans table in Markdown."""
    n = max((r.groups for r in report.rows), default=0)
    table = grid_markdown(list(AGREEMENT_COLUMNS), agreement_cells(report))
    notes = "".join(f"\n- {g}: skipped ({why})" for g, why in report.skipped)
    notes += "".join(f"\n- {g}: {why}" for g, why in report.notes)
    basis = "".join(f"\n- {line}" for line in report.basis)
    return (
        f"# Measures against human rankings: {title}\n\n{table}\n\n"
        + (f"What these numbers rest on:{basis}\n\n" if basis else "")
        + f"θ = 1 − Spearman ρ between a measure's and the people's order of each group's maps, "
        f"averaged over {n} groups; error rate = share of groups ordered differently (a tie "
        f"counts as an error). 95 % intervals over the {n} groups: θ by {MEAN_METHOD}, the "
        f"error rates by {PROPORTION_METHOD}; both cover at least their nominal rate at any "
        f"number of groups (fminspect.ranking.intervals). Measures are compared in pairs on "
        f"the same groups — θ by a betting test of the mean difference, error rates by exact "
        f"McNemar — Holm-adjusted over all {len(report.comparisons)} pairs; 'θ not different "
        f"from' lists those at adjusted p ≥ {ALPHA:g} (the JSON has every p-value). "
        f"Normalisation: {report.normalization}. fminspect {__version__}.\n"
        + (f"\nNotes:{notes}\n" if notes else "")
    )


def write_agreement(report: HumanAgreementReport, out: Path | str, title: str) -> Path:
    """measures_vs_humans.{csv,md,json,png} into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = agreement_rows(report)
    _write_csv(out / "measures_vs_humans.csv", rows)
    write_text(out / "measures_vs_humans.md", agreement_markdown(report, title), encoding="utf-8")
    write_text(
        out / "measures_vs_humans.json",
        strict_json(
            {
                "fminspect": __version__,
                "title": title,
                "normalization": report.normalization,
                "basis": list(report.basis),
                "selected_by": report.selected_by,
                "intervals": {
                    "level": 0.95,
                    "theta": MEAN_METHOD,
                    "error_rate": PROPORTION_METHOD,
                    "top1_error_rate": PROPORTION_METHOD,
                    "n": "groups (the column 'groups' of each row)",
                },
                "rows": rows,
                "comparisons": [dataclasses.asdict(c) for c in report.comparisons],
                "skipped": [list(s) for s in report.skipped],
                "notes": [list(n) for n in report.notes],
            }
        ),
        encoding="utf-8",
    )
    plot_agreement(report, out / "measures_vs_humans.png", title)
    return out


def tied_with_best(
    report: HumanAgreementReport, rows: list[dict[str, Any]], key: str
) -> list[bool]:
    """For the chart of ``key`` ('theta' or 'error_rate'): whether each row is the best
    measure or not significantly different from it (Holm-adjusted paired comparisons at
    :data:`ALPHA`) — the bars drawn dark in both charts."""
    if not rows:
        return []
    quantity = "theta" if key == "theta" else "error"
    best = min(rows, key=lambda r: (r[key], r["key"]))["key"]
    tied = set(report.not_different(best, quantity)) | {best}
    return [r["key"] in tied for r in rows]


#: The legend of the dark bars (:func:`tied_with_best`).
TIED_NOTE = (
    f"Dark bars: the best measure and those not significantly different from it "
    f"(paired tests, Holm-adjusted, α = {ALPHA:g})"
)


def plot_agreement(report: HumanAgreementReport, path: Path, title: str) -> None:
    """Bar chart of θ and the error rate per measure, with their 95 % intervals; the best
    measure and those not significantly different from it are drawn dark."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import numpy as np

    rows = agreement_rows(report)
    if not rows:
        return
    y = np.arange(len(rows))
    fig, axes = plt.subplots(1, 2, figsize=(9, 0.32 * len(rows) + 1.4), dpi=130, sharey=True)
    for ax, key, label in (
        (axes[0], "theta", "θ = 1 − ρ (lower is better)"),
        (axes[1], "error_rate", "error rate in % (lower is better)"),
    ):
        prefix = "theta" if key == "theta" else "error"
        scale = 100.0 if key == "error_rate" else 1.0  # the error rate in %, as in the table
        v = scale * np.array([r[key] for r in rows])
        lo = scale * np.array([r[f"{prefix}_ci_low"] for r in rows])
        hi = scale * np.array([r[f"{prefix}_ci_high"] for r in rows])
        err = np.vstack([np.nan_to_num(v - lo), np.nan_to_num(hi - v)])
        dark, light = ("#2b4a7e", "#a9bfe0") if key == "theta" else ("#a3501f", "#f0c2a3")
        colours = [dark if t else light for t in tied_with_best(report, rows, key)]
        ax.barh(y, v, xerr=err, color=colours, capsize=2)
        ax.set_xlabel(label, fontsize=8)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=7)
    axes[0].set_yticks(
        y,
        [
            r["measure"] + (" (picked the maps)" if r["key"] == report.selected_by else "")
            for r in rows
        ],
    )
    axes[0].invert_yaxis()
    fig.suptitle(f"Measures against human rankings: {title}", fontsize=9)
    fig.text(0.5, 0.005, TIED_NOTE, ha="center", va="bottom", fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    with replacing(path) as tmp:
        fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png", metadata={"Software": None})
    plt.close(fig)


def ranked_groups(result: StudyResult) -> tuple[list[RankedGroup], list[str]]:
    """The consensual groups of a study as human-ranked groups (maps best first), and a
    message for each group whose files cannot be read (it is left out)."""
    from fminspect.io.loading import load_image, load_map
    from fminspect.io.validation import LoadError

    out, problems = [], []
    for g in result.consensual:
        assert g.consensus is not None  # consensual groups have a consensus
        grp = result.design.group(g.group)
        if not grp.gt:
            problems.append(f"{g.group}: the study has no GT for this group")
            continue
        try:
            maps = tuple(load_map(grp.item(i).path).array for i in g.consensus)
            image = load_image(grp.image) if grp.image else None
            gt = load_map(grp.gt).array
        except LoadError as exc:
            problems.append(f"{g.group}: {exc}")
            continue
        out.append(
            RankedGroup(g.group, gt, maps, image, tuple(grp.item(i).model for i in g.consensus))
        )
    return out, problems
