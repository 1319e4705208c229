"""Creating a study from a dataset folder: ``fminspect rank create`` as a function.

:func:`create_study` finds the datasets, checks what is asked for (datasets, samples, models),
picks the maps of each group — every chosen model's, or with ``auto`` a few of clearly
different quality by a measure (scored by the batch evaluator, cached next to the study) —
checks that every file can be shown, and writes the study file with its attention checks.
What it notices on the way (files it cannot use, samples left out) is passed to
``on_message`` as it happens; what stops it is raised. No Qt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fminspect.io.discovery import Dataset, discover
from fminspect.io.validation import Problem
from fminspect.ranking.build import build_design, check_files, groups_from_dataset, score_maps
from fminspect.ranking.design import Design, Group, new_design
from fminspect.ranking.schedule import ACTIVE_CHUNK, planned_trials
from fminspect.ranking.store import StudyError, StudyStore
from fminspect.ranking.workflow import ArgumentError

__all__ = ["SECONDS_PER_VOTE", "CreatedStudy", "create_study"]

#: The time a vote takes, for the estimate of a participant's session.
SECONDS_PER_VOTE = 3


@dataclass(frozen=True, slots=True)
class CreatedStudy:
    """A study :func:`create_study` wrote: its file, its design, what was noticed on the way
    (files that could not be used, samples left out…) and what it asks of each participant."""

    path: Path
    design: Design
    messages: tuple[str, ...] = ()

    @property
    def groups(self) -> int:
        """Number of groups (samples) to rank."""
        return len(self.design.groups)

    @property
    def pairs(self) -> int:
        """Number of distinct pairs of maps, over every group."""
        return self.design.pairs

    @property
    def trials_per_participant(self) -> int:
        """Trials each participant sees (at most): their pairs, the repeated pairs (a repeat
        needs three trials after its original, see
        :func:`~fminspect.ranking.schedule.arrange`) and the attention checks."""
        return planned_trials(self.design)

    @property
    def seconds_per_participant(self) -> int:
        """Estimated length of a session, at :data:`SECONDS_PER_VOTE` per trial."""
        return self.trials_per_participant * SECONDS_PER_VOTE


def create_study(
    study: Path | str,
    root: Path | str,
    *,
    name: str | None = None,
    datasets: Sequence[str] | None = None,
    samples: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    auto: int | None = None,
    by: str = "Sm",
    min_gap: float = 0.05,
    limit: int | None = None,
    presentation: str = "side_by_side",
    overlay_alpha: float = 0.5,
    show_gt: bool = True,
    show_image: bool = True,
    allow_ties: bool = False,
    repeats: int = 0,
    checks: int = 0,
    seed: int = 0,
    sampling: str = "full",
    per_participant: int | None = None,
    coverage: int | None = None,
    jobs: int = 1,
    cache: Path | str | None = None,
    on_message: Callable[[str], None] | None = None,
    progress: bool | None = False,
) -> CreatedStudy:
    """Create the study file ``study`` from the dataset folder ``root``.

    Parameters
    ----------
    study : path
        The study file to create (``.sqlite``); never overwritten.
    root : path
        A dataset folder, in any layout ``fminspect eval`` reads.
    name : str, optional
        The study's name (default: the file's stem).
    datasets, samples, models : list of str, optional
        Only these datasets, samples and models' maps (default: all). A sample that does not
        exist is reported and left out.
    auto : int, optional
        Instead of ``models``: ``auto`` maps per image of clearly different quality by the
        measure ``by``, at least ``min_gap`` apart (scored with ``jobs`` processes, cached in
        ``cache``).
    cache : path, optional
        The result cache ``auto`` reads and extends. By default, for each dataset, the store
        ``fminspect eval`` filled for it (as the window and the gallery find it:
        :func:`~fminspect.pipeline.store.store_for`), else ``STUDY.cache.sqlite``.
    limit : int, optional
        Keep a random subset of this many groups.
    presentation : {'side_by_side', 'overlay'}
        Maps side by side in grey, or overlaid on the image with ``overlay_alpha`` (CamoHR).
    show_gt, show_image : bool
        Show the GT and the image as reference.
    allow_ties : bool
        Let participants answer "cannot decide".
    repeats, checks : int
        Pairs shown twice (self-consistency) and attention checks (GT against noise/empty).
    seed : int
        Seed of every random choice (the subset, the checks, each participant's schedule).
    sampling : {'full', 'incomplete', 'active'}
        Which pairs each participant sees (:mod:`fminspect.ranking.schedule`): every pair;
        ``per_participant`` of them (default :data:`PAIRS_PER_PARTICIPANT`), dealt so that
        ``coverage`` participants (default :data:`COVERAGE`) see each pair
        (:attr:`Design.slots` participants make one round); or ``per_participant`` pairs
        chosen by expected information gain from the votes so far
        (:mod:`fminspect.ranking.active`). The two options are refused where they do not
        apply.
    on_message : callable, optional
        Receives what is noticed on the way, as it happens: files that cannot be used,
        samples left out, groups smaller than ``auto`` (the command prints them); the
        result keeps them too (:attr:`CreatedStudy.messages`).
    progress : bool, optional
        While every file of the study is decoded to check it can be shown: a bar on a
        terminal or plain lines in a log (``None``, as the command), or nothing (``False``).

    Raises
    ------
    ArgumentError
        The study file exists, no dataset is found, ``models`` and ``auto`` are both given,
        a model or the measure ``by`` is unknown, no sample has two of the chosen maps, or
        the design cannot be made or written (the message says which).
    StudyError
        Files of the study cannot be read (each is named).

    Examples
    --------
    >>> created = create_study("study.sqlite", "data/COD10K", auto=3, checks=4)  # doctest: +SKIP
    >>> created.groups, created.pairs, created.trials_per_participant           # doctest: +SKIP
    (250, 750, 754)
    """
    study, root = Path(study), Path(root)
    noticed: list[str] = []

    def say(message: str) -> None:
        noticed.append(message)
        if on_message is not None:
            on_message(message)

    if study.exists():
        raise ArgumentError(f"{study} already exists; choose another file")
    per_participant, coverage = _check_design_options(
        sampling, per_participant, coverage, repeats, checks
    )
    found, problems = discover(root)
    for p in problems:
        say(str(p))
    if datasets:
        found = [d for d in found if d.name in datasets]
    if not found:
        raise ArgumentError(f"no dataset found in {root}")
    if models and auto:
        raise ArgumentError("give either --models or --auto, not both")
    known_models = {m for d in found for m in d.method_names}
    unknown = [m for m in models or [] if m not in known_models]
    if unknown:
        raise ArgumentError(
            f"no model named {', '.join(unknown)} (found: {', '.join(sorted(known_models))})"
        )
    known_samples = {s.name for d in found for s in d.samples}
    missing = [n for n in samples or [] if n not in known_samples]
    if samples and len(missing) == len(samples):
        shown = ", ".join(repr(n) for n in missing[:5]) + (", …" if len(missing) > 5 else "")
        raise ArgumentError(
            f"none of the samples named is in {', '.join(d.name for d in found)}: {shown} "
            f"(e.g. {next(iter(sorted(known_samples)), 'none')})"
        )
    for unknown_sample in missing:
        say(f"warning: no sample named {unknown_sample!r}; left out")
    caches = _caches(found, study, cache)
    groups = _groups(found, caches, samples, models, auto, by, min_gap, jobs, say)
    if limit:
        import numpy as np

        keep = sorted(
            np.random.default_rng(seed).choice(len(groups), min(limit, len(groups)), replace=False)
        )
        groups = [groups[i] for i in keep]
    if not groups:
        raise ArgumentError("no sample has at least two of the chosen maps")
    if auto:
        sizes = sorted({len(g.items) for g in groups})
        if sizes != [auto]:
            say(
                f"warning: --auto {auto}: groups have {', '.join(map(str, sizes))} maps "
                f"(fewer models, or scores closer than --min-gap {min_gap:g})"
            )
    unreadable = check_files(new_design("check", groups), progress=progress)
    if unreadable:
        raise StudyError(
            "files of the study cannot be read; fix or leave them out (--samples/--models):\n  "
            + "\n  ".join(unreadable)
        )
    selection = {
        "root": str(root.resolve()),
        "datasets": [d.name for d in found],
        "models": list(models) if models is not None else None,
        "auto": auto,
        "by": by if auto else None,
        "min_gap": min_gap if auto else None,
        "limit": limit,
    }
    try:
        design = build_design(
            name or study.stem,
            groups,
            study,
            checks=checks,
            seed=seed,
            presentation=presentation,
            overlay_alpha=overlay_alpha,
            show_gt=show_gt,
            show_image=show_image,
            allow_ties=allow_ties,
            repeats=repeats,
            selection=selection,
            sampling=sampling,
            per_participant=per_participant,
            coverage=coverage,
        )
        StudyStore.create(study, design).close()
    except (ValueError, OSError) as exc:
        raise ArgumentError(str(exc)) from exc
    if sampling != "full" and per_participant > design.pairs:
        say(
            f"note: --pairs-per-participant {per_participant}: the study has {design.pairs} "
            "pairs, so each participant is given all of them"
        )
    fitted = planned_trials(design) - len(design.checks) - design.pairs_per_participant
    if repeats > fitted and sampling != "incomplete":  # (incomplete slots differ by one pair)
        say(
            f"note: --repeats {repeats}: a repeat comes at least 4 trials after its pair"
            + (f" in its chunk of {ACTIVE_CHUNK}" if sampling == "active" else "")
            + f", so each participant gets {fitted}"
        )
    return CreatedStudy(study, design, tuple(noticed))


#: Defaults of the options that only incomplete and active designs take.
PAIRS_PER_PARTICIPANT = 300
COVERAGE = 3


def _check_design_options(
    sampling: str, per_participant: int | None, coverage: int | None, repeats: int, checks: int
) -> tuple[int, int]:
    """The design's pairs per participant and coverage (0 where they do not apply), or
    ArgumentError for options the design does not take or values that cannot work."""
    if repeats < 0 or checks < 0:
        raise ArgumentError("--repeats and --checks must be 0 or more")
    if sampling == "full":
        if per_participant is not None or coverage is not None:
            raise ArgumentError(
                "--pairs-per-participant and --coverage are for --design incomplete or active; "
                "a full design gives every participant every pair"
            )
        return 0, 0
    if sampling == "active" and coverage is not None:
        raise ArgumentError(
            "--coverage is for --design incomplete; an active design gives each pair as many "
            "participants as it needs"
        )
    per = PAIRS_PER_PARTICIPANT if per_participant is None else per_participant
    cov = (COVERAGE if coverage is None else coverage) if sampling == "incomplete" else 0
    if per < 1 or (sampling == "incomplete" and cov < 1):
        raise ArgumentError("--pairs-per-participant and --coverage must be at least 1")
    return per, cov


def _caches(found: Sequence[Dataset], study: Path, cache: Path | str | None) -> dict[str, Path]:
    """The result cache of each dataset: ``cache`` if given, else the store ``fminspect
    eval`` filled for the dataset (registered for its GT folder), else the study's own
    ``STUDY.cache.sqlite``."""
    from fminspect.pipeline.store import default_store_path, store_for

    own = study.with_suffix(".cache.sqlite")
    out = {}
    for ds in found:
        if cache is not None:
            out[ds.name] = Path(cache)
        else:
            known = store_for(ds.gt.path)
            out[ds.name] = own if known == default_store_path() else known
    return out


def _groups(
    found: Sequence[Dataset],
    caches: Mapping[str, Path],
    samples: Sequence[str] | None,
    models: Sequence[str] | None,
    auto: int | None,
    by: str,
    min_gap: float,
    jobs: int,
    say: Callable[[str], None],
) -> list[Group]:
    """Every dataset's groups (see :func:`create_study`); the samples left out are reported."""
    scores_by_ds: dict[str, dict[str, dict[str, float]]] = {}
    if auto:
        which = "every map" if samples is None else "the chosen samples' maps"
        how = "read where stored, else computed"
        say(f"the {by} of {which} ({how}) to pick {auto} maps of clearly different quality…")
        unscored: list[Problem] = []
        scored = found
        if samples is not None:  # only the chosen samples' maps are scored
            from fminspect.batch.subsets import restrict

            wanted = set(samples)
            scored = [
                restrict(ds, [s.name for s in ds.samples if s.name in wanted]) for ds in found
            ]
            scored = [ds for ds in scored if ds.samples]
        try:
            for ds in scored:
                scores_by_ds.update(score_maps([ds], by, caches[ds.name], jobs, unscored, say))
        except ValueError as exc:
            raise ArgumentError(f"--by: {exc}") from exc
        for p in unscored:  # these maps cannot be shown either
            say(str(p))
    groups: list[Group] = []
    for ds in found:
        groups += groups_from_dataset(
            ds,
            samples=samples,
            models=models,
            scores=scores_by_ds.get(ds.name) if auto else None,
            per_group=auto or 3,
            min_gap=min_gap,
            first_index=len(groups) + 1,
        )
    grouped = {(g.dataset, g.sample) for g in groups}
    left_out = [
        f"{ds.name}/{s.name}"
        for ds in found
        for s in ds.samples
        if (samples is None or s.name in samples) and (ds.name, s.name) not in grouped
    ]
    if left_out:
        why = (
            f"fewer than two maps whose {by} scores differ by --min-gap {min_gap:g}"
            if auto
            else "fewer than two of the chosen maps"
        )
        say(
            f"{len(left_out)} sample{'s' if len(left_out) != 1 else ''} left out ({why}): "
            + ", ".join(left_out[:5])
            + (", …" if len(left_out) > 5 else "")
        )
    return groups
