"""Process-level settings for fminspect's own processes (CLI, GUI, batch workers).

Nothing here runs on ``import fminspect``; library users are not affected.

:func:`single_thread_blas` keeps BLAS to one thread where fminspect parallelises itself.

:func:`quiet_collector` holds Python's garbage collector off during a block (reading a
folder in the window, reading a dataset's stored scores in the scoring service).

:func:`tune_allocator` stops glibc from handing large temporary arrays back to the
kernel after every free. With its defaults, a NumPy pipeline that allocates and frees
megabyte-sized arrays for each image page-faults on every one of them. On virtual machines,
where page faults are expensive, that cost was measured at up to half the time of a
400×400 per-image suite (benchmarks/bench_metrics.py prints both settings). The change is:
an mmap threshold of 64 MiB, a trim threshold of 256 MiB, and a top pad of 64 MiB.
:func:`release_free_memory` hands what a long-running process keeps that way back.

:func:`background_niceness` is the priority the window lowers its background work to.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import os
import sys
import threading
from collections.abc import Iterator

_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3
_MIB = 1 << 20

_tuned = False
_single_blas = False


def tune_allocator() -> bool:
    """Keep freed memory in the process (glibc only). Returns True if applied."""
    global _tuned
    if _tuned:
        return True
    libc = _glibc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = (
        mallopt(_M_MMAP_THRESHOLD, 64 * _MIB)
        and mallopt(_M_TRIM_THRESHOLD, 256 * _MIB)
        and mallopt(_M_TOP_PAD, 64 * _MIB)
    )
    _tuned = bool(ok)
    return _tuned


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """The C library, if it is glibc's (with ``mallopt`` and ``malloc_trim``)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018 (both there: glibc, not musl)
    except (OSError, AttributeError):
        return None
    return libc


def release_free_memory() -> bool:
    """Hand the free memory the allocator keeps back to the system (glibc's
    ``malloc_trim``; False elsewhere). With :func:`tune_allocator`'s thresholds freed blocks
    stay in the heap, and a long-running window's heap fragments: stepping through 240
    samples of 400×550 with 12 models, its resident memory rose from 946 to 1,043 MB while
    Python's allocations and the memory in use stayed level; trimmed every 10 samples, from
    822 to 913 MB (both measured while the window still kept every job it had run, fixed
    since, see :mod:`fminspect.gui.workers`: part of that rise was those jobs, the ~100 MB
    the trim saved was not). A trim took 7–23 ms there, and ctypes lets go of the
    interpreter lock meanwhile: call it from a worker thread."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def single_thread_blas() -> None:
    """Let BLAS (OpenBLAS, MKL) use one thread in this process.

    fminspect runs its measures in parallel across models or images (GUI worker threads,
    batch worker processes), never inside one call. OpenBLAS with its own threads, called from
    several Python threads at once, makes them wait for each other: in the inspector an
    S-measure update of 2 ms took 50–250 ms in streaks (benchmarks/bench_gui.py, α).
    """
    global _single_blas
    if _single_blas:
        return
    import os

    from threadpoolctl import threadpool_limits

    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # libraries loaded later
        os.environ.setdefault(var, "1")
    threadpool_limits(limits=1, user_api="blas")  # libraries already loaded
    _single_blas = True


#: Blocks of :func:`quiet_collector` under way (on any thread), under its lock.
_quiet = [0]
_quiet_lock = threading.Lock()


@contextlib.contextmanager
def quiet_collector() -> Iterator[None]:
    """No automatic garbage collection while the block runs (on a thread of the window: a
    collection would hold the interpreter lock, and so the window, for as long as it takes;
    in a bulk read of millions of small objects, the collections their number triggers
    would visit every object alive again and again); then every object tracked, what the
    block made included, is left out of later collections (``gc.freeze``), as
    :func:`fminspect.gui.app.settle_garbage` does — without its full collection, which
    would hold the window just the same. Frozen objects are still freed when nothing refers
    to them; only cyclic garbage frozen with them stays (opening the 1,000 × 20 benchmark
    four times in a row left none: a full collection afterwards found nothing). Blocks may
    overlap: collection resumes when the last one ends."""
    with _quiet_lock:
        _quiet[0] += 1
        gc.disable()
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet[0] -= 1
            if not _quiet[0]:
                gc.freeze()
                gc.enable()


#: Set to 1, the window's background work (its scoring threads, its scoring service) runs
#: at the window's own priority.
NO_NICE_VARIABLE = "FMINSPECT_NO_NICE"


def background_niceness(niceness: int) -> int:
    """``niceness``, or 0 where ``$FMINSPECT_NO_NICE`` is 1. The window lowers its background
    work so that the sample the user looks at comes first; the test suite runs it at its own
    priority, because on a machine kept busy by other work at the usual priority, niced work
    gets a few per cent of a core: the tests that wait for it took 40–50 s each instead of
    one (tests/gui/test_responsiveness.py checks the niceness itself)."""
    return 0 if os.environ.get(NO_NICE_VARIABLE) == "1" else niceness
