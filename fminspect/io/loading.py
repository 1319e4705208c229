"""Reading maps and images robustly.

* Files are read as bytes and decoded with OpenCV (``cv2.imdecode``), so non-ASCII paths work
  on every platform (``cv2.imread`` fails on them on Windows).
* The pixel count in the header is checked *before* decoding: a decompression bomb (a small
  file that expands to gigabytes) is refused with a message. The headers of every format
  OpenCV reads but AVIF are parsed (:mod:`fminspect.io.headers`); others are decoded under
  OpenCV's own limit and checked afterwards.
* Maps (predictions and GTs) come back as 2-D uint8 or uint16 arrays: grey files as they
  are; colour files whose channels are equal as one channel; other colour files converted to
  luminance (as ``cv2.IMREAD_GRAYSCALE``, which PySODEvalToolkit uses); RGBA files whose
  colour is constant but whose alpha varies (cut-out masks) use the alpha channel. Every
  conversion is recorded in ``notes``.
* Images come back as RGB uint8 (16-bit images are scaled to 8 bits).
* Predictions whose size differs from their GT are resized to the GT size by
  :func:`fit_to`, with the interpolation named in the note. Input files are never written.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from fminspect.io.headers import header_size, png_damage
from fminspect.io.limits import MAX_PIXELS
from fminspect.io.validation import LoadError

# A corrupt file is reported by fminspect with its path and problem (LoadError); OpenCV's own
# decoder messages on stderr would only repeat it, less clearly and without the file's name
# (a PNG signature with nothing after it is logged at OpenCV's ERROR level). OpenCV's
# failures that matter are raised (cv2.error) whatever the level.
with contextlib.suppress(AttributeError):  # builds without the logging module keep theirs
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)


INTERPOLATIONS: dict[str, int] = {
    "bilinear": cv2.INTER_LINEAR,
    "bicubic": cv2.INTER_CUBIC,
    "nearest": cv2.INTER_NEAREST,
    "area": cv2.INTER_AREA,
    "lanczos": cv2.INTER_LANCZOS4,
}


@dataclass(frozen=True, slots=True)
class LoadedMap:
    """A decoded map and what was done to it."""

    array: np.ndarray
    notes: tuple[str, ...] = ()


def read_bytes(path: Path | str) -> bytes:
    """The file's bytes, or a LoadError naming it."""
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise LoadError(path, "file not found") from None
    except IsADirectoryError:
        raise LoadError(path, "is a folder, not an image file") from None
    except PermissionError:
        raise LoadError(path, "permission denied") from None
    except OSError as exc:
        raise LoadError(path, f"cannot be read ({exc.strerror or exc})") from None


def decode(
    path: Path | str, data: bytes | None = None, *, max_pixels: int = MAX_PIXELS
) -> np.ndarray:
    """Decode an image file as stored (grey, BGR or BGRA; 8 or 16 bit)."""
    path = Path(path)
    if data is None:
        data = read_bytes(path)
    if not data:
        raise LoadError(path, "file is empty (0 bytes)")
    size = header_size(data)
    if size is not None:
        w, h = size
        if w == 0 or h == 0:
            raise LoadError(path, f"header says the image is {w}×{h} pixels")
        if w * h > max_pixels:
            raise LoadError(
                path,
                f"refused: the header says {w}×{h} = {w * h:,} pixels, more than the limit of "
                f"{max_pixels:,} (a decompression bomb or a wrong file; a real image this large "
                "needs a higher --max-pixels)",
            )
    damage = png_damage(data)
    if damage:
        raise LoadError(path, f"corrupt PNG: {damage} ({len(data):,} bytes)")
    try:
        array = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    except cv2.error as exc:
        raise LoadError(
            path, f"not a readable image ({str(exc).strip().splitlines()[-1]})"
        ) from None
    if array is None:
        kind = "truncated or corrupt image" if size is not None else "not an image OpenCV can read"
        raise LoadError(path, f"{kind} ({len(data):,} bytes)")
    if array.shape[0] * array.shape[1] > max_pixels:
        raise LoadError(
            path, f"refused: {array.shape[1]}×{array.shape[0]} pixels exceeds the limit"
        )
    if array.dtype in (np.float32, np.float64):
        return _float_map(path, array)
    if array.dtype not in (np.uint8, np.uint16):
        raise LoadError(path, f"unsupported pixel type {array.dtype}")
    return array


def _float_map(path: Path, array: np.ndarray) -> np.ndarray:
    """A float map (TIFF, EXR, PFM) as 16 bits, if every value is a number in [0, 1]:
    NaN, infinities and values outside [0, 1] are refused by name rather than clipped into
    a map that looks valid (a network's raw logits saved by mistake are outside [0, 1])."""
    finite = np.isfinite(array)
    if not finite.all():
        n = int(array.size - np.count_nonzero(finite))
        raise LoadError(
            path,
            f"float map with {n:,} NaN or infinite value{'s' if n != 1 else ''} of "
            f"{array.size:,}: refused (a map holds numbers in [0, 1])",
        )
    lo, hi = float(array.min()), float(array.max())
    if lo < 0 or hi > 1:
        raise LoadError(
            path,
            f"float map with values from {lo:.4g} to {hi:.4g}, outside [0, 1]: refused "
            "(save probabilities, e.g. a sigmoid's output, or 8-bit PNG)",
        )
    return (array * 65535 + 0.5).astype(np.uint16)


def to_map(path: Path | str, array: np.ndarray) -> LoadedMap:
    """Turn a decoded image into a 2-D map (see the module notes)."""
    notes: list[str] = []
    if array.dtype == np.uint16:
        notes.append("16-bit map: values read as v/65535")
    if array.ndim == 2:
        return LoadedMap(array, tuple(notes))
    channels = array.shape[2]
    colour = array[:, :, :3] if channels >= 3 else array[:, :, :1]
    if channels == 4:
        alpha = array[:, :, 3]
        full = np.iinfo(array.dtype).max
        if colour.min() == colour.max() and alpha.min() != alpha.max():
            notes.append("RGBA with constant colour: used the alpha channel")
            return LoadedMap(np.ascontiguousarray(alpha), tuple(notes))
        notes.append(
            "RGBA: alpha channel ignored" + (" (fully opaque)" if alpha.min() == full else "")
        )
    if colour.shape[2] == 1 or (
        np.array_equal(colour[:, :, 0], colour[:, :, 1])
        and np.array_equal(colour[:, :, 0], colour[:, :, 2])
    ):
        return LoadedMap(np.ascontiguousarray(colour[:, :, 0]), tuple(notes))
    notes.append("colour map converted to grey (luminance 0.299 R + 0.587 G + 0.114 B)")
    return LoadedMap(cv2.cvtColor(np.ascontiguousarray(colour), cv2.COLOR_BGR2GRAY), tuple(notes))


def load_map(path: Path | str, *, max_pixels: int = MAX_PIXELS) -> LoadedMap:
    """Read a prediction or GT map as a 2-D uint8/uint16 array.

    Raises
    ------
    LoadError
        Missing, empty, corrupt, oversized or unsupported file (the message says which).
    """
    return to_map(path, decode(path, max_pixels=max_pixels))


def load_image(path: Path | str, *, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Read a photograph as an (H, W, 3) RGB uint8 array."""
    array = decode(path, max_pixels=max_pixels)
    if array.dtype == np.uint16:
        array = ((array.astype(np.uint32) + 128) // 257).astype(np.uint8)
    if array.ndim == 2:
        return np.ascontiguousarray(np.stack([array] * 3, axis=2))
    if array.shape[2] == 4:
        return cv2.cvtColor(array, cv2.COLOR_BGRA2RGB)
    if array.shape[2] == 1:
        return np.ascontiguousarray(np.repeat(array, 3, axis=2))
    return cv2.cvtColor(array, cv2.COLOR_BGR2RGB)


def fit_to(
    pred: np.ndarray, shape: tuple[int, int], interpolation: str = "bilinear"
) -> tuple[np.ndarray, str | None]:
    """Resize ``pred`` to ``shape`` (rows, cols); returns the map and a note if resized."""
    if pred.shape[:2] == tuple(shape):
        return pred, None
    if interpolation not in INTERPOLATIONS:
        raise ValueError(
            f"interpolation must be one of {sorted(INTERPOLATIONS)}, got {interpolation!r}"
        )
    h, w = shape
    resized = cv2.resize(pred, (w, h), interpolation=INTERPOLATIONS[interpolation])
    note = f"resized from {pred.shape[1]}×{pred.shape[0]} to the GT size {w}×{h} ({interpolation})"
    return resized, note


def to_u8(a: np.ndarray) -> np.ndarray:
    """A map of any depth the loader returns (uint8, uint16, float in [0, 1], bool) as uint8."""
    if a.dtype == np.uint8:
        return a
    if a.dtype == np.uint16:
        return ((a.astype(np.uint32) + 128) // 257).astype(np.uint8)
    if a.dtype == bool:
        return a.astype(np.uint8) * 255
    return np.clip(np.rint(a.astype(np.float64) * 255), 0, 255).astype(np.uint8)
