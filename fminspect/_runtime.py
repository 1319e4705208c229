"""Process-level settings for fminspect's own processes (CLI, GUI, batch workers).

Nothing here runs on ``import fminspect``; library users are not affected.

:func:`single_thread_blas` keeps BLAS to one thread where fminspect parallelises itself.

:func:`tune_allocator` stops glibc from handing large temporary arrays back to the
kernel after every free. With its defaults, a NumPy pipeline that allocates and frees
megabyte-sized arrays for each image page-faults on every one of them. On virtual machines,
where page faults are expensive, that cost was measured at up to half the time of a
400×400 per-image suite (benchmarks/bench_metrics.py prints both settings). The change is:
an mmap threshold of 64 MiB, a trim threshold of 256 MiB, and a top pad of 64 MiB.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

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
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = (
        mallopt(_M_MMAP_THRESHOLD, 64 * _MIB)
        and mallopt(_M_TRIM_THRESHOLD, 256 * _MIB)
        and mallopt(_M_TOP_PAD, 64 * _MIB)
    )
    _tuned = bool(ok)
    return _tuned


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
