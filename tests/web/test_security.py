"""The voting server as an attacker meets it (in process, no network): links that open
nothing, another participant's trials, paths, the GT of a study that hides it, oversized
and malformed requests, request rates, the admin page without its token."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from starlette.testclient import TestClient

from fminspect.ranking.store import StudyStore
from fminspect.web.app import HEADERS, make_app
from fminspect.web.limits import Limits, RateLimiter
from tests.web.studies import links, make_study

ADMIN = "the-admin-token-of-these-tests-0123"
METHODS = ("SecretNetAlpha", "SecretNetBeta", "SecretNetGamma")


@pytest.fixture
def study(tmp_path: Path) -> Path:
    return make_study(tmp_path, methods=METHODS, show_gt=False, checks=1)


@pytest.fixture
def client(study: Path) -> Iterator[TestClient]:
    with TestClient(make_app(study, ADMIN)) as c:
        yield c


def test_a_link_that_opens_nothing_reaches_nothing_and_writes_nothing(
    study: Path, client: TestClient
) -> None:
    real = links(study, "ana")["ana"]
    for token in ("nope", real[:-1], real + "A", "%2e%2e", "a" * 300):
        for path in ("", "/state", "/img/0/left"):
            answer = client.get(f"/s/{token}{path}")
            assert answer.status_code == 404, (token, path)
            if not path:  # a page, which says so itself, not raw JSON
                assert answer.headers["content-type"].startswith("text/html")
        answer = client.post(f"/s/{token}/vote", json={"trial": 0, "choice": "left", "rt_ms": 1})
        assert answer.status_code == 404
    with StudyStore(study) as store:
        assert store.participants() == ["ana"] and store.votes() == []


def test_pictures_are_reached_by_trial_number_only_and_the_hidden_gt_never(
    study: Path, client: TestClient
) -> None:
    token = links(study, "ana")["ana"]
    state = client.get(f"/s/{token}/state").json()
    assert state["trial"]["references"] == ["image"]  # the study hides the GT
    index = state["trial"]["index"]
    assert client.get(f"/s/{token}/img/{index}/ref0").status_code == 200
    assert client.get(f"/s/{token}/img/{index}/ref1").status_code == 404
    for path in (
        f"/s/{token}/img/{index}/../../../etc/passwd",
        f"/s/{token}/img/{index}/%2e%2e%2fstudy.sqlite",
        f"/s/{token}/img/{index}/gt",
        f"/s/{token}/img/-1/left",
        f"/s/{token}/img/999999/left",
        f"/s/{token}/img/{index}/left/../../../../study.sqlite",
        "/static/../study.sqlite",
        "/static/%2e%2e/%2e%2e/pyproject.toml",
        "/static/../../fminspect/web/app.py",
    ):
        answer = client.get(path)
        assert answer.status_code == 404, path
    # the image reference is the image, not the GT (a GT is black and white)
    picture = client.get(f"/s/{token}/img/{index}/ref0").content
    decoded = cv2.imdecode(np.frombuffer(picture, np.uint8), cv2.IMREAD_COLOR)
    assert len(np.unique(decoded)) > 2


def test_answers_name_no_method_item_or_file(study: Path, client: TestClient) -> None:
    token = links(study, "ana")["ana"]
    answers = [client.get(f"/s/{token}/state").text]
    state = json.loads(answers[0])
    while state["status"] == "vote":
        answer = client.post(
            f"/s/{token}/vote",
            json={"trial": state["trial"]["index"], "choice": "right", "rt_ms": 900},
        )
        answers.append(answer.text)
        state = answer.json()
    text = "\n".join(answers)
    for secret in (*METHODS, str(study.parent), ".png", "kind", "check", "repeat", "correct"):
        assert secret not in text


def test_each_link_votes_for_its_own_participant_only(study: Path, client: TestClient) -> None:
    tokens = links(study, "ana", "bo")
    state = client.get(f"/s/{tokens['bo']}/state").json()
    client.post(
        f"/s/{tokens['ana']}/vote",
        json={"trial": state["trial"]["index"], "choice": "left", "rt_ms": 900},
    )
    assert client.get(f"/s/{tokens['bo']}/state").json()["position"] == 0
    with StudyStore(study) as store:
        assert {v.participant for v in store.votes()} == {"ana"}


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1, 2]",
        b'{"trial": "0", "choice": "left", "rt_ms": 1}',
        b'{"trial": true, "choice": "left", "rt_ms": 1}',
        b'{"trial": 0, "choice": "both", "rt_ms": 1}',
        b'{"trial": 0, "choice": "left", "rt_ms": -5}',
        b'{"trial": 0, "choice": "left", "rt_ms": NaN}',
        b'{"trial": 0, "choice": "left"}',
        b"\xff\xfe",
    ],
)
def test_malformed_votes_are_refused(study: Path, client: TestClient, body: bytes) -> None:
    token = links(study, "ana")["ana"]
    answer = client.post(
        f"/s/{token}/vote", content=body, headers={"content-type": "application/json"}
    )
    assert answer.status_code == 400 and "error" in answer.json()


def test_oversized_requests_are_refused_before_they_are_read(
    study: Path, client: TestClient
) -> None:
    token = links(study, "ana")["ana"]
    big = json.dumps({"trial": 0, "choice": "left", "rt_ms": 1, "pad": "x" * 5000})
    assert client.post(f"/s/{token}/vote", content=big).status_code == 413

    def chunks() -> Iterator[bytes]:  # no Content-Length: the body is counted as it comes
        yield b'{"trial": 0, "pad": "'
        for _ in range(100):
            yield b"x" * 1000
        yield b'"}'

    assert client.post(f"/s/{token}/vote", content=chunks()).status_code == 413
    lying = client.post(
        f"/s/{token}/vote", content=big, headers={"content-length": "10"}
    )  # h11 refuses a body longer than declared; either way nothing is stored
    assert lying.status_code >= 400
    with StudyStore(study) as store:
        assert store.votes() == []


def test_request_rates_are_bounded_per_link_and_for_bad_tokens(study: Path) -> None:
    token = links(study, "ana")["ana"]
    with TestClient(make_app(study, ADMIN, limits=Limits(rate=0.01, burst=5, bad_tokens=3))) as c:
        codes = [c.get(f"/s/{token}/state").status_code for _ in range(8)]
        assert codes[:5] == [200] * 5 and set(codes[5:]) == {429}
        bad = [c.get(f"/s/guess{k}/state").status_code for k in range(6)]
        assert bad[:3] == [404] * 3 and set(bad[3:]) == {429}
        assert c.get(f"/admin/wrong{0}").status_code == 429  # the same budget


def test_a_rate_limiter_refills_and_forgets_idle_keys() -> None:
    now = [0.0]
    limiter = RateLimiter(2.0, 2.0, clock=lambda: now[0], max_keys=10)
    assert [limiter.allow("a") for _ in range(3)] == [True, True, False]
    now[0] += 0.5  # one request back
    assert [limiter.allow("a") for _ in range(2)] == [True, False]
    for k in range(50):  # a scan of many addresses does not grow it without bound
        now[0] += 2.0
        limiter.allow(f"host{k}")
    assert len(limiter._buckets) <= 10


def test_the_admin_page_needs_its_own_token(study: Path, client: TestClient) -> None:
    token = links(study, "ana")["ana"]
    for wrong in (token, ADMIN[:-1], ADMIN + "x", "admin"):
        assert client.get(f"/admin/{wrong}").status_code == 404
        assert client.get(f"/admin/{wrong}/status").status_code == 404
        assert client.post(f"/admin/{wrong}/stop").status_code == 404
    assert client.get(f"/admin/{ADMIN}/status").json()["open"] is True


def test_every_answer_carries_the_security_headers(study: Path, client: TestClient) -> None:
    token = links(study, "ana")["ana"]
    for path in (f"/s/{token}", f"/s/{token}/state", "/s/nope/state", "/static/vote.js"):
        answer = client.get(path)
        for name in ("Content-Security-Policy", "Referrer-Policy", "X-Content-Type-Options"):
            assert answer.headers[name] == HEADERS[name], (path, name)
