"""Problem records: a bad file never aborts a batch; it becomes one of these."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class LoadError(Exception):
    """A file could not be used. The message names the file and what is wrong with it."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


@dataclass(frozen=True, slots=True)
class Problem:
    """One unusable or suspicious input.

    Attributes
    ----------
    path : Path
        The file (or folder) concerned.
    message : str
        What is wrong, in words a user can act on.
    severity : str
        ``'error'`` (the file was skipped) or ``'warning'`` (it was used, with a change such
        as a resize, which the message states).
    dataset, method, name : str
        Where it belongs, when known.
    """

    path: Path
    message: str
    severity: str = "error"
    dataset: str = ""
    method: str = ""
    name: str = ""

    def __str__(self) -> str:
        where = "/".join(x for x in (self.dataset, self.method, self.name) if x)
        prefix = f"[{where}] " if where else ""
        return f"{self.severity}: {prefix}{self.path}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        """Plain-JSON form."""
        return {
            "path": str(self.path),
            "message": self.message,
            "severity": self.severity,
            "dataset": self.dataset,
            "method": self.method,
            "name": self.name,
        }


def top_of_255(raw: object) -> float:
    """A map's largest value on the 0–255 scale (uint16 maps are scaled from 0–65535)."""
    import numpy as np

    a = np.asarray(raw)
    top = float(a.max()) if a.size else 0.0
    return top * 255 / 65535 if a.dtype == np.uint16 else top


def empty_gt_message(raw: object, rule: str = "GT>128") -> str:
    """Why a GT has no foreground under ``rule``, with a hint when it is not all zero: GT
    masks saved with the values 0 and 1 instead of 0 and 255 are a common mistake, and
    every measure then scores an empty object."""
    top = top_of_255(raw)
    if top == 0:
        return f"no foreground pixel (all zero; {rule})"
    hint = " — a 0/1 mask? Save masks as 0/255" if top <= 1 else ""
    return f"no foreground pixel under {rule}: its largest value is {top:g}{hint}"
