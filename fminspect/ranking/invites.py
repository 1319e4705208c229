"""Links for participants who vote in a web browser (``fminspect rank invite``/``serve``).

Each invited participant gets an id and an unguessable token (:func:`secrets.token_urlsafe`,
192 bits). The study file keeps only the token's SHA-256, so a copy of the study (a backup,
a results file, a pack) does not let anyone vote in someone's name; a token is looked up by
its hash, and the one comparison of secret material left is :func:`hmac.compare_digest`.
The same file holds whether the study is open for voting (the admin page's stop/reopen).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from fminspect.ranking.store import StudyError, StudyStore

TABLE = """
CREATE TABLE IF NOT EXISTS invites (
    token_sha256 TEXT PRIMARY KEY, participant TEXT NOT NULL UNIQUE, created TEXT NOT NULL
)
"""
#: Participant ids: what a lab writes in its notes (letters, digits, ``._-``), at most 64.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass(frozen=True, slots=True)
class Invite:
    """A participant's id and the token of their link (known only when it is made)."""

    participant: str
    token: str


def digest(token: str) -> str:
    """The SHA-256 of a token, as stored."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def ensure_table(store: StudyStore) -> None:
    """Add the invitations' table to a study file that has none yet."""
    with store.transaction() as db:
        db.execute(TABLE)


def invite(
    store: StudyStore, count: int = 0, *, prefix: str = "p", ids: Sequence[str] = ()
) -> list[Invite]:
    """Invite ``count`` new participants named ``prefix`` + a number (after those invited
    already), and/or the participants ``ids``; returns their links' tokens. An id that is
    already invited or registered is refused (StudyError), and nothing is written."""
    if count < 0:
        raise StudyError("the number of participants to invite must be ≥ 0")
    ensure_table(store)
    taken = set(store.participants()) | set(invited(store))
    wanted = [i.strip() for i in ids]
    for who in wanted:
        if not ID_PATTERN.fullmatch(who):
            raise StudyError(
                f"participant id {who!r}: use 1–64 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit"
            )
        if who in taken:
            raise StudyError(f"participant {who!r} is already in this study")
    if len(set(wanted)) != len(wanted):
        raise StudyError("a participant id is given twice")
    if count and not ID_PATTERN.fullmatch(f"{prefix}1"):
        raise StudyError(f"--prefix {prefix!r}: use letters, digits, '.', '_' or '-'")
    n, made = 0, list(wanted)
    while len(made) < len(wanted) + count:
        n += 1
        name = f"{prefix}{n:03d}"
        if name not in taken and name not in made:
            made.append(name)
    out = [Invite(who, secrets.token_urlsafe(24)) for who in made]
    now = datetime.now(UTC).isoformat(timespec="seconds")
    try:
        with store.transaction() as db:
            db.executemany(
                "INSERT INTO invites VALUES (?, ?, ?)",
                [(digest(i.token), i.participant, now) for i in out],
            )
    except sqlite3.IntegrityError as exc:  # another process invited the same id meanwhile
        raise StudyError(f"{store.path}: could not invite ({exc}); nothing was written") from None
    if store.design.sampling == "full":
        # a full design's schedule depends on the participant alone: made now, so that a
        # participant's first visit does not wait for it (nor do the others' answers); an
        # incomplete design's slot and an active design's first pairs are given on arrival,
        # to those who come
        for i in out:
            store.register(i.participant, "web")
    return out


def invited(store: StudyStore) -> list[str]:
    """Participants invited to vote in a browser, in the order they were invited."""
    try:
        rows = store.db.execute("SELECT participant FROM invites ORDER BY rowid").fetchall()
    except sqlite3.OperationalError:  # no invites table: nobody invited yet
        return []
    return [r[0] for r in rows]


def participant_of(store: StudyStore, token: str) -> str | None:
    """The participant whose link carries ``token`` (None for any other string)."""
    if not token or len(token) > 128:
        return None
    wanted = digest(token)
    try:
        row = store.db.execute(
            "SELECT token_sha256, participant FROM invites WHERE token_sha256 = ?", (wanted,)
        ).fetchone()
    except sqlite3.OperationalError:
        return None
    if row is None or not hmac.compare_digest(row[0], wanted):
        return None
    return str(row[1])


def is_open(store: StudyStore) -> bool:
    """Whether the study takes votes from browsers (the admin page can stop it)."""
    row = store.db.execute("SELECT value FROM study WHERE key = 'web_closed'").fetchone()
    return row is None or row[0] != "1"


def set_open(store: StudyStore, value: bool) -> None:
    """Stop (False) or reopen (True) voting in browsers; kept in the study file."""
    with store.transaction() as db:
        db.execute(
            "INSERT OR REPLACE INTO study VALUES ('web_closed', ?)", ("0" if value else "1",)
        )
