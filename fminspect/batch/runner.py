"""The batch runner: one work unit per image, every method inside it.

A work unit reads the GT (and the image when C^ω_β is wanted) once, prepares the GT once —
so the distance transform, the S-measure centroid, the Context-measure kernel and the
camouflage degree are computed once — then loads, resizes and scores each method's
prediction, computing only the measure families (fields of
:class:`~fminspect.metrics.SuiteResult`) the cache lacks for it. Units run serially, in
local processes (``jobs > 1``; see :mod:`fminspect.batch.pool`) or on a Dask cluster
(``scheduler='tcp://…'``); each finished unit is stored in the cache (one record per
prediction and family; see :mod:`fminspect.batch.cache` for when it is committed), and
dataset values are then aggregated in natural order, so the output is byte-identical
whatever the number of workers or the order in which they finish.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fminspect import MEASURE_DEFINITION_VERSION, __version__
from fminspect.batch.cache import Record, ResultCache, record_key
from fminspect.batch.pool import LocalPool, configure_worker
from fminspect.batch.progress import Progress
from fminspect.io.discovery import Coverage, Dataset, natural_key
from fminspect.io.loading import INTERPOLATIONS, fit_to, load_image, load_map
from fminspect.io.validation import LoadError, Problem, empty_gt_message
from fminspect.metrics import (
    DatasetAccumulator,
    Params,
    compute_suite,
    measure_keys,
    prepare_gt,
)
from fminspect.metrics.suite import CURVES, FIELD_PARAMS, MEASURES, MEASURES_BY_KEY

DEFAULT_PARAMS = Params()


@dataclass(frozen=True, slots=True)
class EvalConfig:
    """What to compute: parameters, measures and the resize rule.

    ``keys=None`` means every measure, with ``CCm`` only for datasets that have images.
    """

    params: Params = DEFAULT_PARAMS
    keys: tuple[str, ...] | None = None
    interpolation: str = "bilinear"

    def __post_init__(self) -> None:
        if self.interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {sorted(INTERPOLATIONS)}")
        measure_keys(self.keys)  # a wrong key fails here

    def keys_for(self, with_images: bool) -> tuple[str, ...]:
        """The measure keys computed for a dataset with (or without) images."""
        return measure_keys(self.keys, with_images=with_images)

    def as_dict(self) -> dict[str, Any]:
        """Plain-JSON form (recorded in results.json)."""
        return {
            "params": self.params.as_dict(),
            "normalization": self.params.norm.label,
            "keys": list(self.keys) if self.keys is not None else None,
            "interpolation": self.interpolation,
            "measure_definition_version": MEASURE_DEFINITION_VERSION,
        }

    def fingerprint(self, family: str) -> str:
        """Everything a cached result of one measure family (a field of
        :class:`~fminspect.metrics.SuiteResult`) depends on besides the input files: the
        normalisation, the resize rule, the family's own parameters and the definitions'
        version — not the other families' parameters, nor which measures were asked for."""
        own = {name: getattr(self.params, name) for name in FIELD_PARAMS.get(family, ())}
        return json.dumps(
            {
                "family": family,
                "normalization": asdict(self.params.norm),
                "params": own,
                "interpolation": self.interpolation,
                "measure_definition_version": MEASURE_DEFINITION_VERSION,
            },
            sort_keys=True,
        )


def families(keys: Sequence[str]) -> tuple[str, ...]:
    """The measure families (SuiteResult fields) behind ``keys``, in a fixed order."""
    wanted = {MEASURES_BY_KEY[k].field for k in keys}
    return tuple(dict.fromkeys(m.field for m in MEASURES if m.field in wanted))


def _family_keys(family: str) -> tuple[str, ...]:
    return tuple(m.key for m in MEASURES if m.field == family)


@dataclass(frozen=True, slots=True)
class Unit:
    """One image and the methods still to compute for it, with the measure families each
    lacks in the cache and the cache key of each."""

    dataset: str
    sample: str
    gt: str
    image: str | None
    # (method, prediction path, ((family, cache key), ...))
    todo: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...]
    config: EvalConfig


@dataclass(slots=True)
class UnitResult:
    """What a worker sends back."""

    dataset: str
    sample: str
    records: list[tuple[str, str, Record]]  # (method, key, record)
    problems: list[Problem]


def evaluate_unit(unit: Unit) -> UnitResult:
    """Score every pending method of one image (runs in a worker)."""
    configure_worker()
    out = UnitResult(unit.dataset, unit.sample, [], [])
    where = {"dataset": unit.dataset, "name": unit.sample}
    try:
        gt_map = load_map(unit.gt)
    except LoadError as exc:
        n = len(unit.todo)
        message = f"{exc.problem} ({n} prediction{'s' if n != 1 else ''} not evaluated)"
        out.problems.append(Problem(exc.path, message, "error", **where))
        return out
    gt = prepare_gt(gt_map.array, unit.config.params.norm)
    # notes travel with every cached record; the warnings are made from them when the
    # results are read (see _note_problems), so a rerun from the cache reports them too
    gt_notes = [f"GT: {n}" for n in gt_map.notes]
    if gt.is_empty:
        gt_notes.append(f"GT: {empty_gt_message(gt_map.array, gt.norm.gt_rule)}")
    img = None
    img_notes: list[str] = []  # go with the C^ω_β records only
    if any(fam == "camouflage_context" for _, _, todo in unit.todo for fam, _ in todo):
        try:
            if unit.image is None:
                raise LoadError(unit.gt, "no image for this GT, so CCm cannot be computed")
            img = load_image(unit.image)
            if img.shape[:2] != gt.shape:
                raise LoadError(
                    unit.image,
                    f"image size {img.shape[1]}×{img.shape[0]} differs "
                    f"from the GT's {gt.shape[1]}×{gt.shape[0]}; CCm not computed",
                )
        except LoadError as exc:
            img_notes.append(f"image: {exc.problem}")
            img = None
    for method, path, todo in unit.todo:
        try:
            pred = load_map(path)
        except LoadError as exc:
            out.problems.append(Problem(exc.path, exc.problem, "error", method=method, **where))
            continue
        array, note = fit_to(pred.array, gt.shape, unit.config.interpolation)
        pred_notes = list(pred.notes) + ([note] if note else [])
        keys = [k for fam, _ in todo for k in _family_keys(fam)]
        suite = compute_suite(array, gt, unit.config.params, img=img, keys=keys)
        computed, curves = suite.scores(), suite.curves()
        notes = [f"prediction: {n}" for n in pred_notes]
        notes += [f"input: {n}" for n in suite.pair.notes]
        for fam, key in todo:
            record = Record(
                {k: computed.get(k, math.nan) for k in _family_keys(fam)},  # CCm: NaN, no image
                {n: c for n, c in curves.items() if CURVES[n][0] == fam},
                (
                    *gt_notes,
                    *(img_notes if fam == "camouflage_context" else ()),
                    *notes,
                    *suite.field_warnings(fam),
                ),
            )
            out.records.append((method, key, record))
    return out


# ---------------------------------------------------------------------------- executors
def _run_serial(units: Sequence[Any], fn: Callable[[Any], Any] = evaluate_unit) -> Iterator[Any]:
    for u in units:
        yield fn(u)


def _run_local(
    units: Sequence[Any], pool: LocalPool, fn: Callable[[Any], Any] = evaluate_unit
) -> Iterator[Any]:
    from concurrent.futures import as_completed

    pool.ready()
    for fut in as_completed([pool.executor.submit(fn, u) for u in units]):
        yield fut.result()


def _run_dask(
    units: Sequence[Any], scheduler: Any, fn: Callable[[Any], Any] = evaluate_unit
) -> Iterator[Any]:
    try:
        from dask.distributed import Client, as_completed
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise RuntimeError("--scheduler needs Dask: pip install 'fminspect[cluster]'") from exc
    own = not hasattr(scheduler, "submit")
    client = Client(scheduler) if own else scheduler
    try:
        futures = client.map(fn, list(units), pure=False)
        for fut in as_completed(futures):
            yield fut.result()
    finally:
        if own:
            client.close()


def run_units(
    units: Sequence[Any], fn: Callable[[Any], Any], *, jobs: int = 1, scheduler: Any = None
) -> Iterator[Any]:
    """``fn(unit)`` for every unit, serially, on ``jobs`` local processes or on a Dask
    scheduler; results arrive in completion order (callers sort them)."""
    if scheduler is not None:
        return _run_dask(units, scheduler, fn)
    if jobs > 1 and len(units) > 1:
        return _run_local(units, LocalPool(jobs), fn)
    return _run_serial(units, fn)


# ---------------------------------------------------------------------------- results
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
    partial: int = 0  # of those planned, pairs with some measure families from the cache
    reused: int = 0  # pairs read from the cache entirely
    seconds: float = 0.0  # time spent in the work units' phase (not written to any output)

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
    dataset: str, method: str, sample: Any, notes: Sequence[str], seen: set[tuple[str, str]]
) -> list[Problem]:
    """Warnings for what was done to a record's inputs (conversions, resizes, a missing
    image), made from the notes stored with the record; GT and image notes once per sample."""
    out = []
    for note in notes:
        kind, _, text = note.partition(": ")
        if kind == "prediction":
            out.append(Problem(sample.preds[method], text, "warning", dataset, method, sample.name))
        elif kind in ("GT", "image") and (sample.name, note) not in seen:
            seen.add((sample.name, note))
            path = sample.image if kind == "image" and sample.image else sample.gt
            out.append(Problem(path, text, "warning", dataset, "", sample.name))
    return out


def _accumulate(acc: DatasetAccumulator, name: str, rec: Record) -> None:
    acc.add(name, rec.scores, rec.curves)


#: Records computed in this run are kept in memory up to this many bytes of curves, so that
#: assembling the results does not read them back from the cache (~60 µs each).
FRESH_RECORDS_BYTES = 256 << 20


class _FreshRecords:
    """Records computed in this run, as the cache would return them, within a byte budget."""

    def __init__(self) -> None:
        self.records: dict[str, Record] = {}
        self.budget = FRESH_RECORDS_BYTES

    def add(self, key: str, rec: Record) -> None:
        curves = {n: np.array(c, dtype="<f8") for n, c in rec.curves.items()}
        size = 1024 + sum(c.nbytes for c in curves.values())
        if size <= self.budget:
            self.budget -= size
            # the types a cache read gives: Python floats and str, little-endian float64
            scores = {k: float(v) for k, v in rec.scores.items()}
            self.records[key] = Record(scores, curves, tuple(str(n) for n in rec.notes))


def _merged(
    cache: ResultCache,
    fam_keys: dict[str, str] | None,
    keys: Sequence[str],
    fresh: _FreshRecords | None = None,
) -> Record | None:
    """One prediction's record for ``keys``, joined from its families' records — computed in
    this run (``fresh``) or cached — (None when one is missing: the prediction could not be
    evaluated)."""
    if not fam_keys:
        return None
    records: dict[str, Record] = {}
    for fam, key in fam_keys.items():
        rec = fresh.records.get(key) if fresh is not None else None
        if rec is None:
            rec = cache.get(key)
        if rec is None:
            return None
        records[fam] = rec
    scores = {k: records[MEASURES_BY_KEY[k].field].scores[k] for k in keys}
    curves: dict[str, np.ndarray] = {}
    notes: dict[str, None] = {}  # the input notes are in every family's record: keep one
    for rec in records.values():
        curves.update(rec.curves)
        notes.update(dict.fromkeys(rec.notes))
    return Record(scores, curves, tuple(notes))


def evaluate_datasets(
    datasets: Iterable[Dataset],
    config: EvalConfig = EvalConfig(),
    *,
    cache_path: Path | str,
    methods: Sequence[str] | None = None,
    jobs: int = 1,
    scheduler: Any = None,
    pool: LocalPool | None = None,
    progress: bool | None = None,
) -> EvalReport:
    """Evaluate every (dataset, method, image); see the module notes.

    Parameters
    ----------
    datasets : Dataset
        From :func:`fminspect.io.discovery.discover`.
    config : EvalConfig
        Parameters, measures, resize rule.
    cache_path : path
        SQLite result cache (created if needed; shared between runs to resume).
    methods : list of str, optional
        Restrict to these methods.
    jobs : int
        Local worker processes (1: in this process).
    scheduler : str or dask Client, optional
        A Dask scheduler address (``'tcp://host:8786'``) or client; overrides ``jobs``.
    pool : LocalPool, optional
        Local workers started earlier (the CLI starts them before importing the measures);
        by default a pool of ``jobs`` workers is started here when ``jobs > 1``.
    progress : bool, optional
        Show a progress bar (default: when stderr is a terminal).
    """
    datasets = list(datasets)
    report = EvalReport(config, datasets=[d.name for d in datasets])
    units: list[Unit] = []
    # start local workers now, so their start-up overlaps the planning below
    if pool is None and scheduler is None and jobs > 1:
        pool = LocalPool(jobs)
    with ResultCache(cache_path) as cache:
        Keymap = dict[tuple[str, str], dict[str, str]]  # (method, sample) → {family: key}
        plan: list[tuple[Dataset, list[str], tuple[str, ...], Keymap]] = []
        for ds in datasets:
            report.problems += ds.problems
            names = [m for m in ds.method_names if methods is None or m in methods]
            with_images = ds.image is not None and any(s.image for s in ds.samples)
            keys = config.keys_for(with_images)
            report.keys_by_dataset[ds.name] = keys
            fingerprints = {fam: config.fingerprint(fam) for fam in families(keys)}
            keymap: Keymap = {}
            wanted: list[Path] = []
            for s in ds.samples:
                wanted.append(s.gt)
                if "CCm" in keys and s.image:
                    wanted.append(s.image)
                wanted += [s.preds[m] for m in names if m in s.preds]
            digests = cache.digests(wanted, threads=max(jobs, 1) if scheduler is None else 1)
            for s in ds.samples:
                gt_digest = digests[s.gt]
                img_digest = digests[s.image] if ("CCm" in keys and s.image) else ""
                if not isinstance(gt_digest, str) or not isinstance(img_digest, str):
                    path, exc = (
                        (s.gt, gt_digest)
                        if isinstance(gt_digest, OSError)
                        else (s.image, img_digest)
                    )
                    report.problems.append(
                        Problem(path, f"cannot be read ({exc})", "error", ds.name, "", s.name)
                    )
                    continue
                report.digests[str(s.gt)] = gt_digest
                if img_digest:
                    report.digests[str(s.image)] = img_digest
                todo = []
                for m in names:
                    if m not in s.preds:
                        continue
                    d = digests[s.preds[m]]
                    if isinstance(d, OSError):
                        report.problems.append(
                            Problem(
                                s.preds[m], f"cannot be read ({d})", "error", ds.name, m, s.name
                            )
                        )
                        continue
                    report.digests[str(s.preds[m])] = d
                    fam_keys = {
                        # only C^ω_β depends on the image
                        fam: record_key(
                            (gt_digest, img_digest if fam == "camouflage_context" else "", d),
                            fingerprint,
                        )
                        for fam, fingerprint in fingerprints.items()
                    }
                    keymap[(m, s.name)] = fam_keys
                    missing = tuple((f, k) for f, k in fam_keys.items() if not cache.has(k))
                    if missing:
                        todo.append((m, str(s.preds[m]), missing))
                        report.partial += len(missing) < len(fam_keys)
                    else:
                        report.reused += 1
                if todo:
                    units.append(
                        Unit(
                            ds.name,
                            s.name,
                            str(s.gt),
                            str(s.image) if s.image else None,
                            tuple(todo),
                            config,
                        )
                    )
            plan.append((ds, names, keys, keymap))
        cache.commit()
        if scheduler is not None:
            stream = _run_dask(units, scheduler)
        elif pool is not None and units:
            pool.ready()  # so that report.seconds times the work, not the workers' start-up
            stream = _run_local(units, pool)
        else:
            stream = _run_serial(units)
        unit_problems: list[Problem] = []
        started = time.perf_counter()
        fresh = _FreshRecords()
        with Progress(len(units), "evaluating", enabled=progress) as bar:
            for res in stream:
                cache.put_many((key, rec) for _, key, rec in res.records)
                for _, key, rec in res.records:
                    fresh.add(key, rec)
                report.computed += len({method for method, _, _ in res.records})
                unit_problems += res.problems
                bar.advance()
        report.seconds = time.perf_counter() - started
        for ds, names, keys, keymap in plan:
            sample_notes: set[tuple[str, str]] = set()  # GT and image notes: once per sample
            for m in names:
                acc = DatasetAccumulator()
                failed = []
                for s in ds.samples:
                    rec = _merged(cache, keymap.get((m, s.name)), keys, fresh)
                    if rec is None:
                        if m in s.preds:  # a prediction that could not be evaluated
                            failed.append(s.name)
                        continue
                    _accumulate(acc, s.name, rec)
                    unit_problems += _note_problems(ds.name, m, s, rec.notes, sample_notes)
                    report.per_image.append(
                        {
                            "dataset": ds.name,
                            "method": m,
                            "image": s.name,
                            **rec.scores,
                            "notes": " | ".join(rec.notes),  # notes may hold ";"
                        }
                    )
                if not len(acc):
                    continue
                report.results.append(
                    MethodResult(
                        ds.name,
                        m,
                        acc.results(),
                        acc.counts(),
                        len(acc),
                        _evaluated_coverage(ds.coverage[m], failed),
                        acc.mean_curves(),
                    )
                )
        report.problems += sorted(
            unit_problems,
            key=lambda p: (
                natural_key(p.dataset),
                natural_key(p.name),
                natural_key(p.method),
                str(p.path),
            ),
        )
    return report
