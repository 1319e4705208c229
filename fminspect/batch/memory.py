"""How much memory scoring an image takes, and how many images the local workers may
score at once within the memory there is.

Measured on 8000 × 8000 maps (64 MP, docs/reliability.md: 'Limits'): a worker scoring every
measure of an image with its photograph peaks at about 64 bytes per pixel (4.1 GB), without the
camouflage Context-measure at about 48 (the GT's memoised work — distance transform,
S-measure regions, camouflage degree — stays for every model of the image; each measure
family's own intermediates come and go, see
:data:`fminspect.pipeline.sample.LARGE_MAP`). Two workers on two such images at once
need twice that; on a machine with less, :func:`fminspect.batch.runner.run_units` gives a
large image to a worker only while the estimated peaks of the images in flight fit in the
budget (:func:`memory_budget`), so a run of huge maps slows down instead of being killed.
"""

from __future__ import annotations

from typing import Any

from fminspect.io.headers import header_size

#: Estimated peak bytes per pixel of a worker scoring every measure of one image.
BYTES_PER_PIXEL = 48
#: … when the camouflage Context-measure (which reads the photograph) is computed too.
BYTES_PER_PIXEL_WITH_IMAGE = 64
#: A worker's own memory (Python, NumPy, SciPy, OpenCV, the measures' code).
WORKER_BASE = 200 * 2**20
#: The share of the memory available at the start that the workers may fill.
BUDGET_SHARE = 0.8


def available_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``; else the free pages), or None
    when the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    try:
        import os

        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def memory_budget() -> int | None:
    """What the local workers may use at once: :data:`BUDGET_SHARE` of the memory available
    when asked (None: unknown, no bound)."""
    free = available_memory()
    return None if free is None else int(free * BUDGET_SHARE)


def unit_memory(unit: Any) -> int:
    """Estimated peak bytes of a worker scoring ``unit`` (an image and its maps), from the
    size its GT's header declares; 0 when that cannot be read (the unit then counts as
    small; the worker reports the file itself)."""
    sample = getattr(unit, "sample", None)
    if sample is None:
        return 0
    try:
        with open(sample.gt, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return 0
    size = header_size(head)
    if size is None:
        return 0
    pixels = size[0] * size[1]
    with_image = bool(getattr(unit, "needs_image", True)) and sample.image is not None
    per_pixel = BYTES_PER_PIXEL_WITH_IMAGE if with_image else BYTES_PER_PIXEL
    # the decoded inputs: the GT, the maps (up to 2 bytes a pixel each) and the photograph
    inputs = pixels * (2 * (1 + len(getattr(unit, "todo", ()))) + (3 if with_image else 0))
    return WORKER_BASE + pixels * per_pixel + inputs
