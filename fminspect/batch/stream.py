"""A dataset evaluation as a stream of events, for the window's browser and dataset view.

:func:`stream_evaluation` does what ``fminspect eval`` does — the same plan, the same work
units on the same process pool, the same store — but reports as it goes, so that a window
can show a dataset's scores as they land instead of after the last one:

1. :class:`Planned` — how many pairs there are, how many the store already has, and the
   files that cannot be read;
2. :class:`Scores` — batches of per-image scores, first those already in the store (an
   earlier ``eval``, or an earlier session), then those computed, about every quarter of a
   second; they are written into the :class:`~fminspect.batch.scores.ScoreMatrix` given;
3. :class:`Noted` — what was done to the inputs of the pairs read from the store (resized
   maps, scaled 16-bit files…), from the notes stored with them;
4. :class:`Progress` — images done, rate and ETA of the scoring;
5. :class:`Results` — every method's dataset values, assembled exactly as ``eval`` does
   (in natural order, from the stored curves), once the dataset is complete.

Setting ``stop`` ends the stream early (the units under way finish and are stored). No Qt.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from threading import Event
from typing import Any

from fminspect._runtime import quiet_collector
from fminspect.batch.evaluation import Evaluation, MethodResult
from fminspect.batch.pool import LocalPool
from fminspect.batch.runner import run_units
from fminspect.batch.scores import ScoreBlock, ScoreMatrix
from fminspect.io.discovery import Dataset
from fminspect.io.validation import Problem
from fminspect.pipeline.config import EvalConfig
from fminspect.pipeline.store import ResultStore


@dataclass(frozen=True, slots=True)
class Planned:
    """The work of one evaluation, known once the files are hashed and the store asked."""

    dataset: str
    pairs: int  # (image, method) pairs that can be evaluated
    stored: int  # of those, pairs the store has whole
    units: int  # images with something left to compute
    problems: tuple[Problem, ...]


@dataclass(frozen=True, slots=True)
class Noted:
    """Warnings made from the notes stored with the pairs read from the store."""

    dataset: str
    problems: tuple[Problem, ...]


@dataclass(frozen=True, slots=True)
class Scores:
    """Scores of some pairs (already written into the stream's matrix; a window in another
    process writes the block into its own)."""

    dataset: str
    block: ScoreBlock
    stored: bool  # read from the store (True) or just computed

    @property
    def samples(self) -> frozenset[int]:
        """The sample indices it concerns."""
        return frozenset(self.block.samples.tolist())


@dataclass(frozen=True, slots=True)
class Progress:
    """Scoring progress, in images (work units)."""

    dataset: str
    done: int
    total: int
    rate: float  # images per second
    eta: float  # seconds (NaN before the first image)
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class Results:
    """Every method's dataset values (as ``eval``'s summary.json)."""

    dataset: str
    results: tuple[MethodResult, ...]
    keys: tuple[str, ...] = field(default=())


def stream_evaluation(
    dataset: Dataset,
    matrix: ScoreMatrix,
    config: EvalConfig,
    store_path: Path | str,
    *,
    methods: Sequence[str] | None = None,
    jobs: int = 1,
    pool: LocalPool | Callable[[], LocalPool | None] | None = None,
    stop: Event | None = None,
    every: float = 0.25,
) -> Iterator[Any]:
    """Evaluate one dataset into ``matrix``, yielding the events of the module notes.

    ``pool``: local worker processes, or a function that returns them, called only when
    something is left to compute."""
    with ResultStore(store_path) as store:
        # planning and reading make millions of short-lived objects at 5,019 × 40: without
        # collections meanwhile the reading took 10 s instead of 16–20 s (held off for the
        # store's work only, never while the events are handled: that is the caller's time)
        with quiet_collector():
            ev = Evaluation([dataset], config, store, methods=methods, digest_threads=max(jobs, 2))
        plan = ev.plans[0]
        name = dataset.name
        yield Planned(name, len(plan.pairs), ev.reused, len(ev.units), tuple(ev.problems))
        blocks = ev.stored_blocks(plan, matrix)
        while True:
            with quiet_collector():
                block = next(blocks, None)
            if block is None:
                break
            if stop is not None and stop.is_set():
                blocks.close()
                return
            if len(block):
                matrix.put(block)
                yield Scores(name, block, True)
        if ev.reused:  # (after the scores: the window is in use while they are read)
            with quiet_collector():
                noted = ev.stored_problems(plan)
            if noted:
                yield Noted(name, tuple(noted))
        total = len(ev.units)
        started = last = time.monotonic()
        pending: list[tuple[str, str, dict[str, float]]] = []
        problems: list[Problem] = []
        if callable(pool) and ev.units:
            pool = pool()
        units = run_units(
            ev.units, jobs=jobs, pool=pool if isinstance(pool, LocalPool) else None, stop=stop
        )
        for done, res in enumerate(units, 1):
            pending += [(s, m, scores) for _, s, m, scores in ev.add(res)]
            problems += res.problems
            now = time.monotonic()
            if now - last >= every or done == total:
                last = now
                block = matrix.block(pending)
                matrix.put(block)
                yield Scores(name, block, False)
                rate = done / (now - started) if now > started else 0.0
                eta = (total - done) / rate if rate > 0 else float("nan")
                yield Progress(name, done, total, rate, eta, tuple(problems))
                pending, problems = [], []
        if pending:  # stopped between two reports
            block = matrix.block(pending)
            matrix.put(block)
            yield Scores(name, block, False)
        store.commit()
        if stop is not None and stop.is_set():
            return
        results = tuple(r for r, _, _ in ev.method_results(plan, scores=matrix.get))
        yield Results(name, results, plan.keys)
