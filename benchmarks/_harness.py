"""Shared benchmark plumbing: single-threaded environments, the reference interpreter,
and running one timing script under identical conditions for fminspect and pysodmetrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.reference.oracle import reference_python

__all__ = [
    "HERE",
    "REPO",
    "ratio_table",
    "reference_python",
    "rows_of",
    "run_json",
    "run_rounds",
]


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


def run_rounds(
    ref_python: str | Path, args: list[str], tuned: bool, rounds: int
) -> list[tuple[dict, dict]]:
    """Run the reference's and fminspect's timing scripts alternately, ``rounds`` times each.

    This VM's speed drifts by ±30 % over seconds; pairing each reference run with an
    fminspect run right next to it (the order swapped every round) and taking the median of
    the per-round ratios keeps that drift out of the ratios.
    """
    if rounds < 1:
        raise SystemExit("--rounds must be at least 1")
    out = []
    for i in range(rounds):
        jobs = [(ref_python, "_time_pysod.py"), (sys.executable, "_time_ours.py")]
        if i % 2:
            jobs.reverse()
        done = {script: run_json(python, HERE / script, args, tuned) for python, script in jobs}
        out.append((done["_time_pysod.py"], done["_time_ours.py"]))
    return out


def rows_of(
    pairs: list[tuple[dict, dict]], spec: list[tuple[str, str, str]]
) -> list[tuple[str, list[float], list[float]]]:
    """Rows for :func:`ratio_table` from per-round (reference, fminspect) timing dicts;
    ``spec`` lists (row name, reference key, fminspect key)."""
    return [
        (name, [r[ref_key] for r, _ in pairs], [o[ours_key] for _, o in pairs])
        for name, ref_key, ours_key in spec
    ]


def ratio_table(rows: list[tuple[str, list[float], list[float]]], title: str) -> str:
    """Format (name, reference ms per round, fminspect ms per round) rows: the median time of
    each side over the rounds, and the median (and range) of the per-round speed-ups."""
    lines = [
        title,
        f"  {'measure':<44} {'pysod ms':>9} {'ours ms':>9} {'speed-up':>9}  per round",
    ]
    for name, ref, ours in rows:
        ratios = [r / o for r, o in zip(ref, ours, strict=True)]
        spread = f"{min(ratios):.1f}–{max(ratios):.1f}×" if len(ratios) > 1 else ""
        lines.append(
            f"  {name:<44} {median(ref):9.2f} {median(ours):9.2f} {median(ratios):8.1f}×  {spread}"
        )
    return "\n".join(lines)
