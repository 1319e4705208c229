"""Local worker processes for batch work, startable before the measures are imported.

Starting the pool is the first thing ``fminspect eval --jobs N`` does: the workers spend most
of their start-up importing NumPy, SciPy and the measures, and that overlaps with the main
process importing the same modules and planning the run. This module therefore imports
nothing heavy itself.
"""

from __future__ import annotations

import importlib
from concurrent.futures import Future
from typing import Any

#: Modules every batch worker imports while starting (the work units' code).
WORKER_MODULES = ("fminspect.batch.runner",)


def configure_worker(modules: tuple[str, ...] = ()) -> None:
    """Import ``modules`` and keep the worker single-threaded inside (parallelism is across
    images); idempotent, so every work unit calls it too."""
    import cv2

    from fminspect._runtime import single_thread_blas, tune_allocator

    cv2.setNumThreads(1)
    tune_allocator()
    single_thread_blas()
    for name in modules:
        importlib.import_module(name)


class LocalPool:
    """joblib's reusable loky executor with ``jobs`` workers, warming up from creation."""

    def __init__(self, jobs: int, modules: tuple[str, ...] = WORKER_MODULES) -> None:
        from joblib.externals.loky import get_reusable_executor

        self.jobs = jobs
        self.executor = get_reusable_executor(max_workers=jobs, timeout=60)
        self._warmup: list[Future[Any]] = [
            self.executor.submit(configure_worker, modules) for _ in range(jobs)
        ]

    def ready(self) -> None:
        """Block until every worker has started and imported its modules."""
        for fut in self._warmup:
            fut.result()

    def close(self) -> None:
        """Stop the workers now, whatever they are doing (the command is finishing)."""
        self.executor.shutdown(wait=False, kill_workers=True)
