"""Agreement between people (Kendall's W, free-marginal kappa) and between measures and people
(θ = 1 − Spearman ρ and the error rate, with confidence intervals whose coverage holds at
small numbers of groups, :mod:`fminspect.ranking.intervals`).

This is the one module of :mod:`fminspect.ranking` that scores maps (through the per-sample
pipeline, :mod:`fminspect.pipeline`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fminspect.ranking.intervals import mean_interval, proportion_interval
from fminspect.ranking.store import Vote

if TYPE_CHECKING:
    from fminspect.metrics import Params


def kendall_w(scores: Sequence[Sequence[float]]) -> float:
    """Kendall's coefficient of concordance of m raters' scores of n items (ties averaged,
    with the tie correction). NaN for fewer than two raters or two items; 1 when every rater
    gives the same order, 0 when the orders cancel out."""
    data = np.asarray(scores, dtype=float)
    if data.ndim != 2 or data.shape[0] < 2 or data.shape[1] < 2:
        return math.nan
    m, n = data.shape
    from scipy.stats import rankdata  # here: scipy.stats takes 0.5 s to import

    ranks = np.apply_along_axis(rankdata, 1, data)
    s = ((ranks.sum(axis=0) - m * (n + 1) / 2) ** 2).sum()
    ties = 0.0
    for row in data:
        _, counts = np.unique(row, return_counts=True)
        ties += (counts**3 - counts).sum()
    denom = m**2 * (n**3 - n) - m * ties
    return float(12 * s / denom) if denom > 0 else math.nan


def _pair_table(votes: Iterable[Vote]) -> np.ndarray:
    """Rows = pairs (subjects) rated by at least two people; columns = the pair's maps (in
    the order of their ids) and "cannot decide". Which map comes first does not matter to
    :func:`free_marginal_kappa`."""
    table: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for v in votes:
        first, second = sorted((v.left, v.right))
        cat = 2 if v.choice == "tie" else (0 if v.chosen == first else 1)
        table[(v.group, first, second)][cat] += 1
    if not table:
        return np.zeros((0, 3))
    rows = [r for r in table.values() if sum(r) >= 2]
    return np.asarray(rows, dtype=float).reshape(len(rows), 3)


def free_marginal_kappa(votes: Iterable[Vote], categories: int) -> float:
    """Randolph's free-marginal multirater κ of the pairwise choices, every pair answered by
    at least two people a subject (:func:`_pair_table`).

    κ = (P̄ − 1/k) / (1 − 1/k): P̄ is the mean over subjects of the share of agreeing rater
    pairs — each subject with its own number of raters, so that incomplete and active
    designs, where pairs are answered by different numbers of people, are measured too (with
    equal numbers it is Fleiss' and Randolph's P̄) — and 1/k the chance agreement of k equally
    likely answers — k = 2 for a
    forced choice between two maps, 3 when "cannot decide" is allowed. Why not Fleiss' κ:
    its chance term comes from the category shares, and a pair has no natural "category 1"
    — calling the better map, the left one or a hash-chosen one category 1 changes Fleiss' κ
    for the same votes (0.016 to 0.74 on the demo study), and when one map of most pairs is
    clearly better its shares make κ collapse however much people agree (the prevalence
    paradox). P̄ and 1/k do not depend on that choice. NaN when no pair has two raters.
    """
    table = _pair_table(votes)
    n = table.sum(axis=1)
    if table.shape[0] == 0:
        return math.nan
    observed = float((((table**2).sum(axis=1) - n) / (n * (n - 1))).mean())
    chance = 1.0 / categories
    return (observed - chance) / (1 - chance)


@dataclass(frozen=True, slots=True)
class RankedGroup:
    """A group with a human ranking: maps from best to worst."""

    group: str
    gt: np.ndarray
    maps: tuple[np.ndarray, ...]
    image: np.ndarray | None = None
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MeasureAgreement:
    """How one measure agrees with the human rankings."""

    key: str
    theta: float  # mean 1 − Spearman ρ over groups
    theta_ci: tuple[float, float]  # betting interval (MEAN_METHOD)
    error_rate: float  # share of groups whose full order differs from the humans'
    error_ci: tuple[float, float]  # Clopper–Pearson (PROPORTION_METHOD)
    top1_error_rate: float  # share of groups whose best map differs
    groups: int
    top1_ci: tuple[float, float] = (math.nan, math.nan)  # Clopper–Pearson


@dataclass(frozen=True, slots=True)
class HumanAgreementReport:
    """Every measure's agreement with people, and the groups that could not be scored."""

    rows: tuple[MeasureAgreement, ...]
    skipped: tuple[tuple[str, str], ...]  # (group, reason)
    notes: tuple[tuple[str, str], ...]  # (group, note), e.g. a map resized to its GT
    normalization: str  # the exact normalisation used
    labels: dict[str, str]  # key → the measure's exact variant label
    #: what the human rankings rest on, one sentence each (rule, participants, consensus, how
    #: the maps were picked, the Bradley–Terry prior), and the measure that picked the maps
    basis: tuple[str, ...] = ()
    selected_by: str | None = None
    comparisons: tuple[PairedComparison, ...] = ()

    def not_different(self, key: str, quantity: str = "theta") -> list[str]:
        """The measures not significantly different from ``key`` in ``quantity`` ('theta' or
        'error') at the family-wise level :data:`ALPHA` (Holm)."""
        out = []
        for c in self.comparisons:
            if key in (c.a, c.b):
                p = c.theta_p_holm if quantity == "theta" else c.error_p_holm
                if p >= ALPHA:
                    out.append(c.b if c.a == key else c.a)
        return out

    def row(self, key: str) -> MeasureAgreement:
        """The row of measure ``key``."""
        for r in self.rows:
            if r.key == key:
                return r
        raise KeyError(key)


def group_agreement(values: Sequence[float]) -> tuple[float, bool, bool]:
    """For one group whose maps are listed best first by people, and a measure's values of
    them (larger = better): 1 − Spearman ρ, whether the measure's order differs from the
    people's (a tie counts as different), and whether its best map differs."""
    from scipy.stats import spearmanr

    v = np.asarray(values, dtype=float)
    human = np.arange(v.size, 0, -1)
    rho = float(spearmanr(v, human).statistic) if np.ptp(v) > 0 else 0.0
    order = tuple(np.argsort(-v, kind="stable"))
    wrong_order = order != tuple(range(v.size)) or np.unique(v).size < v.size
    wrong_top = int(np.argmax(v)) != 0 or int((v == v.max()).sum()) > 1
    return 1.0 - rho, bool(wrong_order), bool(wrong_top)


def measures_vs_humans(
    groups: Sequence[RankedGroup],
    keys: Sequence[str],
    *,
    params: Params | None = None,
    interpolation: str = "bilinear",
    cache: dict[tuple[object, ...], dict[str, float]] | None = None,
) -> HumanAgreementReport:
    """θ = 1 − ρ (Spearman between a measure's and people's order of a group's maps, averaged
    over groups, as in the S-measure and E-measure papers' human-judgement meta-measure) and
    the error rate (share of groups the measure orders differently from people, as the
    Context-measure paper reports on CamoHR), each with a 95 % interval over groups: θ's
    by betting, the error rates' by Clopper–Pearson (:mod:`fminspect.ranking.intervals`).
    A map of another size is resized to its GT (noted); a group whose maps cannot be scored
    (e.g. an empty GT for CCm) is skipped with the reason.

    ``cache`` (a dict kept by the caller, one per study: group ids and model names identify
    a map only within a study) holds each named map's scores, keyed by its group, its name and
    everything else they depend on, so that calling again after a change of the human ranking
    (another consensus rule, other participants) only re-ranks."""
    from fminspect.metrics import DEFAULT_PARAMS, MEASURES_BY_KEY, measure_keys
    from fminspect.pipeline.sample import prepare, sample_from_arrays, score_model

    params = params or DEFAULT_PARAMS
    keys = measure_keys(keys)  # family names, 'default' and 'all' become keys once
    per_key: dict[str, dict[str, tuple[float, bool, bool]]] = {k: {} for k in keys}
    skipped, notes = [], []
    with_image = any(MEASURES_BY_KEY[k].needs_image for k in keys)
    for g in groups:
        names = g.names or tuple(f"rank{i + 1}" for i in range(len(g.maps)))
        try:
            loaded = sample_from_arrays(
                g.group,
                g.gt,
                dict(zip(names, g.maps, strict=False)),
                image=g.image if with_image else None,
                interpolation=interpolation,
            )
            gt, _ = prepare(loaded, params.norm)
            assert gt is not None
            chosen = measure_keys(keys, with_images=loaded.image is not None)
            suites = []
            for name in loaded.preds:
                notes += [(g.group, f"{name}: {n.message}") for n in loaded.notes.get(name, ())]
                # a rank-named map (no names given) is another map under another ranking
                key = (g.group, name, chosen, params, interpolation)
                store = cache if g.names else None
                if store is not None and key in store:
                    scores = store[key]
                else:
                    scores = score_model(loaded, name, gt, params, keys=chosen).scores()
                    if store is not None:
                        store[key] = scores
                suites.append(scores)
        except (ValueError, ArithmeticError) as exc:
            skipped.append((g.group, str(exc)))
            continue
        for k in keys:
            if any(k not in s for s in suites):
                continue
            sign = 1 if MEASURES_BY_KEY[k].higher_is_better else -1
            per_key[k][g.group] = group_agreement([sign * s[k] for s in suites])
    rows = []
    for k, found in per_key.items():
        if not found:
            continue
        arr = np.array(list(found.values()), dtype=float)
        n, wrong, wrong_top = len(found), int(arr[:, 1].sum()), int(arr[:, 2].sum())
        rows.append(
            MeasureAgreement(
                k,
                float(arr[:, 0].mean()),
                mean_interval(arr[:, 0], 0.0, 2.0).as_tuple(),
                wrong / n,
                proportion_interval(wrong, n).as_tuple(),
                wrong_top / n,
                n,
                proportion_interval(wrong_top, n).as_tuple(),
            )
        )
    labels = {r.key: MEASURES_BY_KEY[r.key].label(params) for r in rows}
    return HumanAgreementReport(
        tuple(rows),
        tuple(skipped),
        tuple(notes),
        params.norm.label,
        labels,
        comparisons=paired_comparisons(per_key),
    )


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """Two measures compared on the groups both were scored on.

    θ: the mean per-group difference θ_a − θ_b, tested against 0 by betting (p =
    1 / final wealth, :func:`~fminspect.ranking.intervals.mean_test`). Error rate: exact
    McNemar on the groups exactly one of the two orders wrongly. Both p-values are also given
    Holm-adjusted over every pair of measures of the report.
    """

    a: str
    b: str
    groups: int
    theta_difference: float
    theta_p: float
    theta_p_holm: float
    only_a_wrong: int
    only_b_wrong: int
    error_p: float
    error_p_holm: float


#: The family-wise level at which two measures are called different.
ALPHA = 0.05


def paired_comparisons(
    per_key: dict[str, dict[str, tuple[float, bool, bool]]],
) -> tuple[PairedComparison, ...]:
    """Every pair of measures, on the groups both were scored on (see
    :class:`PairedComparison`)."""
    from itertools import combinations

    from fminspect.ranking.intervals import holm, mcnemar_exact, mean_test

    raw = []
    keys = [k for k, v in per_key.items() if v]
    for a, b in combinations(keys, 2):
        common = [g for g in per_key[a] if g in per_key[b]]
        if not common:
            continue
        da = np.array([per_key[a][g] for g in common], dtype=float)
        db = np.array([per_key[b][g] for g in common], dtype=float)
        diff = da[:, 0] - db[:, 0]
        only_a = int(np.sum((da[:, 1] == 1) & (db[:, 1] == 0)))
        only_b = int(np.sum((da[:, 1] == 0) & (db[:, 1] == 1)))
        raw.append(
            (a, b, len(common), float(diff.mean()), mean_test(diff, -2.0, 2.0, 0.0), only_a, only_b)
        )
    theta_holm = holm([r[4] for r in raw])
    error_p = [mcnemar_exact(r[5], r[6]) for r in raw]
    error_holm = holm(error_p)
    return tuple(
        PairedComparison(a, b, n, d, p, ph, oa, ob, pe, peh)
        for (a, b, n, d, p, oa, ob), ph, pe, peh in zip(
            raw, theta_holm, error_p, error_holm, strict=True
        )
    )
