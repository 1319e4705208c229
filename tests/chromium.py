"""A page in a real headless Chromium (Debian's ``/usr/bin/chromium``), driven through the
DevTools protocol over a pipe (``--remote-debugging-pipe``: JSON messages ended by NUL on
file descriptors 3 and 4), so that nothing downloads a browser or a driver.

>>> with Browser() as b:                                     # doctest: +SKIP
...     page = b.open("file:///tmp/site/index.html")
...     page.evaluate("document.title"), page.errors
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
#: Run as ``python -c _WIRE R W chromium ARGS…``: the pipe ends R and W become 3 and 4.
_WIRE = """
import os, sys
r, w = int(sys.argv[1]), int(sys.argv[2])
a, b = os.dup(r), os.dup(w)
os.dup2(a, 3)
os.dup2(b, 4)
os.set_inheritable(3, True)  # (dup2 onto itself keeps dup's close-on-exec)
os.set_inheritable(4, True)
for fd in {r, w} - {3, 4}:
    os.close(fd)
os.execv(sys.argv[3], sys.argv[3:])
"""
#: How long one protocol answer may take: only a hung browser reaches it (a busy machine
#: makes Chromium slow, never silent).
PATIENCE_S = 300.0


def needs_chromium() -> Any:
    """Skip where Debian's chromium is not installed (.ci/run installs it)."""
    return pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"
    )


class Page:
    """One tab: what it logged as errors, and JavaScript evaluated in it."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser, self.session = browser, session
        #: uncaught exceptions, console.error/warn and the browser's own error log entries
        #: (a file that failed to load)
        self.errors: list[str] = []

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def evaluate(self, expression: str) -> Any:
        """The value of ``expression`` (awaited if it is a promise)."""
        answer = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in answer:
            raise AssertionError(f"{expression!r} threw: {answer['exceptionDetails']}")
        return answer["result"].get("value")


class Browser:
    """A headless Chromium for the ``with`` block."""

    def __init__(self) -> None:
        self._next = 0
        self._buffer = b""
        self.pages: dict[str, Page] = {}

    def __enter__(self) -> Browser:
        self._profile = tempfile.mkdtemp(prefix="fminspect-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        # a small Python puts the child's ends on 3 (commands) and 4 (answers) and becomes
        # chromium (dash, Debian's sh, cannot name a descriptor above 9)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _WIRE,
                str(to_browser_r),
                str(from_browser_w),
                CHROMIUM,
                "--headless",
                "--no-sandbox",  # (tests may run as root, in a container)
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-pipe",
                f"--user-data-dir={self._profile}",
                "about:blank",
            ],
            pass_fds=(to_browser_r, from_browser_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(AssertionError, OSError):  # (gone already)
            self.send("Browser.close", {})
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def send(self, method: str, params: dict[str, Any], session: str | None = None) -> Any:
        """Send one command; its answer (events meanwhile are handed to the pages)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + PATIENCE_S
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise AssertionError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self._event(answer)

    def _read(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(0.0, left))
            if not ready:
                raise AssertionError(f"chromium said nothing for {PATIENCE_S:g} s")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise AssertionError("chromium has gone")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def _event(self, message: dict[str, Any]) -> None:
        page = self.pages.get(message.get("sessionId", ""))
        if page is None:
            return
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            page.errors.append(f"exception: {text}")
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "warning"):
            args = " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            page.errors.append(f"console.{params['type']}: {args}")
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            entry = params["entry"]
            page.errors.append(f"{entry['source']}: {entry['text']} {entry.get('url', '')}")
        elif method == "Page.loadEventFired":
            page.loaded = True  # type: ignore[attr-defined]

    def open(self, url: str) -> Page:
        """A new tab showing ``url``, once its load event has fired."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        page.loaded = False  # type: ignore[attr-defined]
        self.pages[session] = page
        for domain in ("Runtime", "Page", "Log"):
            page.send(f"{domain}.enable")
        page.send("Page.navigate", url=url)
        deadline = time.monotonic() + PATIENCE_S
        while not page.loaded:  # type: ignore[attr-defined]
            self._event(self._read(deadline))
        return page
