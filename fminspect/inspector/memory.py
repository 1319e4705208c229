"""How much memory a result holds: the result cache of the inspector is bounded in bytes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def _own_attributes(obj: object) -> list[object]:
    """The values in an object's slots and ``__dict__``."""
    values: list[object] = []
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                values.append(getattr(obj, name))
    values.extend(getattr(obj, "__dict__", {}).values())
    return values


def array_bytes(obj: object) -> int:
    """Bytes of the NumPy arrays reachable from ``obj`` (through dataclass fields, the slots
    and attributes of fminspect's own objects — a Pair's map, a GroundTruth's memo of
    distance maps —, tuples, lists and dict values), each array's memory counted once
    (views count their base)."""
    import numpy as np

    seen: set[int] = set()
    total = 0
    stack = [obj]
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, (str, bytes, int, float, bool)):
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            base = item
            while isinstance(base.base, np.ndarray):
                base = base.base
            if base is not item and id(base) in seen:
                continue
            seen.add(id(base))
            total += base.nbytes
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
            stack.extend(_own_attributes(item))
        elif type(item).__module__.startswith("fminspect."):
            stack.extend(_own_attributes(item))
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return total


def sized(job: Callable[[], T]) -> Callable[[], tuple[T, int]]:
    """``job`` returning its result with :func:`array_bytes` of it, counted on the worker
    thread that made it (about 2 ms a result, which the GUI thread need not spend)."""

    def run() -> tuple[T, int]:
        result = job()
        return result, array_bytes(result)

    return run
