"""Local worker processes for batch work, startable before the measures are imported.

Starting the pool is the first thing ``fminspect eval --jobs N`` does: the workers spend most
of their start-up importing NumPy, OpenCV and the measures, and that overlaps with the main
process importing the same modules and planning the run. This module therefore imports
nothing heavy itself.

Two kinds of pool:

* joblib's reusable loky executor (the default): robust wherever it is called from, e.g. a
  notebook or a script without an ``if __name__ == "__main__"`` guard;
* with ``preload=True`` on Linux (what the command line uses) and a ``__main__`` that may be
  imported again (see :func:`_main_reimport_is_harmless`): a ``forkserver`` process
  imports the worker modules once and forks every worker from itself, so workers start with
  everything imported. On two cores that starts two workers in ~0.5 s instead of ~1.1 s,
  because loky makes each worker start Python, import loky and then the measures (and the
  main process spends 0.25 s importing loky). The server is a fresh single-threaded process,
  so forking it is safe; it is not used on macOS and Windows.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import select
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Executor, Future
from typing import Any, Literal

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


def _main_reimport_is_harmless() -> bool:
    """Whether a forkserver worker may import this process's ``__main__`` as
    multiprocessing does: it runs a main script again, unless the script guards itself.

    Harmless: the ``fminspect`` command (pip's generated script is guarded), ``python -m``
    (a ``*.__main__`` module is never imported again) and interactive sessions (no file).
    Any other script may not be guarded, and then gets the loky pool.
    """
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and (spec.name == "__main__" or spec.name.endswith(".__main__")):
        return True
    path = getattr(main, "__file__", None)
    if path is None:
        return True
    from pathlib import Path

    return Path(path).stem.lower() in ("fminspect", "fminspect-script")


def _forkserver_usable() -> bool:
    """Whether ``preload=True`` gets the forkserver pool (Linux, harmless ``__main__``)."""
    return sys.platform.startswith("linux") and _main_reimport_is_harmless()


def _forkserver_executor(jobs: int, modules: tuple[str, ...], nice: int = 0) -> Executor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(modules))
    return ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=ctx,
        initializer=_start_worker,
        initargs=(True, nice, os.getpid()),
    )


def _start_worker(ignore_ctrl_c: bool, nice: int, owner: int) -> None:
    """Worker start: see :func:`_ignore_ctrl_c` and :func:`_die_with`; ``nice`` lowers the
    worker's priority (the window's background scoring must not slow the sample the user is
    looking at)."""
    if ignore_ctrl_c:
        _ignore_ctrl_c()
    if nice:
        with contextlib.suppress(AttributeError, OSError):  # no os.nice on Windows
            os.nice(nice)
    _die_with(owner)


def _die_with(owner: int) -> None:
    """Worker start: end this worker when the process that made the pool ends, however it
    ends. Killed with SIGKILL (or by the out-of-memory killer), the command cannot stop its
    pool; the forkserver's workers then waited on their queues for ever — ~100 MB each, the
    forkserver kept alive by them, and a pipeline such as ``fminspect eval … | tee log``
    hung, as they held its stderr. A daemon thread waits for the owner's exit (a pidfd on
    Linux ≥ 5.3, else a check every second) and exits the worker at once."""
    if os.name != "posix" or owner == os.getpid():
        return

    def watch() -> None:
        try:
            fd = os.pidfd_open(owner)
        except (AttributeError, OSError):  # not Linux, or an older kernel
            fd = -1
        if fd >= 0:
            select.select([fd], [], [])  # readable once the owner has exited
            os._exit(1)
        while True:
            time.sleep(1.0)
            try:
                os.kill(owner, 0)  # POSIX only: signal 0 checks that the process exists
            except ProcessLookupError:
                os._exit(1)
            except OSError:  # exists, but is another user's: not ours to judge
                pass

    threading.Thread(target=watch, name="fminspect-owner-watch", daemon=True).start()


def _ignore_ctrl_c() -> None:
    """Worker start: Ctrl-C (SIGINT to the terminal's whole process group) is for the main
    process, which stops the pool; a worker interrupted while sending its result would leave
    half a message in the result pipe, and the pool's thread waiting forever for the rest."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _safe_path() -> None:
    """Worker processes never import from the current folder: they start with ``python -c``
    (forkserver, loky), which puts the current folder first on ``sys.path``, so a folder
    named ``fminspect`` there (a checkout's parent, a results folder named after the tool)
    was imported instead of the package and broke the pool. ``PYTHONSAFEPATH`` (Python
    ≥ 3.11, as ``-P``) is inherited by every child process started from now on."""
    import os

    os.environ.setdefault("PYTHONSAFEPATH", "1")


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C (and SIGTERM, where a Python handler takes it) until the block ends, then
    act on it as before: the main thread's calls into the pool take the futures' and the
    executor's locks, and a KeyboardInterrupt raised inside one of them — in
    ``concurrent.futures.wait`` between acquiring two futures' locks, say — left a lock held
    for ever. The pool's own thread then blocked on it while cancelling the futures, and
    ``fminspect eval --jobs 2`` hung after "interrupted" at exit (once in ~75 Ctrl-Cs on 2
    busy cores). A no-op off the main thread, where no signal handler runs."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    saved: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        old = signal.getsignal(signum)
        if callable(old):  # Python raises from it; SIG_DFL and SIG_IGN are left alone
            saved[signum] = old
            signal.signal(signum, lambda num, frame: caught.append(num))
    try:
        yield
    finally:
        for num, handler in saved.items():
            signal.signal(num, handler)
        if caught:  # now, with no lock held: the handler that was set raises, as it would have
            saved[caught[0]](caught[0], None)


#: Seconds :meth:`LocalPool.close` lets the workers finish the units they hold.
CLOSE_TIMEOUT = 10.0

#: Seconds :meth:`LocalPool.close` then waits for the pool's own thread to end.
MANAGER_TIMEOUT = 5.0


class LocalPool:
    """``jobs`` local worker processes, warming up from creation (see the module notes)."""

    def __init__(
        self,
        jobs: int,
        modules: tuple[str, ...] = WORKER_MODULES,
        *,
        preload: bool = False,
        nice: int = 0,
        memory: int | Literal["auto"] | None = "auto",
    ) -> None:
        from fminspect.batch.memory import memory_budget

        self.jobs = jobs
        self.nice = nice
        #: Bytes the workers may fill at once (None: no bound; "auto": a share of the memory
        #: available now, :func:`~fminspect.batch.memory.memory_budget`).
        self.memory = memory_budget() if isinstance(memory, str) else memory
        _safe_path()
        self.preloaded = preload and _forkserver_usable()
        self.fallback = ""  # why the forkserver was asked for but loky is used
        self._modules = modules
        self._warmup: list[Future[Any]] = []
        self._error: BaseException | None = None
        self.executor: Executor
        if self.preloaded:
            # the first submissions wait until the server has imported the modules: let a
            # thread wait, so that this process goes on with its own imports meanwhile
            self._starting: threading.Thread | None = threading.Thread(
                target=self._start_preloaded, daemon=True
            )
            self._starting.start()
        else:
            self._starting = None
            self._start_loky()

    def _start_preloaded(self) -> None:
        try:
            self.executor = _forkserver_executor(self.jobs, self._modules, self.nice)
            self._warm_up()
        except BaseException as exc:  # ready() falls back to loky
            self._error = exc

    def _start_loky(self) -> None:
        from joblib.externals.loky import get_reusable_executor

        self.executor = get_reusable_executor(
            max_workers=self.jobs,
            timeout=60,
            initializer=_start_worker,
            initargs=(False, self.nice, os.getpid()),
        )
        self._warm_up()

    def _warm_up(self) -> None:
        self._warmup = [
            self.executor.submit(configure_worker, self._modules) for _ in range(self.jobs)
        ]

    def _join_start(self) -> bool:
        """Wait for the forkserver start, if any; whether the executor is usable."""
        if self._starting is not None:
            self._starting.join()
            self._starting = None
        return self._error is None

    def ready(self) -> None:
        """Block until every worker has started and imported its modules. If the forkserver
        could not start, the loky pool is started instead (:attr:`fallback` says why)."""
        if not self._join_start():
            self.fallback = (
                f"the workers could not be forked from a preloaded server ({self._error}); "
                "they were started one by one instead"
            )
            self._error = None
            self.preloaded = False
            self._start_loky()
        for fut in self._warmup:
            fut.result()

    def close(self) -> None:
        """Stop the workers (the command is finishing, or was interrupted): units not started
        are cancelled; the forkserver's workers finish the unit in hand (they ignore Ctrl-C)
        and are killed if still busy after :data:`CLOSE_TIMEOUT` s."""
        if not self._join_start():
            return
        if not self.preloaded:
            self.executor.shutdown(wait=False, kill_workers=True)  # type: ignore[call-arg]
            return
        # killing a worker while it sends a result can hang the pool's thread (see
        # _ignore_ctrl_c), so they are let finish first
        processes = list((getattr(self.executor, "_processes", None) or {}).values())
        # shutdown(wait=False) leaves the pool's queues to its manager thread alone, so
        # their named semaphores were freed on that thread as it ended, racing this
        # process's exit: a semaphore unlinked but never unregistered made multiprocessing's
        # resource tracker print two warnings after "interrupted" (2 in 75 Ctrl-Cs on 2
        # busy cores). Held here, joined below, they are freed on this thread instead.
        manager = getattr(self.executor, "_executor_manager_thread", None)
        self.executor.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + CLOSE_TIMEOUT
        for proc in processes:
            proc.join(max(0.0, deadline - time.monotonic()))
        for proc in processes:
            if proc.is_alive():
                proc.kill()
        if manager is not None:
            manager.join(MANAGER_TIMEOUT)  # bounded: it is a no-hang promise, not a cleanup
