"""Size limits on what a user hands the product, checked before anything is read whole.

A JSON file (a participant's results, a ranked dataset's manifest, PySODEvalToolkit's
configs) is read into memory to be parsed, so its size is checked first; a study pack's
members are checked against their declared sizes and compression ratios before they are
inflated (see :func:`fminspect.ranking.export.open_pack`). Image files have their own limit,
on the pixel count their header declares (:data:`MAX_PIXELS`, checked by
:func:`fminspect.io.loading.decode`).
"""

from __future__ import annotations

import os
from pathlib import Path

#: Refuse images whose header declares more pixels than this (an 8-bit 100 MP grey map is
#: 100 MB; ``--max-pixels`` changes it).
MAX_PIXELS = 100_000_000
#: The largest JSON file read (results of 10,000 trials are about 2 MB).
MAX_JSON_BYTES = 256 * 2**20
#: The largest file a study pack may hold (an 8-bit 100-megapixel PNG is at most ~100 MB).
MAX_PACK_MEMBER = 512 * 2**20
#: The largest ratio of inflated to stored size of a pack member above 1 MB (images are
#: compressed already: PNG and JPEG deflate to about 1:1, an uncompressed BMP mask ~50:1).
MAX_PACK_RATIO = 200
#: The largest total of a pack's members once inflated.
MAX_PACK_TOTAL = 64 * 2**30


class FileTooLarge(ValueError):
    """A file is larger than the limit for what it claims to be (the message names it)."""


def read_text(path: os.PathLike[str] | str, limit: int = MAX_JSON_BYTES, what: str = "file") -> str:
    """The UTF-8 text of ``path``, refused (:class:`FileTooLarge`) when it is larger than
    ``limit`` bytes — checked before it is read. OSError and UnicodeDecodeError as usual."""
    path = Path(path)
    size = path.stat().st_size
    if size > limit:
        raise FileTooLarge(
            f"{path}: {size:,} bytes is more than a {what} can be (limit {limit:,} bytes)"
        )
    return path.read_text(encoding="utf-8")
