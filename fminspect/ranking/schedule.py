"""Per-participant trial lists: every pair of every group, in a random order with random
sides, plus repeated pairs (sides swapped) and attention checks — all from a recorded seed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from fminspect.ranking.design import Design


@dataclass(frozen=True, slots=True)
class Trial:
    """One screen: a left and a right map of one group (or of an attention check)."""

    index: int
    kind: str  # 'pair', 'repeat' or 'check'
    group: str  # group id, or check id for checks
    left: str  # item ids
    right: str
    repeat_of: int | None = None  # index of the trial this one repeats
    correct: str | None = None  # for checks: the item that must be chosen


def participant_seed(study_seed: int, participant: str) -> int:
    """A participant's own seed, derived from the study seed and the participant id."""
    digest = hashlib.sha256(f"{study_seed}:{participant}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def schedule(design: Design, participant: str) -> list[Trial]:
    """The trials of ``participant`` (deterministic given the design and the id).

    Pairs of every group appear once in a random order with random sides. ``repeats`` pairs
    are shown a second time, sides swapped, at least three trials later (self-consistency);
    attention checks are inserted at random positions with the GT on a random side.
    """
    rng = np.random.default_rng(participant_seed(design.seed, participant))
    pairs = []
    for g in design.groups:
        for a, b in combinations([i.id for i in g.items], 2):
            pairs.append((g.id, *((a, b) if rng.random() < 0.5 else (b, a))))
    order = rng.permutation(len(pairs))
    seq: list[tuple[str, str, str, str, int | None, str | None]] = [
        ("pair", *pairs[i], None, None) for i in order
    ]
    # a repeat comes at least 4 trials after its original, so only pairs that have 3 more
    # after them can be repeated (a study with fewer pairs gets fewer repeats)
    eligible = max(0, len(seq) - 3)
    n_rep = min(design.repeats, eligible)
    for pos in sorted(rng.choice(eligible, size=n_rep, replace=False), reverse=True):
        kind, group, left, right, _, _ = seq[pos]
        insert_at = int(rng.integers(pos + 4, len(seq) + 1))
        seq.insert(insert_at, ("repeat", group, right, left, pos, None))
    for check in design.checks:
        good, bad = check.good.id, check.bad.id
        left, right = (good, bad) if rng.random() < 0.5 else (bad, good)
        seq.insert(int(rng.integers(0, len(seq) + 1)), ("check", check.id, left, right, None, good))
    # repeat_of refers to positions before insertions: resolve to final indices
    trials: list[Trial] = []
    first_index: dict[tuple[str, frozenset[str]], int] = {}
    for i, (kind, group, left, right, _, correct) in enumerate(seq):
        key = (group, frozenset((left, right)))
        repeat_of = first_index.get(key) if kind == "repeat" else None
        if kind == "pair":
            first_index[key] = i
        trials.append(Trial(i, kind, group, left, right, repeat_of, correct))
    return trials
