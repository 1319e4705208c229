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

    def __post_init__(self) -> None:
        if self.presentation not in PRESENTATIONS:
            raise ValueError(f"presentation must be one of {PRESENTATIONS}")
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

    def to_json(self) -> str:
        """Stable JSON (sorted keys) of the whole design."""
        return json.dumps(asdict(self), sort_keys=True, indent=1)

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
    )
