"""The cases a researcher keeps: tags and notes on the samples of the opened folder (no Qt).

:class:`Cases` opens the folder's :class:`~fminspect.pipeline.tags.TagStore` when a folder is
opened, and every change goes to disk before its event tells the window (so what the window
shows is never lost). The inspector model toggles the shown sample's tags on the number
keys and finds the next sample without a tag in the walk's order.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fminspect.inspector.events import Event
from fminspect.pipeline.tags import DEFAULT_NAMES, Imported, TagError, TagStore, tags_file


@dataclass(frozen=True, slots=True)
class ExportChoice:
    """One choice of the export dialog: its label (with its count), the tag slot it keeps
    (None: every case), a file name for it, and whether it keeps to the samples the
    filter lists (in the list's order)."""

    label: str
    slot: int | None
    file: str
    listed: bool = False


def _stem(name: str, slot: int) -> str:
    """A file name's stem for the cases of tag ``name``."""
    return re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_").lower() or f"tag{slot}"


class Cases:
    """The opened folder's tags and notes.

    Events
    ------
    opened(str)
        A folder's tags were opened; the text says where they are kept (and what was done
        with a damaged file), for the status bar.
    changed(str, str)
        The tags or a note of (dataset, sample) changed (already on disk).
    names_changed()
        A tag was renamed.
    """

    def __init__(self) -> None:
        self.store: TagStore | None = None
        self.where = ""
        #: the dataset folder opened (None: none)
        self.folder: Path | None = None
        self.opened = Event("opened")
        self.changed = Event("changed")
        self.names_changed = Event("names_changed")

    def open(self, folder: Path | str, path: Path | None = None) -> None:
        """Open the tags of the dataset folder ``folder`` (the previous folder's closed);
        ``path``: keep them in that file instead (the screenshots' own)."""
        self.close()
        self.folder = Path(folder)
        from fminspect.io.resources import resource_dir

        # fminspect's own data (the demo): its tags in the user's data folder
        own = Path(folder).resolve().is_relative_to(resource_dir().resolve())
        path, beside = (path, True) if path is not None else tags_file(folder)
        try:
            self.store = TagStore(path)
        except (OSError, sqlite3.Error) as exc:
            self.where = f"tags cannot be kept: {path} cannot be opened ({exc})"
            self.opened.emit(self.where)
            return
        self.where = (
            f"tags kept in {path}"
            if beside or own
            else f"the folder cannot be written: tags kept in {path}"
        )
        if self.store.recovered:
            self.where += f" ({self.store.recovered})"
        self.opened.emit(self.where)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    # ------------------------------------------------------------------ reading
    @property
    def names(self) -> dict[int, str]:
        """Each tag slot's name (the defaults without a folder)."""
        return self.store.names if self.store is not None else dict(DEFAULT_NAMES)

    def tags(self, dataset: str, sample: str) -> frozenset[int]:
        return self.store.tags(dataset, sample) if self.store is not None else frozenset()

    def note(self, dataset: str, sample: str, model: str = "") -> str:
        return self.store.note(dataset, sample, model) if self.store is not None else ""

    def describe(self, dataset: str, sample: str) -> str:
        """The sample's tags by name (``"1 GT error, 3 small object"``), or ""."""
        names = self.names
        return ", ".join(f"{s} {names[s]}" for s in sorted(self.tags(dataset, sample)))

    # ------------------------------------------------------------------ changing
    def toggle(self, dataset: str, sample: str, slot: int) -> bool | None:
        """Tag or untag; True/False: tagged now or not; None without a folder's store."""
        if self.store is None:
            return None
        now = self.store.toggle(dataset, sample, slot)
        self.changed.emit(dataset, sample)
        return now

    def set_note(self, dataset: str, sample: str, text: str, model: str = "") -> None:
        if self.store is None or text == self.store.note(dataset, sample, model):
            return
        self.store.set_note(dataset, sample, text, model)
        self.changed.emit(dataset, sample)

    def rename(self, slot: int, name: str) -> None:
        if self.store is not None:
            self.store.rename(slot, name)
            self.names_changed.emit()

    def export_choices(self, listed: Sequence[tuple[str, str]] | None = None) -> list[ExportChoice]:
        """What the case list can hold, for the export dialog: with ``listed`` (the
        (dataset, sample) a filter lists, in the list's order) first every one of them and
        the tagged ones among them per tag in use; then every case of the folder, or the
        cases of one tag in use."""
        if self.store is None:
            return []
        out: list[ExportChoice] = []
        if listed is not None:
            tags = {(c.dataset, c.sample): c.tags for c in self.store.cases()}
            out.append(
                ExportChoice(
                    f"every sample the filter lists ({len(listed)}), in the list's order",
                    None,
                    "listed.csv",
                    True,
                )
            )
            for slot, name in self.names.items():
                n = sum(slot in tags.get(key, ()) for key in listed)
                if n:
                    out.append(
                        ExportChoice(
                            f"listed and tagged “{name}” ({n})",
                            slot,
                            f"{_stem(name, slot)}_listed.csv",
                            True,
                        )
                    )
        cases = self.store.cases()
        out.append(
            ExportChoice(f"every tagged or annotated sample ({len(cases)})", None, "cases.csv")
        )
        for slot, name in self.names.items():
            n = sum(slot in c.tags for c in cases)
            if n:
                out.append(
                    ExportChoice(f"tagged “{name}” only ({n})", slot, f"{_stem(name, slot)}.csv")
                )
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
        """Write the cases (see :meth:`TagStore.export`: ``listed`` the samples a filter
        lists, in order; ``order`` the browser's); 0 without a store."""
        if self.store is None:
            return 0
        return self.store.export(path, dataset, slot, listed=listed, order=order)

    def import_(
        self, path: Path | str, samples: Mapping[str, Collection[str]] | None = None
    ) -> Imported:
        """Read tags and notes from a file onto ``samples``, the folder's datasets and
        their samples (see :meth:`TagStore.import_`; :class:`TagError` naming the file when
        it cannot be read)."""
        if self.store is None:
            raise TagError(f"{path}: open a dataset folder first")
        report = self.store.import_(path, samples)
        self.names_changed.emit()
        self.changed.emit("", "")
        return report
