"""Building a study from a dataset: choosing samples and maps, making attention checks."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypedDict, Unpack

import cv2
import numpy as np

from fminspect.batch.progress import Progress
from fminspect.io.atomic import write_bytes
from fminspect.io.discovery import Dataset
from fminspect.io.loading import load_map
from fminspect.io.validation import LoadError, Problem
from fminspect.ranking.design import CHECK_KINDS, Check, Design, Group, Item, new_design


def pick_spread(scores: Mapping[str, float], n: int = 3, min_gap: float = 0.05) -> list[str]:
    """``n`` models whose scores are spread as evenly as possible (best, worst and between),
    with at least ``min_gap`` between neighbours; fewer when the scores are too close.

    This is how FMDatabase/CamoHR-style studies get maps "of clearly different quality".
    """
    ranked = sorted(scores, key=lambda m: (-scores[m], m))
    if not ranked:
        return []
    targets = np.linspace(scores[ranked[0]], scores[ranked[-1]], n)
    chosen: list[str] = []
    for target in targets:
        for m in sorted(ranked, key=lambda m: (abs(scores[m] - target), m)):
            if m not in chosen and all(abs(scores[m] - scores[c]) >= min_gap for c in chosen):
                chosen.append(m)
                break
    return sorted(chosen, key=lambda m: (-scores[m], m))


def score_maps(
    datasets: Sequence[Dataset],
    key: str,
    cache_path: Path,
    jobs: int = 1,
    problems: list[Problem] | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """``{dataset: {sample: {model: value}}}`` of one measure, oriented so that larger is
    better (negated for MAE), computed by the batch evaluator (cached in ``cache_path``,
    which may be the cache ``fminspect eval`` wrote: its scores are read, not recomputed).

    Files that could not be evaluated have no score; their problems (path and what is
    wrong) are appended to ``problems`` when it is given. ``say`` is told how many maps were
    read from the cache."""
    from fminspect.batch import EvalConfig, evaluate_datasets
    from fminspect.metrics import MEASURES_BY_KEY

    if key not in MEASURES_BY_KEY:
        raise ValueError(f"unknown measure key {key!r}")
    sign = 1.0 if MEASURES_BY_KEY[key].higher_is_better else -1.0
    report = evaluate_datasets(
        datasets, EvalConfig(keys=(key,)), cache_path=cache_path, jobs=jobs, progress=False
    )
    if say is not None:
        pairs = report.reused + report.computed
        say(
            f"{key} of {pairs} map{'s' if pairs != 1 else ''}: {report.reused} read from "
            f"{cache_path}, {report.computed} computed"
        )
    if problems is not None:  # what discovery found is the caller's already
        found = {p for d in datasets for p in d.problems}
        problems += [p for p in report.problems if p.severity == "error" and p not in found]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for row in report.per_image:
        out.setdefault(row["dataset"], {}).setdefault(row["image"], {})[row["method"]] = (
            sign * row[key]
        )
    return out


def groups_from_dataset(
    dataset: Dataset,
    *,
    samples: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    scores: Mapping[str, Mapping[str, float]] | None = None,
    per_group: int = 3,
    min_gap: float = 0.05,
    first_index: int = 1,
) -> list[Group]:
    """One group per sample with the chosen models' maps.

    With ``scores`` (sample → model → value of a measure), each group gets ``per_group`` maps
    of clearly different quality (:func:`pick_spread`); otherwise every model in ``models``
    (or all). Samples lacking a map are skipped; a group needs at least two maps. Group ids
    are ``g001``, ``g002``… from ``first_index`` (to combine several datasets in one study).
    """
    groups: list[Group] = []
    for s in dataset.samples:
        if samples is not None and s.name not in samples:
            continue
        available = [m for m in (models or dataset.method_names) if m in s.preds]
        if scores is not None:
            known = scores.get(s.name, {})
            per = {m: known[m] for m in available if m in known and np.isfinite(known[m])}
            available = pick_spread(per, per_group, min_gap)
        if len(available) < 2:
            continue
        gid = f"g{first_index + len(groups):03d}"
        items = tuple(
            Item(f"{gid}_{i + 1}", m, str(s.preds[m].resolve())) for i, m in enumerate(available)
        )
        groups.append(
            Group(
                gid,
                dataset.name,
                s.name,
                str(s.gt.resolve()),
                str(s.image.resolve()) if s.image else None,
                items,
            )
        )
    return groups


def check_files(
    design: Design,
    *,
    threads: int | None = None,
    progress: bool | None = False,
) -> list[str]:
    """A message for every file of the study that is missing or cannot be read as an image
    (empty when all can be shown), in the files' order.

    Every file is decoded, on ``threads`` threads (default: one per core, at most 8; the
    decoders let go of Python's lock): a study of 1,000 groups of three maps has 5,000 files,
    ~6 s on one core. ``progress``: a bar on a terminal or plain lines in a log (``None``),
    or nothing (``False``)."""
    files = design.files()
    workers = threads if threads is not None else min(8, os.cpu_count() or 1)

    def problem(path: str) -> str | None:
        try:
            load_map(path)
        except LoadError as exc:
            return str(exc)
        return None

    with (
        Progress(len(files), "checking the study's files", enabled=progress) as bar,
        ThreadPoolExecutor(max(1, workers)) as pool,
    ):
        found = []
        for message in pool.map(problem, files):
            found.append(message)
            bar.advance()
    return [m for m in found if m is not None]


def make_checks(
    groups: Sequence[Group], count: int, folder: Path, seed: int = 0
) -> tuple[Check, ...]:
    """``count`` attention checks (the GT against random noise or an empty map), written as
    PNGs into ``folder``; they reuse the groups' images and GTs."""
    if count <= 0:
        return ()
    usable = [g for g in groups if g.gt]
    if not usable:
        raise ValueError("attention checks need groups with a GT")
    from fminspect.metrics import prepare_gt  # the study's GT rule (> 128 by default)

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    checks = []
    gts: dict[str, np.ndarray] = {}
    for g in usable:
        assert g.gt is not None  # usable groups have one
        try:
            gts[g.id] = prepare_gt(load_map(g.gt).array).mask
        except (LoadError, ValueError):
            continue  # an unreadable GT is reported by check_files; checks use the others
    usable = [g for g in usable if g.id in gts]
    if not usable:
        raise ValueError("attention checks need at least one readable GT")
    for i in range(count):
        g = usable[int(rng.integers(len(usable)))]
        gt = gts[g.id]
        kind = CHECK_KINDS[i % 2]
        bad = (
            (rng.random(gt.shape) * 255).astype(np.uint8)
            if kind == "GT vs noise"
            else np.zeros(gt.shape, np.uint8)
        )
        good_path = folder / f"check{i + 1}_gt.png"
        bad_path = folder / f"check{i + 1}_{'noise' if 'noise' in kind else 'empty'}.png"
        for path, arr in (
            (good_path, gt.astype(np.uint8) * 255),
            (bad_path, bad),
        ):
            ok, buf = cv2.imencode(".png", arr)
            if not ok:
                raise OSError(f"{path}: could not encode the attention-check map")
            write_bytes(path, buf.tobytes())
        cid = f"c{i + 1:02d}"
        checks.append(
            Check(
                cid,
                kind,
                g.id,
                Item(f"{cid}_gt", "GT", str(good_path.resolve())),
                Item(f"{cid}_bad", kind.split()[-1], str(bad_path.resolve())),
            )
        )
    return tuple(checks)


class DesignOptions(TypedDict, total=False):
    """The keyword arguments of :func:`new_design` that :func:`build_design` passes on."""

    seed: int
    presentation: str
    overlay_alpha: float
    show_gt: bool
    show_image: bool
    allow_ties: bool
    repeats: int
    selection: dict[str, Any] | None
    sampling: str
    per_participant: int
    coverage: int


def build_design(
    name: str,
    groups: list[Group],
    study_path: Path,
    *,
    checks: int = 0,
    **options: Unpack[DesignOptions],
) -> Design:
    """A design with attention checks written next to the study file."""
    folder = study_path.with_suffix("").with_name(study_path.stem + "_files") / "checks"
    seed = int(options.get("seed", 0))
    return new_design(name, groups, checks=make_checks(groups, checks, folder, seed), **options)
