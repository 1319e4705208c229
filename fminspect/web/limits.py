"""The bounds a server open to strangers keeps: request rates and body sizes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """What one server accepts.

    ``rate``/``burst``: requests per second (and the burst) of one participant's link, and
    of the admin page; ``bad_tokens``: requests with a token that opens nothing, per client
    address and minute (guessing a 192-bit token is hopeless; this keeps a scanner from
    costing the server anything); ``body_bytes``: the largest request body (a vote is
    about 60 bytes)."""

    rate: float = 20.0
    burst: float = 80.0
    bad_tokens: int = 30
    body_bytes: int = 2048
    concurrency: int = 512


class RateLimiter:
    """Token buckets by key (thread-safe). ``allow(key)`` takes one request from the key's
    bucket; False when it is empty. Buckets of keys not seen for a while are forgotten, so
    a scan of many addresses cannot grow it without bound."""

    def __init__(
        self,
        rate: float,
        burst: float,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 100_000,
    ) -> None:
        self.rate, self.burst, self._clock, self._max = rate, burst, clock, max_keys
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        now = self._clock()
        with self._lock:
            level, then = self._buckets.get(key, (self.burst, now))
            level = min(self.burst, level + (now - then) * self.rate)
            if len(self._buckets) >= self._max and key not in self._buckets:
                self._forget(now)
            if level < 1.0:
                self._buckets[key] = (level, now)
                return False
            self._buckets[key] = (level - 1.0, now)
            return True

    def _forget(self, now: float) -> None:
        """Drop the buckets that have refilled (they hold nothing a new one would not)."""
        full = self.burst / self.rate if self.rate > 0 else float("inf")
        for k in [k for k, (_, t) in self._buckets.items() if now - t >= full]:
            del self._buckets[k]
        if len(self._buckets) >= self._max:  # all active: the oldest half goes
            for k in sorted(self._buckets, key=lambda k: self._buckets[k][1])[: self._max // 2]:
                del self._buckets[k]
