"""What the inspector remembers between sessions (chosen models, aliases, measures…).

The window keeps them in ``QSettings``; tests and scripts in a :class:`MemoryPreferences`.
Values are strings, numbers, lists of strings or JSON text.
"""

from __future__ import annotations

from typing import Any, Protocol


class Preferences(Protocol):
    """A persistent key–value store."""

    def value(self, key: str, default: Any = None) -> Any:
        """The stored value of ``key`` (``default`` if none)."""

    def set_value(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``."""


class MemoryPreferences:
    """Preferences kept in a dict (forgotten with it)."""

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self.values: dict[str, Any] = dict(values or {})

    def value(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def set_value(self, key: str, value: Any) -> None:
        self.values[key] = value
