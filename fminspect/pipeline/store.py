"""The result store (SQLite, stdlib): one row per (sample, model, measure family).

One store serves every command and the window: ``fminspect eval`` writes ``OUT/cache.sqlite``
(or ``--cache``) and records in a small index, under the user's cache folder, which GT
folders it holds results for; the window opening the same dataset — from any working folder
— finds that store and reads eval's scores instead of computing them (:func:`store_for`).
Without an earlier ``eval`` the window uses :func:`default_store_path`.

Rows are keyed by a digest of the input files' *contents*, the normalisation, the resize
rule, the family's own parameters and :data:`fminspect.MEASURE_DEFINITION_VERSION` (see
:meth:`fminspect.pipeline.config.EvalConfig.fingerprint`), so a rerun recomputes exactly what
changed (a new method, a changed file, a family's parameter, a measure not asked for before)
and an interrupted run resumes. File digests are remembered per (absolute path, size, mtime)
so unchanged files are not read again to be hashed. The first records stored are committed
at once, later ones at least every quarter of a second (and when the store is closed, also
after an error or Ctrl-C), in WAL mode with ``synchronous=NORMAL``: a commit survives the
program being interrupted or killed (it is in the operating system's hands) without waiting
for the disk; a power cut or an OS crash can lose what was committed since the last
checkpoint (SQLite's default: every 1000 pages), which a rerun then recomputes. Several
processes may use one store at once (the window and an ``eval``): SQLite serialises their
writes.

A record's key is the digest of its (GT, image, prediction) contents followed by a short
digest of its family's fingerprint (:func:`pair_key`, :func:`family_tag`): a pair's keys
are built by string concatenation, so an evaluation of thousands of images × dozens of
methods keeps two short strings per pair in memory, not one per measure family.

No pickles: scores and curves are raw little-endian float64 bytes with their names (and the
curves' lengths) beside them, notes JSON (empty when there are none), so that reading a
hundred thousand records is quick.

Beside its families' records, a pair whose every family is stored has one row of all its
scores (:meth:`ResultStore.pair_scores`, keyed by :func:`whole_pair_key`), written with the
records by ``eval`` and by the window, or when the window first reads the records of an
older store. Planning and filling the window's browser read those rows: at 5,019 images ×
40 methods, 200,000 rows instead of 2.2 million records (~9 s from opening to every score
instead of ~25 s). A row is only a shortcut: it is made from the records, its key covers
the same contents and parameters as theirs, and a row that lacks a measure asked for is
passed over for the records.

The store also keeps each method's dataset values (:class:`Aggregate`), keyed by a digest of
every record they were made from (:meth:`fminspect.batch.evaluation.Evaluation.method_results`
makes the key), so that the window opening a dataset ``eval`` has aggregated shows its
dataset view without reading every image's curves again. Their table is made on the first
write: a store of this schema version made before it, or one that cannot be written, simply
has none.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from fminspect.pipeline.notes import Note

#: Seconds between commits of stored records.
COMMIT_EVERY = 0.25

#: Bumped when the tables change; a store of another version is emptied (it is a cache).
#: 4: curves of any length, named ``name:length`` (the sweep's counts are not 256 long).
SCHEMA_VERSION = 4

_Key = TypeVar("_Key", str, bytes)
_Path = TypeVar("_Path", Path, str)

#: Keys per query in bulk reads (SQLite's default limit on parameters is 32766).
_CHUNK = 900

#: Seconds a statement waits for another process's write lock before failing.
BUSY_TIMEOUT = 30
#: Milliseconds a stored aggregate waits for it: it is only a shortcut, never worth a wait.
AGGREGATE_WAIT_MS = 50

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    key TEXT PRIMARY KEY,
    score_names TEXT NOT NULL,
    scores BLOB NOT NULL,
    curve_names TEXT NOT NULL,
    curves BLOB NOT NULL,
    notes TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS file_digests (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    digest TEXT NOT NULL
) WITHOUT ROWID;
"""

#: Every score of one pair under one set of measure families, in one row (see the module
#: notes), made on the first write; the score names are kept once in a table of their own.
PAIRS = (
    "CREATE TABLE IF NOT EXISTS pair_names (id INTEGER PRIMARY KEY, names TEXT NOT NULL UNIQUE)",
    "CREATE TABLE IF NOT EXISTS pair_scores (key BLOB PRIMARY KEY, names INTEGER NOT NULL, "
    "scores BLOB NOT NULL) WITHOUT ROWID",
)

#: Dataset values of one method (see the module notes), made on the first write.
AGGREGATES = """
CREATE TABLE IF NOT EXISTS aggregates (
    key TEXT PRIMARY KEY,
    value_names TEXT NOT NULL,
    "values" BLOB NOT NULL,
    counts TEXT NOT NULL,
    n_images INTEGER NOT NULL,
    curve_names TEXT NOT NULL,
    curves BLOB NOT NULL
) WITHOUT ROWID
"""


@dataclass(frozen=True, slots=True)
class Record:
    """The result of one measure family for one prediction: per-image scores, curves and
    notes."""

    scores: dict[str, float]
    curves: dict[str, np.ndarray]
    notes: tuple[Note, ...] = ()


@dataclass(frozen=True, slots=True)
class Aggregate:
    """One method's dataset values as stored: the values, the number of images each rests
    on, the number of images and the image-averaged curves."""

    values: dict[str, float]
    counts: dict[str, int]
    n_images: int
    curves: dict[str, np.ndarray]


def _pack(arrays: dict[str, np.ndarray]) -> tuple[str, bytes]:
    """Named 1-D arrays as ``name:length,…`` and their little-endian float64 bytes."""
    flat = {n: np.asarray(a, dtype="<f8").ravel() for n, a in arrays.items()}
    return ",".join(f"{n}:{a.size}" for n, a in flat.items()), b"".join(
        a.tobytes() for a in flat.values()
    )


def _unpack(names: str, blob: bytes) -> dict[str, np.ndarray]:
    """The arrays :func:`_pack` stored (read-only views of ``blob``)."""
    found: dict[str, np.ndarray] = {}
    if names:
        flat = np.frombuffer(blob, dtype="<f8")
        start = 0
        for entry in names.split(","):
            name, _, size = entry.rpartition(":")
            found[name] = flat[start : start + int(size)]
            start += int(size)
    return found


def file_digest(path: Path | str) -> str:
    """BLAKE2b digest of a file's bytes."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pair_key(digests: Iterable[str]) -> str:
    """The first part of a record's key: the contents of its (GT, image, prediction) files
    (the image's digest only for the measures that use it, '' otherwise)."""
    h = hashlib.blake2b(digest_size=16)
    for d in digests:
        h.update(d.encode())
        h.update(b"|")
    return h.hexdigest()


def family_tag(config_fingerprint: str) -> str:
    """The second part of a record's key: everything else it depends on (a measure family's
    fingerprint, :meth:`~fminspect.pipeline.config.EvalConfig.fingerprint`)."""
    return hashlib.blake2b(config_fingerprint.encode(), digest_size=8).hexdigest()


def record_key(digests: Iterable[str], config_fingerprint: str) -> str:
    """Store key of one (GT, image, prediction) under one configuration."""
    return pair_key(digests) + family_tag(config_fingerprint)


def whole_pair_key(prefixes: tuple[str, str], tags: Iterable[str]) -> bytes:
    """Key of one pair's row of every score (:meth:`ResultStore.pair_scores`): its two
    :func:`pair_key` s (without and with the image) and the :func:`family_tag` s of the
    families the row holds, in any order."""
    text = "|".join((*prefixes, *sorted(tags)))
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def is_damaged(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite found the file damaged (not a database, or a malformed page) — as
    opposed to locked, read-only or out of space."""
    return getattr(exc, "sqlite_errorname", "") in ("SQLITE_NOTADB", "SQLITE_CORRUPT")


def set_aside(
    path: Path,
    exc: Exception,
    what: str = "result cache",
    lost: str = "its results are computed again",
) -> str:
    """Rename a damaged store (and its WAL files) to ``NAME.damaged-TIME`` — kept for whoever
    wants to look, out of the way of a new one — and say so (``what`` it was, what is
    ``lost``)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    for suffix in ("-wal", "-shm"):
        extra = path.with_name(path.name + suffix)
        if extra.exists():
            os.replace(extra, aside.with_name(aside.name + suffix))
    os.replace(path, aside)
    return f"not a readable {what} ({exc}): moved to {aside.name}, and a new one started ({lost})"


def _path_text(path: Path | str) -> str:
    """The absolute path a digest is remembered under (the same file from another working
    folder is the same file). Names that are not valid UTF-8 keep their bytes escaped."""
    text = os.fspath(path)
    # already absolute and normal, in ASCII (a folder's files as listed): as it is (4 times
    # quicker, 0.7 s → 0.2 s for 205,800 files)
    if text.isascii() and text[:1] == "/" and not ("/." in text or "//" in text or text[-1] == "/"):
        return text
    return (
        os.path.abspath(text).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    )


class ResultStore:
    """SQLite-backed store of :class:`Record` s. One connection per thread: open a store
    in the thread that uses it."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._committed = -COMMIT_EVERY  # the first records stored are committed at once
        #: Set when the file was damaged and moved aside: what happened, for the user
        #: (:class:`~fminspect.batch.evaluation.Evaluation` reports it as a warning).
        self.recovered: str | None = None
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            if not is_damaged(exc):
                raise  # locked, read-only, full disk: not a damaged file
            self.recovered = set_aside(self.path, exc)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT)
        try:
            self._prepare(db)
        except BaseException:
            db.close()
            raise
        return db

    def _prepare(self, db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # no fsync per commit (see above)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            # a cache of another release: start afresh rather than misread it
            db.executescript(
                "DROP TABLE IF EXISTS records; DROP TABLE IF EXISTS file_digests; "
                "DROP TABLE IF EXISTS aggregates; DROP TABLE IF EXISTS pair_scores; "
                "DROP TABLE IF EXISTS pair_names;"
            )
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.executescript(SCHEMA)
        db.commit()

    def close(self) -> None:
        """Commit what was stored and close the database."""
        self._db.commit()
        self._db.close()

    def __enter__(self) -> ResultStore:
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

    def digests(self, paths: Sequence[_Path], threads: int = 1) -> dict[_Path, str | OSError]:
        """:meth:`digest` of many files (paths or their texts: the answer is keyed by what
        was given; texts are quicker to hash and to look up), the unknown ones hashed on
        ``threads`` threads (reading and hashing release the interpreter lock). A file
        that cannot be read maps to its ``OSError``."""
        out: dict[_Path, str | OSError] = {}
        unique = list(dict.fromkeys(paths))
        texts = [_path_text(p) for p in unique]
        known = {
            row[0]: row[1:]
            for row in self._rows_in(
                "file_digests", "path", "size, mtime_ns, digest", texts, self._count
            )
        }
        todo: list[tuple[_Path, str, os.stat_result]] = []
        for path, text in zip(unique, texts, strict=True):
            try:
                st = os.stat(path)  # (the text has undecodable bytes escaped)
            except OSError as exc:
                out[path] = exc
                continue
            row = known.get(text)
            if row and row[0] == st.st_size and row[1] == st.st_mtime_ns:
                out[path] = str(row[2])
            else:
                todo.append((path, text, st))

        def attempt(path: _Path) -> str | OSError:
            try:
                return file_digest(path)
            except OSError as exc:
                return exc

        if threads > 1 and len(todo) > 1:
            with ThreadPoolExecutor(threads) as pool:
                hashed = list(pool.map(attempt, [p for p, _, _ in todo]))
        else:
            hashed = [attempt(p) for p, _, _ in todo]
        rows = []
        for (path, text, st), digest in zip(todo, hashed, strict=True):
            out[path] = digest
            if isinstance(digest, str):
                rows.append((text, st.st_size, st.st_mtime_ns, digest))
        self._db.executemany("INSERT OR REPLACE INTO file_digests VALUES (?, ?, ?, ?)", rows)
        return out

    # ------------------------------------------------------------------ records
    def has(self, key: str) -> bool:
        """Whether a record is stored under ``key``."""
        return bool(self.present([key]))

    def present(self, keys: Iterable[str]) -> set[str]:
        """Those of ``keys`` that have a record (read as :meth:`_rows_in` says: 0.31 s for
        every key of a store of 340,000 records, against 0.49 s looking up 220,000 of them
        in the order given)."""
        return {k for (k,) in self._rows_in("records", "key", "", keys, self._last_rowid)}

    def _last_rowid(self, table: str) -> int:
        """The largest row number of ``table``: at least its number of rows (rows replaced
        get new numbers), a guess that errs towards the lookups."""
        return int(self._db.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0)

    def _count(self, table: str) -> int:
        return int(self._db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def _rows_in(
        self,
        table: str,
        key: str,
        columns: str,
        keys: Iterable[_Key],
        size: Callable[[str], int],
    ) -> Iterator[tuple[Any, ...]]:
        """The rows ``(key, *columns)`` of ``table`` whose ``key`` is one of ``keys``. Asked
        for at least half as many keys as the table has rows (``size(table)``, asked only
        then), one pass over the table; else lookups in key order, which visit the
        index's pages in order (200,000 keys: 0.12 s in one pass, 0.48 s looked up in key
        order, 0.95 s in the order given)."""
        wanted = list(dict.fromkeys(keys))
        select = f"SELECT {key}{', ' + columns if columns else ''} FROM {table}"
        if len(wanted) > _CHUNK and 2 * len(wanted) >= size(table):
            asked = set(wanted)
            yield from (row for row in self._db.execute(select) if row[0] in asked)
            return
        for chunk in _chunks(sorted(wanted)):
            yield from self._db.execute(
                f"{select} WHERE {key} IN ({','.join('?' * len(chunk))})", chunk
            )

    def get(self, key: str) -> Record | None:
        """The record stored under ``key``, or None."""
        return dict(self.get_many([key])).get(key)

    def get_many(
        self, keys: Sequence[str], *, curves: bool = True, notes: bool = True
    ) -> Iterator[tuple[str, Record]]:
        """``(key, record)`` for those of ``keys`` that are stored, in no particular order;
        ``curves=False`` / ``notes=False`` leave those out (quicker, when only the scores
        are wanted)."""
        columns = "key, score_names, scores"
        columns += ", curve_names, curves" if curves else ", '', x''"
        columns += ", notes" if notes else ", ''"
        for chunk in _chunks(sorted(set(keys))):
            rows = self._db.execute(
                f"SELECT {columns} FROM records WHERE key IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            for key, score_names, scores, curve_names, curve_blob, note_text in rows:
                values = np.frombuffer(scores, dtype="<f8").tolist()
                found = _unpack(curve_names, curve_blob)
                typed = tuple(Note.from_list(n) for n in json.loads(note_text)) if note_text else ()
                named = (
                    dict(zip(score_names.split(","), values, strict=True)) if score_names else {}
                )
                yield key, Record(named, found, typed)

    def noted(self) -> Iterator[tuple[str, tuple[Note, ...]]]:
        """``(key, notes)`` of every record stored with notes. Few are (a resized map, a
        16-bit file…): one scan that reads no scores, quicker than looking keys up (0.05–0.09 s
        against 0.86 s for a 2,000 × 40 eval's 400,000 records)."""
        rows = self._db.execute("SELECT key, notes FROM records WHERE length(notes) > 2")
        for key, text in rows:
            notes = tuple(Note.from_list(n) for n in json.loads(text))
            if notes:
                yield key, notes

    def raw_scores(self, keys: Sequence[str]) -> Iterator[tuple[str, str, bytes]]:
        """``(key, score names, scores as little-endian float64 bytes)`` for those of
        ``keys`` that are stored: the quickest read, for filling a score matrix."""
        for chunk in _chunks(sorted(set(keys))):
            yield from self._db.execute(
                "SELECT key, score_names, scores FROM records WHERE key IN "
                f"({','.join('?' * len(chunk))})",
                chunk,
            )

    # ------------------------------------------------------------------ a pair's scores
    def pairs_present(self, keys: Sequence[bytes]) -> set[bytes]:
        """Those of ``keys`` (:func:`whole_pair_key`) that have a row of every score."""
        try:
            return {k for (k,) in self._rows_in("pair_scores", "key", "", keys, self._count)}
        except sqlite3.OperationalError:  # no such table: nothing stored yet
            return set()

    def pair_scores(self, keys: Sequence[bytes]) -> Iterator[tuple[bytes, str, bytes]]:
        """``(key, score names, scores as little-endian float64 bytes)`` of those of
        ``keys`` that have a row of every score: one row per pair, where its families'
        records are one row each (at 5,019 images × 40 methods, 200,000 rows to read
        instead of 2.2 million)."""
        try:
            names = dict(self._db.execute("SELECT id, names FROM pair_names").fetchall())
            for chunk in _chunks(sorted(set(keys))):
                rows = self._db.execute(
                    "SELECT key, names, scores FROM pair_scores WHERE key IN "
                    f"({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for key, which, blob in rows:
                    if which in names:
                        yield key, names[which], blob
        except sqlite3.OperationalError:  # no such table: nothing stored yet
            return

    def put_pair_scores(
        self, rows: Iterable[tuple[bytes, str, bytes]], *, shortcut: bool = False
    ) -> bool:
        """Store rows ``(key, score names, scores)`` of every score of a pair, committed
        with the records (:meth:`put_many`'s next commit, :meth:`commit` or :meth:`close`).
        ``shortcut``: rows made while reading, committed at once (with any records pending),
        or left out after at most :data:`AGGREGATE_WAIT_MS` when the store cannot take them
        (read-only, or another process writing): False then."""
        rows = list(rows)
        if not rows:
            return True
        alone = False  # the transaction holds these rows only (records pending committed)
        try:
            if shortcut:
                self._db.execute(f"PRAGMA busy_timeout = {AGGREGATE_WAIT_MS}")
                self._db.commit()
                alone = True
            for statement in PAIRS:
                self._db.execute(statement)
            # the names' ids, asked in this transaction (another process may add names)
            ids = {}
            for names in {n for _, n, _ in rows}:
                self._db.execute("INSERT OR IGNORE INTO pair_names (names) VALUES (?)", (names,))
                (ids[names],) = self._db.execute(
                    "SELECT id FROM pair_names WHERE names = ?", (names,)
                ).fetchone()
            self._db.executemany(
                "INSERT OR REPLACE INTO pair_scores VALUES (?, ?, ?)",
                [(k, ids[n], b) for k, n, b in rows],
            )
            if shortcut:
                self._db.commit()
        except sqlite3.OperationalError:
            if not shortcut:
                raise
            if alone and self._db.in_transaction:
                self._db.rollback()
            return False
        finally:
            if shortcut:
                self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT * 1000}")
        return True

    def put_many(self, items: Iterable[tuple[str, Record]]) -> None:
        """Store records; committed once :data:`COMMIT_EVERY` seconds have passed since the
        last commit (a commit per work unit cost ~1 ms each)."""
        rows = []
        for key, rec in items:
            names, blob = _pack(rec.curves)
            notes = json.dumps([n.as_list() for n in rec.notes]) if rec.notes else ""
            scores = np.array(list(rec.scores.values()), dtype="<f8").tobytes()
            rows.append((key, ",".join(rec.scores), scores, names, blob, notes))
        self._db.executemany("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?)", rows)
        now = time.monotonic()
        if now - self._committed >= COMMIT_EVERY:
            self._db.commit()
            self._committed = now

    def commit(self) -> None:
        """Commit pending rows."""
        self._db.commit()

    # ------------------------------------------------------------------ dataset values
    def get_aggregate(self, key: str) -> Aggregate | None:
        """The dataset values stored under ``key``, or None (also when this store has no
        table for them yet, or the row cannot be read)."""
        try:
            row = self._db.execute(
                'SELECT value_names, "values", counts, n_images, curve_names, curves '
                "FROM aggregates WHERE key = ?",
                (key,),
            ).fetchone()
        except sqlite3.OperationalError:  # no such table: nothing stored yet
            return None
        if row is None:
            return None
        value_names, values, counts, n_images, curve_names, curves = row
        try:
            numbers = np.frombuffer(values, dtype="<f8").tolist()
            named = dict(zip(value_names.split(","), numbers, strict=True)) if value_names else {}
            return Aggregate(named, json.loads(counts), int(n_images), _unpack(curve_names, curves))
        except (ValueError, TypeError):  # not what this version writes: computed again
            return None

    def put_aggregate(self, key: str, aggregate: Aggregate) -> bool:
        """Store one method's dataset values and commit at once (with any records pending),
        so that no write lock is held afterwards; False, after at most
        :data:`AGGREGATE_WAIT_MS`, when the store cannot take them (read-only, or another
        process writing): they are only a shortcut."""
        curve_names, curves = _pack(aggregate.curves)
        row = (
            key,
            ",".join(aggregate.values),
            np.array(list(aggregate.values.values()), dtype="<f8").tobytes(),
            json.dumps(aggregate.counts),
            aggregate.n_images,
            curve_names,
            curves,
        )
        try:
            self._db.execute(f"PRAGMA busy_timeout = {AGGREGATE_WAIT_MS}")
            self._db.execute(AGGREGATES)
            self._db.execute("INSERT OR REPLACE INTO aggregates VALUES (?, ?, ?, ?, ?, ?, ?)", row)
            self._db.commit()
        except sqlite3.OperationalError:
            return False
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT * 1000}")
        return True


def _chunks(items: list[_Key]) -> Iterator[list[_Key]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


# ---------------------------------------------------------------------------- locations
def user_cache_dir() -> Path:
    """fminspect's folder in the user's cache: ``$FMINSPECT_CACHE_DIR`` if set, else
    ``$XDG_CACHE_HOME/fminspect`` or ``~/.cache/fminspect`` (``~/Library/Caches/fminspect``
    on macOS, ``%LOCALAPPDATA%\\fminspect\\cache`` on Windows)."""
    env = os.environ.get("FMINSPECT_CACHE_DIR")
    if env:
        return Path(env)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "fminspect" / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "fminspect"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fminspect"


def default_store_path() -> Path:
    """The store used where no ``eval`` store is known for a dataset."""
    return user_cache_dir() / "results.sqlite"


def _index() -> sqlite3.Connection:
    path = user_cache_dir() / "stores.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30)
    db.execute(
        "CREATE TABLE IF NOT EXISTS stores (folder TEXT NOT NULL, store TEXT NOT NULL, "
        "used REAL NOT NULL, PRIMARY KEY (folder, store))"
    )
    columns = {row[1] for row in db.execute("PRAGMA table_info(stores)")}
    if "scores" not in columns:  # (an index written before the scores were counted)
        with db:
            db.execute("ALTER TABLE stores ADD COLUMN scores INTEGER NOT NULL DEFAULT 0")
    return db


def register_store(
    folders: Iterable[Path | str], store: Path | str, scores: Mapping[str, int] | None = None
) -> None:
    """Remember that ``store`` holds results for the datasets whose GT lies in ``folders``
    (:func:`store_for` finds it): ``scores`` counts, per folder (as ``str``), the scores an
    evaluation asked of it (images × methods × measures; the most a store was asked for is
    kept). Failing to write the index (a read-only home) only means the window will not
    find these results; it never stops an evaluation."""
    counts = {_path_text(f): n for f, n in (scores or {}).items()}
    rows = [
        (_path_text(f), _path_text(store), time.time(), counts.get(_path_text(f), 0))
        for f in folders
    ]
    try:
        db = _index()
        with db:
            db.executemany(
                "INSERT INTO stores (folder, store, used, scores) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (folder, store) DO UPDATE SET used = excluded.used, "
                "scores = max(scores, excluded.scores)",
                rows,
            )
        db.close()
    except (OSError, sqlite3.Error):
        pass


def store_for(folder: Path | str) -> Path:
    """The store to use for a dataset whose GT lies in ``folder``: of those an ``eval`` used
    for it (that still exist), the one asked for the most of its scores, the last used among
    equals; else :func:`default_store_path`. (By recency alone, an ``eval --images`` of 18
    cases into a new folder had the window and the gallery score 20,000 pairs again.)"""
    try:
        db = _index()
        rows = db.execute(
            "SELECT store FROM stores WHERE folder = ? ORDER BY scores DESC, used DESC",
            (_path_text(folder),),
        ).fetchall()
        db.close()
    except (OSError, sqlite3.Error):
        rows = []
    for (store,) in rows:
        if Path(store).is_file():
            return Path(store)
    return default_store_path()
