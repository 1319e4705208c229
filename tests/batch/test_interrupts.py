"""Ctrl-C while the local pool works: acted on between the pool's calls, never inside one.

A KeyboardInterrupt raised inside ``concurrent.futures.wait`` (between taking two futures'
locks) left a lock held; the pool's thread then blocked on it and ``fminspect eval --jobs 2``
hung at exit after "interrupted" (seen once in ~75 Ctrl-Cs on 2 busy cores; the subprocess
test in test_eval.py is the end-to-end check, these are the deterministic ones).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import pytest

from fminspect.batch import runner
from fminspect.batch.pool import LocalPool, interrupts_deferred

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals sent with os.kill")


def _ctrl_c() -> None:
    # to this thread (C raise): its handler has run when the call returns, and Python's at the
    # next instruction — not "within 50 ms", which os.kill to the process (any of its threads
    # may take it) did not keep on a busy machine
    signal.raise_signal(signal.SIGINT)


def _signal_in_block(signum: int, reached: list[str]) -> None:
    with interrupts_deferred():
        signal.raise_signal(signum)  # taken by this thread before the call returns (see _ctrl_c)
        reached.append("the rest of the block")


def test_ctrl_c_inside_the_block_is_raised_when_it_ends() -> None:
    before = signal.getsignal(signal.SIGINT)
    reached: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        _signal_in_block(signal.SIGINT, reached)
    assert reached == ["the rest of the block"]
    assert signal.getsignal(signal.SIGINT) is before  # the handler is given back


def test_sigterm_is_deferred_only_where_python_handles_it() -> None:
    class Stopped(Exception):
        pass

    def handler(signum: int, frame: object) -> None:  # as fminspect.cli sets for SIGTERM
        raise Stopped(signum)

    old = signal.signal(signal.SIGTERM, handler)
    try:
        reached: list[str] = []
        with pytest.raises(Stopped):
            _signal_in_block(signal.SIGTERM, reached)
        assert reached == ["the rest of the block"]
        assert signal.getsignal(signal.SIGTERM) is handler
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with interrupts_deferred():  # the default (end the process) is not taken over
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, old)


def test_off_the_main_thread_nothing_is_changed() -> None:
    seen: list[Any] = []

    def work() -> None:
        with interrupts_deferred():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [signal.getsignal(signal.SIGINT)]


@dataclass
class _Pool:
    """What run_units needs of a LocalPool, on threads."""

    jobs: int
    memory: int | None = None
    executor: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        self.executor = ThreadPoolExecutor(self.jobs)

    def ready(self) -> None:
        pass


def test_ctrl_c_during_the_wait_for_results_is_raised_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []

    def interrupted_wait(*args: Any, **kwargs: Any) -> Any:
        calls.append("wait")
        if len(calls) == 2:
            _ctrl_c()  # where the old loop raised, inside the pool's call
            calls.append("returned")
        return wait(*args, **kwargs)

    monkeypatch.setattr(runner, "wait", interrupted_wait)
    pool = _Pool(2)
    results: list[int] = []
    stream: Iterator[int] = runner.run_units(
        list(range(40)),
        _slow_square,
        pool=pool,  # type: ignore[arg-type]
    )
    try:
        with pytest.raises(KeyboardInterrupt):
            results.extend(stream)
    finally:
        pool.executor.shutdown(cancel_futures=True)
    assert calls[:3] == ["wait", "wait", "returned"]  # the call ended before the interrupt
    assert len(results) < 40  # and the interrupt stopped the stream


def _slow_square(x: int) -> int:
    time.sleep(0.02)
    return x * x


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the preloaded pool")
def test_close_waits_for_the_pools_thread_so_its_queues_are_freed_here() -> None:
    pool = LocalPool(1, preload=True)
    pool.ready()
    assert pool.preloaded
    pool.executor.submit(time.sleep, 0.3)  # a unit in hand when the command stops
    manager = pool.executor._executor_manager_thread  # type: ignore[attr-defined]
    assert manager is not None and manager.is_alive()
    pool.close()
    assert not manager.is_alive()
