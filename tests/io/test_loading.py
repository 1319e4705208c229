"""Robust reading: bit depths, channel layouts, bad files, non-ASCII paths, bombs."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from fminspect.io.headers import header_size
from fminspect.io.loading import fit_to, load_image, load_map
from fminspect.io.validation import LoadError
from tests.datasets import write_png


def test_grey_8_and_16_bit(tmp_path: Path) -> None:
    a8 = np.arange(12, dtype=np.uint8).reshape(3, 4) * 20
    write_png(tmp_path / "a.png", a8)
    np.testing.assert_array_equal(load_map(tmp_path / "a.png").array, a8)
    a16 = np.arange(12, dtype=np.uint16).reshape(3, 4) * 5000
    write_png(tmp_path / "b.png", a16)
    m = load_map(tmp_path / "b.png")
    assert m.array.dtype == np.uint16 and np.array_equal(m.array, a16)
    assert m.notes == ("16-bit map: values read as v/65535",)
    assert not load_map(tmp_path / "a.png").notes


def test_colour_maps(tmp_path: Path) -> None:
    grey = np.arange(20, dtype=np.uint8).reshape(4, 5) * 10
    write_png(tmp_path / "equal.png", np.stack([grey] * 3, axis=2))
    m = load_map(tmp_path / "equal.png")
    assert np.array_equal(m.array, grey) and not m.notes
    colour = np.zeros((4, 5, 3), np.uint8)
    colour[..., 2] = 200  # red in BGR
    write_png(tmp_path / "colour.png", colour)
    m = load_map(tmp_path / "colour.png")
    assert "luminance" in m.notes[0] and m.array.max() == round(0.299 * 200)


def test_rgba_alpha_masks_and_palettes(tmp_path: Path) -> None:
    rgba = np.zeros((6, 6, 4), np.uint8)
    rgba[..., 3] = 0
    rgba[2:4, 2:4, 3] = 255  # a cut-out: constant colour, varying alpha
    write_png(tmp_path / "cut.png", rgba)
    m = load_map(tmp_path / "cut.png")
    assert m.array[2, 2] == 255 and m.array[0, 0] == 0 and "alpha" in m.notes[0]
    opaque = np.full((6, 6, 4), 255, np.uint8)
    opaque[..., :3] = np.arange(6, dtype=np.uint8)[:, None, None] * 40
    write_png(tmp_path / "opaque.png", opaque)
    m = load_map(tmp_path / "opaque.png")
    assert m.notes == ("RGBA: alpha channel ignored (fully opaque)",)
    assert m.array[:, 0].tolist() == [0, 40, 80, 120, 160, 200]
    pal = Image.fromarray(np.array([[0, 1], [1, 0]], np.uint8), mode="P")
    pal.putpalette([0, 0, 0, 255, 255, 255] + [0] * 762)
    pal.save(tmp_path / "pal.png")
    assert load_map(tmp_path / "pal.png").array.tolist() == [[0, 255], [255, 0]]


def test_jpeg_and_non_ascii_paths(tmp_path: Path) -> None:
    img = np.full((8, 8, 3), (10, 120, 240), np.uint8)
    path = tmp_path / "données" / "図像.jpg"
    write_png(path, img)
    rgb = load_image(path)
    assert rgb.shape == (8, 8, 3) and abs(int(rgb[0, 0, 0]) - 240) < 4  # BGR → RGB


def test_16_bit_image_becomes_8_bit_rgb(tmp_path: Path) -> None:
    write_png(tmp_path / "i.png", np.full((3, 3), 65535, np.uint16))
    rgb = load_image(tmp_path / "i.png")
    assert rgb.dtype == np.uint8 and rgb.shape == (3, 3, 3) and rgb.max() == 255


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "file not found"),
        (b"", "empty"),
        (b"not an image at all", "not an image"),
        ("truncated", "corrupt PNG: truncated"),
    ],
)
@pytest.mark.faults
def test_bad_files_are_named_errors(tmp_path: Path, content, message) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.png"
    if content == "truncated":
        write_png(path, np.zeros((50, 50), np.uint8) + 7)
        path.write_bytes(path.read_bytes()[:60])
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(LoadError, match=message) as err:
        load_map(path)
    assert err.value.path == path and str(path) in str(err.value)


def test_folder_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="folder"):
        load_map(tmp_path)


def _png_header(w: int, h: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
        + b"\x00" * 32
    )


@pytest.mark.faults
def test_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    path = tmp_path / "bomb.png"
    path.write_bytes(_png_header(60000, 60000))
    with pytest.raises(LoadError, match=r"refused.*60000×60000"):
        load_map(path)
    assert header_size(_png_header(7, 9)) == (7, 9)


@pytest.mark.parametrize(
    "ext",
    [
        ".png",
        ".jpg",
        ".bmp",
        ".webp",
        ".tiff",
        ".pgm",
        ".ppm",
        ".pbm",
        ".pam",
        ".pfm",
        ".sr",
        ".hdr",
        ".jp2",
    ],
)
@pytest.mark.parametrize("shape", [(13, 21), (300, 7), (1, 1000)])
def test_header_sizes_match_what_opencv_writes(ext: str, shape: tuple[int, int]) -> None:
    if ext == ".jp2":  # OpenJPEG refuses images smaller than its resolution levels' tiles
        shape = (shape[0] + 64, shape[1] + 64)
    grey = ext in (".pgm", ".pbm", ".pam")
    img = np.full((*shape, 1) if grey else (*shape, 3), 128, np.uint8)
    if ext in (".pfm", ".hdr"):
        img = img.astype(np.float32) / 255
    ok, buf = cv2.imencode(ext, img)
    assert ok
    h, w = shape
    assert header_size(buf.tobytes()) == (w, h), ext


def _tiff_header(w: int, h: int, *, big_endian: bool = False) -> bytes:
    """A minimal uncompressed grey TIFF that declares w × h pixels (its strip is missing)."""
    o = ">" if big_endian else "<"
    tags = [(256, 4, w), (257, 4, h), (258, 3, 8), (259, 3, 1), (262, 3, 1), (273, 4, 200)]
    tags += [(277, 3, 1), (278, 4, h), (279, 4, w * h)]
    ifd = struct.pack(o + "H", len(tags))
    for tag, kind, value in tags:
        packed = struct.pack(o + "H", value) + b"\0\0" if kind == 3 else struct.pack(o + "I", value)
        ifd += struct.pack(o + "HHI", tag, kind, 1) + packed
    head = (b"MM\0*" if big_endian else b"II*\0") + struct.pack(o + "I", 8)
    return head + ifd + struct.pack(o + "I", 0) + b"\0" * 64


@pytest.mark.faults
@pytest.mark.parametrize("big_endian", [False, True])
def test_a_tiff_bomb_is_refused_from_its_header(tmp_path: Path, big_endian: bool) -> None:
    assert header_size(_tiff_header(5, 3, big_endian=big_endian)) == (5, 3)
    path = tmp_path / "bomb.tif"
    path.write_bytes(_tiff_header(40000, 30000, big_endian=big_endian))
    with pytest.raises(LoadError, match=r"refused.*40000×30000"):
        load_map(path)
    # the limit is the caller's: a smaller one refuses a smaller file
    path.write_bytes(_tiff_header(100, 100, big_endian=big_endian))
    with pytest.raises(LoadError, match=r"100×100 = 10,000 pixels, more than the limit of 9,999"):
        load_map(path, max_pixels=9_999)


def test_exr_size_is_read_from_its_data_window() -> None:
    # this OpenCV build has no EXR encoder: a header as the OpenEXR file layout defines it
    def attribute(name: bytes, kind: bytes, value: bytes) -> bytes:
        return name + b"\0" + kind + b"\0" + struct.pack("<i", len(value)) + value

    header = b"\x76\x2f\x31\x01" + bytes([2, 0, 0, 0])
    channel = b"Y\0" + struct.pack("<iBxxxii", 2, 0, 1, 1)
    header += attribute(b"channels", b"chlist", channel + b"\0")
    header += attribute(b"compression", b"compression", b"\0")
    header += attribute(b"dataWindow", b"box2i", struct.pack("<iiii", 10, 20, 41, 36)) + b"\0"
    assert header_size(header) == (32, 17)


@pytest.mark.faults
@pytest.mark.parametrize(
    "data",
    [b"II*\0\xff\xff\xff\x7f", b"MM\0*\0\0\0\x08\0\x05", b"P5\n# only a comment", b"BM"],
)
def test_a_damaged_header_says_nothing_rather_than_failing(data: bytes) -> None:
    assert header_size(data) is None


def test_fit_to_resizes_with_a_note() -> None:
    pred = np.zeros((10, 20), np.uint8)
    out, note = fit_to(pred, (20, 40))
    assert out.shape == (20, 40) and "20×10 to the GT size 40×20 (bilinear)" in note
    same, note = fit_to(pred, (10, 20))
    assert same is pred and note is None
    with pytest.raises(ValueError, match="interpolation"):
        fit_to(pred, (5, 5), "cubic-ish")


@pytest.mark.faults
def test_a_png_with_a_corrupt_header_is_unreadable_not_a_bomb(tmp_path: Path) -> None:
    path = tmp_path / "c.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(200)) * 2)  # the signature, then noise
    with pytest.raises(LoadError, match="not an image OpenCV can read"):
        load_map(path)


@pytest.mark.faults
@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([0.2, np.nan, 0.5, 1.0], "float map with 4 NaN or infinite values of 16: refused"),
        ([0.2, np.inf, -np.inf, 1.0], "float map with 8 NaN or infinite values of 16: refused"),
        ([-0.5, 0.2, 3.0, 1.0], "float map with values from -0.5 to 3, outside [0, 1]: refused"),
    ],
)
def test_float_maps_with_nan_or_out_of_range_values_are_refused_by_name(
    tmp_path: Path, values: list[float], message: str
) -> None:
    path = tmp_path / "logits.tiff"
    array = np.resize(np.array(values, np.float32), (4, 4))
    assert cv2.imwrite(str(path), array)
    with pytest.raises(LoadError) as err:
        load_map(path)
    assert str(err.value).startswith(f"{path}: {message}")


def test_a_valid_float_map_is_read_as_16_bits(tmp_path: Path) -> None:
    path = tmp_path / "prob.tiff"
    array = np.linspace(0, 1, 16, dtype=np.float32).reshape(4, 4)
    assert cv2.imwrite(str(path), array)
    got = load_map(path).array
    assert got.dtype == np.uint16 and got[0, 0] == 0 and got[-1, -1] == 65535
    assert np.allclose(got / 65535, array, atol=1 / 65535)


def test_a_corrupt_file_is_named_once_not_by_opencv_too(tmp_path: Path) -> None:
    """Only fminspect's message, with the file's name: OpenCV logged its own (``[ERROR:0@…]
    readHeader IHDR chunk shall be first``) on stderr for a bare PNG signature."""
    import subprocess
    import sys

    bad = tmp_path / "img_6.jpg"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n")
    code = (
        "from fminspect.io.loading import decode\n"
        "try:\n"
        f"    decode({str(bad)!r})\n"
        "except Exception as exc:\n"
        "    print(exc)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert str(bad) in run.stdout and "not an image" in run.stdout
    assert run.stderr == ""


@pytest.mark.faults
def test_a_damaged_png_is_said_before_libpng_says_it_on_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from fminspect.io.headers import png_damage

    path = tmp_path / "map.png"
    write_png(path, (np.random.default_rng(1).random((40, 50)) * 255).astype(np.uint8))
    whole = path.read_bytes()
    assert png_damage(whole) == "" and png_damage(b"GIF89a") == ""
    for end in range(16, len(whole)):  # cut anywhere past IHDR's name, IEND's last byte too
        assert png_damage(whole[:end]).startswith("truncated"), end
    flipped = bytearray(whole)
    flipped[45] ^= 0xFF  # inside the IDAT chunk, which starts at byte 33
    assert png_damage(bytes(flipped)) == "its IDAT chunk at byte 33 has a wrong checksum"
    # an ancillary chunk with a wrong checksum is skipped by libpng, and passed here
    text = b"tEXt" + b"Comment\x00fminspect"
    bad = struct.pack(">I", len(text) - 4) + text + struct.pack(">I", 0)
    assert png_damage(whole[:33] + bad + whole[33:]) == ""
    path.write_bytes(whole[: len(whole) - 5])  # IEND cut: libpng would print its error
    with pytest.raises(LoadError, match=r"corrupt PNG: truncated \(it ends before its IEND"):
        load_map(path)
    assert capfd.readouterr().err == ""  # nothing from the decoder on the process's stderr
