"""On-disk result cache (SQLite, stdlib): one row per (sample, method, measure family).

Rows are keyed by a digest of the input files' *contents*, the normalisation, the resize
rule, the family's own parameters and :data:`fminspect.MEASURE_DEFINITION_VERSION` (see
:meth:`fminspect.batch.runner.EvalConfig.fingerprint`), so a rerun recomputes exactly what
changed (a new method, a changed file, a family's parameter, a measure not asked for before)
and an interrupted run resumes. File digests are remembered per (path, size, mtime) so
unchanged files are not re-read to be hashed. Completed work units are committed at least
every quarter of a second (and when the cache is closed, also after an error or Ctrl-C), in
WAL mode with ``synchronous=NORMAL``: a commit survives the program being interrupted or
killed (it is in the operating system's hands) without waiting for the disk; a power cut or
an OS crash can lose what was committed since the last checkpoint (SQLite's default: every
1000 pages), which a rerun then recomputes.
No pickles: scores are JSON, curves raw float64 bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Seconds between commits of stored records.
COMMIT_EVERY = 0.25

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    key TEXT PRIMARY KEY,
    scores TEXT NOT NULL,
    curves BLOB NOT NULL,
    curve_names TEXT NOT NULL,
    notes TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS file_digests (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    digest TEXT NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class Record:
    """The result of one prediction: per-image scores, curves and notes."""

    scores: dict[str, float]
    curves: dict[str, np.ndarray]
    notes: tuple[str, ...] = ()


def file_digest(path: Path) -> str:
    """BLAKE2b digest of a file's bytes."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def record_key(digests: Iterable[str], config_fingerprint: str) -> str:
    """Cache key of one (GT, image, prediction) under one configuration."""
    h = hashlib.blake2b(digest_size=20)
    for d in digests:
        h.update(d.encode())
        h.update(b"|")
    h.update(config_fingerprint.encode())
    return h.hexdigest()


class ResultCache:
    """SQLite-backed cache of :class:`Record` s (one writer: the driver process)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # no fsync per commit (see above)
        self._committed = time.monotonic()
        self._db.executescript(SCHEMA)
        self._db.commit()

    def close(self) -> None:
        """Commit what was stored and close the database."""
        self._db.commit()
        self._db.close()

    def __enter__(self) -> ResultCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ file digests
    def digest(self, path: Path) -> str:
        """Content digest of ``path``, reusing the stored one while size and mtime match
        (raises the ``OSError`` of a file that cannot be read)."""
        digest = self.digests([path])[path]
        if isinstance(digest, OSError):
            raise digest
        return digest

    def digests(self, paths: Sequence[Path], threads: int = 1) -> dict[Path, str | OSError]:
        """:meth:`digest` of many files, the unknown ones hashed on ``threads`` threads
        (reading and hashing release the interpreter lock). A file that cannot be read
        maps to its ``OSError``."""
        out: dict[Path, str | OSError] = {}
        todo: list[tuple[Path, os.stat_result]] = []
        for path in dict.fromkeys(paths):
            try:
                st = os.stat(path)
            except OSError as exc:
                out[path] = exc
                continue
            row = self._db.execute(
                "SELECT size, mtime_ns, digest FROM file_digests WHERE path = ?", (str(path),)
            ).fetchone()
            if row and row[0] == st.st_size and row[1] == st.st_mtime_ns:
                out[path] = str(row[2])
            else:
                todo.append((path, st))

        def attempt(path: Path) -> str | OSError:
            try:
                return file_digest(path)
            except OSError as exc:
                return exc

        if threads > 1 and len(todo) > 1:
            with ThreadPoolExecutor(threads) as pool:
                hashed = list(pool.map(attempt, [p for p, _ in todo]))
        else:
            hashed = [attempt(p) for p, _ in todo]
        for (path, st), digest in zip(todo, hashed, strict=True):
            out[path] = digest
            if isinstance(digest, str):
                self._db.execute(
                    "INSERT OR REPLACE INTO file_digests VALUES (?, ?, ?, ?)",
                    (str(path), st.st_size, st.st_mtime_ns, digest),
                )
        return out

    # ------------------------------------------------------------------ records
    def has(self, key: str) -> bool:
        """Whether a record is stored under ``key``."""
        return (
            self._db.execute("SELECT 1 FROM records WHERE key = ?", (key,)).fetchone() is not None
        )

    def get(self, key: str) -> Record | None:
        """The record stored under ``key``, or None."""
        row = self._db.execute(
            "SELECT scores, curves, curve_names, notes FROM records WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        names = json.loads(row[2])
        flat = np.frombuffer(row[1], dtype="<f8")
        curves = {n: flat[i * 256 : (i + 1) * 256].copy() for i, n in enumerate(names)}
        return Record(json.loads(row[0]), curves, tuple(json.loads(row[3])))

    def put_many(self, items: Iterable[tuple[str, Record]]) -> None:
        """Store records; committed once :data:`COMMIT_EVERY` seconds have passed since the
        last commit (a commit per work unit cost ~1 ms each)."""
        rows = []
        for key, rec in items:
            names = list(rec.curves)
            blob = b"".join(np.asarray(rec.curves[n], dtype="<f8").tobytes() for n in names)
            rows.append(
                (key, json.dumps(rec.scores), blob, json.dumps(names), json.dumps(list(rec.notes)))
            )
        self._db.executemany("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?)", rows)
        now = time.monotonic()
        if now - self._committed >= COMMIT_EVERY:
            self._db.commit()
            self._committed = now

    def commit(self) -> None:
        """Commit pending rows."""
        self._db.commit()
