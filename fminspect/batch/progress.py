"""A terminal progress bar with ETA; silent when stderr is not a TTY."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``with Progress(total, "evaluating") as p: p.advance()``."""

    def __init__(
        self, total: int, label: str, stream: TextIO | None = None, enabled: bool | None = None
    ) -> None:
        self.total = max(total, 0)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self._start = time.monotonic()
        self._last = 0.0

    def __enter__(self) -> Progress:
        self._draw(force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self._draw(force=True)
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more items done."""
        self.done += n
        self._draw()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        elapsed = now - self._start
        frac = self.done / self.total if self.total else 1.0
        width = 30
        bar = "█" * int(frac * width) + "·" * (width - int(frac * width))
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        eta_text = "--:--" if eta != eta else f"{int(eta // 60):02d}:{int(eta % 60):02d}"
        self.stream.write(
            f"\r{self.label} {bar} {self.done}/{self.total} ({frac:5.1%}) "
            f"{rate:6.1f}/s ETA {eta_text}"
        )
        self.stream.flush()
