"""``fminspect rank serve``: one study served to participants' browsers by uvicorn.

One server per study: a second one on the same study file is refused (an exclusive
``flock`` on ``STUDY.serve-lock``, released by the system however the first one ends, a
SIGKILL included). The server binds to 127.0.0.1 unless told otherwise, and its first line
says where it listens and who can reach it.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import secrets
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from fminspect.ranking.store import StudyError
from fminspect.web.limits import Limits

DEFAULT_PORT = 8765


@contextlib.contextmanager
def exclusive(study: Path) -> Iterator[None]:
    """Hold the study's server lock for the block; StudyError when another server has it."""
    import fcntl

    lock_path = study.with_name(study.name + ".serve-lock")
    handle: IO[str] = open(lock_path, "a+")  # noqa: SIM115 (held for the block)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            handle.seek(0)
            pid = handle.read().strip() or "?"
            raise StudyError(
                f"{study}: another fminspect server (process {pid}) is serving this study; "
                "stop it first (one server per study)"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise StudyError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    sock.listen(512)
    sock.set_inheritable(True)
    return sock


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve(
    study: Path | str,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    url: str | None = None,
    admin_token: str | None = None,
    limits: Limits | None = None,
    say: Callable[[str], None] = lambda line: print(line, flush=True),  # noqa: T201
) -> int:
    """Serve ``study`` until interrupted; returns the exit status."""
    import uvicorn

    from fminspect.ranking.store import StudyStore
    from fminspect.web.app import make_app

    study = Path(study)
    StudyStore(study).close()  # a clear message for a file that is not a study
    admin_token = admin_token or secrets.token_urlsafe(24)
    limits = limits or Limits()
    with exclusive(study):
        sock = bind(host, port)
        shown = f"[{host}]" if ":" in host else host
        base = (url or f"http://{shown}:{sock.getsockname()[1]}").rstrip("/")
        reach = (
            "this machine only; to reach participants elsewhere, put a TLS reverse proxy in "
            "front of it (README)"
            if is_loopback(host)
            else "OPEN TO THE NETWORK, plain HTTP: put it behind a TLS reverse proxy (README)"
        )
        say(f"fminspect rank serve: {study.name} at {base}/ — {reach}")
        say(f"admin page (keep it private; a new link each start): {base}/admin/{admin_token}")
        say(f"participants' links: fminspect rank invite {study} --count N --url {base}")
        app = make_app(study, admin_token, limits=limits)
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,  # a request's path carries its token
            limit_concurrency=limits.concurrency,
            timeout_keep_alive=5,
            h11_max_incomplete_event_size=16 * 1024,
        )
        server = uvicorn.Server(config)
        previous = signal.signal(signal.SIGTERM, _interrupt)
        try:  # uvicorn shuts down gracefully on SIGINT/SIGTERM, then raises the signal again
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
            sock.close()
    say("fminspect rank serve: stopped; every vote is in the study file")
    sys.stdout.flush()
    return 0
