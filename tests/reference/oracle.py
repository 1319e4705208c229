"""Run pysodmetrics 1.6.2 (in its own virtual environment) on batches of cases.

pysodmetrics pins numpy < 2.3.5, scikit-image < 0.26 and opencv-python-headless < 5, so it
never shares fminspect's environment. The interpreter is, in order:

1. ``$FMINSPECT_PYSOD_PYTHON`` if set;
2. ``<repo>/.venv-ref/bin/python`` if it imports ``py_sod_metrics``;
3. otherwise ``<repo>/.venv-ref`` is created with ``python -m venv`` and
   ``pip install pysodmetrics==1.6.2`` (needs PyPI access once; about a minute).

Set ``FMINSPECT_SKIP_REFERENCE=1`` to skip the parity tests instead (they then report as
skipped, never as passed). Results are cached under ``.pytest_cache`` keyed by a hash of the
cases and of the oracle script.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
ORACLE = Path(__file__).with_name("pysod_oracle.py")
REFERENCE_VERSION = "pysodmetrics==1.6.2"


class ReferenceUnavailable(RuntimeError):
    """The reference environment could not be found or built."""


def _works(python: Path) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run(
        [str(python), "-c", "import py_sod_metrics, sklearn, skimage, cv2"],
        capture_output=True,
        timeout=120,
    )
    return probe.returncode == 0


def reference_python() -> Path:
    """Locate (or build) the reference interpreter; raise ReferenceUnavailable."""
    env = os.environ.get("FMINSPECT_PYSOD_PYTHON")
    if env:
        path = Path(env)
        if not _works(path):
            raise ReferenceUnavailable(f"$FMINSPECT_PYSOD_PYTHON={env} cannot import pysodmetrics")
        return path
    venv = REPO / ".venv-ref"
    python = venv / "bin" / "python"
    if _works(python):
        return python
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", REFERENCE_VERSION],
            check=True,
            timeout=1800,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        raise ReferenceUnavailable(
            f"could not build {venv} with {REFERENCE_VERSION}: {exc}. Build it by hand "
            f"(python -m venv .venv-ref && .venv-ref/bin/pip install {REFERENCE_VERSION}), "
            "point $FMINSPECT_PYSOD_PYTHON at an interpreter that has it, or set "
            "FMINSPECT_SKIP_REFERENCE=1 to skip the parity tests."
        ) from exc
    if not _works(python):
        raise ReferenceUnavailable(f"{python} still cannot import pysodmetrics")
    return python


def _pack(cases: list[dict[str, Any]], meta: Any) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {"meta": np.array(json.dumps(meta))}
    for i, case in enumerate(cases):
        arrays[f"pred_{i}"] = np.asarray(case["pred"])
        arrays[f"gt_{i}"] = np.asarray(case["gt"])
        if case.get("img") is not None:
            arrays[f"img_{i}"] = np.asarray(case["img"])
    return arrays


def _digest(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256(ORACLE.read_bytes())
    for key in sorted(arrays):
        a = arrays[key]
        h.update(key.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:24]


def run(cases: list[dict[str, Any]], meta: Any, cache_dir: Path | None) -> Any:
    """Run the oracle on ``cases`` (dicts with pred, gt, optional img) and return its JSON."""
    arrays = _pack(cases, meta)
    key = _digest(arrays)
    cached = cache_dir / f"{key}.json" if cache_dir is not None else None
    if cached is not None and cached.exists():
        return json.loads(cached.read_text())
    python = reference_python()
    with tempfile.TemporaryDirectory() as tmp:
        npz, out = Path(tmp) / "cases.npz", Path(tmp) / "out.json"
        np.savez(npz, **arrays)
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
        subprocess.run(
            [str(python), str(ORACLE), str(npz), str(out)], check=True, env=env, timeout=3600
        )
        text = out.read_text()
    if cached is not None:
        cached.write_text(text)
    return json.loads(text)
