"""Running the meta-measures over datasets and turning scores into outcomes.

The models' own scores come from :func:`fminspect.batch.evaluate_datasets` (so they are
read from, or added to, ``fminspect eval``'s cache); the synthetic and perturbed cases are
scored in work units of one image each, run serially, on local processes or on a Dask
cluster like ``fminspect eval``. Outcomes are computed here, in the driver, in natural
sample order, so the results do not depend on the number of workers.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from fminspect import __version__
from fminspect.batch.progress import Progress
from fminspect.batch.runner import evaluate_datasets, run_units
from fminspect.batch.stopped import RunStopped
from fminspect.io.discovery import Dataset, Sample
from fminspect.io.validation import Problem
from fminspect.meta.maps import case_seed, derangement
from fminspect.meta.protocol import MetaConfig, MetaUnit, MetaUnitResult, meta_unit
from fminspect.metrics import MEASURES_BY_KEY
from fminspect.pipeline.config import EvalConfig


@dataclass(frozen=True, slots=True)
class Case:
    """One comparison: what was scored, against what, and whether the measure erred.

    ``outcome`` is 1 (the measure erred), 0 (it did not) or None (not applicable, with the
    reason in ``detail``); for ``annotation`` and ``application`` cases, ``value`` is the
    statistic itself (a score change, 1 − ρ).
    """

    dataset: str
    image: str
    meta: str
    case: str
    model: str
    measure: str
    reference: float
    test: float
    outcome: int | None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One statistic of one meta-measure, measure and dataset."""

    dataset: str
    meta: str
    statistic: str  # e.g. 'error rate (circle)', 'mean Δ (dilate)', '1 − ρ (erode)', 'θ'
    measure: str
    value: float
    n: int


@dataclass(slots=True)
class MetaReport:
    """Everything a meta-measure run produced."""

    config: MetaConfig
    datasets: list[str]
    cases: list[Case] = field(default_factory=list)
    summary: list[SummaryRow] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    derangements: dict[str, dict[str, str]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    version: str = __version__

    def value(self, dataset: str, meta: str, statistic: str, measure: str) -> float:
        """One summary value (KeyError when absent)."""
        for r in self.summary:
            if (r.dataset, r.meta, r.statistic, r.measure) == (dataset, meta, statistic, measure):
                return r.value
        raise KeyError((dataset, meta, statistic, measure))


def _better(key: str, test: float, reference: float) -> bool:
    return test > reference if MEASURES_BY_KEY[key].higher_is_better else test < reference


def _rho(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman ρ; NaN when either side is constant or there are fewer than two values."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(spearmanr(x, y).statistic)


def run_meta(
    datasets: Sequence[Dataset],
    config: MetaConfig | None = None,
    *,
    cache_path: Path | str,
    methods: Sequence[str] | None = None,
    jobs: int = 1,
    scheduler: Any = None,
    ranked: Sequence[Path] = (),
    progress: bool | None = None,
) -> MetaReport:
    """Run the configured meta-measures on ``datasets`` (and ``ranked`` human-ranked folders)."""
    config = config or MetaConfig()
    datasets = list(datasets)
    report = MetaReport(config, [d.name for d in datasets])
    # the models' own scores (cached like fminspect eval's); the good-map criterion too
    units: list[MetaUnit] = []
    originals: dict[tuple[str, str, str], dict[str, float]] = {}
    keys_by_ds: dict[str, tuple[str, ...]] = {}
    for ds in datasets:
        with_images = ds.image is not None and any(s.image for s in ds.samples)
        keys = config.keys_for(with_images)
        keys_by_ds[ds.name] = keys
        wanted = tuple(dict.fromkeys((*keys, config.good_key)))
        # `fminspect eval`'s cache holds a record per measure family: whatever an earlier
        # eval run computed with the same parameters is reused
        ev = evaluate_datasets(
            [ds],
            EvalConfig(config.params, wanted, config.interpolation, config.max_pixels),
            cache_path=cache_path,
            methods=methods,
            jobs=jobs,
            scheduler=scheduler,
            progress=progress,
        )
        report.problems += ev.problems
        for row in ev.per_image:
            originals[(ds.name, row["image"], row["method"])] = {
                k: row.get(k, math.nan) for k in wanted
            }
        names = [m for m in ds.method_names if methods is None or m in methods]
        samples = ds.samples
        wrong: dict[str, Any] = {}
        if "gt_switch" in config.metas and len(samples) >= 2:
            perm = derangement(
                len(samples), np.random.default_rng(case_seed(config.seed, ds.name, "gt_switch"))
            )
            wrong = {s.name: samples[int(j)] for s, j in zip(samples, perm, strict=True)}
            report.derangements[ds.name] = {k: v.name for k, v in wrong.items()}
        elif "gt_switch" in config.metas:
            report.problems.append(
                Problem(
                    Path(str(ds.gt.path)),
                    "the GT switch needs at least two images",
                    "warning",
                    dataset=ds.name,
                )
            )
        for s in samples:
            taking_part = {m: s.preds[m] for m in names if m in s.preds}
            w = wrong.get(s.name)
            units.append(
                MetaUnit(
                    Sample(ds.name, s.name, s.gt, s.image, taking_part),
                    w.name if w else None,
                    w.gt if w else None,
                    keys,
                    config,
                )
            )
    results: dict[tuple[str, str], MetaUnitResult] = {}
    with Progress(len(units), "meta-measures", enabled=progress) as bar:
        try:
            for res in run_units(units, meta_unit, jobs=jobs, scheduler=scheduler):
                results[(res.dataset, res.sample)] = res
                bar.advance()
        except (RunStopped, KeyboardInterrupt) as exc:  # the cases are not cached
            what = exc.what if isinstance(exc, RunStopped) else "interrupted"
            raise RunStopped(
                f"{what} during the meta-measure cases ({bar.done} of {len(units)} images "
                f"done, not cached); the models' scores are kept in {cache_path}"
            ) from None
    for ds in datasets:
        order = [s.name for s in ds.samples]
        for name in order:
            res = results.get((ds.name, name))
            if res is None:
                continue
            report.problems += res.problems
            report.cases += _outcomes(config, ds.name, name, res, originals, keys_by_ds[ds.name])
    report.summary = _summarise(report.cases, config)
    if "gt_switch" in config.metas:
        for ds in datasets:
            if not any(c.meta == "gt_switch" and c.dataset == ds.name for c in report.cases):
                report.problems.append(
                    Problem(
                        Path(str(ds.gt.path)),
                        f"GT switch: no map is good enough "
                        f"({config.good_key} {_good_sign(config)} {config.good_min:g})",
                        "warning",
                        dataset=ds.name,
                    )
                )
    if "human" in config.metas and ranked:
        report.summary += _human(ranked, config, report)
    report.labels = {
        r.measure: MEASURES_BY_KEY[r.measure].label(config.params) for r in report.summary
    }
    # a file that is bad for `eval` is bad for the meta-measures too: report it once
    report.problems = list(
        {(str(p.path), p.message, p.method): p for p in report.problems}.values()
    )
    return report


def _good_sign(config: MetaConfig) -> str:
    return "≥" if MEASURES_BY_KEY[config.good_key].higher_is_better else "≤"


def is_good(config: MetaConfig, value: float) -> bool:
    """Whether a map with ``value`` of ``config.good_key`` enters the GT switch."""
    if MEASURES_BY_KEY[config.good_key].higher_is_better:
        return value >= config.good_min
    return value <= config.good_min


def _outcomes(
    config: MetaConfig,
    dataset: str,
    image: str,
    res: MetaUnitResult,
    originals: dict[tuple[str, str, str], dict[str, float]],
    keys: tuple[str, ...],
) -> list[Case]:
    own = {m: s for (d, i, m), s in originals.items() if d == dataset and i == image}
    cases: list[Case] = []
    by: dict[tuple[str, str], dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for meta, case, model, key, value, detail in res.rows:
        by[(meta, case)][model][key] = value
        if meta in ("generic", "noise_map"):
            # the synthetic map against the mean of the real models on this image
            vals = [s[key] for s in own.values() if not math.isnan(s.get(key, math.nan))]
            ref = float(np.mean(vals)) if vals else math.nan
            detail = f"mean of {len(vals)} models" if vals else "no model score"
        elif meta in ("gt_switch", "noise_injection"):
            # the same map, perturbed or against another GT, against itself
            ref = own.get(model, {}).get(key, math.nan)
            if meta == "gt_switch":
                good = own.get(model, {}).get(config.good_key, math.nan)
                if not is_good(config, good):
                    continue  # only good maps enter the GT switch (NaN never does)
                detail = f"GT of {case}; {config.good_key} = {good:.3f}"
        else:
            continue
        undefined = math.isnan(ref) or math.isnan(value)
        outcome = None if undefined else int(_better(key, value, ref))
        if undefined and not detail:
            detail = "undefined"
        cases.append(Case(dataset, image, meta, case, model, key, ref, value, outcome, detail))
    # annotation errors: score change per model, ranking change per image
    for op in ("dilate", "erode"):
        per_model = by.get(("annotation", op))
        if not per_model:
            continue
        for key in keys:
            models = [m for m in per_model if not math.isnan(own.get(m, {}).get(key, math.nan))]
            before = [own[m][key] for m in models]
            after = [per_model[m][key] for m in models]
            for m, b, a in zip(models, before, after, strict=True):
                cases.append(
                    Case(
                        dataset,
                        image,
                        "annotation",
                        f"Δ ({op})",
                        m,
                        key,
                        b,
                        a,
                        None,
                        f"{a - b:+.6f}",
                    )
                )
            rho = _rho(before, after)
            cases.append(
                Case(
                    dataset,
                    image,
                    "annotation",
                    f"1 − ρ ({op})",
                    "",
                    key,
                    math.nan,
                    1 - rho,  # NaN when the ranking is undefined
                    None,
                    f"{len(models)} models"
                    + ("; ranking undefined (ties)" if math.isnan(rho) else ""),
                )
            )
    # application ranking
    quality = {
        m: v["quality"] for m, v in by.get(("application", config.application or ""), {}).items()
    }
    for m, q in sorted(quality.items()):
        cases.append(
            Case(
                dataset,
                image,
                "application",
                "quality",
                m,
                "",
                math.nan,
                q,
                None,
                f"{config.application} quality of the model's map",
            )
        )
    if quality:
        for key in keys:
            models = [
                m
                for m in quality
                if math.isfinite(quality[m]) and math.isfinite(own.get(m, {}).get(key, math.nan))
            ]
            sign = 1 if MEASURES_BY_KEY[key].higher_is_better else -1
            values = [sign * own[m][key] for m in models]
            rho = _rho(values, [quality[m] for m in models])
            # a measure that cannot tell apart models the application ranks has no
            # correlation with it: ρ = 0, as measures_vs_humans counts it against people
            flat = len(models) > 1 and np.ptp([quality[m] for m in models]) == 0
            tied = len(models) > 1 and not flat and np.ptp(values) == 0
            if tied:
                rho = 0.0
            cases.append(
                Case(
                    dataset,
                    image,
                    "application",
                    "θ",
                    "",
                    key,
                    math.nan,
                    1 - rho,  # NaN when the ranking is undefined
                    None,
                    f"{len(models)} models"
                    + (
                        "; the measure gives every model the same score: ρ = 0"
                        if tied
                        else ""
                        if not math.isnan(rho)
                        else "; undefined: fewer than two models"
                        if len(models) < 2
                        else "; undefined: the application rates every model the same"
                    ),
                )
            )
    return cases


def _summarise(cases: Sequence[Case], config: MetaConfig) -> list[SummaryRow]:
    groups: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for c in cases:
        if c.meta in ("generic", "noise_map", "gt_switch", "noise_injection"):
            if c.outcome is None:
                continue
            stat = f"error rate ({c.case})" if c.meta == "generic" else "error rate"
            groups[(c.dataset, c.meta, stat, c.measure)].append(float(c.outcome))
        elif c.meta == "annotation" and c.case.startswith("Δ"):
            if not math.isnan(c.test - c.reference):
                groups[(c.dataset, c.meta, f"mean {c.case}", c.measure)].append(
                    c.test - c.reference
                )
        elif (
            c.meta in ("annotation", "application")
            and c.case != "quality"
            and not math.isnan(c.test)
        ):
            groups[(c.dataset, c.meta, c.case, c.measure)].append(c.test)
    return [
        SummaryRow(d, meta, stat, key, float(np.mean(v)), len(v))
        for (d, meta, stat, key), v in groups.items()
    ]


def _human(ranked: Sequence[Path], config: MetaConfig, report: MetaReport) -> list[SummaryRow]:
    from fminspect.ranking.agreement import measures_vs_humans
    from fminspect.ranking.export import load_ranked

    rows = []
    from fminspect.ranking.store import StudyError

    for folder in ranked:
        try:
            groups, problems = load_ranked(folder)
        except StudyError as exc:
            report.problems.append(
                Problem(Path(folder), str(exc), "error", dataset=Path(folder).name)
            )
            continue
        report.problems += [
            Problem(Path(folder), p, "warning", dataset=Path(folder).name) for p in problems
        ]
        keys = config.keys_for(with_images=all(g.image is not None for g in groups))
        rep = measures_vs_humans(groups, keys, params=config.params)
        name = f"{Path(folder).name} (human)"
        report.datasets.append(name)
        for r in rep.rows:
            rows.append(SummaryRow(name, "human", "θ", r.key, r.theta, r.groups))
            rows.append(SummaryRow(name, "human", "error rate", r.key, r.error_rate, r.groups))
            for g, n in (("θ", r.theta), ("error rate", r.error_rate)):
                report.cases.append(
                    Case(
                        name,
                        "",
                        "human",
                        g,
                        "",
                        r.key,
                        math.nan,
                        n,
                        None,
                        f"{r.groups} groups; 95 % CI {r.theta_ci if g == 'θ' else r.error_ci}",
                    )
                )
        for g, why in rep.skipped:
            report.problems.append(Problem(Path(folder) / g, why, "warning", dataset=name))
    return rows
