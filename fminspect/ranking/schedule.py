"""Per-participant trial lists, all from a recorded seed: pairs in a random order with random
sides, plus repeated pairs (sides swapped) and attention checks.

Which pairs a participant is given depends on the design's sampling
(:data:`~fminspect.ranking.design.SAMPLINGS`):

* ``full`` — every pair of every group (:func:`schedule`);
* ``incomplete`` — the pairs of the participant's *slot*: the pairs of the study, in a seeded
  random order, are dealt round-robin to ``slots`` participants, each pair to ``coverage``
  consecutive slots, so every slot holds the same number of pairs (±1) and one round of
  ``slots`` participants sees every pair ``coverage`` times (:func:`slot_pairs`); the next
  participant takes the least used slot, and a second round covers every pair again;
* ``active`` — pairs chosen :data:`ACTIVE_CHUNK` at a time from the votes stored so far
  (:func:`active_chunk`, :mod:`fminspect.ranking.active`); a study pack gets all of a
  participant's chunks at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from itertools import combinations
from typing import NamedTuple

import numpy as np

from fminspect.ranking.design import Check, Design

#: Active designs choose a participant's pairs this many at a time, each chunk from every
#: vote stored when it is reached (its repeats and attention checks come with it).
ACTIVE_CHUNK = 10


class Trial(NamedTuple):
    """One screen: a left and a right map of one group (or of an attention check).

    A named tuple, not a dataclass: a participant's schedule (5,600 trials in a full design
    of 200 groups × 8 maps) is read from the study file whenever they come back, in 17 ms
    as named tuples, 28 ms as frozen dataclasses."""

    index: int  # type: ignore[assignment]  # shadows tuple.index(), which nothing uses
    kind: str  # 'pair', 'repeat' or 'check'
    group: str  # group id, or check id for checks
    left: str  # item ids
    right: str
    repeat_of: int | None = None  # index of the trial this one repeats
    correct: str | None = None  # for checks: the item that must be chosen


#: A pair to show: group id and two item ids (sides are decided when it is arranged).
Pair = tuple[str, str, str]


def participant_seed(study_seed: int, participant: str) -> int:
    """A participant's own seed, derived from the study seed and the participant id."""
    digest = hashlib.sha256(f"{study_seed}:{participant}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def all_pairs(design: Design) -> list[Pair]:
    """Every pair of every group, in the design's order."""
    return [
        (g.id, a, b) for g in design.groups for a, b in combinations([i.id for i in g.items], 2)
    ]


def slot_pairs(design: Design, slot: int) -> list[Pair]:
    """The pairs of one slot of an incomplete design (see the module's docstring)."""
    slots = design.slots
    if not 0 <= slot < slots:
        raise ValueError(f"slot {slot} outside 0…{slots - 1}")
    pairs = all_pairs(design)
    order = np.random.default_rng([design.seed, 0x1A5]).permutation(len(pairs))
    cov = design.coverage
    return [
        pairs[p] for j, p in enumerate(order) for r in range(cov) if (j * cov + r) % slots == slot
    ]


def schedule(design: Design, participant: str, slot: int | None = None) -> list[Trial]:
    """The trials of ``participant`` in a full design, or in ``slot`` of an incomplete one
    (deterministic given the design, the id and the slot).

    Pairs appear once in a random order with random sides. ``repeats`` pairs are shown a
    second time, sides swapped, at least three trials later (self-consistency); attention
    checks are inserted at random positions with the GT on a random side.
    """
    if design.sampling == "active":
        raise ValueError("an active design's trials are chosen as votes arrive (active_chunk)")
    if design.sampling == "incomplete":
        if slot is None:
            raise ValueError("an incomplete design's schedule needs the participant's slot")
        pairs = slot_pairs(design, slot)
    else:
        pairs = all_pairs(design)
    rng = np.random.default_rng(participant_seed(design.seed, participant))
    return arrange(pairs, design.checks, design.repeats, rng)


def arrange(
    pairs: Sequence[Pair],
    checks: Sequence[Check],
    repeats: int,
    rng: np.random.Generator,
    start: int = 0,
) -> list[Trial]:
    """``pairs`` shuffled with random sides, ``repeats`` of them shown again (sides swapped,
    at least four trials after the original; fewer when there are fewer than four pairs
    after it) and ``checks`` inserted at random places; trial indices from ``start``."""
    sided = [(grp, *((a, b) if rng.random() < 0.5 else (b, a))) for grp, a, b in pairs]
    order = rng.permutation(len(sided))
    seq: list[tuple[str, str, str, str, str | None]] = [("pair", *sided[i], None) for i in order]
    # a repeat comes at least 4 trials after its original, so only pairs that have 3 more
    # after them can be repeated (a short list gets fewer repeats)
    eligible = max(0, len(seq) - 3)
    n_rep = min(repeats, eligible)
    for pos in sorted(rng.choice(eligible, size=n_rep, replace=False), reverse=True):
        _, group, left, right, _ = seq[pos]
        insert_at = int(rng.integers(pos + 4, len(seq) + 1))
        seq.insert(insert_at, ("repeat", group, right, left, None))
    for check in checks:
        good, bad = check.good.id, check.bad.id
        left, right = (good, bad) if rng.random() < 0.5 else (bad, good)
        seq.insert(int(rng.integers(0, len(seq) + 1)), ("check", check.id, left, right, good))
    trials: list[Trial] = []
    first_index: dict[tuple[str, frozenset[str]], int] = {}
    for i, (kind, group, left, right, correct) in enumerate(seq, start):
        key = (group, frozenset((left, right)))
        repeat_of = first_index.get(key) if kind == "repeat" else None
        if kind == "pair":
            first_index[key] = i
        trials.append(Trial(i, kind, group, left, right, repeat_of, correct))
    return trials


# ------------------------------------------------------------------ active designs
def active_chunks(design: Design) -> list[tuple[int, tuple[Check, ...], int]]:
    """An active design's plan for each participant: per chunk, the number of pairs, its
    attention checks and its number of repeats (spread evenly over the chunks)."""
    total = design.pairs_per_participant
    n = max(1, -(-total // ACTIVE_CHUNK))
    sizes = [min(ACTIVE_CHUNK, total - c * ACTIVE_CHUNK) for c in range(n)]
    reps = [design.repeats // n + (c < design.repeats % n) for c in range(n)]
    return [(sizes[c], tuple(design.checks[c::n]), reps[c]) for c in range(n)]


def planned_trials(design: Design) -> int:
    """How many trials each participant of ``design`` is given."""
    if design.sampling != "active":
        n = design.pairs_per_participant
        if design.sampling == "incomplete":  # slots differ by at most one pair
            n = -(-design.pairs * design.coverage // design.slots)
        return n + min(design.repeats, max(0, n - 3)) + len(design.checks)
    return sum(
        size + min(reps, max(0, size - 3)) + len(checks)
        for size, checks, reps in active_chunks(design)
    )


def active_chunk(
    design: Design, participant: str, chunk: int, pairs: Sequence[Pair], start: int
) -> list[Trial]:
    """Chunk number ``chunk`` of an active design's participant, made of ``pairs`` (chosen
    by :meth:`~fminspect.ranking.active.Posterior.choose`), its trials numbered from
    ``start``; sides, order, repeats and checks from the participant's seed and the chunk."""
    _, checks, reps = active_chunks(design)[chunk]
    rng = np.random.default_rng([participant_seed(design.seed, participant), chunk])
    return arrange(pairs, checks, reps, rng, start)
