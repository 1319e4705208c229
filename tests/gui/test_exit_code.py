"""The PySide6 pin works: a process that makes many pyqtgraph image views exits with 0.

PySide6 6.12.0 on Python 3.11 aborts at interpreter exit (``Fatal Python error:
bool_dealloc``, exit code 134) once pyqtgraph has made about ten image views — after every
test passed (GUI-NOTES, Pitfalls 1). pyproject.toml therefore requires PySide6 < 6.12 on
Python < 3.12. This test runs the reproducer in a fresh interpreter with the installed
versions and checks the exit code.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

REPRODUCER = """
import pyqtgraph as pg
from PySide6 import QtWidgets
app = QtWidgets.QApplication([])
pg.setConfigOptions(imageAxisOrder="row-major")
views = [pg.ImageView() for _ in range(40)]
for v in views:
    v.close()
print("made", len(views))
"""


@pytest.mark.slow
def test_many_image_views_exit_cleanly() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [sys.executable, "-c", REPRODUCER], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "made 40" in proc.stdout
