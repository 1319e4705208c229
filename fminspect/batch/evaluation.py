"""Plan and collect a dataset-wide evaluation against the result store.

* **Plan** (:class:`Evaluation`): the input files are hashed (digests are remembered in the
  store), every (sample, method) pair gets its store keys — one per measure family — and what
  the store lacks becomes work units (:class:`Unit`), one per image
  with every pending method inside it. A pair that has a row of every score in the store
  (:meth:`~fminspect.pipeline.store.ResultStore.pair_scores`) has every record: only the
  others' records are asked for.
* **Stream**: :meth:`Evaluation.stored_blocks` gives the per-image scores already in the
  store (what the window's browser shows at once), from those rows where they exist, and
  writes the rows it had to make from the records; :meth:`Evaluation.add` stores each unit's
  result, and a row of every score of each pair it completed, as it arrives and returns the
  pairs it completed.
* **Collect**: :meth:`Evaluation.report` (``fminspect eval``'s outputs) and
  :meth:`Evaluation.method_results` (the window's dataset view) assemble the dataset values
  from the store in natural sample order, so they are byte-identical whatever the number of
  workers or the order in which they finished, and whether the records were computed now or
  read from an earlier run.

Memory stays small whatever the dataset's size: per pair two short key prefixes are kept,
curves are summed as they are read (:class:`~fminspect.metrics.DatasetAccumulator`).

Each method's dataset values are stored too (:meth:`ResultStore.put_aggregate`), keyed by a
digest of the records they were made from, the parameters, the measures and the source of
the code that aggregates them (:func:`aggregate_key`). The window's quick path reads them
back instead of every image's curves; ``fminspect eval`` always aggregates afresh (it reads
every record for its per-image rows anyway), and stores what it made for the window.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from fminspect import __version__
from fminspect.batch.scores import ScoreBlock, ScoreMatrix
from fminspect.io.discovery import Coverage, Dataset, Sample, natural_key
from fminspect.io.validation import Problem
from fminspect.metrics import DatasetAccumulator
from fminspect.metrics.dataset import group_weights
from fminspect.metrics.registry import CURVES, MEASURES_BY_KEY, REGISTRY, SWEEP_FAMILY
from fminspect.pipeline.config import EvalConfig, families
from fminspect.pipeline.notes import Note
from fminspect.pipeline.store import (
    Aggregate,
    Record,
    ResultStore,
    family_tag,
    pair_key,
    whole_pair_key,
)

if TYPE_CHECKING:
    from fminspect.batch.subsets import Selection

_Key = TypeVar("_Key", str, bytes)  # a record's key, or a pair's (its row of every score)

__all__ = [
    "DatasetPlan",
    "EvalReport",
    "Evaluation",
    "MethodResult",
    "Unit",
    "UnitResult",
    "merge_records",
]

#: The ROC's two curves (hit rate = recall against FPR), given with the dataset values
#: whenever a confusion-count measure was asked (its sweep counts make them for free).
ROC_CURVES = ("Recall", "FPR")


#: Bumped when what an aggregate's key covers changes.
AGGREGATE_FORMAT = 1


@functools.cache
def _code_digest() -> str:
    """A digest of the source of the code that turns records into dataset values (the
    measures and their registry, the accumulator, this module, the store's format): a
    stored aggregate made by other code is not read back, whatever the version number says.
    Made when this module is imported, so that it describes the code this process runs
    (files edited later do not change it)."""
    package = Path(__file__).resolve().parents[1]
    h = hashlib.blake2b(digest_size=16)
    h.update(np.__version__.encode())  # the last bits of a mean may change with NumPy
    sources = [
        *(package / "metrics").glob("*.py"),
        Path(__file__),
        package / "pipeline" / "store.py",
    ]
    try:
        for path in sorted(p.resolve() for p in sources):
            h.update(path.name.encode())
            h.update(path.read_bytes())
    except OSError:  # no readable source (an unusual install): nothing stored is read back
        return f"unreadable-{os.getpid()}-{time.time_ns()}"
    return h.hexdigest()


_code_digest()  # now, from the files this process imported


def aggregate_key(plan: DatasetPlan, method: str, names: Sequence[str], config: EvalConfig) -> str:
    """The store key of ``method``'s dataset values when made from the records of the images
    ``names`` (in this order): a digest of those records' keys (the input files' contents,
    the normalisation, the resize rule, each family's parameters), the images' groups, every
    parameter, the measures and families asked for, and the code (:func:`_code_digest`)."""
    h = hashlib.blake2b(digest_size=20)
    head = {
        "format": AGGREGATE_FORMAT,
        "code": _code_digest(),
        "version": __version__,
        "params": config.params.as_dict(),
        "keys": list(plan.keys),
        "tags": sorted(plan.tags.items()),
        "grouped": plan.groups is not None,
    }
    h.update(json.dumps(head, sort_keys=True, default=repr).encode())
    groups = plan.groups or {}
    for name in names:
        first, with_image = plan.pairs[(method, name)]
        h.update(f"\n{name}\t{first}\t{with_image}\t{groups.get(name, '')}".encode())
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Unit:
    """One image and the methods still to compute for it, each with the measure families
    it lacks in the store."""

    sample: Sample
    todo: tuple[tuple[str, tuple[str, ...]], ...]  # (method, families)
    config: EvalConfig

    @property
    def needs_image(self) -> bool:
        """Whether a family asked for reads the image (``Family.needs_image``: C^ω_β, or a
        plug-in's)."""
        families = REGISTRY.families
        return any(families[f].needs_image for _, fams in self.todo for f in fams)

    def files(self) -> list[Path]:
        """The files this unit reads: the GT, the image if needed, the pending maps."""
        s = self.sample
        image = [s.image] if self.needs_image and s.image is not None else []
        return [s.gt, *image, *(s.preds[m] for m, _ in self.todo)]


@dataclass(slots=True)
class UnitResult:
    """What a worker sends back: the records it computed and the files it could not read."""

    dataset: str
    sample: str
    records: list[tuple[str, str, Record]]  # (method, family, record)
    problems: list[Problem]


@dataclass(slots=True)
class MethodResult:
    """Dataset-level values of one method on one dataset."""

    dataset: str
    method: str
    values: dict[str, float]
    counts: dict[str, int]
    n_images: int
    coverage: Coverage
    mean_curves: dict[str, np.ndarray]
    #: predictions of another size than their GT, resized to it (known when the per-image
    #: notes were read: not in the window's quick path)
    resized: int = 0


@dataclass(slots=True)
class EvalReport:
    """Everything a batch run produced (written out by :mod:`fminspect.batch.outputs`)."""

    config: EvalConfig
    results: list[MethodResult] = field(default_factory=list)
    per_image: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    digests: dict[str, str] = field(default_factory=dict)
    datasets: list[str] = field(default_factory=list)
    keys_by_dataset: dict[str, tuple[str, ...]] = field(default_factory=dict)
    computed: int = 0  # pairs computed (in full or in part)
    partial: int = 0  # of those planned, pairs with some measure families from the store
    reused: int = 0  # pairs read from the store entirely
    seconds: float = 0.0  # time spent in the work units' phase (not written to any output)
    #: on a Dask cluster: the scheduler, each worker's versions and images, workers lost
    cluster: dict[str, Any] | None = None
    #: bootstrap intervals and paired tests (``eval --ci``; :meth:`Evaluation.statistics`)
    statistics: dict[str, dict[str, Any]] | None = None
    #: per dataset, the images whose GT has no foreground pixel (reported always)
    empty_gt: dict[str, list[str]] = field(default_factory=dict)
    #: subset dataset → the dataset it is part of (:mod:`fminspect.batch.subsets`)
    subsets: dict[str, str] = field(default_factory=dict)
    #: which images made the values: image list, subsets, empty GTs left out or not
    #: (:meth:`fminspect.batch.subsets.Selection.describe`, recorded in results.json)
    selection: dict[str, Any] = field(default_factory=dict)
    #: grouped evaluation: the number of groups of each dataset
    groups: dict[str, int] = field(default_factory=dict)

    @property
    def evaluated(self) -> int:
        """Number of (image, method) pairs with a result."""
        return len(self.per_image)

    def summary(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{dataset: {method: {measure: value}}}``."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for r in self.results:
            out.setdefault(r.dataset, {})[r.method] = dict(r.values)
        return out

    def version(self) -> str:
        """The fminspect version that produced it."""
        return __version__


def _evaluated_coverage(found: Coverage, failed: list[str]) -> Coverage:
    """Coverage of what was evaluated: matched files that failed are not counted as covered."""
    lost = set(failed)
    return Coverage(
        found.method,
        matched=[n for n in found.matched if n not in lost],
        missing=list(found.missing),
        extra=list(found.extra),
        failed=list(failed),
    )


def _note_problems(
    dataset: str, method: str, sample: Sample, notes: Sequence[Note], seen: set[tuple[str, str]]
) -> list[Problem]:
    """Warnings for what was done to a record's inputs (conversions, resizes, a missing
    image), made from the notes stored with the record; GT and image notes once per sample."""
    out = []
    for note in notes:
        if note.about == "prediction":
            out.append(
                Problem(sample.preds[method], note.message, "warning", dataset, method, sample.name)
            )
        elif note.about in ("GT", "image") and (sample.name, str(note)) not in seen:
            seen.add((sample.name, str(note)))
            path = sample.image if note.about == "image" and sample.image else sample.gt
            out.append(Problem(path, note.message, "warning", dataset, "", sample.name))
    return out


def merge_records(records: dict[str, Record], keys: Sequence[str]) -> Record:
    """One prediction's record for ``keys``, joined from its families' records."""
    scores = {k: records[MEASURES_BY_KEY[k].field].scores[k] for k in keys}
    curves: dict[str, np.ndarray] = {}
    notes: dict[Note, None] = {}  # the input notes are in every family's record: keep one
    for rec in records.values():
        curves.update(rec.curves)
        notes.update(dict.fromkeys(rec.notes))
    return Record(scores, curves, tuple(notes))


def _decode(
    values: np.ndarray,
    rows: Sequence[int],
    names: Sequence[str],
    blobs: Sequence[bytes],
    cols: Mapping[str, int],
) -> None:
    """Write scores stored as raw bytes, all with the same ``names``, into ``values``: row
    ``rows[i]`` gets ``blobs[i]``'s scores in the columns ``cols`` gives their names."""
    arr = np.frombuffer(b"".join(blobs), "<f8").reshape(len(rows), len(names))
    pick = [(c, cols[n]) for c, n in enumerate(names) if n in cols]
    idx = np.array(rows, np.intp)
    values[idx[:, None], [t for _, t in pick]] = arr[:, [c for c, _ in pick]]


def _by_names(
    found: Iterable[tuple[_Key, str, bytes]], owner: Mapping[_Key, list[int]]
) -> dict[str, tuple[list[int], list[bytes]]]:
    """Stored scores ``(key, names, bytes)`` grouped by their names (a family's records, or
    rows made alike, have the same names: decoded together): the rows of the pairs ``owner``
    gives for each key, and the key's bytes once for each of them."""
    grouped: dict[str, tuple[list[int], list[bytes]]] = {}
    for key, names, blob in found:
        rows, blobs = grouped.setdefault(names, ([], []))
        for r in owner[key]:
            rows.append(r)
            blobs.append(blob)
    return grouped


@dataclass(slots=True)
class DatasetPlan:
    """One dataset of an evaluation: its methods, measures and every pair's store keys."""

    dataset: Dataset
    methods: list[str]
    keys: tuple[str, ...]
    #: measure family → the second part of its records' keys
    tags: dict[str, str] = field(default_factory=dict)
    #: (method, sample) → the first part of its records' keys, without and with the image's
    #: digest (only C^ω_β uses the image); pairs whose files could not be read are absent
    pairs: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    #: the dataset this plan is a subset of (:mod:`fminspect.batch.subsets`); its pairs and
    #: keys are the whole dataset's
    subset_of: str = ""
    #: samples left out of the dataset values (empty GTs with ``exclude_empty_gt``): they
    #: keep their per-image rows
    excluded: list[Sample] = field(default_factory=list)
    #: sample → group, for a grouped evaluation (co-SOD, video): values per group, then
    #: their mean (:meth:`fminspect.metrics.DatasetAccumulator.grouped_results`)
    groups: dict[str, str] | None = None

    def all_samples(self) -> list[Sample]:
        """The dataset's samples with those left out, in natural order."""
        if not self.excluded:
            return self.dataset.samples
        return sorted([*self.dataset.samples, *self.excluded], key=lambda s: natural_key(s.name))

    def keys_of(self, method: str, sample: str) -> dict[str, str] | None:
        """``{family: store key}`` of one pair (None if its files could not be read)."""
        prefix = self.pairs.get((method, sample))
        if prefix is None:
            return None
        families = REGISTRY.families  # a family that reads the image: its digest in the key
        return {
            fam: prefix[1 if families[fam].needs_image else 0] + tag
            for fam, tag in self.tags.items()
        }

    def whole_key(self, method: str, sample: str) -> bytes:
        """The key of the row of every score of the plan's families of one of its pairs
        (:meth:`~fminspect.pipeline.store.ResultStore.pair_scores`)."""
        return whole_pair_key(self.pairs[(method, sample)], self.tags.values())

    def whole_row(self, records: Mapping[str, Record]) -> tuple[str, bytes]:
        """A pair's row of every score (names, little-endian float64 bytes) from its
        families' ``records``, in the plan's family order."""
        names = [k for fam in self.tags for k in records[fam].scores]
        values = [v for fam in self.tags for v in records[fam].scores.values()]
        return ",".join(names), np.array(values, dtype="<f8").tobytes()

    def curve_families(self) -> tuple[str, ...]:
        """The families whose records hold arrays: curves, and the sweep's counts from which
        the confusion-count measures' dataset curves and pooled values are made."""
        return tuple(
            f
            for f in self.tags
            if REGISTRY.families[f].arrays is not None
            or any(c.get is not None for c in REGISTRY.families[f].curves)
        )


#: (sample, method) → per-image scores, for :meth:`Evaluation.method_results`
ScoreLookup = Callable[[str, str], Mapping[str, float] | None]


class Evaluation:
    """One evaluation of methods × datasets against a result store (see the module notes).

    Creating it plans the work (:attr:`units`).
    """

    def __init__(
        self,
        datasets: Iterable[Dataset],
        config: EvalConfig,
        store: ResultStore,
        *,
        methods: Sequence[str] | None = None,
        digest_threads: int = 1,
        selection: Selection | None = None,
    ) -> None:
        from fminspect.batch.subsets import Selection

        self.config = config
        self.store = store
        self.selection = selection or Selection()
        self._selected = False
        datasets = list(datasets)
        self._report = EvalReport(
            config, datasets=[d.name for d in datasets], selection=self.selection.describe()
        )
        self.plans: list[DatasetPlan] = []
        self.units: list[Unit] = []
        self._unit_problems: list[Problem] = []
        if store.recovered:  # a damaged cache was moved aside: its results are recomputed
            self._report.problems.append(Problem(store.path, store.recovered, "warning"))
        for ds in datasets:
            self._plan(ds, methods, digest_threads)
        store.commit()

    @property
    def reused(self) -> int:
        """Pairs the store held whole when the evaluation was planned."""
        return self._report.reused

    @property
    def problems(self) -> list[Problem]:
        """Files found unusable while planning (discovery's problems, unreadable files)."""
        return self._report.problems

    def plan(self, dataset: str) -> DatasetPlan:
        """The plan of the dataset called ``dataset``."""
        return next(p for p in self.plans if p.dataset.name == dataset)

    def _plan(self, ds: Dataset, methods: Sequence[str] | None, threads: int) -> None:
        report, config, store = self._report, self.config, self.store
        report.problems += ds.problems
        names = [m for m in ds.method_names if methods is None or m in methods]
        with_images = ds.image is not None and any(s.image for s in ds.samples)
        keys = config.keys_for(with_images)
        report.keys_by_dataset[ds.name] = keys
        tags = {fam: family_tag(config.fingerprint(fam)) for fam in families(keys)}
        plan = DatasetPlan(ds, names, keys, tags)
        self.plans.append(plan)
        wants_image = any(MEASURES_BY_KEY[k].needs_image for k in keys)
        # the files as texts: quicker to hash than paths (1 million look-ups at 5,019 × 40)
        files = [
            (
                os.fspath(s.gt),
                os.fspath(s.image) if wants_image and s.image else "",
                [(m, os.fspath(s.preds[m])) for m in names if m in s.preds],
            )
            for s in ds.samples
        ]
        wanted = [p for gt, image, preds in files for p in (gt, image, *(p for _, p in preds)) if p]
        digests = store.digests(wanted, threads=threads)
        for s, (gt, image, preds) in zip(ds.samples, files, strict=True):
            gt_digest = digests[gt]
            img_digest = digests[image] if image else ""
            if isinstance(gt_digest, OSError) or isinstance(img_digest, OSError):
                path, exc = (
                    (s.gt, gt_digest) if isinstance(gt_digest, OSError) else (s.image, img_digest)
                )
                report.problems.append(
                    Problem(path, f"cannot be read ({exc})", "error", ds.name, "", s.name)  # type: ignore[arg-type]
                )
                continue
            report.digests[gt] = gt_digest
            if img_digest:
                report.digests[image] = img_digest
            for m, pred in preds:
                d = digests[pred]
                if isinstance(d, OSError):
                    report.problems.append(
                        Problem(s.preds[m], f"cannot be read ({d})", "error", ds.name, m, s.name)
                    )
                    continue
                report.digests[pred] = d
                plain = pair_key((gt_digest, "", d))
                plan.pairs[(m, s.name)] = (
                    plain,
                    pair_key((gt_digest, img_digest, d)) if img_digest else plain,
                )
        # pairs with a row of every score have every record (a row is written once they are
        # all stored, and records are never deleted: a damaged store is set aside whole);
        # the others' records are asked for, per family
        whole_keys = {pair: plan.whole_key(*pair) for pair in plan.pairs}
        whole = store.pairs_present(list(whole_keys.values()))
        rest = [pair for pair, key in whole_keys.items() if key not in whole]
        del whole_keys
        report.reused += len(plan.pairs) - len(rest)
        present = store.present(
            k
            for (m, name) in rest
            for k in plan.keys_of(m, name).values()  # type: ignore[union-attr]
        )
        todo: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for m, name in rest:
            fam_keys = plan.keys_of(m, name)
            assert fam_keys is not None
            missing = tuple(f for f, k in fam_keys.items() if k not in present)
            if missing:
                todo.setdefault(name, []).append((m, missing))
                report.partial += len(missing) < len(fam_keys)
            else:
                report.reused += 1
        self.units += [Unit(s, tuple(todo[s.name]), config) for s in ds.samples if s.name in todo]

    # ------------------------------------------------------------------ streaming
    def add(self, result: UnitResult) -> list[tuple[str, str, str, dict[str, float]]]:
        """Store one unit's records; returns
        the pairs it completed as ``(dataset, sample, method, scores)``, with the scores of
        the measures asked for (including those of families stored before)."""
        plan = self.plan(result.dataset)
        keyed = {
            method: plan.keys_of(method, result.sample) or {}
            for method in {m for m, _, _ in result.records}
        }
        self.store.put_many((keyed[method][fam], rec) for method, fam, rec in result.records)
        self._report.computed += len(keyed)
        self._unit_problems += result.problems
        records: dict[str, dict[str, Record]] = {m: {} for m in keyed}  # by family
        for method, fam, rec in result.records:
            records[method][fam] = rec
        done = []
        rows: list[tuple[bytes, str, bytes]] = []
        for method, fam_keys in keyed.items():
            family_of = {k: f for f, k in fam_keys.items() if f not in records[method]}
            for key, rec in self.store.get_many(list(family_of), curves=False, notes=False):
                records[method][family_of[key]] = rec
            got = {k: v for rec in records[method].values() for k, v in rec.scores.items()}
            if len(records[method]) == len(plan.tags):  # every family stored: one row of all
                rows.append(
                    (plan.whole_key(method, result.sample), *plan.whole_row(records[method]))
                )
            done.append(
                (
                    result.dataset,
                    result.sample,
                    method,
                    {k: got.get(k, math.nan) for k in plan.keys},
                )
            )
        self.store.put_pair_scores(rows)
        return done

    def stored_blocks(
        self, plan: DatasetPlan, matrix: ScoreMatrix, *, batch: int = 4000
    ) -> Generator[ScoreBlock, None, None]:
        """The scores the store has for ``plan``'s pairs, read in bulk (no curves, no notes)
        as blocks of ``matrix``'s indices, in natural sample order; only pairs whose every
        measure family is stored. A pair's scores come from its row of every score when it
        has one, else from its families' records, and are then stored as such a row for
        the next reading (when the store can take it at once), all of them after the last
        block, in key order (200,000 rows written in batches as they were read took 40 s,
        each batch rewriting pages all over the table; none if the reading is stopped)."""
        cols = matrix.key_index
        pairs = list(plan.pairs)
        made: dict[str, dict[bytes, bytes]] = {}  # rows to store: names → key → scores
        for start in range(0, len(pairs), batch):
            chunk = pairs[start : start + batch]
            values = np.full((len(chunk), len(matrix.keys)), np.nan)
            whole = np.zeros(len(chunk), bool)
            # a key → the pairs that have it (two methods may have the same file)
            owner: dict[bytes, list[int]] = {}
            for r, (m, name) in enumerate(chunk):
                owner.setdefault(plan.whole_key(m, name), []).append(r)
            grouped = _by_names(self.store.pair_scores(list(owner)), owner)
            for names, (rows, blobs) in grouped.items():
                split = names.split(",") if names else []
                if cols.keys() <= set(split):  # (a row written for fewer measures: not used)
                    _decode(values, rows, split, blobs, cols)
                    whole[rows] = True
            rest = np.flatnonzero(~whole)
            if len(rest):
                fam_values, fam_whole, rows_made = self._family_scores(
                    plan, [chunk[r] for r in rest], cols
                )
                values[rest] = fam_values
                whole[rest] = fam_whole
                made.setdefault(rows_made[0], {}).update(rows_made[1])
            got = np.flatnonzero(whole)
            yield ScoreBlock(
                np.array([matrix.sample_index[chunk[r][1]] for r in got], np.intp),
                np.array([matrix.method_index[chunk[r][0]] for r in got], np.intp),
                values[got],
            )
        self.store.put_pair_scores(
            sorted((k, text, blob) for text, rows in made.items() for k, blob in rows.items()),
            shortcut=True,
        )

    def _family_scores(
        self, plan: DatasetPlan, pairs: list[tuple[str, str]], cols: Mapping[str, int]
    ) -> tuple[np.ndarray, np.ndarray, tuple[str, dict[bytes, bytes]]]:
        """The scores of ``pairs`` read from their families' records: values in the
        columns ``cols``, which pairs have every family, and the rows of every score of
        those that have (the names, and each key's scores: every score their records hold,
        NaN where a pair's record has no such score, as reading the records gives)."""
        # a record key → the pairs that have it (two methods may have the same file)
        owner: dict[str, list[int]] = {}
        for r, (m, name) in enumerate(pairs):
            for k in plan.keys_of(m, name).values():  # type: ignore[union-attr]
                owner.setdefault(k, []).append(r)
        grouped = _by_names(self.store.raw_scores(list(owner)), owner)
        every: dict[str, int] = {}  # every score name the records hold → its column
        for names in grouped:
            for n in names.split(",") if names else ():
                every.setdefault(n, len(every))
        scores = np.full((len(pairs), len(every)), np.nan)
        found = np.zeros(len(pairs), np.intp)
        for names, (rows, blobs) in grouped.items():
            np.add.at(found, np.array(rows, np.intp), 1)
            if names:  # (a record without scores: the sweep's counts)
                _decode(scores, rows, names.split(","), blobs, every)
        values = np.full((len(pairs), len(cols)), np.nan)
        pick = [(every[k], c) for k, c in cols.items() if k in every]
        values[:, [c for _, c in pick]] = scores[:, [e for e, _ in pick]]
        whole = found == len(plan.tags)
        made = {
            plan.whole_key(*pairs[r]): scores[r].astype("<f8").tobytes()
            for r in np.flatnonzero(whole).tolist()
        }
        return values, whole, (",".join(every), made)

    def stored_problems(self, plan: DatasetPlan) -> list[Problem]:
        """The warnings made from the notes stored with the plan's pairs: what was done to
        their inputs (a map resized, a 16-bit file scaled, a missing image), as a window
        reading an earlier eval's scores would not otherwise know. One family's records are
        read (each carries its pair's input notes)."""
        noted = dict(self.store.noted())  # most stores: none, and nothing more to do
        if not plan.tags or not noted:
            return []
        family = next(iter(plan.tags))
        seen: set[tuple[str, str]] = set()
        out: list[Problem] = []
        for s in plan.dataset.samples:
            for m in plan.methods:
                keys = plan.keys_of(m, s.name)
                notes = noted.get(keys[family]) if keys else None
                if notes:
                    out += _note_problems(plan.dataset.name, m, s, notes, seen)
        return out

    # ------------------------------------------------------------------ collect
    def _stored(
        self,
        plan: DatasetPlan,
        method: str,
        read: Sequence[str],
        notes: bool,
        samples: Sequence[Sample] | None = None,
    ) -> tuple[dict[str, Record], list[Sample]]:
        """The store's records of ``method`` for the families ``read`` (keyed by record
        key), and the samples (of ``samples``, default the dataset's) that have every one of
        them, in natural order."""
        samples = plan.dataset.samples if samples is None else samples
        wanted = {}
        for s in samples:
            fam_keys = plan.keys_of(method, s.name)
            if fam_keys:
                wanted.update({fam_keys[f]: s.name for f in read})
        stored = dict(self.store.get_many(list(wanted), notes=notes))
        whole = []
        for s in samples:
            fam_keys = plan.keys_of(method, s.name)
            if fam_keys and all(fam_keys[f] in stored for f in read):
                whole.append(s)
        return stored, whole

    def statistics(
        self, setup: Any, *, on_method: Callable[[], None] | None = None
    ) -> dict[str, dict[str, Any]]:
        """Bootstrap intervals, paired tests and groups of every key on every dataset
        (:mod:`fminspect.batch.significance`), from the stored records: ``{dataset: {"setup":
        what was done and on how many images, "keys": {key: KeyStats.as_dict()}}}``.

        Every method is resampled with the same image draws (so differences are paired);
        only methods with a result on every image of the dataset are tested and grouped.
        A grouped evaluation (co-SOD groups, video sequences) resamples whole groups (the
        cluster bootstrap: images of one group are not independent draws), and its tests
        count groups, not images (n = the number of groups; Wilcoxon on the groups' means).
        Memory: one method's per-image records at a time, and B values per key and method.
        """
        from fminspect.batch.significance import compare, resampling_weights

        params = self.config.params
        out: dict[str, dict[str, Any]] = {}
        for plan in self.plans:
            names = [s.name for s in plan.dataset.samples]
            index = {n: i for i, n in enumerate(names)}
            grouped = plan.groups
            if grouped is not None:  # whole groups are drawn
                group_names = list(dict.fromkeys(grouped[n] for n in names))
                number = {g: i for i, g in enumerate(group_names)}
                group_of = np.array([number[grouped[n]] for n in names], np.intp)
                units = len(group_names)
            else:
                units = len(names)
            weights = resampling_weights(units, setup.resamples, setup.seed)
            values: dict[str, dict[str, float]] = {}
            replicates: dict[str, dict[str, np.ndarray]] = {}
            per_image: dict[str, dict[str, np.ndarray]] = {}
            complete: list[str] = []
            # per-image values only for the Wilcoxon test (the bootstrap needs the replicates)
            mean_keys = [
                k
                for k in plan.keys
                if setup.test == "wilcoxon" and MEASURES_BY_KEY[k].dataset.kind == "mean"
            ]
            for m in plan.methods:
                stored, whole = self._stored(plan, m, list(plan.tags), notes=False)
                acc = DatasetAccumulator(keep_rows=True)
                for s in whole:
                    fam_keys = plan.keys_of(m, s.name)
                    assert fam_keys is not None
                    rec = merge_records({f: stored[fam_keys[f]] for f in plan.tags}, plan.keys)
                    acc.add(s.name, rec.scores, rec.curves)
                del stored
                if on_method is not None:
                    on_method()
                if not len(acc):
                    continue
                cols = np.array([index[n] for n in acc.names], np.intp)
                per_image[m] = {}
                if grouped is None:
                    values[m] = acc.results(params)
                    replicates[m] = acc.replicates(weights[:, cols], plan.keys, params)
                    for k in mean_keys:
                        full = np.full(len(names), np.nan)
                        full[cols] = acc.scores[k]
                        per_image[m][k] = full
                else:
                    labels = [grouped[n] for n in acc.names]
                    values[m] = acc.grouped_results(labels, params)
                    replicates[m] = acc.grouped_replicates(
                        labels, group_names, weights, plan.keys, params
                    )
                    for k in mean_keys:  # the groups' means, for the Wilcoxon test
                        v = np.asarray(acc.scores[k], dtype=np.float64)
                        ok = ~np.isnan(v)
                        g = group_of[cols]
                        sums = np.bincount(g[ok], v[ok], minlength=units)
                        n_ok = np.bincount(g[ok], minlength=units)
                        with np.errstate(invalid="ignore", divide="ignore"):
                            per_image[m][k] = sums / n_ok
                if len(acc) == len(names):
                    complete.append(m)
            stats = compare(
                values,
                replicates,
                plan.keys,
                setup,
                per_image=per_image,
                comparable=complete,
                images=units,
            )
            described = setup.describe(units, unit="groups" if grouped is not None else "images")
            described["images"] = len(names)
            described["tested_methods"] = complete
            out[plan.dataset.name] = {
                "setup": described,
                "keys": {k: st.as_dict() for k, st in stats.items()},
            }
        return out

    def method_results(
        self, plan: DatasetPlan, scores: ScoreLookup | None = None
    ) -> Iterator[tuple[MethodResult, list[dict[str, Any]], list[Problem]]]:
        """Each method's dataset values, assembled in natural sample order, with its
        per-image rows and the warnings made from the stored notes.

        With ``scores`` (what a caller holds already, e.g. the window's browser), only the
        curves are read from the store, and no rows or warnings are made: quicker."""
        ds = plan.dataset
        sample_notes: set[tuple[str, str]] = set()  # GT and image notes: once per sample
        details = scores is None and not plan.subset_of  # a subset's rows are its dataset's
        read = list(plan.tags) if scores is None else list(plan.curve_families())
        samples = plan.all_samples() if details else ds.samples
        left_out = {s.name for s in plan.excluded}
        for m in plan.methods:
            if scores is not None:
                known = self._stored_aggregate(plan, m, scores, samples, left_out)
                if known is not None:
                    yield known, [], []
                    continue
            stored, _ = self._stored(plan, m, read, details, samples)
            acc = DatasetAccumulator(keep_rows=plan.groups is not None)
            failed, rows, problems = [], [], []
            resized = 0
            for s in samples:
                fam_keys = plan.keys_of(m, s.name)
                given = scores(s.name, m) if scores is not None else None
                if (
                    not fam_keys
                    or any(fam_keys[f] not in stored for f in read)
                    or (scores is not None and given is None)
                ):
                    if m in s.preds and s.name not in left_out:  # could not be evaluated
                        failed.append(s.name)
                    continue
                rec = merge_records(
                    {f: stored[fam_keys[f]] for f in read}, plan.keys if scores is None else ()
                )
                if s.name not in left_out:
                    acc.add(s.name, rec.scores if scores is None else dict(given), rec.curves)  # type: ignore[arg-type]
                if details:
                    resized += any(n.kind == "resize" for n in rec.notes)
                    problems += _note_problems(ds.name, m, s, rec.notes, sample_notes)
                    rows.append(
                        {
                            "dataset": ds.name,
                            "method": m,
                            "image": s.name,
                            **rec.scores,
                            "notes": " | ".join(map(str, rec.notes)),  # notes may hold ";"
                        }
                    )
            if not len(acc):
                continue
            params = self.config.params
            if plan.groups is not None:  # per group, then the mean over the groups
                labels = [plan.groups[n] for n in acc.names]
                values = acc.grouped_results(labels, params)
                mean_curves = acc.weighted_mean_curves(group_weights(labels), params)
            else:
                values, mean_curves = acc.results(params), acc.mean_curves(params)
            result = MethodResult(
                ds.name,
                m,
                values,
                acc.counts(),
                len(acc),
                _evaluated_coverage(ds.coverage[m], failed),
                {  # the curves of the measures asked for, and the ROC's with the sweep
                    name: curve
                    for name, curve in mean_curves.items()
                    if name in CURVES
                    and (
                        CURVES[name].field in plan.tags
                        or (name in ROC_CURVES and SWEEP_FAMILY in plan.tags)
                    )
                },
                resized,
            )
            self.store.put_aggregate(
                aggregate_key(plan, m, acc.names, self.config),
                Aggregate(result.values, result.counts, result.n_images, result.mean_curves),
            )
            yield result, rows, problems

    def _stored_aggregate(
        self,
        plan: DatasetPlan,
        method: str,
        scores: ScoreLookup,
        samples: Sequence[Sample],
        left_out: set[str],
    ) -> MethodResult | None:
        """``method``'s dataset values as stored when they were made from exactly the images
        that have scores now (every image with all its records), or None."""
        names, failed = [], []
        for s in samples:
            if plan.pairs.get((method, s.name)) is None or scores(s.name, method) is None:
                if method in s.preds and s.name not in left_out:
                    failed.append(s.name)
            elif s.name not in left_out:
                names.append(s.name)
        if not names:
            return None
        known = self.store.get_aggregate(aggregate_key(plan, method, names, self.config))
        if known is None:
            return None
        ds = plan.dataset
        coverage = _evaluated_coverage(ds.coverage[method], failed)
        return MethodResult(
            ds.name, method, known.values, known.counts, known.n_images, coverage, known.curves
        )

    # ------------------------------------------------------------------ selection
    def _empty_gts(self, plan: DatasetPlan) -> list[str]:
        """The samples whose GT had no foreground pixel (their records' "empty-gt" note)."""
        first: dict[str, str] = {}
        for (m, name), _ in plan.pairs.items():
            if name not in first:
                keys = plan.keys_of(m, name)
                assert keys is not None
                first[name] = next(iter(keys.values()))
        # images whose GT and map are the same bytes share a record: each is counted
        names_of: dict[str, list[str]] = {}
        for name, key in first.items():
            names_of.setdefault(key, []).append(name)
        empty = {
            name
            for key, rec in self.store.get_many(list(names_of), curves=False)
            if any(note.kind == "empty-gt" for note in rec.notes)
            for name in names_of[key]
        }
        return [s.name for s in plan.dataset.samples if s.name in empty]

    def select(self) -> None:
        """Once every unit is stored: count the empty GTs (and leave them out with
        ``exclude_empty_gt``), then add a plan per subset after its dataset's plan."""
        if self._selected:
            return
        self._selected = True
        from fminspect.batch.subsets import restrict, subset_name

        report = self._report
        plans: list[DatasetPlan] = []
        for plan in self.plans:
            empty = self._empty_gts(plan)
            report.empty_gt[plan.dataset.name] = empty
            if empty and self.selection.exclude_empty_gt:
                lost = set(empty)
                keep = [s.name for s in plan.dataset.samples if s.name not in lost]
                plan.excluded = [s for s in plan.dataset.samples if s.name in lost]
                plan.dataset = restrict(plan.dataset, keep)
            if self.selection.groups is not None:
                plan.groups = {
                    s.name: self.selection.groups.of(s.name) or s.name for s in plan.all_samples()
                }
                report.groups[plan.dataset.name] = len(
                    {plan.groups[s.name] for s in plan.dataset.samples}
                )
            plans.append(plan)
            if self.selection.subsets is None:
                continue
            for label, names in self.selection.subsets.split(plan.dataset):
                name = subset_name(plan.dataset.name, label)
                sub = restrict(plan.dataset, names, name)
                plans.append(
                    DatasetPlan(
                        sub,
                        plan.methods,
                        plan.keys,
                        plan.tags,
                        plan.pairs,
                        plan.dataset.name,
                        groups=plan.groups,
                    )
                )
                report.subsets[name] = plan.dataset.name
                report.keys_by_dataset[name] = plan.keys
        self.plans = plans
        report.datasets = [p.dataset.name for p in plans]

    def report(self) -> EvalReport:
        """Everything ``fminspect eval`` writes: dataset values, per-image rows, problems
        (see the module notes)."""
        self.select()
        report = self._report
        report.results, report.per_image = [], []
        problems = list(self._unit_problems)
        for plan in self.plans:
            for result, rows, found in self.method_results(plan):
                report.results.append(result)
                report.per_image += rows
                problems += found
        report.problems += sorted(
            problems,
            key=lambda p: (
                natural_key(p.dataset),
                natural_key(p.name),
                natural_key(p.method),
                str(p.path),
            ),
        )
        return report
