"""The voting server's answers, in process (Starlette's TestClient): a whole study voted
through the API, votes sent twice, undo, a closed study, a full disk, and what an attacker
holding a link (or none) can reach."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from fminspect.ranking.store import StudyStore, VotingSession
from fminspect.ranking.workflow import aggregate_study
from fminspect.web.app import make_app
from tests.web.studies import links, make_study

ADMIN = "admin-token-for-the-tests-0123456789"


@pytest.fixture
def study(tmp_path: Path) -> Path:
    return make_study(tmp_path, repeats=2, checks=1, allow_ties=True)


@pytest.fixture
def client(study: Path) -> Iterator[TestClient]:
    with TestClient(make_app(study, ADMIN)) as c:
        yield c


def vote(c: TestClient, token: str, trial: int, choice: str = "left", rt: float = 900) -> Any:
    return c.post(f"/s/{token}/vote", json={"trial": trial, "choice": choice, "rt_ms": rt})


def test_a_participant_votes_the_whole_study_and_it_is_in_the_lab_store(
    study: Path, client: TestClient
) -> None:
    token = links(study, "ana")["ana"]
    page = client.get(f"/s/{token}")
    assert page.status_code == 200 and "vote.js" in page.text
    state = client.get(f"/s/{token}/state").json()
    assert (state["status"], state["position"], state["last"]) == ("vote", 0, None)
    total, answers = state["total"], []
    while state["status"] == "vote":
        index = state["trial"]["index"]
        for slot in ("left", "right", "ref0", "ref1"):
            picture = client.get(f"/s/{token}/img/{index}/{slot}")
            assert picture.status_code == 200
            assert picture.headers["content-type"] in ("image/png", "image/jpeg")
        choice = ("left", "right", "tie")[index % 3]
        answer = vote(client, token, index, choice, 700 + index)
        assert answer.status_code == 200, answer.text
        answers.append((index, choice))
        state = answer.json()
        assert state["position"] == len(answers) and state["last"] == index
        if len(answers) == 5:  # the lab reads the study while voting goes on
            result = aggregate_study(study, rule="majority")
            assert [p.votes for p in result.participants] == [5]
    assert state["status"] == "finished" and len(answers) == total
    with StudyStore(study) as store:
        stored = [(v.trial, v.choice, v.rt_ms) for v in store.votes("ana")]
        origin = store.db.execute("SELECT origin FROM participants WHERE id='ana'").fetchone()
    assert stored == [(i, c, 700.0 + i) for i, c in answers]
    assert origin == ("web",)


def test_a_vote_sent_twice_is_stored_once_and_a_changed_answer_needs_undo(
    study: Path, client: TestClient
) -> None:
    token = links(study, "ana")["ana"]
    first = client.get(f"/s/{token}/state").json()["trial"]["index"]
    assert vote(client, token, first, "left").status_code == 200
    again = vote(client, token, first, "left")  # a double click, a retry after a lost answer
    assert again.status_code == 200 and again.json()["duplicate"] is True
    changed = vote(client, token, first, "right")  # the back button, then another answer
    assert changed.status_code == 409 and "Undo" in changed.json()["error"]
    assert changed.json()["state"]["position"] == 1
    # undo takes back the last answer once; a second undo of it is refused
    assert client.post(f"/s/{token}/undo", json={"trial": first}).json()["position"] == 0
    assert client.post(f"/s/{token}/undo", json={"trial": first}).status_code == 409
    assert vote(client, token, first, "right").status_code == 200
    with StudyStore(study) as store:
        assert [(v.trial, v.choice) for v in store.votes("ana")] == [(first, "right")]


def test_only_the_shown_trial_can_be_answered(study: Path, client: TestClient) -> None:
    tokens = links(study, "ana", "bo")
    state = client.get(f"/s/{tokens['ana']}/state").json()
    current, following = state["trial"]["index"], state["next"]["index"]
    ahead = vote(client, tokens["ana"], following)  # a trial further on
    assert ahead.status_code == 409 and ahead.json()["state"]["trial"]["index"] == current
    assert vote(client, tokens["ana"], 10**6).status_code == 403  # no such trial of hers
    with StudyStore(study) as store:
        assert store.votes() == []


def test_the_admin_page_shows_progress_flags_and_stops_voting(
    study: Path, client: TestClient
) -> None:
    tokens = links(study, "ana", "bo")
    state = client.get(f"/s/{tokens['ana']}/state").json()
    for _ in range(4):
        state = vote(client, tokens["ana"], state["trial"]["index"], "left", 150).json()
    assert client.get(f"/admin/{ADMIN}").status_code == 200
    status = client.get(f"/admin/{ADMIN}/status").json()
    rows = {r["participant"]: r for r in status["participants"]}
    # a full design's schedule is made when a participant is invited; they have not started
    assert (rows["bo"]["started"], rows["bo"]["answered"], rows["bo"]["origin"]) == (
        False,
        0,
        "web",
    )
    assert (rows["ana"]["answered"], rows["ana"]["origin"]) == (4, "web")
    assert any("very fast" in f for f in rows["ana"]["flags"])
    assert status["open"] and status["votes"] == 4
    assert client.post(f"/admin/{ADMIN}/stop").json()["open"] is False
    closed = vote(client, tokens["ana"], state["trial"]["index"])
    assert closed.status_code == 403 and "closed" in closed.json()["error"]
    assert client.get(f"/s/{tokens['bo']}/state").json()["status"] == "closed"
    assert client.post(f"/admin/{ADMIN}/reopen").json()["open"] is True
    assert vote(client, tokens["ana"], state["trial"]["index"]).status_code == 200
    scale = client.get(f"/admin/{ADMIN}/scale").json()
    assert scale["votes"] == 5 and len(scale["groups"]) == 4
    # the admin routes do nothing else
    assert client.post(f"/admin/{ADMIN}/status").status_code in (404, 405)
    assert client.post(f"/admin/{ADMIN}/delete").status_code == 404


def test_a_full_disk_answers_try_again_and_loses_nothing(tmp_path: Path) -> None:
    study = make_study(tmp_path, images=30)  # 90 votes: more than the file's free pages hold
    token = links(study, "ana")["ana"]
    app = make_app(study, ADMIN)
    with TestClient(app) as c:
        state = c.get(f"/s/{token}/state").json()
        state = vote(c, token, state["trial"]["index"]).json()
        db: sqlite3.Connection = app.state.desk.store.db
        desk = app.state.desk
        pages = desk.run_now(lambda: db.execute("PRAGMA page_count").fetchone()[0])
        desk.run_now(lambda: db.execute(f"PRAGMA max_page_count = {pages}"))
        index = state["trial"]["index"]
        failed = 0
        for _ in range(90):  # until the file needs a page it may not have
            answer = vote(c, token, index)
            if answer.status_code != 200:
                failed += 1
                break
            index = answer.json()["trial"]["index"]
        assert failed == 1, "the page limit was never reached"
        assert answer.status_code == 503
        assert "could not be saved" in answer.json()["error"]
        shown = c.get(f"/s/{token}/state").json()
        assert shown["trial"]["index"] == index  # the pair stays on screen
        desk.run_now(lambda: db.execute("PRAGMA max_page_count = 1073741823"))
        assert vote(c, token, index).status_code == 200  # "try again" saves it
    with StudyStore(study) as store:
        trials = [v.trial for v in store.votes("ana")]
    assert len(trials) == len(set(trials)) == shown["position"] + 1


def test_active_designs_choose_from_every_vote_whoever_cast_it(tmp_path: Path) -> None:
    study = make_study(
        tmp_path, images=6, methods=("A", "B", "C", "D"), sampling="active", per_participant=30
    )
    with StudyStore(study) as store:  # someone votes in the lab's window first
        session = VotingSession(store, "lab")
        while not session.finished:
            trial = session.current()
            assert trial is not None
            session.vote("left" if trial.left < trial.right else "right", 800)
        lab_votes = len(store.votes("lab"))
    token = links(study, "ana")["ana"]
    app = make_app(study, ADMIN)
    desk = app.state.desk
    with TestClient(app) as c:
        state = c.get(f"/s/{token}/state").json()
        assert state["total"] >= 8
        chosen = desk.run_now(lambda: len(desk.store.trials("ana")))
        while state["status"] == "vote":
            state = vote(c, token, state["trial"]["index"]).json()
            # the next pairs are chosen after an answer is sent, before they are reached
            c.get(f"/s/{token}/state")  # (after the choice, on the study's one thread)
            stored = desk.run_now(lambda: len(desk.store.trials("ana")))
            if stored < state["total"]:
                assert stored - state["position"] >= 3
            chosen = max(chosen, stored)
        assert chosen == state["total"]
    with StudyStore(study) as store:
        assert len(store.votes("lab")) == lab_votes
        assert len(store.votes("ana")) == state["total"]
        assert store.posterior().votes == lab_votes + state["total"]


def test_an_overlay_study_shows_its_maps_over_the_image_as_the_window_does(
    tmp_path: Path,
) -> None:
    import cv2
    import numpy as np

    from fminspect.ranking.present import Presenter

    study = make_study(tmp_path, presentation="overlay", overlay_alpha=0.6)
    token = links(study, "ana")["ana"]
    with TestClient(make_app(study, ADMIN)) as c:
        index = c.get(f"/s/{token}/state").json()["trial"]["index"]
        answer = c.get(f"/s/{token}/img/{index}/left")
    assert answer.headers["content-type"] == "image/png"  # lossless: the map is what is judged
    shown = cv2.cvtColor(
        cv2.imdecode(np.frombuffer(answer.content, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB
    )
    with StudyStore(study) as store:
        trial = VotingSession(store, "ana").current()
        assert trial is not None
        expected = Presenter(store.design).screen(trial).left
    np.testing.assert_array_equal(shown, expected)  # the window's picture, exactly


def test_a_group_partly_answered_says_so_in_the_scale(tmp_path: Path) -> None:
    study = make_study(tmp_path, images=2)
    token = links(study, "ana")["ana"]
    with TestClient(make_app(study, ADMIN)) as c:
        state = c.get(f"/s/{token}/state").json()
        vote(c, token, state["trial"]["index"])
        rows = c.get(f"/admin/{ADMIN}/scale").json()["groups"]
    voted = [r for r in rows if r["votes"]]
    assert len(voted) == 1
    assert (
        voted[0]["reason"]
        == "no participant has answered every pair of this group yet (1 has voted on it)"
    )
    assert "separated" in voted[0]  # one vote: the page says the distances are the prior's
