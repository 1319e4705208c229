"""An error at any write of a study (register, vote, undo, merge, the commit itself) leaves
the file and the connection usable: later writes work, nothing acknowledged is lost, and a
voting session's position stays that of the file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from fminspect.io.discovery import discover
from fminspect.ranking.build import build_design, groups_from_dataset
from fminspect.ranking.store import StudyStore, VotingSession
from tests.datasets import make_dataset

pytestmark = pytest.mark.faults


class _Failing:
    """A connection that raises once, at the first statement starting with ``target``
    (after the transaction has begun, as a full disk or an I/O error would)."""

    def __init__(self, db: sqlite3.Connection, target: str, error: BaseException) -> None:
        self._db, self._target, self._error = db, target, error
        self.fired = False

    def _check(self, sql: str) -> None:
        if not self.fired and sql.lstrip().upper().startswith(self._target):
            self.fired = True
            raise self._error

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        self._check(sql)
        return self._db.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:
        self._check(sql)
        return self._db.executemany(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


@pytest.fixture
def store(tmp_path: Path) -> StudyStore:
    root = make_dataset(tmp_path / "data", n_images=3, methods=("A", "B", "C"), size=(24, 32))
    (ds,), _ = discover(root)
    path = tmp_path / "study.sqlite"
    return StudyStore.create(path, build_design("faults", groups_from_dataset(ds), path))


def _inject(store: StudyStore, target: str, error: BaseException) -> _Failing:
    failing = _Failing(store.db, target, error)
    store.db = failing  # type: ignore[assignment]
    return failing


def _reopened(store: StudyStore) -> StudyStore:
    store.close()
    return StudyStore(store.path)


ERRORS = [
    sqlite3.OperationalError("disk I/O error (injected)"),
    sqlite3.OperationalError("database or disk is full (injected)"),
    KeyboardInterrupt(),
    RuntimeError("a bug in the caller (injected)"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__ + str(e)[:10])
@pytest.mark.parametrize("target", ["INSERT INTO VOTES", "COMMIT"])
def test_a_failed_vote_is_not_kept_and_the_next_one_is(
    store: StudyStore, target: str, error: BaseException
) -> None:
    session = VotingSession(store, "p1")
    session.vote("left", 100)
    failing = _inject(store, target, error)
    with pytest.raises(type(error)):
        session.vote("right", 100)
    assert failing.fired and not store.db.in_transaction
    assert session.position == 1  # the window shows the same pair again
    session.vote("right", 120)  # the retry is stored
    session.vote("left", 130)
    reopened = _reopened(store)
    assert [(v.trial, v.choice) for v in reopened.votes("p1")] == [
        (0, "left"),
        (1, "right"),
        (2, "left"),
    ]


@pytest.mark.parametrize("target", ["DELETE FROM VOTES", "COMMIT"])
def test_a_failed_undo_changes_nothing_and_can_be_retried(store: StudyStore, target: str) -> None:
    session = VotingSession(store, "p1")
    for choice in ("left", "right", "left"):
        session.vote(choice, 100)
    _inject(store, target, sqlite3.OperationalError("disk I/O error (injected)"))
    with pytest.raises(sqlite3.OperationalError):
        session.undo()
    assert session.position == 3 == len(store.votes("p1"))  # window and file agree
    assert session.undo() == session.trials[2]
    assert session.position == 2 == len(_reopened(store).votes("p1"))


@pytest.mark.parametrize("target", ["INSERT INTO TRIALS", "COMMIT"])
def test_a_failed_registration_leaves_no_half_participant(store: StudyStore, target: str) -> None:
    _inject(store, target, sqlite3.OperationalError("disk I/O error (injected)"))
    with pytest.raises(sqlite3.OperationalError):
        VotingSession(store, "p1")
    assert store.participants() == [] and store.trials("p1") == []
    session = VotingSession(store, "p1")  # registering again works
    session.vote("left", 100)
    assert _reopened(store).participants() == ["p1"]


@pytest.mark.parametrize("target", ["INSERT INTO VOTES", "COMMIT"])
def test_a_failed_merge_merges_nothing_and_can_be_retried(
    store: StudyStore, tmp_path: Path, target: str
) -> None:
    from fminspect.ranking.store import StudyError

    remote_path = tmp_path / "remote.sqlite"
    remote = StudyStore.create(remote_path, store.design)
    session = VotingSession(remote, "far")
    while not session.finished:
        session.vote("left", 100)
    results = remote.export_results("far")
    local = VotingSession(store, "near")
    local.vote("right", 100)
    _inject(store, target, sqlite3.OperationalError("disk I/O error (injected)"))
    with pytest.raises(StudyError, match="could not merge"):
        store.merge_results(results, "far.json")
    assert store.participants() == ["near"] and store.votes("far") == []
    assert store.merge_results(results, "far.json") == len(results["votes"])  # type: ignore[arg-type]
    reopened = _reopened(store)
    assert reopened.participants() == ["near", "far"]
    assert len(reopened.votes("near")) == 1
