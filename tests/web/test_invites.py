"""Participants' links: unguessable, stored only as hashes, one per participant."""

from __future__ import annotations

from pathlib import Path

import pytest

from fminspect.ranking import invites
from fminspect.ranking.store import StudyError, StudyStore
from tests.web.studies import make_study


def test_links_open_their_participant_only_and_the_file_keeps_no_token(tmp_path: Path) -> None:
    path = make_study(tmp_path)
    with StudyStore(path) as store:
        made = invites.invite(store, 3, ids=["ana"])
        assert [i.participant for i in made] == ["ana", "p001", "p002", "p003"]
        assert len({i.token for i in made}) == 4
        assert all(len(i.token) >= 32 for i in made)  # 24 random bytes, URL-safe base64
        for i in made:
            assert invites.participant_of(store, i.token) == i.participant
        token = made[0].token
        for wrong in ("", token[:-1], token + "x", token.upper(), "x" * 129, made[1].token[::-1]):
            assert invites.participant_of(store, wrong) is None
        # numbering goes on after the ids taken
        assert [i.participant for i in invites.invite(store, 1)] == ["p004"]
        # a full design's schedules are made at once; the trials are the window's
        assert store.participants() == ["ana", "p001", "p002", "p003", "p004"]
        assert invites.invited(store) == ["ana", "p001", "p002", "p003", "p004"]
    wal = Path(f"{path}-wal")
    data = path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    for i in made:
        assert i.token.encode() not in data
        assert invites.digest(i.token).encode() in data


def test_ids_taken_malformed_or_repeated_are_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    path = make_study(tmp_path)
    with StudyStore(path) as store:
        invites.invite(store, ids=["ana"])
        store.register("lab-1")
        for ids, says in (
            (["ana"], "already in this study"),
            (["lab-1"], "already in this study"),
            (["bo", "bo"], "given twice"),
            (["../etc"], "letters, digits"),
            (["a b"], "letters, digits"),
            (["x" * 65], "letters, digits"),
        ):
            with pytest.raises(StudyError, match=says):
                invites.invite(store, ids=ids)
        with pytest.raises(StudyError, match="prefix"):
            invites.invite(store, 2, prefix="a/b")
        assert invites.invited(store) == ["ana"]


def test_a_study_opens_and_closes_for_browsers(tmp_path: Path) -> None:
    with StudyStore(make_study(tmp_path)) as store:
        assert invites.invited(store) == []  # an older study file: no table yet
        assert invites.is_open(store)
        invites.set_open(store, False)
        assert not invites.is_open(store)
        invites.set_open(store, True)
        assert invites.is_open(store)


def test_rank_invite_prints_or_writes_the_links_once_with_qr_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fminspect.cli import main

    path = make_study(tmp_path)
    assert main(["rank", "invite", str(path), "--count", "2", "--url", "https://r.example/"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "participant,link"
    assert [line.split(",")[0] for line in out[1:]] == ["p001", "p002"]
    assert all(line.split(",")[1].startswith("https://r.example/s/") for line in out[1:])
    links = tmp_path / "links.csv"
    qr = tmp_path / "qr"
    args = ["rank", "invite", str(path), "--id", "ana", "--out", str(links), "--qr", str(qr)]
    assert main(args) == 0
    assert links.stat().st_mode & 0o777 == 0o600  # the links are the participants' keys
    rows = links.read_text().splitlines()
    assert rows[0] == "participant,link" and rows[1].startswith("ana,http://127.0.0.1:8765/s/")
    token = rows[1].rsplit("/", 1)[1]
    with StudyStore(path) as store:
        assert invites.participant_of(store, token) == "ana"
    assert (qr / "ana.png").stat().st_size > 0
    assert "fminspect rank serve" in capsys.readouterr().err  # on the default port
    local = ["rank", "invite", str(path), "--id", "bo", "--url", "http://127.0.0.1:8811"]
    assert main(local) == 0
    assert "--port 8811" in capsys.readouterr().err  # the links' port, said
    assert main(["rank", "invite", str(path), "--id", "ana"]) == 1  # taken: a message
    assert "already in this study" in capsys.readouterr().err
    assert main(["rank", "invite", str(path)]) == 2


def test_only_a_full_designs_schedules_are_made_at_invitation(tmp_path: Path) -> None:
    full = make_study(tmp_path / "full")
    incomplete = make_study(
        tmp_path / "incomplete", sampling="incomplete", per_participant=4, coverage=1
    )
    with StudyStore(full) as store:
        invites.invite(store, 2)
        assert store.participants() == ["p001", "p002"]  # their trials are the window's
        assert len(store.trials("p001")) == len(store.design.groups) * 3
    with StudyStore(incomplete) as store:  # a slot is given to whoever comes
        invites.invite(store, 2)
        assert store.participants() == []
        assert invites.invited(store) == ["p001", "p002"]
