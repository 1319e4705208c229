"""Run pysodmetrics 1.6.2 (in its own virtual environment) on batches of cases.

pysodmetrics pins numpy < 2.3.5, scikit-image < 0.26 and opencv-python-headless < 5, so it
never shares fminspect's environment. The interpreter is, in order:

1. ``$FMINSPECT_PYSOD_PYTHON`` if set;
2. ``<repo>/.venv-ref/bin/python`` if it imports ``py_sod_metrics``;
3. otherwise ``<repo>/.venv-ref`` is created with ``python -m venv`` and
   ``pip install pysodmetrics==1.6.2`` (needs PyPI access once; about a minute).

Set ``FMINSPECT_SKIP_REFERENCE=1`` to skip the parity tests instead (they then report as
skipped, never as passed). Results are cached under ``.pytest_cache`` keyed by a hash of the
cases and of the oracle script. Each test process keeps one oracle process per reference
(``--serve``) and hands it every batch: its imports (pysodmetrics, scikit-learn, OpenCV,
scikit-image) cost ~2 s, once.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock

REPO = Path(__file__).resolve().parents[2]
ORACLE = Path(__file__).with_name("pysod_oracle.py")
REFERENCE_VERSION = "pysodmetrics==1.6.2"
#: The older release PySODEvalToolkit pins (the ``pysodevaltoolkit`` convention's reference):
#: its own environment and oracle; ``$FMINSPECT_PYSOD142_PYTHON`` overrides the interpreter.
OLD = {
    "version": "pysodmetrics==1.4.2",
    "venv": ".venv-ref-1.4.2",
    "oracle": Path(__file__).with_name("pysod142_oracle.py"),
    "env": "FMINSPECT_PYSOD142_PYTHON",
}


class ReferenceUnavailable(RuntimeError):
    """The reference environment could not be found or built."""


def _reference_env(**more: str) -> dict[str, str]:
    """The environment the reference interpreter runs in: Python may write the bytecode of
    what it imports (the environment is built without compiling every module, and a
    ``PYTHONDONTWRITEBYTECODE`` of the caller's would have each start compile them all
    again: 3.4 s instead of 1.7)."""
    env = {**os.environ, **more}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _works(python: Path, old: bool = False) -> bool:
    if not python.exists():
        return False
    modules = "py_sod_metrics" if old else "py_sod_metrics, sklearn, skimage, cv2"
    probe = subprocess.run(
        [str(python), "-c", f"import {modules}"],
        capture_output=True,
        timeout=120,
        env=_reference_env(),
    )
    return probe.returncode == 0


#: {old: the interpreter found}, this test process's: it is probed once, not at every call
#: of the oracle (each probe imports pysodmetrics, scikit-learn, scikit-image and OpenCV,
#: 1.7 s; a fresh clone's tests call the oracle about 40 times in each test process)
_FOUND: dict[bool, Path] = {}


def reference_python(old: bool = False) -> Path:
    """Locate (or build) the reference interpreter (``old``: pysodmetrics 1.4.2's); raise
    ReferenceUnavailable."""
    if old not in _FOUND:
        _FOUND[old] = _find_reference_python(old)
    return _FOUND[old]


def _find_reference_python(old: bool) -> Path:
    variable = str(OLD["env"]) if old else "FMINSPECT_PYSOD_PYTHON"
    version = str(OLD["version"]) if old else REFERENCE_VERSION
    env = os.environ.get(variable)
    if env:
        path = Path(env)
        if not _works(path, old):
            raise ReferenceUnavailable(f"${variable}={env} cannot import pysodmetrics")
        return path
    venv = REPO / (str(OLD["venv"]) if old else ".venv-ref")
    python = venv / "bin" / "python"
    # the test processes of `pytest -n` ask at once: one builds, the others wait and use it
    with FileLock(f"{venv}.lock"):
        if _works(python, old):
            return python
        _build(venv, python, version, variable)
    if not _works(python, old):
        raise ReferenceUnavailable(f"{python} still cannot import pysodmetrics")
    return python


def _build(venv: Path, python: Path, version: str, variable: str) -> None:
    """Make the virtual environment ``venv`` with ``version`` of pysodmetrics."""
    # this interpreter's pip installs into the new environment (pip --python, pip ≥ 22.3):
    # no pip of its own to set up there (a quarter of the build's time); --no-compile: pip
    # would compile every module of SciPy, scikit-learn and scikit-image, half of the rest,
    # where the oracle imports a few of them
    pip = [sys.executable, "-m", "pip"]
    own_pip = subprocess.run([*pip, "--python", sys.executable, "--version"], capture_output=True)
    try:
        if own_pip.returncode == 0:
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
            pip += ["--python", str(python)]
        else:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
            pip = [str(python), "-m", "pip"]
        subprocess.run([*pip, "install", "-q", "--no-compile", version], check=True, timeout=1800)
    except (subprocess.SubprocessError, OSError) as exc:
        raise ReferenceUnavailable(
            f"could not build {venv} with {version}: {exc}. Build it by hand "
            f"(python -m venv {venv.name} && {venv.name}/bin/pip install {version}), "
            f"point ${variable} at an interpreter that has it, or set "
            "FMINSPECT_SKIP_REFERENCE=1 to skip the parity tests."
        ) from exc


#: {(interpreter, script): its oracle process}, this test process's
_SERVERS: dict[tuple[str, str], subprocess.Popen[str]] = {}


def _stop_servers() -> None:
    for proc in _SERVERS.values():
        if proc.stdin is not None:
            proc.stdin.close()  # the oracle ends at the end of its input
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


atexit.register(_stop_servers)


def _ask(python: Path, script: Path, npz: Path, out: Path) -> None:
    """Have the oracle process of ``script`` (started if needed) compute ``npz`` into
    ``out``."""
    key = (str(python), str(script))
    proc = _SERVERS.get(key)
    if proc is None or proc.poll() is not None:
        env = _reference_env(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
        proc = subprocess.Popen(
            [str(python), str(script), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        _SERVERS[key] = proc
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(f"{npz}\t{out}\n")
        proc.stdin.flush()
    except BrokenPipeError:
        pass  # it stopped: said below
    reply = proc.stdout.readline().strip()
    if reply != "done":
        raise RuntimeError(f"the reference oracle {script.name} failed: {reply or 'it stopped'}")


def _pack(cases: list[dict[str, Any]], meta: Any) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {"meta": np.array(json.dumps(meta))}
    for i, case in enumerate(cases):
        arrays[f"pred_{i}"] = np.asarray(case["pred"])
        arrays[f"gt_{i}"] = np.asarray(case["gt"])
        if case.get("img") is not None:
            arrays[f"img_{i}"] = np.asarray(case["img"])
    return arrays


def _digest(arrays: dict[str, np.ndarray], script: Path = ORACLE) -> str:
    h = hashlib.sha256(script.read_bytes())
    for key in sorted(arrays):
        a = arrays[key]
        h.update(key.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:24]


def run(cases: list[dict[str, Any]], meta: Any, cache_dir: Path | None, old: bool = False) -> Any:
    """Run the oracle on ``cases`` (dicts with pred, gt, optional img) and return its JSON
    (``old``: pysodmetrics 1.4.2's classic measures)."""
    arrays = _pack(cases, meta)
    script = Path(str(OLD["oracle"])) if old else ORACLE
    key = _digest(arrays, script)
    cached = cache_dir / f"{key}.json" if cache_dir is not None else None
    if cached is not None and cached.exists():
        return json.loads(cached.read_text())
    python = reference_python(old)
    with tempfile.TemporaryDirectory() as tmp:
        npz, out = Path(tmp) / "cases.npz", Path(tmp) / "out.json"
        np.savez(npz, **arrays)
        _ask(python, script, npz, out)
        text = out.read_text()
    if cached is not None:  # whole or not at all: another test process may read it now
        part = cached.with_name(f"{cached.name}.{os.getpid()}.part")
        part.write_text(text)
        os.replace(part, cached)
    return json.loads(text)
