"""The work done ahead of the user: the next sample read and scored at a low priority (no Qt).

:class:`~fminspect.inspector.samples.SampleScoring` decides what to read ahead and when;
:class:`ReadAhead` runs it: each piece of work under a tag (``("read", *sample key)``, or a
result-cache key), never twice at once, dropped from the queue as soon as anything else is
asked for — and, when the user steps onto a sample whose work is already running, *adopted*:
its result goes to the request that now waits for it instead of that request doing the work
again (a trial: with D held down every sample was read and scored twice).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fminspect.inspector.runtime import Runtime

#: Below the scoring the user is waiting for (priority 0).
PRIORITY = -1

Tag = tuple[Any, ...]


class ReadAhead:
    """Low-priority jobs under tags, cancelled while queued, adoptable while running."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._jobs: list[tuple[Any, Tag]] = []  # queued or running, in submission order
        self._running: set[Tag] = set()  # submitted and not finished (queued or running)
        # running work a request waits for instead of doing it again: tag -> its callbacks
        self._adopted: dict[Tag, tuple[Callable[[Any], None], Callable[[str], None]]] = {}
        self._epoch = 0  # bumped by forget(): what older jobs bring back is dropped

    @property
    def busy(self) -> bool:
        """Some work is queued or running."""
        return bool(self._running)

    def run(self, tag: Tag, func: Callable[[], Any], done: Callable[[Any], None]) -> None:
        """Run ``func`` at a low priority unless the work ``tag`` is under way; its result
        reaches ``done`` (or the callbacks of a request that adopted it), unless
        :meth:`forget` was called meanwhile."""
        if tag in self._running:
            return
        epoch = self._epoch

        def finished(value: Any) -> None:
            if epoch == self._epoch:
                self._running.discard(tag)
                adopted = self._adopted.pop(tag, None)
                (adopted[0] if adopted else done)(value)

        def failed(message: str) -> None:
            if epoch == self._epoch:
                self._running.discard(tag)
                adopted = self._adopted.pop(tag, None)
                if adopted:
                    adopted[1](message)

        self._running.add(tag)
        job = self.runtime.submit(func, finished, failed, priority=PRIORITY)
        self._jobs.append((job, tag))

    def adopt(self, tag: Tag, done: Callable[[Any], None], failed: Callable[[str], None]) -> bool:
        """If the work ``tag`` is running, hand its result (or failure) to these callbacks
        instead, and say so; False: do the work yourself."""
        if tag not in self._running:
            return False
        self._adopted[tag] = (done, failed)
        return True

    def cancel(self) -> None:
        """Take the queued work off the queue (what runs finishes, and is delivered)."""
        jobs, self._jobs = self._jobs, []
        for job, tag in jobs:
            if self.runtime.cancel(job):
                self._running.discard(tag)
                self._adopted.pop(tag, None)

    def forget(self) -> None:
        """Other datasets were opened: drop everything, queued, running and adopted."""
        self.cancel()
        self._epoch += 1
        self._running.clear()
        self._adopted.clear()
