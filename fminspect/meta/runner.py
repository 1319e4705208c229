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
from fminspect.meta.maps import case_seed, derangement, other_indices
from fminspect.meta.protocol import MetaConfig, MetaUnit, MetaUnitResult, meta_unit
from fminspect.meta.protocols import Selection
from fminspect.metrics import MEASURES_BY_KEY
from fminspect.pipeline.config import EvalConfig


@dataclass(frozen=True, slots=True)
class Case:
    """One comparison: what was scored, against what, and whether the measure erred.

    ``outcome`` is the number of errors among ``trials`` comparisons — 1 (the measure erred)
    or 0 (it did not) for one comparison; for a GT switch with many GTs, how many of the
    ``trials`` switched GTs the map scored better against (``test`` is then its best score
    against any of them) — or None (not applicable, with the reason in ``detail``); for
    ``annotation`` and ``application`` cases, ``value`` is the statistic itself (a score
    change, 1 − ρ).
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
    trials: int = 1


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
    # dataset → image → the images whose GTs it was switched with
    switched_with: dict[str, dict[str, list[str]]] = field(default_factory=dict)
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
    chooser = Chooser(config, originals)
    for ds in datasets:
        with_images = ds.image is not None and any(s.image for s in ds.samples)
        keys = config.keys_for(with_images)
        keys_by_ds[ds.name] = keys
        wanted = tuple(dict.fromkeys((*keys, *config.criteria())))
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
        chooser.prepare(ds.name, wanted)
        names = [m for m in ds.method_names if methods is None or m in methods]
        samples = ds.samples
        wrong = _switch_partners(ds, config, report)
        for s in samples:
            taking_part = {m: s.preds[m] for m in names if m in s.preds}
            units.append(
                MetaUnit(
                    Sample(ds.name, s.name, s.gt, s.image, taking_part),
                    tuple((w.name, w.gt) for w in wrong.get(s.name, [])),
                    keys,
                    config,
                    chooser.fixed(config.switch_select, ds.name, s.name, list(taking_part)),
                    chooser.fixed(config.inject_select, ds.name, s.name, list(taking_part)),
                    own=chooser.own(ds.name, s.name) if config.switches > 1 else None,
                )
            )
    results = _run_cases(units, jobs, scheduler, progress, cache_path)
    for ds in datasets:
        order = [s.name for s in ds.samples]
        for name in order:
            res = results.get((ds.name, name))
            if res is None:
                continue
            report.problems += res.problems
            report.cases += _outcomes(config, ds.name, name, res, chooser, keys_by_ds[ds.name])
    report.summary = _summarise(report.cases, config)
    report.problems += _nothing_selected(config, datasets, report.cases)
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


def _switch_partners(
    ds: Dataset, config: MetaConfig, report: MetaReport
) -> dict[str, list[Sample]]:
    """The other samples whose GT each sample's maps are scored against in the GT switch
    (none when it is not asked for; a warning when the dataset has one image)."""
    samples = ds.samples
    if "gt_switch" not in config.metas:
        return {}
    if len(samples) < 2:
        report.problems.append(
            Problem(
                Path(str(ds.gt.path)),
                "the GT switch needs at least two images",
                "warning",
                dataset=ds.name,
            )
        )
        return {}
    rng = np.random.default_rng(case_seed(config.seed, ds.name, "gt_switch"))
    if config.switches == 1:  # one complete derangement (Context-measure §4.2)
        perm = derangement(len(samples), rng)
        wrong = {s.name: [samples[int(j)]] for s, j in zip(samples, perm, strict=True)}
    else:  # k random other GTs per image (Margolin et al. §5.3)
        picks = other_indices(len(samples), config.switches, rng)
        wrong = {s.name: [samples[int(j)] for j in p] for s, p in zip(samples, picks, strict=True)}
    report.switched_with[ds.name] = {k: [w.name for w in v] for k, v in wrong.items()}
    return wrong


def _run_cases(
    units: Sequence[MetaUnit],
    jobs: int,
    scheduler: Any,
    progress: bool | None,
    cache_path: Path | str,
) -> dict[tuple[str, str], MetaUnitResult]:
    """Every image's meta-measure cases, by (dataset, image), with a progress bar."""
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
    return results


def _nothing_selected(
    config: MetaConfig, datasets: Sequence[Dataset], cases: Sequence[Case]
) -> list[Problem]:
    """A warning per dataset where a selection of good maps left none to test."""
    out = []
    for meta in ("gt_switch", "noise_injection"):
        sel = config.select_for(meta)
        if meta not in config.metas or sel is None:
            continue
        for ds in datasets:
            if not any(c.meta == meta and c.dataset == ds.name for c in cases):
                out.append(
                    Problem(
                        Path(str(ds.gt.path)),
                        f"{meta}: no map is good enough ({sel.describe()})",
                        "warning",
                        dataset=ds.name,
                    )
                )
    return out


class Chooser:
    """Which maps a selection keeps, from the models' own scores (``originals``).

    A 'min' rule compares each map's value with the threshold; a 'top' rule with the cut
    that keeps the best share of all the dataset's maps, computed per dataset and measure.
    """

    def __init__(self, config: MetaConfig, originals: dict[tuple[str, str, str], dict[str, float]]):
        self.config = config
        self.originals = originals
        self.cuts: dict[tuple[str, str, float], float] = {}
        self.by_image: dict[tuple[str, str], dict[str, dict[str, float]]] = defaultdict(dict)

    def own(self, dataset: str, image: str) -> dict[str, dict[str, float]]:
        """Model → measure → score of every map of one image."""
        return self.by_image.get((dataset, image), {})

    def prepare(self, dataset: str, keys: Sequence[str]) -> None:
        """Index ``dataset``'s scores by image and compute its 'top' cuts for every
        selection that runs."""
        for (d, i, m), v in self.originals.items():
            if d == dataset:
                self.by_image[(d, i)][m] = v
        for sel in self.config.selections():
            if sel.rule != "top":
                continue
            for key in [sel.by] if sel.by else keys:
                values = np.array(
                    [
                        v[key]
                        for (d, _, _), v in self.originals.items()
                        if d == dataset and math.isfinite(v.get(key, math.nan))
                    ]
                )
                if values.size == 0:
                    continue
                best_first = np.sort(values)[:: -1 if MEASURES_BY_KEY[key].higher_is_better else 1]
                keep = max(1, math.ceil(sel.value * values.size - 1e-9))
                self.cuts[(dataset, key, sel.value)] = float(best_first[keep - 1])

    def good(self, sel: Selection | None, dataset: str, image: str, model: str, key: str) -> bool:
        """Whether the map of ``model`` on ``image`` enters, for measure ``key``."""
        if sel is None:
            return True
        by = sel.by or key
        value = self.own(dataset, image).get(model, {}).get(by, math.nan)
        if not math.isfinite(value):
            return False
        cut = sel.value if sel.rule == "min" else self.cuts.get((dataset, by, sel.value))
        if cut is None:
            return False
        return value >= cut if MEASURES_BY_KEY[by].higher_is_better else value <= cut

    def fixed(
        self, sel: Selection | None, dataset: str, image: str, models: Sequence[str]
    ) -> frozenset[str] | None:
        """The models kept when a fixed measure selects (None: each measure selects its own,
        so every map is scored and the choice is made per measure)."""
        if sel is None or sel.by is None:
            return None
        return frozenset(m for m in models if self.good(sel, dataset, image, m, sel.by))


#: A sample's own scores: model → measure key → value.
_Own = dict[str, dict[str, float]]


def _outcomes(
    config: MetaConfig,
    dataset: str,
    image: str,
    res: MetaUnitResult,
    chooser: Chooser,
    keys: tuple[str, ...],
) -> list[Case]:
    """Every case of one image: the per-map tests (synthetic maps, perturbations, GT
    switch), the annotation errors' changes, and the application ranking."""
    own = chooser.own(dataset, image)
    by: dict[tuple[str, str], dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for meta, case, model, key, value, _ in res.rows:
        by[(meta, case)][model][key] = value
    where = (dataset, image)
    return [
        *_map_cases(config, where, res, chooser, own),
        *_switch_cases(config, where, res, chooser, own),
        *_annotation_cases(where, by, own, keys),
        *_application_cases(config, where, by, own, keys),
    ]


def _map_cases(
    config: MetaConfig, where: tuple[str, str], res: MetaUnitResult, chooser: Chooser, own: _Own
) -> list[Case]:
    """The tests that score one map against a reference: a synthetic map against the mean
    of the (good) models, a perturbed map or another GT against the map itself."""
    dataset, image = where
    cases: list[Case] = []
    for meta, case, model, key, value, detail in res.rows:
        if meta not in ("generic", "noise_map", "gt_switch", "noise_injection"):
            continue
        sel = config.select_for(meta)
        if meta in ("generic", "noise_map"):
            # the synthetic map against the mean of the (good) models on this image
            vals = [
                s[key]
                for m, s in own.items()
                if not math.isnan(s.get(key, math.nan))
                and chooser.good(sel, dataset, image, m, key)
            ]
            ref = float(np.mean(vals)) if vals else math.nan
            what = "models" if sel is None else f"good models ({sel.describe()})"
            detail = f"mean of {len(vals)} {what}" if vals else f"no {what}"
        else:
            # the same map, perturbed or against another GT, against itself
            if not chooser.good(sel, dataset, image, model, key):
                continue  # only good maps take part (NaN never does)
            ref = own.get(model, {}).get(key, math.nan)
            if meta == "gt_switch":
                detail = f"GT of {case}"
            if sel is not None:
                crit = sel.by or key
                detail += f"; {crit} = {own.get(model, {}).get(crit, math.nan):.3f}"
        undefined = math.isnan(ref) or math.isnan(value)
        outcome = None if undefined else int(_better(key, value, ref))
        if undefined and not detail:
            detail = "undefined"
        cases.append(Case(dataset, image, meta, case, model, key, ref, value, outcome, detail))
    return cases


def _switch_cases(
    config: MetaConfig, where: tuple[str, str], res: MetaUnitResult, chooser: Chooser, own: _Own
) -> list[Case]:
    """GT switch with many GTs: the errors the unit counted, for the maps that take part."""
    dataset, image = where
    cases: list[Case] = []
    sel = config.switch_select
    for model, key, errors, n, best in res.switch_counts:
        if not chooser.good(sel, dataset, image, model, key):
            continue
        ref = own.get(model, {}).get(key, math.nan)
        detail = f"{errors} of {n} other GTs score better"
        if sel is not None:
            crit = sel.by or key
            detail += f"; {crit} = {own.get(model, {}).get(crit, math.nan):.3f}"
        cases.append(
            Case(
                dataset,
                image,
                "gt_switch",
                f"{n} other GTs",
                model,
                key,
                ref,
                best,
                errors,
                detail,
                n,
            )
        )
    return cases


def _annotation_cases(
    where: tuple[str, str],
    by: dict[tuple[str, str], dict[str, dict[str, float]]],
    own: _Own,
    keys: tuple[str, ...],
) -> list[Case]:
    """Annotation errors: the score change per model, the ranking change per image."""
    dataset, image = where
    cases: list[Case] = []
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
    return cases


def _application_cases(
    config: MetaConfig,
    where: tuple[str, str],
    by: dict[tuple[str, str], dict[str, dict[str, float]]],
    own: _Own,
    keys: tuple[str, ...],
) -> list[Case]:
    """The application's quality of each model's map, and each measure's agreement with
    the ranking it gives."""
    dataset, image = where
    cases: list[Case] = []
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
    rates: dict[tuple[str, str, str, str], list[tuple[int, int]]] = defaultdict(list)
    stats = set(config.annotation_stats)
    for c in cases:
        if c.meta in ("generic", "noise_map", "gt_switch", "noise_injection"):
            if c.outcome is None or c.trials == 0:
                continue
            stat = f"error rate ({c.case})" if c.meta == "generic" else "error rate"
            rates[(c.dataset, c.meta, stat, c.measure)].append((c.outcome, c.trials))
        elif c.meta == "annotation" and c.case.startswith("Δ"):
            change = c.test - c.reference
            if math.isnan(change):
                continue
            op = c.case[len("Δ ") :]  # '(dilate)'
            if "mean Δ" in stats:
                groups[(c.dataset, c.meta, f"mean Δ {op}", c.measure)].append(change)
            if "mean |Δ|" in stats:
                groups[(c.dataset, c.meta, f"mean |Δ| {op}", c.measure)].append(abs(change))
        elif c.meta == "annotation" and not math.isnan(c.test):
            if "1 − ρ" in stats:
                groups[(c.dataset, c.meta, c.case, c.measure)].append(c.test)
        elif c.meta == "application" and c.case != "quality" and not math.isnan(c.test):
            groups[(c.dataset, c.meta, c.case, c.measure)].append(c.test)
    # error rates pool every comparison (a map switched with 100 GTs counts 100 times)
    pooled = [
        SummaryRow(
            d, meta, stat, key, sum(e for e, _ in v) / sum(n for _, n in v), sum(n for _, n in v)
        )
        for (d, meta, stat, key), v in rates.items()
    ]
    return pooled + [
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
            values = {"θ": r.theta, "error rate": r.error_rate}
            for g in config.human_stats:
                rows.append(SummaryRow(name, "human", g, r.key, values[g], r.groups))
            for g, n in values.items():
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
