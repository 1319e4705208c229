"""Where the files shipped with fminspect live (demo data, icons, styles)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def resource_dir() -> Path:
    """The ``resources/`` folder (installed as the package ``fminspect.resources``)."""
    return Path(str(resources.files("fminspect.resources")))


def resource(*parts: str) -> Path:
    """Path of a shipped file, e.g. ``resource("example", "horse_gt.png")``."""
    path = resource_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"fminspect resource not found: {path}")
    return path
