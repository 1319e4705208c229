"""Typed notes: what was done to a sample's inputs, or what a measure says about its value.

Every reader — the per-image CSV, ``problems.csv``, the terminal, the window's Problems list
and panels — gets the same :class:`Note` records from the one pipeline, and formats them;
none parses a string back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: What a note is about: an input file, the prepared pair, or a measure family (a field of
#: :class:`~fminspect.metrics.SuiteResult`).
INPUTS = ("GT", "image", "prediction", "input")


@dataclass(frozen=True, slots=True)
class Note:
    """One note on one (sample, model) result.

    Attributes
    ----------
    about : str
        ``'GT'``, ``'image'``, ``'prediction'``, ``'input'`` (the normalised pair) or the
        measure family the note belongs to (``'smeasure'``, ``'context'``, …).
    kind : str
        A stable code for programs: ``'conversion'`` (a 16-bit, colour or RGBA file was
        converted), ``'resize'``, ``'empty-gt'``, ``'no-image'``, ``'image-size'``,
        ``'image-unreadable'``, ``'normalisation'`` (e.g. a constant map not stretched) or
        ``'measure'`` (a measure's own warning: a defined value for a degenerate case).
    message : str
        The sentence a user reads.
    """

    about: str
    kind: str
    message: str

    @property
    def measure(self) -> str:
        """The measure family the note concerns ('' for a note about an input)."""
        return "" if self.about in INPUTS else self.about

    def __str__(self) -> str:
        # here, not at the top: the store (and a process that needs only it) reads notes
        # without loading every measure
        from fminspect.metrics.registry import REGISTRY

        family = REGISTRY.families.get(self.about)
        name = family.notes_name if family is not None and family.notes_name else self.about
        return f"{name}: {self.message}"

    def as_list(self) -> list[str]:
        """Plain-JSON form (stored in the result store)."""
        return [self.about, self.kind, self.message]

    @classmethod
    def from_list(cls, data: Any) -> Note:
        """The inverse of :meth:`as_list`."""
        about, kind, message = data
        return cls(str(about), str(kind), str(message))


def measure_notes(family: str, warnings: tuple[str, ...]) -> tuple[Note, ...]:
    """A measure's warnings as notes about its family."""
    return tuple(Note(family, "measure", w) for w in warnings)
