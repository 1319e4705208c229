"""Durable storage of a study (SQLite, stdlib) and the voting session on top of it.

Each vote is committed in its own transaction with ``journal_mode=WAL`` and
``synchronous=FULL`` before the next pair is shown, so a session killed at any moment
loses no acknowledged vote; the primary key (participant, trial) makes a duplicate
impossible, and a restarted session resumes at the first trial without a vote.

Tables: ``study`` (the design JSON and the schema version), ``participants``, ``trials``
(each participant's schedule) and ``votes`` (participant, trial, pair, side shown, choice,
the chosen item, response time, timestamp, app version).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fminspect import __version__
from fminspect.ranking.design import Design
from fminspect.ranking.schedule import (
    Pair,
    Trial,
    active_chunk,
    active_chunks,
    participant_seed,
    planned_trials,
    schedule,
)

if TYPE_CHECKING:
    from fminspect.ranking.active import Posterior

#: 2 added ``participants.slot`` (incomplete designs); a version-1 file gains the column
#: when it is opened.
SCHEMA_VERSION = 2
SCHEMA = """
CREATE TABLE IF NOT EXISTS study (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS participants (
    id TEXT PRIMARY KEY, seed INTEGER NOT NULL, created TEXT NOT NULL, origin TEXT NOT NULL,
    slot INTEGER
);
CREATE TABLE IF NOT EXISTS trials (
    participant TEXT NOT NULL REFERENCES participants(id), idx INTEGER NOT NULL,
    kind TEXT NOT NULL, grp TEXT NOT NULL, left_item TEXT NOT NULL, right_item TEXT NOT NULL,
    repeat_of INTEGER, correct TEXT, PRIMARY KEY (participant, idx)
);
CREATE TABLE IF NOT EXISTS votes (
    participant TEXT NOT NULL, trial INTEGER NOT NULL,
    kind TEXT NOT NULL, grp TEXT NOT NULL, left_item TEXT NOT NULL, right_item TEXT NOT NULL,
    choice TEXT NOT NULL CHECK (choice IN ('left', 'right', 'tie')),
    chosen TEXT, rt_ms REAL NOT NULL, ts TEXT NOT NULL, app_version TEXT NOT NULL,
    PRIMARY KEY (participant, trial),
    FOREIGN KEY (participant, trial) REFERENCES trials(participant, idx)
);
"""


class StudyError(Exception):
    """A study file that cannot be used (wrong file, wrong study, duplicate results…)."""


@dataclass(frozen=True, slots=True)
class Vote:
    """One recorded vote."""

    participant: str
    trial: int
    kind: str
    group: str
    left: str
    right: str
    choice: str
    chosen: str | None
    rt_ms: float
    ts: str
    app_version: str


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)  # explicit transactions
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA foreign_keys=ON")
    return db


class StudyStore:
    """A study on disk: its design, participants, schedules and votes."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise StudyError(f"{self.path}: no such study file")
        try:
            self.db = _connect(self.path)
            row = self.db.execute("SELECT value FROM study WHERE key = 'design'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StudyError(f"{self.path}: not a study file ({exc})") from None
        if row is None:
            raise StudyError(f"{self.path}: not a study file (no design)")
        try:
            self.design = Design.from_json(row[0])
        except (ValueError, TypeError, KeyError) as exc:
            raise StudyError(f"{self.path}: the stored design cannot be read ({exc})") from None
        # (votes, last rowid, its time stamp, the posterior of those votes)
        self._posterior: tuple[int, int, str, Posterior] | None = None
        self.last_merged: str | None = None  # the participant of the last merged results
        self._upgrade()

    def _upgrade(self) -> None:
        """Bring a file written by an older version to :data:`SCHEMA_VERSION`."""
        columns = {r[1] for r in self.db.execute("PRAGMA table_info(participants)")}
        if "slot" in columns:
            return
        try:
            with self._writing() as db:
                db.execute("ALTER TABLE participants ADD COLUMN slot INTEGER")
                db.execute(
                    "INSERT OR REPLACE INTO study VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
        except sqlite3.Error as exc:
            raise StudyError(f"{self.path}: cannot update an older study file ({exc})") from None

    @classmethod
    def create(cls, path: Path | str, design: Design) -> StudyStore:
        """Write a new study file (refusing to overwrite one).

        The file is written whole under a temporary name and then linked to ``path``, so an
        interruption leaves no file or a complete one — never an empty or half-made study —
        and a file that appeared meanwhile is not overwritten."""
        path = Path(path)
        if path.exists():
            raise StudyError(f"{path} already exists; choose another file")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".new", dir=path.parent)
        os.close(fd)
        tmp = Path(name)
        try:
            db = sqlite3.connect(tmp, isolation_level=None)
            try:  # a rollback journal while it is made: one self-contained file to link
                db.execute("PRAGMA synchronous=FULL")
                for stmt in SCHEMA.strip().split(";"):
                    if stmt.strip():
                        db.execute(stmt)
                db.execute("BEGIN")
                db.execute("INSERT INTO study VALUES ('design', ?)", (design.to_json(),))
                db.execute("INSERT INTO study VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                db.execute("COMMIT")
            finally:
                db.close()
            try:
                os.link(tmp, path)  # fails if the name was taken meanwhile
            except FileExistsError:
                raise StudyError(f"{path} already exists; choose another file") from None
            except OSError:  # a file system without hard links
                if path.exists():
                    raise StudyError(f"{path} already exists; choose another file") from None
                os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        return cls(path)

    def close(self) -> None:
        """Close the file."""
        self.db.close()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed when the block ends, rolled back on any
        exception (an error SQLite does not roll back itself — a failed check, Ctrl-C, an
        error raised by the caller's code — must not leave the connection inside a
        transaction, where every later vote and undo would fail). A failed COMMIT (a full
        disk) is rolled back too; the exception reaches the caller, and the next write
        starts clean."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
            self.db.execute("COMMIT")  # synchronous=FULL: on disk when this returns
        except BaseException:
            if self.db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One write transaction of the study (see :meth:`_writing`), for the modules that
        keep tables of their own in the study file (:mod:`fminspect.ranking.invites`)."""
        return self._writing()

    def __enter__(self) -> StudyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ participants
    def participants(self) -> list[str]:
        """Participant ids in order of registration."""
        return [r[0] for r in self.db.execute("SELECT id FROM participants ORDER BY rowid")]

    def register(
        self, participant: str, origin: str = "local", *, whole: bool = False
    ) -> list[Trial]:
        """Add a participant (once) and store their schedule; returns it.

        Full design: every pair. Incomplete: the pairs of the least used slot. Active: the
        first chunk, chosen from the votes stored so far (later chunks are chosen when they
        are reached, :meth:`extend`), or every chunk at once with ``whole`` (a participant
        voting elsewhere, from a study pack)."""
        participant = participant.strip()
        if not participant:
            raise StudyError("a participant needs a non-empty id")
        known = self.db.execute("SELECT 1 FROM participants WHERE id = ?", (participant,))
        if known.fetchone() is not None:
            return self.trials(participant)
        pack_for = self.pack_for
        if pack_for is not None:
            raise StudyError(
                f"this study pack was made for participant {pack_for!r}; ask the lab for a "
                "pack of your own"
            )
        now = datetime.now(UTC).isoformat(timespec="seconds")
        seed = participant_seed(self.design.seed, participant) % 2**62
        with self._writing() as db:  # the slot and the active choice see every other writer
            slot = self._free_slot(db) if self.design.sampling == "incomplete" else None
            db.execute(
                "INSERT INTO participants VALUES (?, ?, ?, ?, ?)",
                (participant, seed, now, origin, slot),
            )
            if self.design.sampling == "active":
                trials = self._choose_chunks(db, participant, [], whole)
            else:
                trials = schedule(self.design, participant, slot)
            self._insert_trials(db, participant, trials)
        return trials

    def _free_slot(self, db: sqlite3.Connection) -> int:
        """The incomplete design's slot given least often so far (the lowest of those)."""
        used = dict(
            db.execute(
                "SELECT slot, COUNT(*) FROM participants WHERE slot IS NOT NULL GROUP BY slot"
            )
        )
        return min(range(self.design.slots), key=lambda s: (used.get(s, 0), s))

    @staticmethod
    def _insert_trials(db: sqlite3.Connection, participant: str, trials: list[Trial]) -> None:
        db.executemany(
            "INSERT INTO trials VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (participant, t.index, t.kind, t.group, t.left, t.right, t.repeat_of, t.correct)
                for t in trials
            ],
        )

    def slot(self, participant: str) -> int | None:
        """An incomplete design's slot of ``participant`` (None in other designs)."""
        row = self.db.execute("SELECT slot FROM participants WHERE id = ?", (participant,))
        found = row.fetchone()
        return None if found is None else found[0]

    def planned(self, participant: str, stored: list[Trial] | None = None) -> int:
        """How many trials ``participant`` is given in all (an active design's are chosen a
        chunk at a time, so fewer may be stored yet); ``stored``: their trials, if read."""
        stored = self.trials(participant) if stored is None else stored
        if self.design.sampling != "active":
            return len(stored)
        return max(len(stored), planned_trials(self.design))

    def extend(self, participant: str) -> list[Trial]:
        """Active design: choose and store ``participant``'s next chunk of trials from every
        vote stored now; returns it (empty when every planned trial is stored)."""
        if self.design.sampling != "active":
            return []
        with self._writing() as db:
            done = self.trials(participant)
            if len(done) >= planned_trials(self.design):
                return []
            trials = self._choose_chunks(db, participant, done, whole=False)
            self._insert_trials(db, participant, trials)
        return trials

    def _choose_chunks(
        self, db: sqlite3.Connection, participant: str, done: list[Trial], whole: bool
    ) -> list[Trial]:
        """The next chunk (or every remaining chunk) of an active participant: pairs by
        expected information gain under the posterior of every stored vote, discounted for
        pairs given to anyone and not answered yet, never a pair they already have."""
        plan = active_chunks(self.design)
        have = {frozenset((t.left, t.right)) for t in done if t.kind == "pair"}
        n_pairs, first = sum(t.kind == "pair" for t in done), 0
        while first < len(plan) and n_pairs >= plan[first][0]:
            n_pairs -= plan[first][0]
            first += 1
        chunks = range(first, len(plan) if whole else min(first + 1, len(plan)))
        if not chunks:
            return []
        posterior = self.posterior()
        pending = [
            frozenset(r)
            for r in db.execute(
                "SELECT t.left_item, t.right_item FROM trials t LEFT JOIN votes v "
                "ON v.participant = t.participant AND v.trial = t.idx "
                "WHERE t.kind = 'pair' AND v.trial IS NULL"
            )
        ]
        count = sum(plan[c][0] for c in chunks)
        rng = np.random.default_rng([participant_seed(self.design.seed, participant), first])
        chosen = posterior.choose(count, exclude=have, pending=pending, rng=rng)
        out: list[Trial] = []
        start = len(done)
        for c in chunks:
            size = plan[c][0]
            pairs: list[Pair] = [(p.group, p.a, p.b) for p in chosen[:size]]
            chosen = chosen[size:]
            made = active_chunk(self.design, participant, c, pairs, start)
            out += made
            start += len(made)
        return out

    def posterior(self) -> Posterior:
        """The active design's posterior of every map from every decided answer on a pair
        stored now, in the order stored. It is kept between calls and brought up to date
        with the votes added since; when one of the votes it holds is gone (undone, perhaps
        answered again under the same row id) it is built again from every vote."""
        from fminspect.ranking.active import Posterior

        def at(rowid: int) -> tuple[int, str]:
            """Pair votes up to ``rowid``, and the time stamp of that row."""
            n = self.db.execute(
                "SELECT COUNT(*) FROM votes WHERE kind = 'pair' AND rowid <= ?", (rowid,)
            ).fetchone()[0]
            ts = self.db.execute("SELECT ts FROM votes WHERE rowid = ?", (rowid,)).fetchone()
            return int(n), ts[0] if ts else ""

        post, seen, seen_last = None, 0, 0
        if self._posterior is not None:
            n, last, stamp, held = self._posterior
            if at(last) == (n, stamp):
                post, seen, seen_last = held, n, last
        if post is None:  # made only when needed: 20 ms for 200 groups × 8 maps
            post = Posterior(self.design)
        new = self.db.execute(
            "SELECT rowid, left_item, right_item, choice FROM votes "
            "WHERE kind = 'pair' AND rowid > ? ORDER BY rowid",
            (seen_last,),
        ).fetchall()
        post.update_all((a, b) if c == "left" else (b, a) for _, a, b, c in new if c != "tie")
        if new:
            seen_last = int(new[-1][0])
        self._posterior = (seen + len(new), seen_last, at(seen_last)[1], post)
        return post

    @property
    def pack_for(self) -> str | None:
        """In a study unpacked from a pack made for one participant: that participant."""
        return self._get("pack_for")

    def _get(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM study WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def adopt(self, participant: str, trials: list[Trial], slot: int | None) -> None:
        """In a study unpacked from a pack made for ``participant``: store the trials the
        lab gave them, and refuse anyone else from now on."""
        with self._writing() as db:
            if participant not in self.participants():
                db.execute(
                    "INSERT INTO participants VALUES (?, ?, ?, ?, ?)",
                    (
                        participant,
                        participant_seed(self.design.seed, participant) % 2**62,
                        datetime.now(UTC).isoformat(timespec="seconds"),
                        "pack",
                        slot,
                    ),
                )
                self._insert_trials(db, participant, trials)
            db.execute("INSERT OR REPLACE INTO study VALUES ('pack_for', ?)", (participant,))

    def trials(self, participant: str) -> list[Trial]:
        """A registered participant's schedule."""
        rows = self.db.execute(
            "SELECT idx, kind, grp, left_item, right_item, repeat_of, correct FROM trials "
            "WHERE participant = ? ORDER BY idx",
            (participant,),
        ).fetchall()
        return [Trial(*r) for r in rows]

    # ------------------------------------------------------------------ votes
    def votes(self, participant: str | None = None) -> list[Vote]:
        """Every vote (of one participant), in trial order."""
        sql = (
            "SELECT * FROM votes"
            + (" WHERE participant = ?" if participant else "")
            + " ORDER BY participant, trial"
        )
        return [Vote(*r) for r in self.db.execute(sql, (participant,) if participant else ())]

    def record(self, participant: str, trial: Trial, choice: str, rt_ms: float) -> Vote:
        """Commit one vote durably (raises if that trial already has a vote)."""
        if choice not in ("left", "right", "tie"):
            raise ValueError(f"choice must be left, right or tie, got {choice!r}")
        if choice == "tie" and not self.design.allow_ties:
            raise StudyError("this study does not allow 'cannot decide'")
        chosen = {"left": trial.left, "right": trial.right, "tie": None}[choice]
        vote = Vote(
            participant,
            trial.index,
            trial.kind,
            trial.group,
            trial.left,
            trial.right,
            choice,
            chosen,
            float(rt_ms),
            datetime.now(UTC).isoformat(timespec="milliseconds"),
            __version__,
        )
        try:  # committed (on disk) before the next pair is shown
            with self._writing() as db:
                db.execute(
                    "INSERT INTO votes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", _vote_row(vote)
                )
        except sqlite3.IntegrityError:
            raise StudyError(f"{participant} already voted on trial {trial.index}") from None
        return vote

    def delete_vote(self, participant: str, trial: int) -> None:
        """Remove one vote (undo)."""
        with self._writing() as db:
            db.execute(
                "DELETE FROM votes WHERE participant = ? AND trial = ?", (participant, trial)
            )

    # ------------------------------------------------------------------ results files
    def export_results(self, participant: str) -> dict[str, object]:
        """A participant's results as a self-describing dict (JSON-ready)."""
        if participant not in self.participants():
            raise StudyError(f"no participant {participant!r} in {self.path}")
        return {
            "format": "fminspect-study-results/1",
            "study_id": self.design.study_id,
            "design_fingerprint": self.design.fingerprint,
            "participant": participant,
            "trials": [_trial_dict(t) for t in self.trials(participant)],
            "votes": [_vote_dict(v) for v in self.votes(participant)],
        }

    def merge_results(self, results: dict[str, object], origin: str) -> int:
        """Add a participant's results from another computer; returns the number of votes.

        Refused (StudyError, nothing written) when the results belong to another study or
        another version of this study's design, when that participant's votes are all here
        already (or differ from those here), or when the schedule or any vote does not match
        what the study showed that participant. A later file of a participant whose earlier,
        unfinished file was merged adds the votes that file did not have.
        """
        if not isinstance(results, dict) or results.get("format") != "fminspect-study-results/1":
            raise StudyError(f"{origin}: not an fminspect results file")
        if results.get("study_id") != self.design.study_id:
            raise StudyError(
                f"{origin}: results of another study ({results.get('study_id')}), "
                f"not of {self.design.name} ({self.design.study_id})"
            )
        if results.get("design_fingerprint") != self.design.fingerprint:
            raise StudyError(
                f"{origin}: made from a different version of this study's design "
                f"({results.get('design_fingerprint')} ≠ {self.design.fingerprint})"
            )
        participant = results.get("participant")
        if not isinstance(participant, str) or not participant.strip():
            raise StudyError(f"{origin}: the results name no participant")
        reserved = participant in self.participants()
        if reserved:  # given their trials here, for a study pack: those must come back
            expected = [_trial_dict(t) for t in self.trials(participant)]
        elif self.design.sampling == "full":
            expected = [_trial_dict(t) for t in schedule(self.design, participant)]
        else:
            raise StudyError(
                f"{origin}: this lab gave participant {participant!r} no pairs: in an "
                f"{self.design.sampling} design each pack is made for one participant "
                "(fminspect rank pack STUDY OUT --participant ID)"
            )
        if results.get("trials") != expected:
            raise StudyError(f"{origin}: the schedule does not match the study's (tampered file?)")
        votes = self._checked_votes(results.get("votes"), participant, expected, origin)
        if reserved:
            votes = self._new_votes(participant, votes, origin)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        try:
            with self._writing() as db:
                if not reserved:
                    self._merge_rows(db, participant, now, origin, expected)
                db.executemany(
                    "INSERT INTO votes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [_vote_row(v) for v in votes],
                )
        except sqlite3.DatabaseError as exc:
            raise StudyError(f"{origin}: could not merge ({exc})") from None
        self.last_merged = participant
        return len(votes)

    def _new_votes(self, participant: str, votes: list[Vote], origin: str) -> list[Vote]:
        """The votes of a results file that this study does not have yet. A participant's
        earlier file (sent before they finished) may have been merged: its votes must be
        in the new file unchanged, and only the rest is added; a file adding nothing is a
        duplicate, and one that contradicts a merged vote is refused."""
        stored = {v.trial: v for v in self.votes(participant)}
        if not stored:
            return votes
        given = {v.trial: v for v in votes}
        changed = [t for t, v in stored.items() if given.get(t) != v]
        if changed:
            raise StudyError(
                f"{origin}: participant {participant!r} is already in this study with "
                f"{len(stored)} votes, and this file differs on {len(changed)} of them "
                f"(trial {changed[0]}): refused"
            )
        new = [v for v in votes if v.trial not in stored]
        if not new:
            raise StudyError(
                f"{origin}: participant {participant!r} is already in this study "
                "(duplicate results are refused)"
            )
        return new

    def _merge_rows(
        self,
        db: sqlite3.Connection,
        participant: str,
        now: str,
        origin: str,
        expected: list[dict[str, object]],
    ) -> None:
        db.execute(
            "INSERT INTO participants VALUES (?, ?, ?, ?, ?)",
            (
                participant,
                participant_seed(self.design.seed, participant) % 2**62,
                now,
                origin,
                None,
            ),
        )
        db.executemany(
            "INSERT INTO trials VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(participant, *(t[k] for k in _TRIAL_COLUMNS)) for t in expected],
        )

    def _checked_votes(
        self, raw: object, participant: str, expected: list[dict[str, object]], origin: str
    ) -> list[Vote]:
        """The votes of a results file, each checked against the trial it answers."""
        if not isinstance(raw, list):
            raise StudyError(f"{origin}: no list of votes")
        trials = {t["index"]: t for t in expected}
        votes, seen = [], set()
        for k, v in enumerate(raw):
            try:
                vote = Vote(**v)
                t = trials[vote.trial]
                float(vote.rt_ms)
            except (TypeError, KeyError, ValueError):
                raise StudyError(
                    f"{origin}: vote {k + 1} is malformed or answers no trial"
                ) from None
            chosen = {"left": t["left"], "right": t["right"], "tie": None}.get(vote.choice, "?")
            if (
                vote.participant != participant
                or (vote.kind, vote.group, vote.left, vote.right)
                != (t["kind"], t["group"], t["left"], t["right"])
                or vote.chosen != chosen
                or (vote.choice == "tie" and not self.design.allow_ties)
                or vote.trial in seen
            ):
                raise StudyError(
                    f"{origin}: vote {k + 1} (trial {vote.trial}) does not match what the study "
                    "showed this participant (tampered file?)"
                )
            seen.add(vote.trial)
            votes.append(vote)
        return votes


#: A trial's fields in the order of the ``trials`` table's columns after the participant.
_TRIAL_COLUMNS = ("index", "kind", "group", "left", "right", "repeat_of", "correct")


def _trial_dict(t: Trial) -> dict[str, object]:
    return {
        "index": t.index,
        "kind": t.kind,
        "group": t.group,
        "left": t.left,
        "right": t.right,
        "repeat_of": t.repeat_of,
        "correct": t.correct,
    }


def _vote_row(v: Vote) -> tuple[object, ...]:
    return tuple(getattr(v, f) for f in Vote.__dataclass_fields__)


def _vote_dict(v: Vote) -> dict[str, object]:
    return {f: getattr(v, f) for f in Vote.__dataclass_fields__}


class VotingSession:
    """One participant voting: what to show next, recording a vote, undoing the last one.

    The voting window and the simulated participants in the tests use exactly this API.
    """

    def __init__(self, store: StudyStore, participant: str, origin: str = "local") -> None:
        self.store = store
        self.participant = participant
        self.trials = store.register(participant, origin)
        self._total = store.planned(participant, self.trials)
        voted = {
            r[0]
            for r in store.db.execute(
                "SELECT trial FROM votes WHERE participant = ?", (participant,)
            )
        }
        self._done = [t.index for t in self.trials if t.index in voted]

    @property
    def total(self) -> int:
        """Number of trials (planned: an active design chooses them a chunk at a time)."""
        return self._total

    @property
    def position(self) -> int:
        """Number of trials voted on."""
        return len(self._done)

    @property
    def finished(self) -> bool:
        """Every trial has a vote."""
        return self.position >= self.total

    @property
    def last(self) -> int | None:
        """The index of the trial voted on last (the one :meth:`undo` takes back)."""
        return self._done[-1] if self._done else None

    def current(self) -> Trial | None:
        """The first trial without a vote (None when finished). In an active design, the
        next chunk of pairs is chosen (from every vote stored now) when it is reached."""
        done = set(self._done)
        trial = next((t for t in self.trials if t.index not in done), None)
        if trial is None and len(self.trials) < self.total:
            self.trials += self.store.extend(self.participant)
            trial = next((t for t in self.trials if t.index not in done), None)
        return trial

    def choose_ahead(self, margin: int = 3) -> int:
        """Active design: when fewer than ``margin`` chosen trials are left unanswered,
        choose (and store) the next chunk now, from every vote stored now, so that the
        participant does not wait for it at the end of the chunk; returns how many trials
        were added. Other designs: nothing to do."""
        if self.store.design.sampling != "active" or len(self.trials) >= self.total:
            return 0
        done = set(self._done)
        if sum(t.index not in done for t in self.trials) >= margin:
            return 0
        added = self.store.extend(self.participant)
        self.trials += added
        return len(added)

    def following(self, trial: Trial) -> Trial | None:
        """The first trial after ``trial`` without a vote, among those chosen so far (what
        a page can load ahead while ``trial`` is shown)."""
        done = set(self._done)
        later = (t for t in self.trials if t.index > trial.index and t.index not in done)
        return next(later, None)

    def vote(self, choice: str, rt_ms: float) -> Vote:
        """Record ``choice`` ('left', 'right' or 'tie') for the current trial, durably."""
        trial = self.current()
        if trial is None:
            raise StudyError("the session is finished")
        vote = self.store.record(self.participant, trial, choice, rt_ms)
        self._done.append(trial.index)
        return vote

    def undo(self) -> Trial | None:
        """Delete the last vote; returns its trial (shown again), or None if none."""
        if not self._done:
            return None
        index = self._done[-1]
        self.store.delete_vote(self.participant, index)  # if it fails, nothing changed
        self._done.pop()
        return self.trials[index]
