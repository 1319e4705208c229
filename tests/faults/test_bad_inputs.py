"""The bad-input table (docs/reliability.md, 'Reliability'): every kind of wrong file a user
may hand ``fminspect score`` as the prediction, the GT or the image, each with the outcome the
docs promise — a value (with the note that says what was done) or one line per problem
naming the input's role, the file and what is wrong — never a traceback.

Each case is one row of :data:`CASES`; ``test_the_documented_table_counts_these_cases`` keeps
the counts of docs/reliability.md equal to the suite's.
"""

from __future__ import annotations

import json
import os
import re
import struct
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pytest

from fminspect.cli import main

pytestmark = pytest.mark.faults

H, W = 40, 50


def _gt() -> np.ndarray:
    yy, xx = np.ogrid[:H, :W]
    return ((((yy - 20) ** 2 + (xx - 25) ** 2) < 150) * 255).astype(np.uint8)


def _pred() -> np.ndarray:
    return cv2.GaussianBlur(_gt(), (0, 0), 3)


def _write(path: Path, array: np.ndarray, *params: int) -> Path:
    ok, buf = cv2.imencode(path.suffix, array, list(params))
    assert ok
    path.write_bytes(buf.tobytes())
    return path


def _png_bomb(path: Path) -> Path:
    ihdr = b"IHDR" + struct.pack(">IIBBBBB", 60000, 60000, 8, 0, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + ihdr + struct.pack(">I", zlib.crc32(ihdr))
    )
    return path


def _tiff_bomb(path: Path) -> Path:
    tags = [(256, 4, 40000), (257, 4, 30000), (258, 3, 8), (259, 3, 1), (262, 3, 1)]
    ifd = struct.pack("<H", len(tags))
    for tag, kind, value in tags:
        value_bytes = struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value)
        ifd += struct.pack("<HHI", tag, kind, 1) + value_bytes
    path.write_bytes(b"II*\0" + struct.pack("<I", 8) + ifd + b"\0" * 8)
    return path


def _float_tiff(values: Callable[[np.ndarray], np.ndarray]) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        return _write(path, values(_pred().astype(np.float32) / 255))

    return make


def _with_nan(a: np.ndarray) -> np.ndarray:
    a[3, 4] = np.nan
    return a


def _symlink_loop(path: Path) -> Path:
    other = path.with_name("loop-b.png")
    os.symlink(other, path)
    os.symlink(path, other)
    return path


def _truncated(path: Path) -> Path:
    data = _write(path, (np.random.default_rng(0).random((H, W)) * 255).astype(np.uint8))
    data.write_bytes(data.read_bytes()[:80])
    return data


def _cmyk_jpeg(path: Path) -> Path:
    from PIL import Image

    Image.fromarray(cv2.cvtColor(_pred(), cv2.COLOR_GRAY2RGB)).convert("CMYK").save(path)
    return path


def _palette_png(path: Path) -> Path:
    from PIL import Image

    Image.fromarray(_pred()).convert("P").save(path)
    return path


@dataclass(frozen=True)
class Case:
    """One bad input: which role it plays, how it is made, and what must happen."""

    name: str
    role: str  # "prediction", "GT" or "image"
    suffix: str
    make: Callable[[Path], Path]
    outcome: str  # "value" (exit 0, or 1 when only CCm is lost) or "error" (exit 2)
    says: str  # a regular expression the message (error) or a note (value) must match


CASES = [
    Case("missing", "prediction", ".png", lambda p: p, "error", r"prediction .*: not found"),
    Case(
        "0-byte file",
        "prediction",
        ".png",
        lambda p: (p.write_bytes(b""), p)[1],
        "error",
        r"file is empty \(0 bytes\)",
    ),
    Case(
        "folder instead of a file",
        "GT",
        ".png",
        lambda p: (p.mkdir(), p)[1],
        "error",
        r"GT .*: is a folder",
    ),
    Case("truncated PNG", "prediction", ".png", _truncated, "error", r"corrupt PNG: truncated"),
    Case(
        "noise named .png",
        "GT",
        ".png",
        lambda p: (p.write_bytes(np.random.default_rng(1).bytes(500)), p)[1],
        "error",
        r"not an image OpenCV can read",
    ),
    Case(
        "text named .jpg",
        "prediction",
        ".jpg",
        lambda p: (p.write_text("not a picture\n"), p)[1],
        "error",
        r"not an image OpenCV can read",
    ),
    Case(
        "PNG decompression bomb",
        "prediction",
        ".png",
        _png_bomb,
        "error",
        r"refused: the header says 60000×60000",
    ),
    Case(
        "TIFF decompression bomb",
        "GT",
        ".tif",
        _tiff_bomb,
        "error",
        r"refused: the header says 40000×30000",
    ),
    Case("symlink loop", "prediction", ".png", _symlink_loop, "error", r"prediction .*: not found"),
    Case(
        "float TIFF with a NaN",
        "prediction",
        ".tiff",
        _float_tiff(_with_nan),
        "error",
        r"1 NaN or infinite value of 2,000: refused",
    ),
    Case(
        "all-NaN float TIFF",
        "prediction",
        ".tiff",
        _float_tiff(lambda a: np.full_like(a, np.nan)),
        "error",
        r"2,000 NaN or infinite values",
    ),
    Case(
        "float TIFF of logits",
        "prediction",
        ".tiff",
        _float_tiff(lambda a: a * 8 - 4),
        "error",
        r"values from -4 to 4, outside \[0, 1\]: refused",
    ),
    Case(
        "float TIFF in [0, 1]",
        "prediction",
        ".tiff",
        _float_tiff(lambda a: a),
        "value",
        r"16-bit map: values read as v/65535",
    ),
    Case(
        "16-bit PNG",
        "prediction",
        ".png",
        lambda p: _write(p, _pred().astype(np.uint16) * 257),
        "value",
        r"16-bit map",
    ),
    Case("palette PNG", "prediction", ".png", _palette_png, "value", r""),
    Case(
        "RGBA cut-out",
        "prediction",
        ".png",
        lambda p: _write(p, np.dstack([np.zeros((H, W, 3), np.uint8), _pred()])),
        "value",
        r"RGBA with constant colour: used the alpha channel",
    ),
    Case(
        "colour map",
        "prediction",
        ".png",
        lambda p: _write(p, cv2.applyColorMap(_pred(), cv2.COLORMAP_JET)),
        "value",
        r"colour map converted to grey",
    ),
    Case("CMYK JPEG", "prediction", ".jpg", _cmyk_jpeg, "value", r""),
    Case(
        "other size than the GT",
        "prediction",
        ".png",
        lambda p: _write(p, cv2.resize(_pred(), (W * 2, H * 2))),
        "value",
        r"resized from 100×80 to the GT size 50×40 \(bilinear\)",
    ),
    Case(
        "empty GT",
        "GT",
        ".png",
        lambda p: _write(p, np.zeros((H, W), np.uint8)),
        "value",
        r"no foreground",
    ),
    Case("0/1 GT saved as 8-bit", "GT", ".png", lambda p: _write(p, _gt() // 255), "value", r"0/1"),
    Case(
        "full GT", "GT", ".png", lambda p: _write(p, np.full((H, W), 255, np.uint8)), "value", r""
    ),
    Case("JPEG GT", "GT", ".jpg", lambda p: _write(p, _gt()), "value", r""),
    Case(
        "image of another size",
        "image",
        ".png",
        lambda p: _write(p, np.zeros((H + 1, W, 3), np.uint8)),
        "value",
        r"image .*CCm not computed|CCm not computed",
    ),
    Case(
        "corrupt image",
        "image",
        ".jpg",
        lambda p: (p.write_bytes(b"\xff\xd8\xff\xe0" + bytes(100)), p)[1],
        "value",
        r"CCm not computed",
    ),
    Case(
        "name with spaces and accents",
        "prediction",
        ".png",
        lambda p: _write(p.with_name("prédiction 1 ü.png"), _pred()),
        "value",
        r"",
    ),
]


def _run(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    files = {
        "prediction": _write(tmp_path / "pred.png", _pred()),
        "GT": _write(tmp_path / "gt.png", _gt()),
        "image": _write(tmp_path / "img.png", np.full((H, W, 3), 90, np.uint8)),
    }
    files[case.role] = case.make(tmp_path / f"bad{case.suffix}")
    argv = ["score", str(files["prediction"]), str(files["GT"]), "--img", str(files["image"])]
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if case.name == "symlink loop" and sys.platform == "win32":
        pytest.skip("symlinks need privileges on Windows")
    code, out, err = _run(case, tmp_path, capsys)
    assert "Traceback" not in err
    if case.outcome == "error":
        # 2: a wrong path, said before any file is read; 1: a file there but not usable
        wrong_path = case.name in ("missing", "folder instead of a file", "symlink loop")
        assert code == (2 if wrong_path else 1) and out == ""
        (line,) = err.splitlines()  # one line, naming the role and the file
        assert line.startswith(f"fminspect score: the {case.role}"), line
        assert "bad" in line and re.search(case.says, line), line
        return
    result = json.loads(out)
    scores = result["scores"]
    lost_ccm = case.role == "image"
    assert code == (1 if lost_ccm else 0), err
    finite = {k: v for k, v in scores.items() if v is not None and np.isfinite(v)}
    assert set(finite) == set(scores) - ({"CCm"} if lost_ccm else set())
    notes = " | ".join([*map(str, result.get("notes", [])), err])
    assert re.search(case.says, notes), notes


def test_the_documented_table_counts_these_cases() -> None:
    readme = (Path(__file__).parents[2] / "docs" / "reliability.md").read_text(encoding="utf-8")
    errors = sum(c.outcome == "error" for c in CASES)
    values = len(CASES) - errors
    row = f"| `fminspect score` on one bad file (tests/faults/test_bad_inputs.py) | {len(CASES)} |"
    assert f"{row} {errors} | {values} | 0 |" in readme
