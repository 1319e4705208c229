"""Plain events: what the inspector model tells whoever shows it.

An :class:`Event` is a list of callbacks called in the order they were connected, on the
thread that emits it (the model's: the GUI thread in the window, the test's in a test). It
is the model's only way to speak to the panels; it knows nothing of Qt. A callback that
raises is logged and the others still run, as a Qt slot's error is printed and the signal
goes on: one broken panel does not stop the model half-way through a change.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

_log = logging.getLogger(__name__)


class Event:
    """Callbacks run when the event is emitted (``emit(*args)`` → ``callback(*args)``)."""

    __slots__ = ("_blocked", "_callbacks", "name")

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._callbacks: list[Callable[..., Any]] = []
        self._blocked = 0

    def connect(self, callback: Callable[..., Any]) -> Callable[..., Any]:
        """Call ``callback`` on every emit from now on; returns it (usable as a decorator)."""
        self._callbacks.append(callback)
        return callback

    def disconnect(self, callback: Callable[..., Any]) -> None:
        """Stop calling ``callback`` (ValueError if it was not connected)."""
        self._callbacks.remove(callback)

    def emit(self, *args: Any) -> None:
        """Call every connected callback with ``args`` (none while :meth:`blocked`)."""
        if self._blocked:
            return
        for callback in list(self._callbacks):  # a callback may disconnect itself
            try:
                callback(*args)
            except Exception:
                _log.exception("%s: a callback (%r) failed", self.name or "an event", callback)

    @contextlib.contextmanager
    def blocked(self) -> Iterator[None]:
        """Emit nothing while the block runs (a change the caller shows itself)."""
        self._blocked += 1
        try:
            yield
        finally:
            self._blocked -= 1

    def __len__(self) -> int:
        return len(self._callbacks)

    def __repr__(self) -> str:
        return f"<Event {self.name or '?'}: {len(self._callbacks)} callbacks>"
