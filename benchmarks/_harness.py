"""Shared benchmark plumbing: single-threaded environments, the reference interpreter,
and running one timing script under identical conditions for fminspect and pysodmetrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.reference.oracle import reference_python

__all__ = ["HERE", "REPO", "ratio_table", "reference_python", "run_json"]


SINGLE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
}
#: glibc settings equivalent to fminspect._runtime.tune_allocator(), applied to both sides
TUNED_MALLOC = {
    "MALLOC_MMAP_THRESHOLD_": str(64 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(256 << 20),
    "MALLOC_TOP_PAD_": str(64 << 20),
}


def run_json(python: str | Path, script: Path, args: list[str], tuned: bool) -> dict:
    """Run ``script`` with ``python`` and return the JSON it writes to its OUT argument."""
    env = {**os.environ, **SINGLE_THREAD, "PYTHONWARNINGS": "ignore"}
    if tuned:
        env.update(TUNED_MALLOC)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [str(python), str(script), args[0], str(out), *args[1:]]
        subprocess.run(cmd, check=True, env=env, cwd=REPO)
        return json.loads(out.read_text())


def ratio_table(rows: list[tuple[str, float, float]], title: str) -> str:
    """Format (name, reference ms, fminspect ms) rows with speed-up ratios."""
    lines = [title, f"  {'measure':<44} {'pysod ms':>9} {'ours ms':>9} {'speed-up':>9}"]
    for name, ref, ours in rows:
        lines.append(f"  {name:<44} {ref:9.2f} {ours:9.2f} {ref / ours:8.1f}×")
    return "\n".join(lines)
