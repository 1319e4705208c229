"""Atomic writes: a reader sees the old file or the new one, never a half-written one."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from fminspect.io.atomic import atomic_open, replacing, write_bytes, write_text


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_land_whole_with_a_plain_files_permissions(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    write_text(tmp_path / "a.json", '{"é": 1}\n')
    write_bytes(tmp_path / "b.bin", b"\x00\x01")
    with atomic_open(tmp_path / "c.csv", "w", newline="", encoding="utf-8") as fh:
        fh.write("a,b\r\n")
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == '{"é": 1}\n'
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "c.csv").read_bytes() == b"a,b\r\n"
    for name in ("a.json", "b.bin", "c.csv"):
        assert _mode(tmp_path / name) == _mode(plain)  # not mkstemp's 0600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.bin", "c.csv", "plain.txt"]


def test_a_writer_failing_half_way_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "summary.json"
    target.write_text("old\n")

    def disk_full() -> None:
        with atomic_open(target, "w") as fh:
            fh.write("new, but only half")
            raise OSError(28, "disk full")

    def ctrl_c() -> None:
        with replacing(target) as tmp:
            tmp.write_text("half")
            raise KeyboardInterrupt

    with pytest.raises(OSError, match="disk full"):
        disk_full()
    assert target.read_text() == "old\n"
    with pytest.raises(KeyboardInterrupt):
        ctrl_c()
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_the_temporary_keeps_the_suffix_for_writers_that_choose_a_format_by_it(
    tmp_path: Path,
) -> None:
    with replacing(tmp_path / "plot.pdf") as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".pdf" and tmp.name.startswith(".plot.")
        tmp.write_bytes(b"%PDF")
    assert (tmp_path / "plot.pdf").read_bytes() == b"%PDF"


def test_a_folder_that_cannot_be_written_raises_before_anything_changes(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "folder" / "x.txt"
    with pytest.raises(FileNotFoundError):
        write_text(missing, "x")
    assert not (tmp_path / "no").exists()
    assert os.listdir(tmp_path) == []
