"""Atomic file writes: every output is written to a temporary file in its folder, flushed
to disk and renamed onto its name, so that a reader — or the next run after a crash, Ctrl-C
or a full disk — sees the old file or the new one, never a half-written or 0-byte file.

Used by every writer of the product (``eval``/``meta``/``rank`` outputs, plots, packs,
exported studies, the window's exports and screenshots).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_open", "replacing", "strict_json", "write_bytes", "write_text"]


def _umask() -> int:
    mask = os.umask(0o022)  # read once, at import (os.umask can only be read by setting it)
    os.umask(mask)
    return mask


#: the permissions a plain ``open(…, "w")`` gives (temporary files are made 0600)
_MODE = 0o666 & ~_umask()


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX; a no-op where folders cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def replacing(path: os.PathLike[str] | str) -> Iterator[Path]:
    """A temporary path next to ``path`` (same suffix, so that writers choosing a format by
    the extension still do) to write to; when the block ends normally it is flushed to
    disk and renamed onto ``path``; when it raises, it is removed and ``path`` is untouched.

    >>> with replacing("out/plot.png") as tmp:            # doctest: +SKIP
    ...     fig.savefig(tmp)
    """
    target = Path(path)
    fd, name = tempfile.mkstemp(
        prefix=f".{target.stem}.", suffix=f".tmp{target.suffix}", dir=target.parent or "."
    )
    os.close(fd)
    tmp = Path(name)
    try:
        with contextlib.suppress(OSError):
            os.chmod(tmp, _MODE)
        yield tmp
        with open(tmp, "rb+") as fh:  # whatever wrote it, its bytes are on disk first
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_folder(target.parent)


@contextlib.contextmanager
def atomic_open(path: os.PathLike[str] | str, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """``open(path, mode, **kwargs)`` for writing, atomically (see :func:`replacing`). Text
    that cannot be encoded (a path holding bytes that are not UTF-8) is written escaped
    (``errors="backslashreplace"``) rather than failing the whole output."""
    if "b" not in mode:
        kwargs.setdefault("errors", "backslashreplace")
    with replacing(path) as tmp, open(tmp, mode, **kwargs) as fh:
        yield fh


def write_text(path: os.PathLike[str] | str, text: str, encoding: str = "utf-8") -> None:
    """``Path(path).write_text(text)``, atomically."""
    with atomic_open(path, "w", encoding=encoding) as fh:
        fh.write(text)


def write_bytes(path: os.PathLike[str] | str, data: bytes) -> None:
    """``Path(path).write_bytes(data)``, atomically."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def strict_json(obj: Any, indent: int | None = 1) -> str:
    """``obj`` as standard JSON: NaN and ±infinity (which ``json.dumps`` writes as the
    non-standard ``NaN``/``Infinity`` that strict parsers reject) become ``null``; NumPy
    scalars become numbers."""
    import math

    def clean(o: Any) -> Any:
        if isinstance(o, dict):
            return {k: clean(v) for k, v in o.items()}
        if isinstance(o, list | tuple):
            return [clean(v) for v in o]
        if hasattr(o, "item") and not isinstance(o, str | bytes):  # a NumPy scalar
            o = o.item()
        if isinstance(o, float) and not math.isfinite(o):
            return None
        return o

    import json

    return json.dumps(clean(obj), indent=indent, allow_nan=False)
