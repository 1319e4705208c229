"""The size of an image from its header, read before anything is decoded.

A decompression bomb is a small file whose pixels fill gigabytes once decoded (a 1.8 MB TIFF
of 30000 × 20000 16-bit pixels takes 1.2 GB and 7 s to decode). :func:`header_size` reads
the width and height that the file *declares*, so :func:`fminspect.io.loading.decode` can
refuse it before calling the decoder. Every format OpenCV decodes is parsed here except
AVIF; a format not recognised returns None and is decoded under OpenCV's own limit, then
checked.

The parsers read only the bytes they need and never trust an offset: a header that points
outside the file, or that cannot be parsed, gives None (the decoder then reports the file as
unreadable or corrupt, which is what it is).
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Callable

Size = tuple[int, int]


def header_size(data: bytes) -> Size | None:
    """(width, height) declared by the file's header, or None if the format is not known or
    the header is damaged."""
    for magic, parse in _PARSERS:
        if data.startswith(magic):
            try:
                return parse(data)
            except (struct.error, IndexError, ValueError):
                return None
    return None


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_damage(data: bytes) -> str:
    """Why the chunks of a PNG file are damaged ("" when they are whole, when the file is
    no PNG, or when no IHDR chunk follows its signature): cut off before its IEND chunk, or
    a critical chunk (IHDR, PLTE, IDAT, IEND) whose checksum is wrong. Said here, before
    the decoder, because libpng prints its own complaint on the process's standard error
    (``libpng error: PNG input buffer is incomplete``) beside the one fminspect gives;
    libpng refuses such a file anyway (an ancillary chunk with a wrong checksum it only
    skips, and so is it here)."""
    if not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        return ""  # no PNG, or not one at all past its signature: the decoder says so
    view = memoryview(data)  # the checksums without copying the chunks
    pos = len(PNG_SIGNATURE)
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        end = pos + 8 + length
        if end + 4 > len(data):
            break
        crc = int.from_bytes(data[end : end + 4], "big")
        critical = kind[:1].isupper()
        if critical and zlib.crc32(view[pos + 4 : end]) != crc:
            return f"its {kind.decode('latin-1')} chunk at byte {pos:,} has a wrong checksum"
        if kind == b"IEND":
            return ""
        pos = end + 4
    return "truncated (it ends before its IEND chunk)"


def _png(data: bytes) -> Size | None:
    # a corrupt header (not IHDR, or its checksum wrong) says nothing about the size: the
    # decoder then reports the file as unreadable, not as a decompression bomb
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    if len(data) >= 33 and zlib.crc32(data[12:29]) != int.from_bytes(data[29:33], "big"):
        return None
    w, h = struct.unpack(">II", data[16:24])
    return w, h


def _bmp(data: bytes) -> Size | None:
    if len(data) < 26:
        return None
    if struct.unpack("<I", data[14:18])[0] == 12:  # OS/2 BITMAPCOREHEADER: 16-bit sizes
        w, h = struct.unpack("<HH", data[18:22])
        return w, h
    w, h = struct.unpack("<ii", data[18:26])
    return abs(w), abs(h)


def _gif(data: bytes) -> Size | None:
    w, h = struct.unpack("<HH", data[6:10])
    return w, h


def _webp(data: bytes) -> Size | None:
    if data[8:12] != b"WEBP" or len(data) < 30:
        return None
    chunk = data[12:16]
    if chunk == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L":
        b = int.from_bytes(data[21:25], "little")
        return (b & 0x3FFF) + 1, ((b >> 14) & 0x3FFF) + 1
    return None


def _jpeg(data: bytes) -> Size | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker in (0xD8, 0x01, 0xFF) or 0xD0 <= marker <= 0xD7:
            i += 1 if marker == 0xFF else 2  # fill bytes, and markers without a length
            continue
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return w, h
        i += 2 + length
    return None


def _tiff(data: bytes) -> Size | None:
    """Width and height (tags 256 and 257) of the first image of a TIFF or BigTIFF."""
    order = "<" if data[:2] == b"II" else ">"
    (version,) = struct.unpack(order + "H", data[2:4])
    if version == 42:
        (offset,) = struct.unpack(order + "I", data[4:8])
        count_fmt, entry_size, value_at = "H", 12, 8
    elif version == 43:
        (offset,) = struct.unpack(order + "Q", data[8:16])
        count_fmt, entry_size, value_at = "Q", 20, 12
    else:
        return None
    count_size = struct.calcsize(count_fmt)
    (count,) = struct.unpack(order + count_fmt, data[offset : offset + count_size])
    found: dict[int, int] = {}
    for k in range(min(count, 4096)):
        at = offset + count_size + k * entry_size
        tag, kind = struct.unpack(order + "HH", data[at : at + 4])
        if tag in (256, 257):
            value = data[at + value_at : at + entry_size]
            if kind == 3:  # SHORT
                found[tag] = struct.unpack(order + "H", value[:2])[0]
            elif kind == 4:  # LONG
                found[tag] = struct.unpack(order + "I", value[:4])[0]
            elif kind == 16:  # LONG8 (BigTIFF)
                found[tag] = struct.unpack(order + "Q", value[:8])[0]
    if 256 in found and 257 in found:
        return found[256], found[257]
    return None


_PNM_TOKEN = re.compile(rb"(?:\s+|#[^\n]*\n)*(\d+)")


def _pnm(data: bytes) -> Size | None:
    """PBM/PGM/PPM (P1–P6) and PFM (Pf/PF): the width and height after the magic, with
    PNM's comments; PAM (P7): its WIDTH and HEIGHT lines."""
    head = data[:4096]
    if head[:2] == b"P7":
        w = re.search(rb"\nWIDTH\s+(\d+)", head)
        h = re.search(rb"\nHEIGHT\s+(\d+)", head)
        return (int(w.group(1)), int(h.group(1))) if w and h else None
    if len(head) < 2 or head[1:2] not in b"123456fF":
        return None
    first = _PNM_TOKEN.match(head, 2)
    second = _PNM_TOKEN.match(head, first.end()) if first else None
    if first is None or second is None:
        return None
    return int(first.group(1)), int(second.group(1))


def _sun_raster(data: bytes) -> Size | None:
    w, h = struct.unpack(">ii", data[4:12])
    return abs(w), abs(h)


def _exr(data: bytes) -> Size | None:
    """The ``dataWindow`` attribute (box2i) of an OpenEXR header."""
    at = 8
    while at < min(len(data), 1 << 20):
        end = data.index(b"\0", at)
        name = data[at:end]
        if not name:
            return None
        type_end = data.index(b"\0", end + 1)
        (size,) = struct.unpack("<i", data[type_end + 1 : type_end + 5])
        value = type_end + 5
        if name == b"dataWindow" and size == 16:
            x0, y0, x1, y1 = struct.unpack("<iiii", data[value : value + 16])
            return x1 - x0 + 1, y1 - y0 + 1
        at = value + size
    return None


def _radiance(data: bytes) -> Size | None:
    """Radiance HDR: the resolution line after the header's blank line (``-Y h +X w``)."""
    m = re.search(rb"\n\n([-+])([XY]) (\d+) ([-+])([XY]) (\d+)\n", data[:65536])
    if m is None:
        return None
    first, second = int(m.group(3)), int(m.group(6))
    return (second, first) if m.group(2) == b"Y" else (first, second)


def _jp2(data: bytes) -> Size | None:
    """JPEG 2000 file (the ``ihdr`` box: height, width)."""
    at = data.find(b"ihdr", 0, 4096)
    if at < 0:
        return None
    h, w = struct.unpack(">II", data[at + 4 : at + 12])
    return w, h


def _j2k(data: bytes) -> Size | None:
    """JPEG 2000 code-stream (the SIZ segment: Xsiz, Ysiz and the image offsets)."""
    if data[2:4] != b"\xff\x51":
        return None
    xsiz, ysiz, xo, yo = struct.unpack(">IIII", data[8:24])
    return xsiz - xo, ysiz - yo


_PARSERS: tuple[tuple[bytes, Callable[[bytes], Size | None]], ...] = (
    (b"\x89PNG\r\n\x1a\n", _png),
    (b"\xff\xd8", _jpeg),
    (b"BM", _bmp),
    (b"GIF87a", _gif),
    (b"GIF89a", _gif),
    (b"RIFF", _webp),
    (b"II*\0", _tiff),
    (b"MM\0*", _tiff),
    (b"II+\0", _tiff),
    (b"MM\0+", _tiff),
    (b"P", _pnm),
    (b"\x59\xa6\x6a\x95", _sun_raster),
    (b"\x76\x2f\x31\x01", _exr),
    (b"#?RADIANCE", _radiance),
    (b"#?RGBE", _radiance),
    (b"\x00\x00\x00\x0cjP  \r\n\x87\n", _jp2),
    (b"\xff\x4f", _j2k),
)
