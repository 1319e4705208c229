"""The steps of a human-ranking study on its files, each a function of the study file and the
options of its ``fminspect rank`` subcommand (creating one is :mod:`fminspect.ranking.create`):

* :func:`pack_study`, :func:`export_results`, :func:`merge_results` — moving a study to other
  computers and its participants' votes back;
* :func:`simulate_participants` — simulated voters, to pilot a design;
* :func:`consensus`, :func:`aggregate_study`, :func:`export_consensus` — the consensus under
  a rule, its tables, and the human-ranked dataset it makes;
* :func:`human_rankings`, :func:`compare_with_humans` — every measure against the people.

A file that cannot be used raises :class:`~fminspect.ranking.store.StudyError`, arguments
that cannot work raise :class:`ArgumentError`; both say why. No Qt.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fminspect.ranking.store import StudyError, StudyStore

if TYPE_CHECKING:
    from fminspect.metrics import Params
    from fminspect.ranking.aggregate import Rule, StudyResult
    from fminspect.ranking.agreement import HumanAgreementReport, RankedGroup

__all__ = [
    "ArgumentError",
    "HumanRankings",
    "Merged",
    "aggregate_study",
    "compare_with_humans",
    "consensus",
    "export_consensus",
    "export_results",
    "human_rankings",
    "merge_results",
    "pack_study",
    "simulate_participants",
]

#: Receives the notes of a step as they arise (e.g. ``print`` to stderr).
OnMessage = Callable[[str], None]


class ArgumentError(ValueError):
    """Arguments of a study step that name nothing or cannot work together (the message
    says which)."""


def _ignore(message: str) -> None:
    pass


# ----------------------------------------------------------------------- moving a study
def pack_study(
    study: Path | str,
    out: Path | str,
    participant: str | None = None,
    *,
    progress: bool | None = False,
) -> Path:
    """Write ``study`` as a self-contained pack (zip) for participants on other computers
    (:func:`~fminspect.ranking.export.write_pack`); returns the zip's path. An incomplete or
    active design's pack is one ``participant``'s, given their pairs now. ``progress``: a
    bar or plain lines while every file is checked (``None``), or nothing (``False``).

    Examples
    --------
    >>> pack_study("study.sqlite", "study.zip")                     # doctest: +SKIP
    PosixPath('study.zip')
    >>> pack_study("active.sqlite", "p07.zip", participant="p07")   # doctest: +SKIP
    PosixPath('p07.zip')
    """
    from fminspect.ranking.export import write_pack

    with StudyStore(study) as store:
        return write_pack(store, out, participant, progress=progress)


def export_results(
    study: Path | str, *, participant: str | None = None, out: Path | str | None = None
) -> list[Path]:
    """Write each participant's results file (or only ``participant``'s) into the folder
    ``out`` (default: the current one; created if needed) as ``results_<id>.json``, to send
    to the lab; returns the files written.

    Examples
    --------
    >>> export_results("remote/study.sqlite", out="to_send")       # doctest: +SKIP
    [PosixPath('to_send/results_anna.json')]
    """
    from fminspect.ranking.export import write_results

    with StudyStore(study) as store:
        people = [participant] if participant else store.participants()
        folder = Path(out or ".")
        folder.mkdir(parents=True, exist_ok=True)
        return [write_results(store, p, folder / f"results_{p}.json") for p in people]


@dataclass(frozen=True, slots=True)
class Merged:
    """What became of one results file (:func:`merge_results`)."""

    path: Path
    votes: int  # votes merged
    refused: str = ""  # why the file was refused ("" when merged)
    participant: str = ""
    answered: int = 0  # the participant's votes in the study after merging
    planned: int = 0  # the trials they were given

    @property
    def unfinished(self) -> bool:
        """The participant has not answered every trial yet (a later file adds the rest)."""
        return not self.refused and self.answered < self.planned


def merge_results(study: Path | str, files: Sequence[Path | str]) -> list[Merged]:
    """Merge participants' results files into the lab's ``study``, one by one; a file that
    cannot be merged (another study's, a participant already in it…) is refused with the
    reason, and the others are merged.

    Examples
    --------
    >>> [(m.path.name, m.votes, m.refused) for m in merge_results(  # doctest: +SKIP
    ...     "study.sqlite", ["results_anna.json"])]
    [('results_anna.json', 30, '')]
    """
    from fminspect.ranking.export import merge_results_file

    out = []
    with StudyStore(study) as store:
        for f in files:
            try:
                n = merge_results_file(store, f)
            except StudyError as exc:
                out.append(Merged(Path(f), 0, str(exc)))
                continue
            p = store.last_merged or ""
            out.append(Merged(Path(f), n, "", p, len(store.votes(p)), store.planned(p)))
    return out


def simulate_participants(
    study: Path | str,
    *,
    participants: int = 10,
    gap: float = 2.0,
    left_bias: float = 0.0,
    lapse: float = 0.0,
    tie_margin: float = 0.0,
    prefix: str = "sim-",
    seed: int = 0,
) -> Iterator[tuple[str, int]]:
    """Add ``participants`` simulated Bradley–Terry voters to ``study`` (ids ``prefix1``…),
    who rank each group's maps in their listed order, ``gap`` logits apart
    (:mod:`~fminspect.ranking.simulate`); yields each one's id and number of votes as it
    finishes.

    Examples
    --------
    >>> dict(simulate_participants("pilot.sqlite", participants=2))  # doctest: +SKIP
    {'sim-1': 30, 'sim-2': 30}
    """
    from fminspect.ranking.simulate import SimulatedParticipant, simulate, strengths_by_position

    with StudyStore(study) as store:
        truth = strengths_by_position(store, gap)
        for k in range(participants):
            who = SimulatedParticipant(
                f"{prefix}{k + 1}",
                truth,
                left_bias=left_bias,
                lapse=lapse,
                tie_margin=tie_margin,
                seed=seed + k,
            )
            yield who.id, simulate(store, who)


# --------------------------------------------------------------------------- consensus
def consensus(
    store: StudyStore,
    rule: str | Rule | None = None,
    *,
    exclude_failing: bool = False,
    min_attention: float = 1.0,
    exclude: Sequence[str] = (),
    prior: float | None = None,
    on_message: OnMessage | None = None,
) -> StudyResult:
    """Every vote of the study aggregated under ``rule`` (``'unanimous'``, ``'k_of_n:K'``,
    ``'majority'`` or ``'bt:P'``; :func:`~fminspect.ranking.aggregate.aggregate`; by default
    :func:`~fminspect.ranking.aggregate.default_rule` of the study's design), without
    the participants named in ``exclude`` and, with ``exclude_failing``, those passing fewer
    than ``min_attention`` of the attention checks. ``prior`` is the precision of the
    scales' Gaussian prior (default :data:`~fminspect.ranking.aggregate.BT_PRIOR`).
    ``on_message`` is told when the rule cannot be met by the participants counted.

    Raises
    ------
    StudyError
        A rule that cannot be read, or a participant in ``exclude`` the study does not have.
    """
    from fminspect.ranking.aggregate import BT_PRIOR, Rule, aggregate, default_rule

    if rule is None:
        rule = default_rule(store.design)
    if isinstance(rule, str):
        try:
            rule = Rule.parse(rule)
        except ValueError as exc:
            raise StudyError(f"--rule: {exc}") from None
    if rule.name in ("unanimous", "k_of_n") and store.design.sampling != "full":
        raise StudyError(
            f"--rule {rule.name} compares each participant's complete order of a group, and in "
            f"this study's {store.design.sampling} design nobody ranks every pair of a group: "
            "use bt:P (the default here) or majority"
        )
    unknown = [p for p in exclude if p not in store.participants()]
    if unknown:
        raise StudyError(f"--exclude: no participant named {', '.join(unknown)} in {store.path}")
    if prior is not None and not 0 < prior < math.inf:
        raise StudyError(f"--prior: the prior's precision must be > 0, got {prior:g}")
    result = aggregate(
        store,
        rule,
        exclude_failing=exclude_failing,
        min_attention=min_attention,
        exclude=exclude,
        prior=BT_PRIOR if prior is None else prior,
    )
    counted = sum(not s.excluded for s in result.participants)
    if rule.name == "k_of_n" and rule.k > counted:
        (on_message or _ignore)(
            f"note: {rule} needs {rule.k} participants to agree, but only "
            f"{counted} participants' votes are counted, so no group can reach consensus"
        )
    return result


def aggregate_study(
    study: Path | str,
    *,
    rule: str | Rule | None = None,
    exclude_failing: bool = False,
    min_attention: float = 1.0,
    exclude: Sequence[str] = (),
    out: Path | str | None = None,
    prior: float | None = None,
    on_message: OnMessage | None = None,
) -> StudyResult:
    """The study's :func:`consensus`; with ``out``, its tables are written there too:
    groups.csv, participants.csv, summary.{md,json} and every vote in votes.csv.
    :func:`~fminspect.ranking.report.study_summary` gives the Markdown summary.

    Examples
    --------
    >>> result = aggregate_study("study.sqlite", rule="k_of_n:8", out="tables")  # doctest: +SKIP
    >>> len(result.consensual), len(result.groups)                             # doctest: +SKIP
    (41, 50)
    """
    from fminspect.ranking.export import write_votes_csv
    from fminspect.ranking.report import write_study_report

    with StudyStore(study) as store:
        result = consensus(
            store,
            rule,
            exclude_failing=exclude_failing,
            min_attention=min_attention,
            exclude=exclude,
            prior=prior,
            on_message=on_message,
        )
        if out:
            write_study_report(result, out)
            write_votes_csv(store, Path(out) / "votes.csv")
    return result


def export_consensus(
    study: Path | str,
    out: Path | str,
    *,
    rule: str | Rule | None = None,
    exclude_failing: bool = False,
    min_attention: float = 1.0,
    exclude: Sequence[str] = (),
    prior: float | None = None,
    on_message: OnMessage | None = None,
) -> tuple[StudyResult, Path]:
    """Write the groups that reach :func:`consensus` as a human-ranked dataset into the new
    (or empty) folder ``out`` (:func:`~fminspect.ranking.export.export_ranked`); returns the
    result and the folder.

    Raises
    ------
    StudyError
        No group reaches consensus, or ``out`` is not empty.

    Examples
    --------
    >>> result, folder = export_consensus("study.sqlite", "ranked")  # doctest: +SKIP
    """
    from fminspect.ranking.export import export_ranked

    with StudyStore(study) as store:
        result = consensus(
            store,
            rule,
            exclude_failing=exclude_failing,
            min_attention=min_attention,
            exclude=exclude,
            prior=prior,
            on_message=on_message,
        )
    if not result.consensual:
        raise StudyError(
            f"no group reaches consensus under {result.rule}; nothing exported "
            "(fminspect rank aggregate shows why)"
        )
    return result, export_ranked(result, out)


# ------------------------------------------------------------------ measures vs humans
@dataclass(frozen=True, slots=True)
class HumanRankings:
    """Groups ranked by people (:func:`human_rankings`), the title of their report, a message
    for each group left out, what the rankings rest on (one sentence each: the rule, the
    participants counted and excluded, the groups with and without consensus, how the maps
    were picked, the Bradley–Terry prior) and the measure that picked the maps, if one did."""

    groups: list[RankedGroup]
    title: str
    skipped: list[str]
    basis: tuple[str, ...] = ()
    selected_by: str | None = None


def human_rankings(
    study: Path | str | None = None,
    *,
    ranked: Path | str | None = None,
    rule: str | Rule | None = None,
    exclude_failing: bool = False,
    min_attention: float = 1.0,
    exclude: Sequence[str] = (),
    prior: float | None = None,
    on_message: OnMessage | None = None,
) -> HumanRankings:
    """The human rankings of a study's consensual groups (under ``rule`` and the
    exclusions, see :func:`consensus`), or of a human-ranked dataset folder ``ranked``
    (fminspect's export, or FMDatabase/CamoHR-style folders).

    Raises
    ------
    ArgumentError
        Both or neither of ``study`` and ``ranked``.
    StudyError
        The study or the folder cannot be read, or the rule or exclusions are wrong.
    """
    from fminspect.ranking.export import load_ranked
    from fminspect.ranking.report import ranked_groups

    if (study is None) == (ranked is None):
        raise ArgumentError("give a study file or --ranked DIR (one of them)")
    if ranked is not None:
        groups, skipped = load_ranked(ranked)
        basis = (
            f"the human-ranked folder {ranked}: {len(groups)} groups; their consensus rule, "
            "participants and how the maps were picked are those of whoever made it",
        )
        return HumanRankings(groups, Path(ranked).name, skipped, basis)
    assert study is not None
    with StudyStore(study) as store:
        result = consensus(
            store,
            rule,
            exclude_failing=exclude_failing,
            min_attention=min_attention,
            exclude=exclude,
            prior=prior,
            on_message=on_message,
        )
    groups, skipped = ranked_groups(result)
    by = result.design.selection.get("by")
    return HumanRankings(
        groups,
        f"{result.design.name} ({result.rule})",
        skipped,
        report_basis(result, exclude=exclude, min_attention=min_attention),
        str(by) if by else None,
    )


def report_basis(
    result: StudyResult, *, exclude: Sequence[str] = (), min_attention: float = 1.0
) -> tuple[str, ...]:
    """What the rankings of ``result`` rest on, one sentence each (see :class:`HumanRankings`)."""
    rule = result.rule
    counted = [p.participant for p in result.participants if not p.excluded]
    why = {
        p.participant: "named with --exclude"
        if p.participant in exclude
        else f"passed {p.attention:.0%} of the attention checks, below {min_attention:.0%}"
        for p in result.participants
        if p.excluded
    }
    n_groups, agreed = len(result.groups), len(result.consensual)
    out = [
        f"consensus rule {rule} (a group needs at least {rule.min_participants} participants "
        "who ranked it)",
        f"{len(counted)} participant{'s' if len(counted) != 1 else ''} counted"
        + (f": {', '.join(counted)}" if len(counted) <= 12 else ""),
        "excluded: " + "; ".join(f"{p} ({w})" for p, w in why.items()) if why else "none excluded",
        f"{agreed} of {n_groups} groups reached consensus; the {n_groups - agreed} others are "
        "not counted, so every rate here is conditional on the groups people agreed on — "
        "usually the easier ones",
    ]
    sel = result.design.selection
    if sel.get("auto"):
        out.append(
            f"the maps were picked by {sel['by']} (rank create --auto {sel['auto']} --by "
            f"{sel['by']}, at least {sel.get('min_gap')} apart): {sel['by']} orders them by "
            "construction, so its agreement with people is not evidence for it"
        )
    from fminspect.ranking.report import scales_basis

    out.append(scales_basis(result))
    separated = sum(bool(g.separation) for g in result.consensual)
    if separated:
        out.append(
            f"{separated} of the {agreed} consensual groups are separated (every vote between "
            "some of their maps went one way): their scale distances are the prior's"
        )
    return tuple(out)


def compare_with_humans(
    groups: Sequence[RankedGroup],
    measures: Sequence[str] | None = None,
    *,
    params: Params | None = None,
    basis: Sequence[str] = (),
    selected_by: str | None = None,
) -> HumanAgreementReport:
    """θ, the error rate and their intervals of each measure (default: all, CCm
    when every group has an image) against the human rankings
    (:func:`~fminspect.ranking.agreement.measures_vs_humans`); ``basis`` and ``selected_by``
    (from :class:`HumanRankings`) are carried into the report.
    :func:`~fminspect.ranking.report.agreement_markdown` gives the table,
    :func:`~fminspect.ranking.report.write_agreement` writes it with the bar chart.

    Raises
    ------
    StudyError
        No group to compare with.
    ValueError
        An unknown measure or a bad parameter.
    """
    from fminspect.metrics import measure_keys
    from fminspect.ranking.agreement import measures_vs_humans

    if not groups:
        raise StudyError(
            "no group with a consensus ranking to compare with: `fminspect rank aggregate` "
            "says why each group has none; a looser --rule (e.g. bt:0.75, or k_of_n with "
            "fewer participants) or more participants may give some"
        )
    keys = measure_keys(measures or None, with_images=all(g.image is not None for g in groups))
    report: HumanAgreementReport = measures_vs_humans(groups, keys, params=params)
    return dataclasses.replace(report, basis=tuple(basis), selected_by=selected_by)
