"""Active pair selection: the next pairs to show are those whose answer is expected to
teach the most about the ranking, given every vote so far.

After ASAP (Mikhailiuk, Wilmot, Perez-Ortiz, Yue, Mantiuk, "Active Sampling for Pairwise
Comparisons via Approximate Message Passing and Information Gain Maximization", ICPR 2020;
reference code gfxdisp/asap, its *ASAP-approx* variant): each map's quality has a Gaussian
posterior N(μ, σ²) (Thurstone Case V, the reference's prior N(0, 0.5), and an observer
noise of variance 1 on a comparison — the reference's one-step ASAP-approx update uses
variance 2, i.e. unit noise on each map's observation; see ``NOISE_VARIANCE``); a pair
(i, j) is worth the expected Kullback–Leibler divergence between the
posterior after its answer and the posterior now,

    EIG(i, j) = P(i ≻ j)·KL(i ≻ j) + P(j ≻ i)·KL(j ≻ i),   P(i ≻ j) = Φ((μᵢ − μⱼ)/s),
    s² = 1 + σᵢ² + σⱼ²,

and the pair with the largest gain over every group of the study is shown next. Two
simplifications against the reference, both stated here: the posterior is updated online
by assumed-density filtering (one TrueSkill-style moment-matching step per vote, in the
order the votes were stored) instead of the reference's offline message passing, and
"cannot decide" answers carry no information for it. A batch (a study pack for a participant
elsewhere, or several pairs at once) is chosen greedily: after each pick, the variances of
its two maps shrink by their expected update, so the next pick goes where the most remains
to learn — the batch counterpart of the reference's minimum-spanning-tree batches.

A participant is never shown the same pair twice by this rule (repeats for
self-consistency are scheduled separately).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr

from fminspect.ranking.design import Design

__all__ = ["PRIOR_VARIANCE", "Posterior"]

#: Prior variance of every map's quality (the reference code's ``init_data.Vs = 0.5``).
#: Measured with ``benchmarks/bench_designs.py --prior-variance`` (200 images × 8 maps, five
#: seeds): a prior of 4 reaches τ ≥ 0.9 with a few fewer votes (median 58 % of the full
#: design's instead of 62 % with neighbours 1 logit apart, 66 % instead of 69 % at 0.5 logit;
#: within the seeds' spread), but at 0.5 logit its scores are further from the truth at
#: equal votes on every seed (RMSE 0.77–0.81 against 0.67–0.72): the reference's value stays.
PRIOR_VARIANCE = 0.5
#: Variance of an observer's noise in one comparison (Thurstone Case V). ASAP-approx's
#: one-step update uses 2 (unit variance for each of the two maps); 1 here makes one unit of
#: quality a 76 % preference (Φ(1/√1)) instead of 69 % (Φ(1/√2)) — a choice of scale that
#: changes which pairs the gains favour only through the posterior variances' share of s².
NOISE_VARIANCE = 1.0


def _v_w(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The moment-matching factors of a probit observation at t = (μᵢ − μⱼ)/s, winner i:
    v = φ(t)/Φ(t) and w = v·(v + t), computed in log space (no 0/0 far in the tails)."""
    v = np.exp(-0.5 * t * t - 0.5 * np.log(2 * np.pi) - log_ndtr(t))
    return v, v * (v + t)


def _w_scalar(t: float) -> float:
    """:func:`_v_w`'s w for one t, in floats."""
    v = math.exp(-0.5 * t * t - _HALF_LOG_2PI - float(log_ndtr(t)))
    return v * (v + t)


_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _kl(mu1: np.ndarray, var1: np.ndarray, mu0: np.ndarray, var0: np.ndarray) -> np.ndarray:
    """KL(N(mu1, var1) ‖ N(mu0, var0)), elementwise."""
    out: np.ndarray = 0.5 * (np.log(var0 / var1) + (var1 + (mu1 - mu0) ** 2) / var0 - 1.0)
    return out


@dataclass(frozen=True, slots=True)
class Candidate:
    """A pair of maps that can be shown: its group and two item ids."""

    group: str
    a: str
    b: str


class Posterior:
    """Gaussian posteriors of every map of a study, updated vote by vote.

    Items are kept in flat arrays (one entry per map of every group) and the candidate pairs
    (every pair of every group) as index arrays, so the gain of all pairs of a 200-group,
    8-map study (5,600 pairs) is one vectorised evaluation.
    """

    def __init__(self, design: Design) -> None:
        self.items = [i.id for g in design.groups for i in g.items]
        self.index = {item: k for k, item in enumerate(self.items)}
        first, second, owner = [], [], []
        for g in design.groups:
            flat = [self.index[i.id] for i in g.items]
            for x, a in enumerate(flat):
                for b in flat[x + 1 :]:
                    first.append(a)
                    second.append(b)
                    owner.append(g.id)
        self.mu = np.zeros(len(self.items))
        self.var = np.full(len(self.items), PRIOR_VARIANCE)
        self.pair_a = np.asarray(first, dtype=np.intp)
        self.pair_b = np.asarray(second, dtype=np.intp)
        self.pair_group = owner
        self.pair_index = {
            frozenset((self.items[a], self.items[b])): k
            for k, (a, b) in enumerate(zip(first, second, strict=True))
        }
        touching: list[list[int]] = [[] for _ in self.items]
        for k, (a, b) in enumerate(zip(first, second, strict=True)):
            touching[a].append(k)
            touching[b].append(k)
        #: The candidate pairs each map is part of (whose gains change with its variance).
        self.touching = [np.asarray(t, dtype=np.intp) for t in touching]
        self.votes = 0

    def update(self, winner: str, loser: str) -> None:
        """One decided answer: ``winner`` was preferred to ``loser`` (moment matching)."""
        i, j = self.index[winner], self.index[loser]
        s = np.sqrt(NOISE_VARIANCE + self.var[i] + self.var[j])
        v, w = _v_w(np.array([(self.mu[i] - self.mu[j]) / s]))
        vi, vj = self.var[i], self.var[j]
        self.mu[i] += vi / s * v[0]
        self.mu[j] -= vj / s * v[0]
        self.var[i] = vi * (1 - vi / s**2 * w[0])
        self.var[j] = vj * (1 - vj / s**2 * w[0])
        self.votes += 1

    def update_all(self, answers: Iterable[tuple[str, str]]) -> Posterior:
        """Every (winner, loser) in order; returns self."""
        for winner, loser in answers:
            self.update(winner, loser)
        return self

    def gains(self, var: np.ndarray | None = None, pairs: np.ndarray | None = None) -> np.ndarray:
        """The expected information gain (nats) of every candidate pair (of ``pairs``, an
        index array, when given: elementwise, so the same values as in the whole)."""
        var = self.var if var is None else var
        a, b = self.pair_a, self.pair_b
        if pairs is not None:
            a, b = a[pairs], b[pairs]
        mu_a, mu_b, va, vb = self.mu[a], self.mu[b], var[a], var[b]
        s2 = NOISE_VARIANCE + va + vb
        s = np.sqrt(s2)
        t = (mu_a - mu_b) / s
        p = ndtr(t)
        total: np.ndarray = np.zeros_like(t)
        for sign, prob in ((1.0, p), (-1.0, 1.0 - p)):  # a preferred, then b preferred
            v, w = _v_w(sign * t)
            kl = _kl(mu_a + sign * va / s * v, va * (1 - va / s2 * w), mu_a, va)
            kl += _kl(mu_b - sign * vb / s * v, vb * (1 - vb / s2 * w), mu_b, vb)
            total += prob * kl
        return total

    def _shrink(self, var: np.ndarray, k: int) -> None:
        """Shrink ``var`` of pair ``k``'s maps by their expected update (E[w] over both
        answers, means unchanged): a pair given out but not answered yet. Scalar arithmetic:
        it runs once for every pair given out and not answered (hundreds when a hundred
        people vote at once), where NumPy's per-call cost on one element dominated."""
        a, b = int(self.pair_a[k]), int(self.pair_b[k])
        va, vb = float(var[a]), float(var[b])
        s2 = NOISE_VARIANCE + va + vb
        t = (float(self.mu[a]) - float(self.mu[b])) / math.sqrt(s2)
        p = float(ndtr(t))
        w = p * _w_scalar(t) + (1 - p) * _w_scalar(-t)
        var[a] = va * (1 - va / s2 * w)
        var[b] = vb * (1 - vb / s2 * w)

    def choose(
        self,
        count: int,
        exclude: Iterable[frozenset[str]] = (),
        pending: Iterable[frozenset[str]] = (),
        rng: np.random.Generator | None = None,
    ) -> list[Candidate]:
        """The ``count`` pairs to show next (fewer if fewer remain), best first, none of
        ``exclude`` (pairs this participant has already been given).

        ``pending`` are pairs given to someone and not answered yet: their maps' variances
        shrink by the expected update first. Then greedily: the pair of largest gain is
        taken, its maps' variances shrink likewise, and the gains are evaluated again —
        so a batch spreads over the pairs with the most left to learn (only the gains of
        pairs sharing a map with the pick change, and only those are evaluated again). Equal
        gains (at the start, every pair of every group) are broken at random by ``rng``, as
        the reference does; without it, the first of them is taken."""
        var = self.var.copy()
        for pair in pending:
            k = self.pair_index.get(pair)
            if k is not None:
                self._shrink(var, k)
        blocked = np.zeros(len(self.pair_a), dtype=bool)
        for pair in exclude:
            k = self.pair_index.get(pair)
            if k is not None:
                blocked[k] = True
        out: list[Candidate] = []
        gain = self.gains(var)
        gain[blocked] = -np.inf
        while len(out) < count and not blocked.all():
            best = np.flatnonzero(gain >= gain.max() - 1e-12)
            k = int(best[0] if rng is None or len(best) == 1 else rng.choice(best))
            blocked[k] = True
            a, b = int(self.pair_a[k]), int(self.pair_b[k])
            out.append(Candidate(self.pair_group[k], self.items[a], self.items[b]))
            self._shrink(var, k)
            changed = np.union1d(self.touching[a], self.touching[b])
            gain[changed] = self.gains(var, changed)
            gain[blocked] = -np.inf
        return out
