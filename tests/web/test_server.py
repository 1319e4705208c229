"""``fminspect rank serve`` as a process: where it listens and says so, one server per study,
and votes sent by real HTTP clients while the server is killed with SIGKILL at random
moments — none lost, none doubled."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx2 as httpx
import pytest

from fminspect.ranking.store import StudyStore
from tests.processes import PATIENCE_S
from tests.web.studies import Server, links, make_study


def test_it_binds_to_loopback_says_so_and_a_second_server_is_refused(tmp_path: Path) -> None:
    study = make_study(tmp_path)
    server = Server(study)
    try:
        assert server.url.startswith("http://127.0.0.1:")
        assert "this machine only" in server.first
        assert "/admin/" in server.admin
        server.wait_ready()
        second = subprocess.run(
            [sys.executable, "-m", "fminspect", "rank", "serve", str(study), "--port", "0"],
            capture_output=True,
            text=True,
            timeout=PATIENCE_S,
        )
        assert second.returncode == 1
        assert "another fminspect server" in second.stderr and "Traceback" not in second.stderr
        assert str(server.proc.pid) in second.stderr
    finally:
        out = server.stop()
    assert server.proc.returncode == 0, out
    assert "stopped" in out and "Traceback" not in out


def test_not_a_study_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "notes.sqlite"
    bad.write_text("hello")
    run = subprocess.run(
        [sys.executable, "-m", "fminspect", "rank", "serve", str(bad), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
    )
    assert run.returncode == 1 and "not a study file" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.faults
@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_sigkill_of_the_server_loses_and_doubles_no_vote(tmp_path: Path) -> None:
    """Four participants vote at once over HTTP; the server is killed with SIGKILL after a
    random number of answers, six times, and started again. A vote is acknowledged when its
    HTTP answer arrived; a vote whose answer was lost is sent again to the new server (as
    the page's "Try again" does), and must then be stored exactly once."""
    study = make_study(tmp_path, images=12, repeats=3)
    tokens = links(study, "ana", "bo", "cy", "di")
    rng = random.Random(7)
    acknowledged: dict[str, list[tuple[int, str]]] = {who: [] for who in tokens}
    resent = duplicates = kills = 0
    server = Server(study)
    server.wait_ready()
    lock = threading.Lock()
    url = [server.url]
    finished: set[str] = set()

    def voter(who: str, token: str) -> None:
        nonlocal resent, duplicates
        seed = random.Random(who)
        with httpx.Client(timeout=PATIENCE_S) as c:
            unsent: dict[str, object] | None = None
            failed = False
            while True:
                try:
                    if unsent is None:
                        state = c.get(f"{url[0]}/s/{token}/state").json()
                        if state["status"] == "finished":
                            with lock:
                                finished.add(who)
                            return
                        unsent = {
                            "trial": state["trial"]["index"],
                            "choice": seed.choice(["left", "right"]),
                            "rt_ms": 500,
                        }
                    answer = c.post(f"{url[0]}/s/{token}/vote", json=unsent)
                except httpx.TransportError:  # the server is gone: wait for the next one
                    failed = unsent is not None
                    threading.Event().wait(0.01)
                    continue
                assert answer.status_code == 200, answer.text
                with lock:
                    acknowledged[who].append((unsent["trial"], unsent["choice"]))  # type: ignore[arg-type]
                    resent += failed
                    duplicates += bool(answer.json().get("duplicate"))
                unsent, failed = None, False

    threads = [threading.Thread(target=voter, args=item) for item in tokens.items()]
    for t in threads:
        t.start()
    try:
        while len(finished) < len(tokens) and kills < 6:
            with lock:
                done = sum(len(v) for v in acknowledged.values())
            target = done + rng.randint(3, 25)
            while server.proc.poll() is None and len(finished) < len(tokens):
                with lock:
                    if sum(len(v) for v in acknowledged.values()) >= target:
                        break
                threading.Event().wait(0.002)
            if len(finished) == len(tokens):
                break
            server.kill()
            kills += 1
            server = Server(study)
            server.wait_ready()
            url[0] = server.url
        for t in threads:
            t.join(PATIENCE_S)
    finally:
        server.stop()
    # seen: 6 kills; 6–9 votes sent again, 0–1 of them stored before the kill
    print(f"{kills} kills; {resent} votes sent again, {duplicates} of them stored before the kill")  # noqa: T201
    assert kills >= 3
    assert finished == set(tokens)
    with StudyStore(study) as store:
        for who in tokens:
            stored = [(v.trial, v.choice) for v in store.votes(who)]
            total = len(store.trials(who))
            mine = sorted(acknowledged[who])
            # every vote stored once; every acknowledged vote is stored, as acknowledged;
            # a retried vote whose first answer was lost was stored by the first server and
            # acknowledged as a duplicate by the next
            assert len(stored) == len({t for t, _ in stored}) == total
            assert sorted(set(mine)) == stored
    assert os.path.exists(study)


def test_only_loopback_addresses_count_as_this_machine_only() -> None:
    from fminspect.web.server import is_loopback

    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.20", "example.org"))


def test_a_port_out_of_range_is_a_usage_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fminspect.cli import main

    study = make_study(tmp_path)
    for port in ("99999", "-1", "http"):
        with pytest.raises(SystemExit) as ended:
            main(["rank", "serve", str(study), "--port", port])
        assert ended.value.code == 2
        assert "port" in capsys.readouterr().err
