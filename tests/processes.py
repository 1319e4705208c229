"""Helpers for the tests that interrupt or kill a running command."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path


def wait_until_stored(cache: Path, proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> bool:
    """Wait (up to 60 s) until the result store ``cache`` holds a record while ``proc`` runs;
    False when the command ended first."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with sqlite3.connect(cache, timeout=0.1) as db:
                if db.execute("SELECT COUNT(*) FROM records").fetchone()[0] > 0:
                    return True
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    return proc.poll() is None
