"""From votes to rankings: win counts, Bradley–Terry with uncertainty, circular triads,
consensus rules, and per-participant quality (attention, consistency, side bias, speed).

Bradley–Terry strengths are fitted with choix (expectation propagation, which also gives a
posterior covariance: the ± shown are its standard deviations); everything else is counting
and scipy.stats. Only first presentations of pairs enter rankings; repeats measure
self-consistency and attention checks measure attention.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from fminspect.ranking.design import Design, Group
from fminspect.ranking.scaling import JodScale, jod_scale
from fminspect.ranking.schedule import Trial
from fminspect.ranking.store import StudyStore, Vote

RULES = ("unanimous", "k_of_n", "majority", "bt")

#: Precision (1 / variance) of the isotropic Gaussian prior on the Bradley–Terry strengths
#: (``choix.ep_pairwise(alpha=…)``). It matters most when one map wins every comparison: the
#: ± then reflects the prior more than the votes. Stated in every report.
BT_PRIOR = 0.1


@dataclass(frozen=True, slots=True)
class Rule:
    """A consensus rule: 'unanimous', 'k_of_n' (``k`` participants agree on the full order),
    'majority' (pairwise majorities, if transitive) or 'bt' (Bradley–Terry order with
    P(i beats j) ≥ ``p`` for every adjacent pair).

    Whatever the rule, a group ranked completely by fewer than ``min_participants`` people
    has no consensus: one participant is not "all participants agree" (default 2; written
    ``unanimous,min=3`` and so on)."""

    name: str = "unanimous"
    k: int = 1
    p: float = 0.9
    min_participants: int = 2

    def __post_init__(self) -> None:
        if self.name not in RULES:
            raise ValueError(f"rule must be one of {', '.join(RULES)}, got {self.name!r}")
        if self.min_participants < 1:
            raise ValueError(f"min needs at least 1 participant, got {self.min_participants}")
        if self.name == "k_of_n" and self.k < 1:
            raise ValueError(f"k_of_n needs k ≥ 1 participants, got {self.k}")
        if self.name == "bt" and not 0.5 < self.p < 1:
            raise ValueError(f"bt needs 0.5 < p < 1 (p ≤ 0.5 accepts any order), got {self.p:g}")

    @classmethod
    def parse(cls, text: str) -> Rule:
        """'unanimous', 'majority', 'k_of_n:12' or 'bt:0.9', each optionally followed by
        ',min=N' (the least number of participants; ValueError with the reason)."""
        head, comma, tail = text.partition(",")
        name, _, arg = head.partition(":")
        least = 2

        def number(value: str, kind: type, what: str) -> Any:
            try:
                return kind(value)
            except ValueError:
                raise ValueError(f"{what} must be a number, got {value!r}") from None

        try:
            if comma:
                key, _, value = tail.partition("=")
                if key != "min" or not value:
                    raise ValueError("after the comma only min=N is understood")
                least = number(value, int, "min")
            if name == "k_of_n":
                if not arg:
                    raise ValueError("k_of_n needs a number: k_of_n:K")
                return cls(name, k=number(arg, int, "K"), min_participants=least)
            if name == "bt":
                return cls(name, p=number(arg or "0.9", float, "P"), min_participants=least)
            if arg:
                raise ValueError(f"{name} takes no argument")
            return cls(name, min_participants=least)
        except ValueError as exc:
            raise ValueError(f"rule {text!r}: {exc}") from None

    def __str__(self) -> str:
        text = {"k_of_n": f"k_of_n:{self.k}", "bt": f"bt:{self.p:g}"}.get(self.name, self.name)
        return text if self.min_participants == 2 else f"{text},min={self.min_participants}"


def default_rule(design: Design) -> Rule:
    """The rule used when none is given: ``unanimous`` (FMDatabase's) for a full design,
    where every participant ranks every group; ``bt:0.9`` for incomplete and active ones,
    where the votes of a group come from different people and only a model of all of them
    (Bradley–Terry) can order it."""
    return Rule() if design.sampling == "full" else Rule("bt", p=0.9)


@dataclass(slots=True)
class ParticipantStats:
    """Quality of one participant's votes."""

    participant: str
    votes: int
    checks_passed: int
    checks: int
    consistent: int
    repeats: int
    left: int
    right: int
    ties: int
    left_bias_p: float  # exact binomial test of left vs right among decided votes
    median_rt_ms: float
    excluded: bool = False
    #: ``left_bias_p`` Holm-adjusted over every participant of the study (set by
    #: :func:`aggregate`): with 30 participants, one of them reaches p < 0.05 by chance alone
    left_bias_p_holm: float = math.nan

    @property
    def attention(self) -> float:
        """Share of attention checks passed (1 when there were none)."""
        return self.checks_passed / self.checks if self.checks else 1.0

    @property
    def consistency(self) -> float:
        """Share of repeated pairs answered the same way (1 when none)."""
        return self.consistent / self.repeats if self.repeats else 1.0

    @property
    def left_share(self) -> float:
        """Share of decided votes that chose the left map."""
        n = self.left + self.right
        return self.left / n if n else math.nan


@dataclass(slots=True)
class GroupResult:
    """The ranking of one group."""

    group: str
    sample: str
    items: list[str]
    models: list[str]
    wins: np.ndarray  # wins[i, j] = votes preferring item i over item j (ties count ½)
    bt: np.ndarray  # Bradley–Terry log-strengths (mean 0)
    bt_sd: np.ndarray
    # participants who answered every pair of the group: their strict order, or None when
    # their answers are circular or include "cannot decide"
    participant_orders: dict[str, tuple[str, ...] | None]
    consensus: tuple[str, ...] | None
    reason: str
    kendall_w: float = math.nan
    kappa: float = math.nan
    votes: int = 0
    circular: int = 0  # complete participants whose answers form a cycle
    undecided: int = 0  # complete participants who answered "cannot decide" on some pair
    unfinished: int = 0  # participants who have not answered every pair of the group yet
    jod: JodScale | None = None  # Thurstone Case V scale (JOD) with bootstrap intervals
    voters: int = 0  # counted participants who answered at least one pair of the group

    @property
    def separation(self) -> str:
        """When the votes are separated (:func:`~fminspect.ranking.scaling.separation`),
        what that means for this group's scales, in words; else ''."""
        split = self.jod.separated if self.jod is not None else None
        if not split or self.votes == 0:
            return ""
        from scipy.sparse.csgraph import connected_components

        parts, _ = connected_components((self.wins + self.wins.T) > 0, directed=False)
        if parts > 1:  # some maps never met: nothing at all relates the sets
            return (
                f"separated: the maps fall into {parts} sets never compared with each other — "
                "the Bradley–Terry and JOD distances between them (and their ±) are the prior's"
            )
        names = [
            self.models[part[0]]
            if len(part) == 1
            else "{" + ", ".join(self.models[i] for i in part) + "}"
            for part in split
        ]
        every = "every vote" if len(split) == len(self.items) else "every vote across the split"
        return (
            f"separated: {' ≻ '.join(names)} in {every} — the Bradley–Terry and JOD distances "
            "across it (and their ±) are set by the prior, not by the votes"
        )

    @property
    def bt_order(self) -> tuple[str, ...]:
        """Items from strongest to weakest by Bradley–Terry."""
        return tuple(self.items[i] for i in np.argsort(-self.bt, kind="stable"))

    @property
    def circular_triads(self) -> int:
        """Participants whose answers on this group form a cycle (A>B, B>C, C>A)."""
        return self.circular


@dataclass(slots=True)
class StudyResult:
    """Everything aggregated from a study."""

    design: Design
    rule: Rule
    groups: list[GroupResult]
    participants: list[ParticipantStats]
    excluded: list[str] = field(default_factory=list)
    kappa: float = math.nan
    kendall_w: float = math.nan
    prior: float = BT_PRIOR  # precision of the scales' Gaussian prior (logit units)

    @property
    def consensual(self) -> list[GroupResult]:
        """Groups that reached consensus under the rule."""
        return [g for g in self.groups if g.consensus is not None]


def participant_stats(
    design: Design, votes: Iterable[Vote], trials_by_index: Mapping[int, Trial]
) -> ParticipantStats:
    """Attention, self-consistency, side bias and speed of one participant's votes."""
    votes = list(votes)
    by_trial = {v.trial: v for v in votes}
    checks = [v for v in votes if v.kind == "check"]
    passed = sum(v.chosen == trials_by_index[v.trial].correct for v in checks)
    repeats = [v for v in votes if v.kind == "repeat"]
    consistent = 0
    counted = 0
    for v in repeats:
        repeat_of = trials_by_index[v.trial].repeat_of
        original = by_trial.get(repeat_of) if repeat_of is not None else None
        if original is not None:
            counted += 1
            consistent += original.chosen == v.chosen
    decided = [v for v in votes if v.choice != "tie"]
    left = sum(v.choice == "left" for v in decided)
    right = len(decided) - left
    from scipy.stats import binomtest  # here: scipy.stats takes 0.7 s to import

    p = binomtest(left, left + right, 0.5).pvalue if decided else math.nan
    rts = [v.rt_ms for v in votes]
    return ParticipantStats(
        votes[0].participant if votes else "",
        len(votes),
        passed,
        len(checks),
        consistent,
        counted,
        left,
        right,
        len(votes) - len(decided),
        float(p),
        float(np.median(rts)) if rts else math.nan,
    )


def _order(wins: dict[str, float], items: list[str]) -> tuple[str, ...] | None:
    """The strict order given by a participant's decided answers on every pair of a group, or
    None when they are circular (every pair decided, yet two items have equal wins)."""
    values = sorted(wins.get(i, 0.0) for i in items)
    if len(set(values)) < len(values):
        return None
    return tuple(sorted(items, key=lambda i: -wins.get(i, 0.0)))


def _bradley_terry(
    n: int, pairs: list[tuple[int, int]], prior: float = BT_PRIOR
) -> tuple[np.ndarray, np.ndarray]:
    """Centred Bradley–Terry strengths and their s.d. (see _bradley_terry_fit)."""
    mean, sd = _bradley_terry_fit(n, tuple(pairs), prior)
    return mean.copy(), sd.copy()


@functools.lru_cache(maxsize=4096)
def _bradley_terry_fit(
    n: int, pairs: tuple[tuple[int, int], ...], prior: float = BT_PRIOR
) -> tuple[np.ndarray, np.ndarray]:
    """The fit is the slow part of an aggregation (~0.2 s per group) and depends only on the
    votes, not on the consensus rule: the analysis window re-aggregates on every change of
    rule, so fits are kept for the same votes in the same order."""
    import choix

    if not pairs:
        return np.zeros(n), np.full(n, math.nan)
    mean, cov = choix.ep_pairwise(n, pairs, alpha=prior)
    # strengths are identified only up to a common shift: report them centred (mean 0), with
    # the covariance of the centred vector C·Σ·C (C = I − 11ᵀ/n), not the prior-dominated Σ
    centre = np.eye(n) - 1.0 / n
    cov_c = centre @ cov @ centre
    return mean - mean.mean(), np.sqrt(np.clip(np.diag(cov_c), 0, None))


def _jod(per_participant: np.ndarray, prior: float) -> JodScale:
    """The JOD scale of a group (cached: it depends on the votes and the prior only, and the
    analysis window aggregates again at every change of rule)."""
    return _jod_cached(per_participant.tobytes(), per_participant.shape, prior)


@functools.lru_cache(maxsize=4096)
def _jod_cached(data: bytes, shape: tuple[int, ...], prior: float) -> JodScale:
    return jod_scale(np.frombuffer(data).reshape(shape), prior=prior)


def _consensus(
    rule: Rule,
    items: list[str],
    orders: dict[str, tuple[str, ...] | None],
    wins: np.ndarray,
    bt: np.ndarray,
    names: list[str],
    voters: int,
) -> tuple[tuple[str, ...] | None, str]:
    """The consensus order of ``items`` under ``rule`` (or None) and why; ``names`` (the
    models) are used in the reason. ``orders`` holds the complete orders of the participants
    who answered every pair (what ``unanimous`` and ``k_of_n`` compare); ``voters`` counts
    everyone who answered a pair of the group (whose votes ``majority`` and ``bt`` pool)."""
    pooled = rule.name in ("majority", "bt")
    n_part = voters if pooled else len(orders)
    if n_part == 0 and not pooled and voters:
        return None, (
            f"no participant has answered every pair of this group yet ({voters} "
            f"{'has' if voters == 1 else 'have'} voted on it)"
        )
    if n_part == 0:
        return None, "no votes from the participants counted"
    if n_part < rule.min_participants:
        did = "voted on" if pooled else "ranked"
        return None, (
            f"only {n_part} participant{'s' if n_part != 1 else ''} {did} this group: a "
            f"consensus needs at least {rule.min_participants} (the rule's min)"
        )
    counts = Counter(o for o in orders.values() if o is not None)
    if rule.name == "unanimous":
        if len(counts) == 1 and sum(counts.values()) == n_part:
            return next(iter(counts)), "all participants agree"
        no_order = n_part - sum(counts.values())
        why = []
        if len(counts) > 1:
            why.append(f"the participants give {len(counts)} different orders")
        if no_order:
            why.append(f"{no_order} of {n_part} give no order (circular or undecided answers)")
        return None, "not unanimous: " + ", and ".join(why)
    if rule.name == "k_of_n":
        top = counts.most_common(2)
        if top and top[0][1] >= rule.k:
            if len(top) > 1 and top[1][1] == top[0][1]:
                return (
                    None,
                    f"two different orders are each given by {top[0][1]} of {n_part} participants",
                )
            return top[0][0], f"{top[0][1]} of {n_part} participants give this order"
        best = top[0][1] if top else 0
        return None, f"at most {best} of {n_part} agree (need {rule.k})"
    if rule.name == "majority":
        n = len(items)
        beats = dict.fromkeys(range(n), 0)
        for i, j in combinations(range(n), 2):
            if wins[i, j] == wins[j, i] == 0:
                return None, f"{names[i]} and {names[j]} were never compared"
            if wins[i, j] == wins[j, i]:  # an even split has no majority: said, not guessed
                return None, (
                    f"no majority between {names[i]} and {names[j]}: "
                    f"{wins[i, j]:g} against {wins[j, i]:g}"
                )
            beats[i if wins[i, j] > wins[j, i] else j] += 1
        if sorted(beats.values()) != list(range(n)):
            return None, "pairwise majorities are cyclic"
        order = tuple(items[i] for i in sorted(beats, key=lambda i: -beats[i]))
        return order, "transitive pairwise majorities"
    order_idx = list(np.argsort(-bt, kind="stable"))
    for a, b in itertools.pairwise(order_idx):
        prob = 1 / (1 + math.exp(-(bt[a] - bt[b])))
        if prob < rule.p:
            return None, f"P({names[a]} beats {names[b]}) = {prob:.2f} < {rule.p:g}"
    return tuple(items[i] for i in order_idx), f"every adjacent P ≥ {rule.p:g}"


def aggregate(
    store: StudyStore,
    rule: Rule = Rule(),
    *,
    exclude_failing: bool = False,
    min_attention: float = 1.0,
    exclude: Iterable[str] = (),
    prior: float = BT_PRIOR,
) -> StudyResult:
    """Aggregate every vote of a study.

    ``exclude_failing`` drops participants whose attention-check pass rate is below
    ``min_attention``; ``exclude`` drops named participants. Excluded participants are still
    listed (with ``excluded=True``). ``prior`` is the precision of the Gaussian prior of both
    scales (Bradley–Terry in logit units; JOD, :mod:`~fminspect.ranking.scaling`, the same
    prior in its units).
    """
    if not prior > 0:
        raise ValueError(f"the prior's precision must be > 0, got {prior:g}")
    from fminspect.ranking.agreement import free_marginal_kappa

    design = store.design
    stats, excluded = _participants(store, exclude, exclude_failing, min_attention)
    votes = [v for v in store.votes() if v.kind == "pair" and v.participant not in excluded]
    by_group: dict[str, list[Vote]] = defaultdict(list)
    for v in votes:
        by_group[v.group].append(v)
    kept = [s.participant for s in stats if not s.excluded]
    categories = 3 if design.allow_ties else 2  # forced choice, or "cannot decide" too
    groups = [
        _group_result(g, by_group.get(g.id, []), kept, rule, prior, categories)
        for g in design.groups
    ]
    result = StudyResult(design, rule, groups, stats, sorted(excluded), prior=prior)
    result.kappa = free_marginal_kappa(votes, categories)
    ws = [g.kendall_w for g in groups if not math.isnan(g.kendall_w)]
    result.kendall_w = float(np.mean(ws)) if ws else math.nan
    return result


def _participants(
    store: StudyStore, exclude: Iterable[str], exclude_failing: bool, min_attention: float
) -> tuple[list[ParticipantStats], set[str]]:
    """Every participant's statistics (the left-bias p-values Holm-adjusted across them)
    and the participants left out: those named, and with ``exclude_failing`` those whose
    attention-check pass rate is below ``min_attention``."""
    from fminspect.ranking.intervals import holm

    stats = []
    excluded = set(exclude)
    for p in store.participants():
        trials = {t.index: t for t in store.trials(p)}
        s = participant_stats(store.design, store.votes(p), trials)
        s.participant = p
        if exclude_failing and s.attention < min_attention:
            excluded.add(p)
        s.excluded = p in excluded
        stats.append(s)
    tested = [s for s in stats if not math.isnan(s.left_bias_p)]
    for s, adjusted in zip(tested, holm([s.left_bias_p for s in tested]), strict=True):
        s.left_bias_p_holm = adjusted
    return stats, excluded


@dataclass
class _Tally:
    """One group's pair votes counted: wins overall and per participant (a tie half a win
    each way), the strict pairs for Bradley–Terry, each participant's points per item, how
    many pairs each answered and who answered a tie."""

    wins: np.ndarray
    pairs: list[tuple[int, int]]
    per_part: dict[str, dict[str, float]]
    part_wins: dict[str, np.ndarray]
    answered: Counter[str]
    tied: set[str]


def _tally(items: Sequence[str], votes: Sequence[Vote], kept: Sequence[str]) -> _Tally:
    index = {i: k for k, i in enumerate(items)}
    n = len(items)
    t = _Tally(
        np.zeros((n, n)),
        [],
        {p: {} for p in kept},
        {p: np.zeros((n, n)) for p in kept},
        Counter(),
        set(),
    )
    for v in votes:
        a, b = index[v.left], index[v.right]
        t.answered[v.participant] += 1
        mine = t.per_part[v.participant]
        if v.choice == "tie":
            for w, lo in ((a, b), (b, a)):
                t.wins[w, lo] += 0.5
                t.part_wins[v.participant][w, lo] += 0.5
            t.tied.add(v.participant)
            for it in (v.left, v.right):
                mine[it] = mine.get(it, 0) + 0.5
            continue
        w, lo = (a, b) if v.choice == "left" else (b, a)
        t.wins[w, lo] += 1
        t.part_wins[v.participant][w, lo] += 1
        t.pairs.append((w, lo))
        mine[items[w]] = mine.get(items[w], 0) + 1
    return t


def _group_result(
    g: Group,
    votes: Sequence[Vote],
    kept: Sequence[str],
    rule: Rule,
    prior: float,
    categories: int,
) -> GroupResult:
    """One group's scales, orders, consensus and agreement from its (kept) pair votes."""
    from fminspect.ranking.agreement import free_marginal_kappa, kendall_w

    items = [i.id for i in g.items]
    n_pairs = len(items) * (len(items) - 1) // 2
    t = _tally(items, votes, kept)
    complete = [p for p in kept if t.answered[p] == n_pairs]
    orders = {p: None if p in t.tied else _order(t.per_part[p], items) for p in complete}
    circular = sum(orders[p] is None for p in complete if p not in t.tied)
    bt, sd = _bradley_terry(len(items), t.pairs, prior)
    voted = [t.part_wins[p] for p in kept if t.answered[p]]
    jod = _jod(np.stack(voted), prior) if voted else None
    names = [i.model for i in g.items]
    voters = len({v.participant for v in votes})
    consensus, reason = _consensus(rule, items, orders, t.wins, bt, names, voters)
    w_stat = kendall_w([[t.per_part[p].get(i, 0.0) for i in items] for p in complete])
    return GroupResult(
        g.id,
        g.sample,
        items,
        names,
        t.wins,
        bt,
        sd,
        orders,
        consensus,
        reason,
        w_stat,
        free_marginal_kappa(votes, categories),
        len(votes),
        circular,
        len(t.tied & set(complete)),
        sum(0 < t.answered[p] < n_pairs for p in kept),
        jod,
        voters,
    )
