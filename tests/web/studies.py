"""Small studies for the web server's tests, and the links of their participants."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx2 as httpx

from fminspect.io.discovery import discover
from fminspect.ranking import invites
from fminspect.ranking.build import build_design, groups_from_dataset
from fminspect.ranking.store import StudyStore
from tests.datasets import make_dataset
from tests.processes import PATIENCE_S


def make_study(
    tmp_path: Path, *, images: int = 4, methods: tuple[str, ...] = ("A", "B", "C"), **options: Any
) -> Path:
    """A study of ``images`` groups × ``methods`` maps (24 × 32 px) in ``tmp_path``."""
    root = make_dataset(tmp_path / "data", n_images=images, methods=methods, size=(24, 32))
    (ds,), _ = discover(root)
    path = tmp_path / "study.sqlite"
    checks = options.pop("checks", 0)
    StudyStore.create(
        path, build_design("web study", groups_from_dataset(ds), path, checks=checks, **options)
    ).close()
    return path


def demo_study(tmp_path: Path, samples: tuple[str, ...], models: tuple[str, ...]) -> Path:
    """A study of the bundled demo's photographs (for pictures a reader recognises)."""
    from fminspect.io.resources import resource

    (ds,), _ = discover(resource("demo"))
    groups = groups_from_dataset(ds, samples=samples, models=models)
    path = tmp_path / "demo_study.sqlite"
    design = build_design("Which map matches the object better?", groups, path, allow_ties=True)
    StudyStore.create(path, design).close()
    return path


def links(path: Path, *ids: str) -> dict[str, str]:
    """Invite ``ids``; their tokens by id."""
    with StudyStore(path) as store:
        return {i.participant: i.token for i in invites.invite(store, ids=list(ids))}


class Server:
    """``fminspect rank serve STUDY --port 0`` in a process; ``url`` from its first line."""

    def __init__(self, study: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fminspect", "rank", "serve", str(study), "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.proc.stdout is not None
        self.first = self.proc.stdout.readline()
        self.admin = self.proc.stdout.readline()
        self.url = self.first.split(" at ")[1].split("/ ")[0] if " at " in self.first else ""

    def wait_ready(self) -> None:
        """Until the server answers (it printed its address before uvicorn started)."""
        with httpx.Client(timeout=PATIENCE_S) as c:
            while self.proc.poll() is None:
                try:
                    c.get(f"{self.url}/favicon.ico")
                    return
                except httpx.TransportError:
                    threading.Event().wait(0.02)
        raise AssertionError(f"the server ended: {self.first}{self.admin}")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(PATIENCE_S)
        assert self.proc.stdout is not None
        self.proc.stdout.close()

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGINT)
        out, _ = self.proc.communicate(timeout=PATIENCE_S)
        return self.first + self.admin + out
