"""The window's result cache is bounded in bytes, not only in entries."""

from __future__ import annotations

import numpy as np
import pytest

from fminspect.inspector import samples as controller_module
from fminspect.inspector.memory import array_bytes
from tests.gui.conftest import settle, wait_for


def test_array_bytes_counts_each_array_once() -> None:
    a = np.zeros((100, 10))  # 8000 bytes
    view = a[:50]
    assert array_bytes({"a": a, "again": (a, [view])}) == 8000
    assert array_bytes((view,)) == 8000  # a view keeps its whole base alive
    assert array_bytes(("text", 3, None)) == 0


class _Held:
    """Something a job's function holds (a sample read from disk, say)."""


def test_a_job_lets_go_of_what_its_function_held(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A delivered, a failed and a cancelled job each free their function and what it
    held: the worker's signals held the delivering functions, which held the worker, a
    cycle through Qt that Python's collector cannot see (every sample the window scored
    stayed in memory, ~12 MB a step at 400×550 with 12 models). The jobs themselves go
    too: kept from the pool's deletion, each stayed, with its signals object (~13 a
    sample, +34 MB over 500 samples)."""
    import gc
    import weakref

    import shiboken6
    from PySide6 import QtCore

    from fminspect.gui import workers

    def job(held: _Held, fail: bool = False):  # type: ignore[no-untyped-def]
        def run() -> int:
            assert held is not None
            if fail:
                raise ValueError("no")
            return 1

        return run

    got: list[object] = []
    held = [_Held(), _Held(), _Held()]
    refs = [weakref.ref(h) for h in held]
    jobs = [
        workers.submit(job(held[0]), got.append),
        workers.submit(job(held[1], fail=True), got.append, got.append),
    ]
    signals = [weakref.ref(j.signals) for j in jobs]
    wait_for(qtbot, lambda: len(got) == 2)
    # a job taken off the queue before it started: the pool kept busy meanwhile
    pool = QtCore.QThreadPool.globalInstance()
    gate = QtCore.QSemaphore(0)
    blockers = [workers.submit(gate.acquire, got.append) for _ in range(pool.maxThreadCount())]
    queued = workers.submit(job(held[2]), got.append)
    signals += [weakref.ref(j.signals) for j in (queued, *blockers)]
    assert workers.cancel(queued)
    busy = len(blockers)
    gate.release(busy)
    wait_for(qtbot, lambda: len(got) == 2 + busy)
    jobs += [queued, *blockers]
    watched = [weakref.ref(j) for j in jobs]
    del held, queued, blockers, jobs
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    # the first two jobs ran side by side: their results come in either order
    assert sorted(map(str, got[:2])) == ["1", "ValueError: no"] and not workers._ACTIVE

    # and the jobs' signals objects are gone, delivered or taken off (a pool thread may
    # still be returning from the job that emitted one: a moment)
    def signals_gone() -> bool:
        gc.collect()
        return all(s() is None for s in signals)

    wait_for(qtbot, signals_gone)
    # and the jobs themselves, deleted by the pool or by cancel: kept from the pool's
    # deletion, each stayed with its signals object (~13 a sample). PySide 6.11.3 still
    # kept one reference to a worker the pool had deleted in ~1 run of 12 of this file:
    # such a worker is empty
    left = [w for w in (r() for r in watched) if w is not None]
    assert all(not shiboken6.isValid(w) and w.func is None and w.signals is None for w in left)
    # (calling cancel on a job that has run and been deleted is harmless)
    done = workers.submit(lambda: 2, got.append)
    wait_for(qtbot, lambda: len(got) == 3 + busy)
    wait_for(qtbot, lambda: not shiboken6.isValid(done))
    assert not workers.cancel(done)


@pytest.mark.slow
def test_the_window_hands_free_memory_back_every_few_samples(
    qtbot, window, dataset_root, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The allocator's free memory is handed back on a worker thread every TRIM_EVERY
    samples shown (a long browse fragments the heap: 946 → 1,043 MB over 240 samples at
    400×550 while Python's own allocations stayed level; 822 → 913 MB trimmed)."""
    import sys
    import threading

    from fminspect import _runtime

    calls: list[str] = []

    def trim() -> bool:
        calls.append(threading.current_thread().name)
        return True

    monkeypatch.setattr(controller_module, "release_free_memory", trim)
    monkeypatch.setattr(controller_module, "TRIM_EVERY", 2)
    window.open_path(dataset_root)
    settle(qtbot, window)
    for _ in range(3):
        window.model.step(1)
        settle(qtbot, window)
    wait_for(qtbot, lambda: len(calls) >= 2)
    assert threading.main_thread().name not in calls  # never on the GUI thread
    assert _runtime.release_free_memory() is sys.platform.startswith("linux")
