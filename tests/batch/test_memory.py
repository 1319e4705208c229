"""The local workers take on huge images only as far as the memory budget allows."""

from __future__ import annotations

import struct
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fminspect.batch.memory import BYTES_PER_PIXEL, WORKER_BASE, unit_memory
from fminspect.batch.runner import run_units


def _png_header(path: Path, w: int, h: int) -> Path:
    ihdr = b"IHDR" + struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    data = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + ihdr + struct.pack(">I", zlib.crc32(ihdr))
    path.write_bytes(data)
    return path


@dataclass
class _Sample:
    gt: Path
    image: Path | None = None


@dataclass
class _Unit:
    sample: _Sample
    todo: tuple[tuple[str, tuple[str, ...]], ...] = (("A", ("mae",)),)
    needs_image: bool = False


@dataclass
class _Pool:
    """What run_units needs of a LocalPool, on threads."""

    jobs: int
    memory: int | None
    executor: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        self.executor = ThreadPoolExecutor(self.jobs)

    def ready(self) -> None:
        pass


def test_unit_memory_is_read_from_the_gt_header(tmp_path: Path) -> None:
    unit = _Unit(_Sample(_png_header(tmp_path / "gt.png", 8000, 8000)))
    pixels = 8000 * 8000
    assert unit_memory(unit) == WORKER_BASE + pixels * (BYTES_PER_PIXEL + 4)
    assert unit_memory(_Unit(_Sample(tmp_path / "missing.png"))) == 0


@pytest.mark.parametrize(("budget_units", "expected"), [(1.5, 1), (2.5, 2), (None, 2)])
def test_huge_images_are_handed_out_within_the_budget(
    tmp_path: Path, budget_units: float | None, expected: int
) -> None:
    big = _Unit(_Sample(_png_header(tmp_path / "big.png", 8000, 8000)))
    need = unit_memory(big)
    pool = _Pool(2, None if budget_units is None else int(budget_units * need))
    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def work(unit: _Unit) -> int:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return 1

    try:
        results = list(run_units([big] * 6, work, pool=pool))  # type: ignore[arg-type]
    finally:
        pool.executor.shutdown()
    assert results == [1] * 6  # every unit ran, none lost to waiting
    assert state["most"] == expected
