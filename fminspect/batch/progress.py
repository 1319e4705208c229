"""Progress of long work: a bar with ETA on a terminal, periodic plain lines elsewhere.

On a terminal the bar is redrawn in place ten times a second. When stderr is a log file, a
pipe, CI or ``nohup``, a plain line ``evaluating: 412/1000 (41.2 %), 35.1/s, ETA 00:17`` is
written every :data:`LINE_EVERY` seconds and once at the end, so that a long run is never
silent and a log stays readable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

#: Seconds between plain progress lines when the stream is not a terminal.
LINE_EVERY = 10.0


def clock(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "--:--"
    seconds = round(seconds)
    h, rest = divmod(seconds, 3600)
    return (f"{h}:" if h else "") + f"{rest // 60:02d}:{rest % 60:02d}"


class Progress:
    """``with Progress(total, "evaluating") as p: p.advance()``.

    ``enabled``: ``None`` (default) draws a bar on a terminal and writes plain lines
    otherwise; ``True`` forces the bar, ``False`` shows nothing.
    """

    def __init__(
        self,
        total: int,
        label: str,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        *,
        every: float | None = None,
    ) -> None:
        self.total = max(total, 0)
        self.label = label
        self.stream = stream or sys.stderr
        tty = self.stream.isatty() if hasattr(self.stream, "isatty") else False
        self.mode = "off" if enabled is False else ("bar" if enabled or tty else "lines")
        self.every = LINE_EVERY if every is None else every
        self.done = 0
        self._start = time.monotonic()
        self._last = 0.0

    @property
    def enabled(self) -> bool:
        """Whether anything is shown."""
        return self.mode != "off"

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        self._last = self._start
        if self.mode == "bar":
            self._draw(force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.mode == "off" or not self.total:
            return
        self._draw(force=True)
        if self.mode == "bar":
            self.stream.write("\n")
            self.stream.flush()

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more items done."""
        self.done += n
        self._draw()

    def note(self, message: str) -> None:
        """A line of news (a worker lost, …) between the progress lines, or on its own line
        above the bar; shown even when the progress is not (``enabled=False``)."""
        if self.mode == "bar":
            self.stream.write("\r\x1b[2K" + message + "\n")
            self._draw(force=True)
        else:
            self.stream.write(message + "\n")
        self.stream.flush()

    def rate_and_eta(self) -> tuple[float, float]:
        """Items per second so far, and the seconds still to go (NaN before the first)."""
        elapsed = time.monotonic() - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        return rate, eta

    def line(self) -> str:
        """The plain progress line."""
        rate, eta = self.rate_and_eta()
        frac = self.done / self.total if self.total else 1.0
        return (
            f"{self.label}: {self.done}/{self.total} ({frac:.1%}), {rate:.1f}/s, "
            f"ETA {clock(eta)}, elapsed {clock(time.monotonic() - self._start)}"
        )

    def _draw(self, force: bool = False) -> None:
        if self.mode == "off":
            return
        now = time.monotonic()
        if self.mode == "lines":
            if force or now - self._last >= self.every:
                self._last = now
                self.stream.write(self.line() + "\n")
                self.stream.flush()
            return
        if not force and now - self._last < 0.1:
            return
        self._last = now
        frac = self.done / self.total if self.total else 1.0
        width = 30
        bar = "█" * int(frac * width) + "·" * (width - int(frac * width))
        rate, eta = self.rate_and_eta()
        self.stream.write(
            f"\r{self.label} {bar} {self.done}/{self.total} ({frac:5.1%}) "
            f"{rate:6.1f}/s ETA {clock(eta)}"
        )
        self.stream.flush()
