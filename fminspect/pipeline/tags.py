"""Tags and notes on samples: what a researcher keeps while looking through failure cases.

A dataset folder's tags and notes live in one SQLite file beside its data
(``FOLDER/.fminspect/tags.sqlite``), written as the ranking studies are: in WAL mode with
``synchronous=FULL``, each change committed — on disk — before the window shows it, so a
window killed at any moment loses nothing it showed (tested with SIGKILL). A folder that
cannot be written (a read-only disk, a shared dataset) keeps its tags in the user's data
folder instead (:func:`tags_path` says where, and the window says it too); a file that is
not a readable database is moved aside (``tags.sqlite.damaged-TIME``) and a new one started,
with a warning, as the result cache is.

Up to nine tags (slots 1–9, on the number keys), each with a name the user gives it ("GT
error", "boundary", "small object"…); a sample has any of them. A note is free text on a
sample, or on one model's map of it. :meth:`TagStore.export` writes them as CSV or JSON — the
CSV (``dataset,sample,tags,note``) is a case list that ``fminspect eval --images`` and
``--exclude-images`` and ``fminspect rank create --samples-from`` take
(:func:`fminspect.batch.subsets.read_image_list`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import sqlite3
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fminspect.io.atomic import write_text
from fminspect.pipeline.store import is_damaged, set_aside

#: Tag slots: the number keys 1–9.
SLOTS = tuple(range(1, 10))
#: The names tags start with.
DEFAULT_NAMES = {
    1: "GT error",
    2: "boundary",
    3: "small object",
    4: "multiple objects",
    5: "camouflaged",
    6: "paper figure",
    7: "tag 7",
    8: "tag 8",
    9: "tag 9",
}
#: The longest tag name and note kept (characters).
MAX_NAME, MAX_NOTE = 80, 20_000

SCHEMA = """
CREATE TABLE IF NOT EXISTS tag_names (slot INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tags (
    dataset TEXT NOT NULL, sample TEXT NOT NULL, slot INTEGER NOT NULL,
    PRIMARY KEY (dataset, sample, slot));
CREATE TABLE IF NOT EXISTS notes (
    dataset TEXT NOT NULL, sample TEXT NOT NULL, model TEXT NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (dataset, sample, model));
"""


class TagError(ValueError):
    """A tag file, or a file to import, that cannot be used; the message names it."""


def user_data_dir() -> Path:
    """fminspect's folder for the user's own data: ``$FMINSPECT_DATA_DIR`` if set, else
    ``$XDG_DATA_HOME/fminspect`` or ``~/.local/share/fminspect`` (``~/Library/Application
    Support/fminspect`` on macOS, ``%APPDATA%\\fminspect`` on Windows)."""
    env = os.environ.get("FMINSPECT_DATA_DIR")
    if env:
        return Path(env)
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / "fminspect"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "fminspect"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "fminspect"


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError:
        return False
    return True


def tags_path(folder: Path | str, beside_data: bool = True) -> tuple[Path, bool]:
    """Where the tags of the dataset folder ``folder`` are kept, and whether that is beside
    the data (False: in the user's data folder, as ``folder`` cannot be written, or
    ``beside_data`` is False: fminspect's own demo data)."""
    folder = Path(folder).resolve()
    beside = folder / ".fminspect"
    if beside_data and ((beside / "tags.sqlite").exists() or _writable(beside)):
        return beside / "tags.sqlite", True
    key = hashlib.blake2b(str(folder).encode("utf-8", "surrogateescape"), digest_size=8)
    return user_data_dir() / "tags" / f"{folder.name}-{key.hexdigest()}.sqlite", False


def tags_file(folder: Path | str) -> tuple[Path, bool]:
    """:func:`tags_path` of a folder the user opened: fminspect's own data (the demo) keeps
    its tags in the user's data folder, never inside the installed package."""
    from fminspect.io.resources import resource_dir

    own = Path(folder).resolve().is_relative_to(resource_dir().resolve())
    return tags_path(folder, not own)


def existing_tags(folder: Path | str) -> Path | None:
    """The tag store the window keeps for ``folder``, if there is one; looked up without
    writing anything (for commands that only read the tags: ``fminspect gallery``)."""
    from fminspect.io.resources import resource_dir

    folder = Path(folder).resolve()
    beside = folder / ".fminspect" / "tags.sqlite"
    own = folder.is_relative_to(resource_dir().resolve())
    if not own and beside.is_file():
        return beside
    key = hashlib.blake2b(str(folder).encode("utf-8", "surrogateescape"), digest_size=8)
    elsewhere = user_data_dir() / "tags" / f"{folder.name}-{key.hexdigest()}.sqlite"
    return elsewhere if elsewhere.is_file() else None


@dataclass(frozen=True, slots=True)
class Case:
    """One sample's tags and notes."""

    dataset: str
    sample: str
    tags: tuple[int, ...]
    note: str
    #: notes on a model's map of it: {model: text}
    model_notes: dict[str, str]


class TagStore:
    """The tags and notes of one dataset folder (see the module notes)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        #: what happened to a damaged file, for the user (None: nothing)
        self.recovered: str | None = None
        try:
            self.db = self._open()
        except sqlite3.DatabaseError as exc:
            if not is_damaged(exc):
                raise
            self.recovered = set_aside(self.path, exc, "tag file", "the tags in it are not read")
            self.db = self._open()
        self._names = dict(DEFAULT_NAMES)
        self._names.update(dict(self.db.execute("SELECT slot, name FROM tag_names")))
        self._tags: dict[tuple[str, str], set[int]] = {}
        for dataset, sample, slot in self.db.execute("SELECT dataset, sample, slot FROM tags"):
            self._tags.setdefault((dataset, sample), set()).add(int(slot))
        self._notes: dict[tuple[str, str, str], str] = {
            (d, s, m): t for d, s, m, t in self.db.execute("SELECT * FROM notes")
        }

    @classmethod
    def for_folder(cls, folder: Path | str) -> TagStore:
        """The store of the dataset folder ``folder`` (:func:`tags_path`)."""
        return cls(tags_path(folder)[0])

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # a commit is on disk when it returns
            db.executescript(SCHEMA)
        except BaseException:
            db.close()
            raise
        return db

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> TagStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, sql: str, args: tuple[object, ...]) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute(sql, args)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")  # synchronous=FULL: on disk when this returns

    # ------------------------------------------------------------------ tags
    @property
    def names(self) -> dict[int, str]:
        """Each slot's name."""
        return dict(self._names)

    def rename(self, slot: int, name: str) -> None:
        """Name the tag of ``slot``."""
        _check_slot(slot)
        name = " ".join(str(name).split())[:MAX_NAME] or DEFAULT_NAMES[slot]
        self._write("INSERT OR REPLACE INTO tag_names VALUES (?, ?)", (slot, name))
        self._names[slot] = name

    def tags(self, dataset: str, sample: str) -> frozenset[int]:
        """The slots ``sample`` is tagged with."""
        return frozenset(self._tags.get((dataset, sample), ()))

    def toggle(self, dataset: str, sample: str, slot: int) -> bool:
        """Tag ``sample`` with ``slot``, or untag it if it was; True if it is tagged now.
        Written to disk before it returns."""
        _check_slot(slot)
        held = self._tags.setdefault((dataset, sample), set())
        if slot in held:
            self._write("DELETE FROM tags WHERE dataset=? AND sample=? AND slot=?",
                        (dataset, sample, slot))  # fmt: skip
            held.discard(slot)
            return False
        self._write("INSERT OR IGNORE INTO tags VALUES (?, ?, ?)", (dataset, sample, slot))
        held.add(slot)
        return True

    def tagged(self, dataset: str, slot: int | None = None) -> set[str]:
        """The samples of ``dataset`` with tag ``slot`` (None: with any tag)."""
        return {
            s for (d, s), held in self._tags.items()
            if d == dataset and held and (slot is None or slot in held)
        }  # fmt: skip

    def counts(self, dataset: str) -> dict[int, int]:
        """How many samples of ``dataset`` carry each tag."""
        out = dict.fromkeys(SLOTS, 0)
        for (d, _), held in self._tags.items():
            if d == dataset:
                for slot in held:
                    out[slot] += 1
        return out

    # ------------------------------------------------------------------ notes
    def note(self, dataset: str, sample: str, model: str = "") -> str:
        """The note on ``sample`` (or on ``model``'s map of it)."""
        return self._notes.get((dataset, sample, model), "")

    def set_note(self, dataset: str, sample: str, text: str, model: str = "") -> None:
        """Keep ``text`` as the note on ``sample`` (or on ``model``'s map of it); an empty
        text removes it. Written to disk before it returns."""
        text = str(text)[:MAX_NOTE]
        if text.strip():
            self._write("INSERT OR REPLACE INTO notes VALUES (?, ?, ?, ?)",
                        (dataset, sample, model, text))  # fmt: skip
            self._notes[(dataset, sample, model)] = text
        else:
            self._write("DELETE FROM notes WHERE dataset=? AND sample=? AND model=?",
                        (dataset, sample, model))  # fmt: skip
            self._notes.pop((dataset, sample, model), None)

    # ------------------------------------------------------------------ cases
    def cases(self, dataset: str | None = None) -> list[Case]:
        """Every sample with a tag or a note (of ``dataset``, or of all), by dataset and
        sample."""
        keys = {k for k, held in self._tags.items() if held}
        keys |= {(d, s) for d, s, _ in self._notes}
        out = []
        for d, s in sorted(keys):
            if dataset is not None and d != dataset:
                continue
            model_notes = {
                m: t for (dd, ss, m), t in self._notes.items() if (dd, ss) == (d, s) and m
            }
            tags = tuple(sorted(self._tags.get((d, s), ())))
            out.append(Case(d, s, tags, self._notes.get((d, s, ""), ""), model_notes))
        return out

    def export(
        self,
        path: Path | str,
        dataset: str | None = None,
        slot: int | None = None,
        *,
        listed: Sequence[tuple[str, str]] | None = None,
        order: Sequence[tuple[str, str]] = (),
    ) -> int:
        """Write the cases (of ``dataset``; with tag ``slot`` only) to ``path``: ``.json``
        as JSON, anything else as CSV (``dataset,sample,tags,note``; the tags by name,
        separated by ``;``). Written atomically; returns how many cases.

        ``listed``: these (dataset, sample) instead, in this order, with a tag or a note or
        not (what a filter lists); ``order``: the (dataset, sample) order the cases follow
        (a browser's list; the others after them, by name)."""
        if listed is not None:
            known = {(c.dataset, c.sample): c for c in self.cases(dataset)}
            chosen = [known.get((d, s)) or Case(d, s, (), "", {}) for d, s in listed]
            cases = [c for c in chosen if slot is None or slot in c.tags]
        else:
            cases = [c for c in self.cases(dataset) if slot is None or slot in c.tags]
            if order:
                place = {key: i for i, key in enumerate(order)}
                cases.sort(key=lambda c: place.get((c.dataset, c.sample), len(place)))
        path = Path(path)
        if path.suffix.lower() == ".json":
            doc = {
                "tag_names": {str(k): v for k, v in self._names.items()},
                "cases": [
                    {"dataset": c.dataset, "sample": c.sample,
                     "tags": [self._names[t] for t in c.tags], "note": c.note,
                     "model_notes": c.model_notes}
                    for c in cases
                ],
            }  # fmt: skip
            write_text(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
            return len(cases)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["dataset", "sample", "tags", "note"])
        for c in cases:
            w.writerow([c.dataset, c.sample, ";".join(self._names[t] for t in c.tags), c.note])
        write_text(path, buf.getvalue())
        return len(cases)

    def import_(
        self, path: Path | str, samples: Mapping[str, Collection[str]] | None = None
    ) -> Imported:
        """Add the tags and notes of a file :meth:`export` wrote (tags matched by name; a
        name not known here takes a free slot).

        ``samples``: the folder's datasets and their samples. A case is then kept on the
        sample of its name: in its dataset if the folder has it there, else in the one
        dataset here that has a sample of that name (a colleague's folder named otherwise:
        a trial's import applied nothing and said "3 cases read"); a case matching no sample
        here is not imported, and :class:`Imported` says so.

        Raises
        ------
        TagError
            The file cannot be read or is not such a file; nothing was changed then.
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8-sig")
            if path.suffix.lower() == ".json":
                doc = json.loads(text)
                rows = [
                    (str(c["dataset"]), str(c["sample"]), [str(t) for t in c.get("tags", [])],
                     str(c.get("note", "")), dict(c.get("model_notes", {})))
                    for c in doc["cases"]
                ]  # fmt: skip
            else:
                reader = csv.DictReader(text.splitlines())
                if not reader.fieldnames or not {"dataset", "sample"} <= set(reader.fieldnames):
                    raise TagError(f"{path}: expected the columns dataset, sample, tags, note")
                rows = [
                    (r["dataset"], r["sample"], [t for t in (r.get("tags") or "").split(";") if t],
                     r.get("note") or "", {})
                    for r in reader
                ]  # fmt: skip
        except TagError:
            raise
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise TagError(f"{path}: cannot be read as tags ({exc})") from None
        report = Imported(path, len(rows))
        if samples is not None:
            rows = _matched(rows, samples, report)
        slot_of = {name: slot for slot, name in self._names.items()}
        wanted = dict.fromkeys(n for row in rows for n in row[2])
        new = [n for n in wanted if n not in slot_of]
        # a tag not known here takes a free slot: one that keeps its default name and tags
        # no sample, and whose name the file does not use (the check once excluded every
        # slot with a name, and so every slot: no new tag could be imported)
        named = {slot_of[n] for n in wanted if n in slot_of}
        used = self._used_slots()
        free = [
            s for s in SLOTS
            if self._names[s] == DEFAULT_NAMES[s] and s not in used and s not in named
        ]  # fmt: skip
        # from the last slot: the unnamed ones ("tag 9", "tag 8", "tag 7") first, then the
        # named defaults ("GT error" last)
        free.sort(key=lambda s: (not DEFAULT_NAMES[s].startswith("tag "), -s))
        if len(new) > len(free):
            raise TagError(
                f"{path}: {len(new)} tag(s) not known here ({', '.join(map(repr, new))}) and "
                f"{len(free)} free slot(s) (a slot is free while it keeps its default name "
                "and tags no sample): nothing was imported"
            )
        for name, slot in zip(new, free, strict=False):
            self.rename(slot, name)
            slot_of[name] = slot
        for dataset, sample, names, note, model_notes in rows:
            for name in names:
                if slot_of[name] not in self.tags(dataset, sample):
                    self.toggle(dataset, sample, slot_of[name])
            if note:
                self.set_note(dataset, sample, note)
            for model, text in model_notes.items():
                self.set_note(dataset, sample, str(text), str(model))
        report.applied = len(rows)
        return report

    def _used_slots(self) -> set[int]:
        return {slot for held in self._tags.values() for slot in held}


_Row = tuple[str, str, list[str], str, dict[str, str]]


@dataclass(slots=True)
class Imported:
    """What :meth:`TagStore.import_` did with a file's cases."""

    path: Path
    read: int
    applied: int = 0
    #: the file's datasets whose cases went to another dataset of this folder
    moved: dict[str, str] = field(default_factory=dict)
    #: the cases that match no sample here ("dataset/sample"), not imported
    unmatched: list[str] = field(default_factory=list)

    def message(self) -> str:
        """One line for the status bar."""
        text = f"{self.read} case{'s' if self.read != 1 else ''} read from {self.path}"
        if self.applied != self.read:
            text += f"; {self.applied} applied"
        if self.moved:
            text += "; " + ", ".join(
                f"those of dataset '{a}' to '{b}' (the same sample names)"
                for a, b in sorted(self.moved.items())
            )
        if self.unmatched:
            first = ", ".join(self.unmatched[:3]) + (", …" if len(self.unmatched) > 3 else "")
            text += (
                f"; {len(self.unmatched)} not imported: no sample of that name here, or one in"
                f" several datasets ({first})"
            )
        return text


def _matched(
    rows: list[_Row], samples: Mapping[str, Collection[str]], report: Imported
) -> list[_Row]:
    """``rows`` on the samples of this folder (see :meth:`TagStore.import_`)."""
    where: dict[str, list[str]] = {}
    for dataset, names in samples.items():
        for name in names:
            where.setdefault(name, []).append(dataset)
    out: list[_Row] = []
    for dataset, sample, names, note, model_notes in rows:
        found = where.get(sample, [])
        if dataset not in found and len(found) == 1:
            report.moved[dataset] = found[0]
            dataset = found[0]
        elif dataset not in found:
            report.unmatched.append(f"{dataset}/{sample}")
            continue
        out.append((dataset, sample, names, note, model_notes))
    return out


def _check_slot(slot: int) -> None:
    if slot not in SLOTS:
        raise ValueError(f"a tag slot is 1–9, got {slot!r}")
