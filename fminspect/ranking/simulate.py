"""Simulated participants: Bradley–Terry voters with a side bias and lapses.

They vote through :class:`~fminspect.ranking.store.VotingSession`, the API the voting window
uses, so a lab can check before running a study that its design and consensus rule recover
a known ranking with the planned number of participants (and the tests can check that the
aggregation does). Simulated votes are stored like real ones; give simulated participants
recognisable ids (the default prefix is ``sim-``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fminspect.ranking.store import StudyStore, VotingSession


@dataclass(frozen=True, slots=True)
class SimulatedParticipant:
    """A voter choosing item i over j with probability σ(s_i − s_j + bias·[i shown left]),
    answering at random with probability ``lapse``; attention checks follow the same rule
    with the correct map ``check_strength`` stronger."""

    id: str
    strengths: Mapping[str, float]
    left_bias: float = 0.0
    lapse: float = 0.0
    tie_margin: float = 0.0  # answer "cannot decide" when |s_i − s_j| < margin (if allowed)
    check_strength: float = 8.0
    median_rt_ms: float = 1500.0
    seed: int = 0


def simulate(store: StudyStore, who: SimulatedParticipant, stop_after: int | None = None) -> int:
    """Let ``who`` vote on every remaining trial (or ``stop_after`` of them); returns how many."""
    session = VotingSession(store, who.id)
    rng = np.random.default_rng([who.seed, *who.id.encode()])
    n = 0
    while not session.finished and (stop_after is None or n < stop_after):
        trial = session.current()
        assert trial is not None
        if trial.kind == "check":
            diff = who.check_strength if trial.left == trial.correct else -who.check_strength
        else:
            diff = who.strengths[trial.left] - who.strengths[trial.right]
        rt = float(who.median_rt_ms * math.exp(rng.normal(0, 0.3)))
        if rng.random() < who.lapse:
            choice = "left" if rng.random() < 0.5 else "right"
        elif store.design.allow_ties and abs(diff) < who.tie_margin:
            choice = "tie"
        else:
            p_left = 1 / (1 + math.exp(-(diff + who.left_bias)))
            choice = "left" if rng.random() < p_left else "right"
        session.vote(choice, rt)
        n += 1
    return n


def strengths_by_position(store: StudyStore, gap: float = 2.0) -> dict[str, float]:
    """Strengths making each group's items ranked in their listed order (first = best),
    ``gap`` apart on the logit scale."""
    out = {}
    for g in store.design.groups:
        for k, item in enumerate(g.items):
            out[item.id] = -gap * k
    return out
