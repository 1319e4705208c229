"""What a pairwise ranking study shows: groups of maps, presentation and schedule options.

A study is a list of **groups** (one sample each: its image, its GT and the maps to rank,
usually three) plus every choice that shapes what participants see — presentation, whether
the GT is shown, ties, repeated pairs, attention checks and the random seed. All of it is
stored with the study (as JSON), so a study can be re-run, packed for another computer and
reported exactly.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

PRESENTATIONS = ("side_by_side", "overlay")
CHECK_KINDS = ("GT vs noise", "GT vs empty")
#: Which pairs each participant sees (see :mod:`fminspect.ranking.schedule`):
#: ``full`` every pair of every group; ``incomplete`` a balanced share of them, each pair
#: covered by ``coverage`` participants per round; ``active`` the pairs expected to teach
#: the most given the votes so far (:mod:`fminspect.ranking.active`).
SAMPLINGS = ("full", "incomplete", "active")
#: Fields added after the first studies were written: left out of the JSON when they hold
#: their default, so the fingerprint of an older study (and of its packs and results files)
#: does not change.
_LATER_FIELDS = {"sampling": "full", "per_participant": 0, "coverage": 0}


@dataclass(frozen=True, slots=True)
class Item:
    """One map to rank. ``model`` is never shown to participants."""

    id: str
    model: str
    path: str


@dataclass(frozen=True, slots=True)
class Group:
    """One sample and the maps of it to rank."""

    id: str
    dataset: str
    sample: str
    gt: str | None
    image: str | None
    items: tuple[Item, ...]

    def item(self, item_id: str) -> Item:
        """The item with this id."""
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(item_id)


@dataclass(frozen=True, slots=True)
class Check:
    """An attention check: the GT against an obviously wrong map; the GT is correct."""

    id: str
    kind: str
    group: str  # whose image/GT it shows
    good: Item
    bad: Item


@dataclass(frozen=True, slots=True)
class Design:
    """Everything that defines a study (stored as JSON with it)."""

    study_id: str
    name: str
    created: str
    app_version: str
    seed: int
    presentation: str
    overlay_alpha: float
    show_gt: bool
    show_image: bool
    allow_ties: bool
    repeats: int
    attention_checks: int
    groups: tuple[Group, ...]
    checks: tuple[Check, ...] = ()
    selection: dict[str, Any] = field(default_factory=dict)
    sampling: str = "full"
    per_participant: int = 0  # pairs per participant (incomplete, active)
    coverage: int = 0  # participants per pair in one round (incomplete)

    def __post_init__(self) -> None:
        if self.presentation not in PRESENTATIONS:
            raise ValueError(f"presentation must be one of {PRESENTATIONS}")
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"the design must be one of {', '.join(SAMPLINGS)}")
        if self.sampling != "full" and self.per_participant < 1:
            raise ValueError(
                f"a{'n' if self.sampling[0] in 'ai' else ''} {self.sampling} "
                "design needs at least one pair per participant"
            )
        if self.sampling == "incomplete" and self.coverage < 1:
            raise ValueError("an incomplete design needs each pair covered by ≥ 1 participant")
        if not self.groups:
            raise ValueError("a study needs at least one group")
        for g in self.groups:
            if len(g.items) < 2:
                raise ValueError(f"group {g.id} has fewer than two maps")

    def group(self, group_id: str) -> Group:
        """The group with this id."""
        for g in self.groups:
            if g.id == group_id:
                return g
        raise KeyError(group_id)

    def check(self, check_id: str) -> Check:
        """The attention check with this id."""
        for c in self.checks:
            if c.id == check_id:
                return c
        raise KeyError(check_id)

    @property
    def pairs(self) -> int:
        """Distinct pairs of maps over every group."""
        return sum(len(g.items) * (len(g.items) - 1) // 2 for g in self.groups)

    @property
    def pairs_per_participant(self) -> int:
        """Pairs each participant is given (every pair in a full design)."""
        if self.sampling == "full":
            return self.pairs
        return min(self.per_participant, self.pairs)

    @property
    def slots(self) -> int:
        """Incomplete design: participants needed for one round, in which every pair is seen
        by ``coverage`` of them (⌈pairs·coverage / pairs per participant⌉); 0 otherwise."""
        if self.sampling != "incomplete":
            return 0
        return max(self.coverage, -(-self.pairs * self.coverage // self.pairs_per_participant))

    def to_json(self) -> str:
        """Stable JSON (sorted keys) of the whole design."""
        d = asdict(self)
        for key, default in _LATER_FIELDS.items():
            if d[key] == default:
                del d[key]
        return json.dumps(d, sort_keys=True, indent=1)

    @property
    def fingerprint(self) -> str:
        """Digest identifying this exact design (packs and results must match it)."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    @classmethod
    def from_json(cls, text: str) -> Design:
        """Rebuild from :meth:`to_json`."""
        d = json.loads(text)
        d["groups"] = tuple(
            Group(**{**g, "items": tuple(Item(**i) for i in g["items"])}) for g in d["groups"]
        )
        d["checks"] = tuple(
            Check(**{**c, "good": Item(**c["good"]), "bad": Item(**c["bad"])}) for c in d["checks"]
        )
        return cls(**d)

    def with_paths(self, mapping: dict[str, str]) -> Design:
        """A copy whose file paths are replaced through ``mapping`` (used by study packs)."""

        def item(i: Item) -> Item:
            return Item(i.id, i.model, mapping.get(i.path, i.path))

        groups = tuple(
            Group(
                g.id,
                g.dataset,
                g.sample,
                mapping.get(g.gt, g.gt) if g.gt else None,
                mapping.get(g.image, g.image) if g.image else None,
                tuple(item(i) for i in g.items),
            )
            for g in self.groups
        )
        checks = tuple(Check(c.id, c.kind, c.group, item(c.good), item(c.bad)) for c in self.checks)
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d.update(groups=groups, checks=checks)
        return Design(**d)

    def files(self) -> list[str]:
        """Every file the study displays."""
        out: list[str] = []
        for g in self.groups:
            out += [p for p in (g.gt, g.image) if p] + [i.path for i in g.items]
        for c in self.checks:
            out += [c.good.path, c.bad.path]
        return sorted(set(out))


def new_design(
    name: str,
    groups: list[Group],
    *,
    seed: int = 0,
    presentation: str = "side_by_side",
    overlay_alpha: float = 0.5,
    show_gt: bool = True,
    show_image: bool = True,
    allow_ties: bool = False,
    repeats: int = 0,
    checks: tuple[Check, ...] = (),
    selection: dict[str, Any] | None = None,
    sampling: str = "full",
    per_participant: int = 0,
    coverage: int = 0,
) -> Design:
    """A new design with a fresh study id and the current time and version."""
    from fminspect import __version__

    return Design(
        study_id=uuid.uuid4().hex,
        name=name,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        app_version=__version__,
        seed=int(seed),
        presentation=presentation,
        overlay_alpha=float(overlay_alpha),
        show_gt=show_gt,
        show_image=show_image,
        allow_ties=allow_ties,
        repeats=int(repeats),
        attention_checks=len(checks),
        groups=tuple(groups),
        checks=tuple(checks),
        selection=selection or {},
        sampling=sampling,
        per_participant=int(per_participant),
        coverage=int(coverage),
    )
