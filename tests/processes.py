"""Helpers for the tests that interrupt or kill a running command."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

#: How long a test waits for a process to do what it will do, in seconds: only a hung
#: process reaches it (on a machine kept busy by other work, a command takes many times its
#: idle time, and a test waits for what it needs, never for a time).
PATIENCE_S = 600.0


def start_seconds(modules: str = "fminspect.cli") -> float:
    """Seconds a Python process takes to start and import ``modules`` now: the unit of the
    few bounds a test puts on a command's own timeouts (a command told to give up after 2 s
    must end within 2 s plus what starting takes on this machine as loaded as it is now)."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", f"import {modules}"], check=True, timeout=PATIENCE_S)
    return time.monotonic() - started


def wait_until_stored(cache: Path, proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> bool:
    """Wait until the result store ``cache`` holds a record while ``proc`` runs; False when
    the command ended first."""
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with sqlite3.connect(cache, timeout=0.1) as db:
                if db.execute("SELECT COUNT(*) FROM records").fetchone()[0] > 0:
                    return True
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    return proc.poll() is None
