"""Which of a dataset's models the window shows, under which names, and which stand out.

A dataset of a paper's comparison holds 20–40 models; the grid, the metrics table, the curves
and the browser's columns show the *shown* ones (every model when there are at most
:data:`DEFAULT_SHOWN`, else the first :data:`DEFAULT_SHOWN` in natural order until the user
chooses). A pinned *reference* model is always shown and listed first. *Highlighted* models
are drawn thicker, with their markers, in the curves. *Aliases* are short display names.
The choice, the reference and the aliases are remembered per dataset folder (the window's
:class:`~fminspect.inspector.preferences.Preferences`).

Each model keeps its palette index — its place among all of the dataset's models — whatever
is shown, so its colour and line style never change while the user picks.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable
from typing import Any

from fminspect.inspector.events import Event
from fminspect.inspector.preferences import Preferences

DEFAULT_SHOWN = 12


def _settings_key(dataset_key: str) -> str:
    return "models/" + hashlib.sha1(dataset_key.encode("utf-8", "surrogateescape")).hexdigest()[:16]


class ModelSelection:
    """Shown models, reference, highlight and aliases of the current dataset.

    Notes
    -----
    Its events (each an :class:`~fminspect.inspector.events.Event`, with the arguments
    its callbacks get):

    changed()
        The shown models, their order, the reference or an alias changed.
    highlight_changed()
        The highlighted models changed (only the curves redraw).
    """

    def __init__(self, preferences: Preferences | None = None) -> None:
        self.changed = Event("changed")
        self.highlight_changed = Event("highlight_changed")
        self.preferences = preferences
        self.all: list[str] = []
        self._shown: set[str] = set()
        self.reference: str | None = None
        self.highlighted: set[str] = set()
        self.aliases: dict[str, str] = {}
        self.hidden_curves: set[str] = set()
        self._key = ""

    # ------------------------------------------------------------------ dataset
    def set_models(self, models: Iterable[str], dataset_key: str = "") -> None:
        """A new dataset's models; restores what was chosen for ``dataset_key`` before."""
        self.all = list(models)
        self._key = dataset_key
        self.highlighted, self.hidden_curves = set(), set()
        stored = self._load()
        self.aliases = {m: a for m, a in stored.get("aliases", {}).items() if m in self.all}
        reference = stored.get("reference")
        self.reference = reference if reference in self.all else None
        chosen = stored.get("shown")
        shown = [m for m in chosen if m in self.all] if isinstance(chosen, list) else None
        if shown is None or (chosen and not shown):  # never chosen, or none of them is left
            shown = self.all[:DEFAULT_SHOWN]
        self._shown = set(shown)
        if self.reference:
            self._shown.add(self.reference)
        self.changed.emit()

    def _load(self) -> dict[str, Any]:
        if self.preferences is None or not self._key:
            return {}
        raw = self.preferences.value(_settings_key(self._key), "")
        try:
            data = json.loads(str(raw)) if raw else {}
        except (TypeError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self) -> None:
        if self.preferences is None or not self._key:
            return
        data = {
            "shown": self.shown,
            "reference": self.reference,
            "aliases": self.aliases,
        }
        self.preferences.set_value(_settings_key(self._key), json.dumps(data))

    # ------------------------------------------------------------------ queries
    @property
    def shown(self) -> list[str]:
        """The shown models: the reference first, then the others in the dataset's order."""
        rest = [m for m in self.all if m in self._shown and m != self.reference]
        return ([self.reference] if self.reference in self._shown else []) + rest

    def is_shown(self, model: str) -> bool:
        return model in self._shown

    def name(self, model: str) -> str:
        """The display name (alias) of ``model``."""
        return self.aliases.get(model, model)

    def colour_index(self, model: str) -> int:
        """Palette index: the model's place among all of the dataset's models (a model of
        another dataset of the folder: a stable index after them, from its name)."""
        try:
            return self.all.index(model)
        except ValueError:
            return len(self.all) + zlib.crc32(model.encode("utf-8", "surrogateescape")) % 40

    def colours(self, models: Iterable[str]) -> dict[str, int]:
        """Palette index of each of ``models`` (models outside the dataset come after)."""
        out: dict[str, int] = {}
        extra = len(self.all)
        for m in models:
            if m in self.all:
                out[m] = self.all.index(m)
            else:
                out[m], extra = extra, extra + 1
        return out

    # ------------------------------------------------------------------ changes
    def set_shown(self, models: Iterable[str]) -> None:
        """Show exactly these models (the reference stays shown)."""
        shown = {m for m in models if m in self.all}
        if self.reference:
            shown.add(self.reference)
        if shown != self._shown:
            self._shown = shown
            self.highlighted &= shown
            self._save()
            self.changed.emit()

    def top_k(self, values: dict[str, float], k: int, higher_is_better: bool) -> list[str]:
        """Show the ``k`` best models by ``values`` (models without a value are not
        candidates), plus the reference; returns the k chosen, best first."""
        known = [m for m in self.all if m in values and values[m] == values[m]]
        ranked = sorted(known, key=lambda m: -values[m] if higher_is_better else values[m])
        best = ranked[:k]
        self.set_shown(best)
        return best

    def set_reference(self, model: str | None) -> None:
        """Pin ``model`` as the reference (None: unpin); it is shown and listed first."""
        if model is not None and model not in self.all:
            raise KeyError(model)
        if model == self.reference:
            return
        self.reference = model
        if model is not None:
            self._shown.add(model)
        self._save()
        self.changed.emit()

    def _clash(self, aliases: dict[str, str]) -> str | None:
        """Why these aliases would make two models look the same (None if they do not)."""
        seen: dict[str, str] = {}
        for m in self.all:
            name = aliases.get(m, m)
            if name in seen:
                return f"{seen[name]!r} and {m!r} would both be shown as {name!r}"
            seen[name] = m
        return None

    def set_alias(self, model: str, alias: str) -> None:
        """Give ``model`` a display name ('' restores its own name); ``ValueError`` if another
        model already has that name."""
        alias = alias.strip()
        trial = dict(self.aliases)
        if alias and alias != model:
            trial[model] = alias
        else:
            trial.pop(model, None)
        clash = self._clash(trial)
        if clash:
            raise ValueError(clash)
        if alias and alias != model:
            self.aliases[model] = alias
        else:
            self.aliases.pop(model, None)
        self._save()
        self.changed.emit()

    def merge_aliases(self, aliases: dict[str, str]) -> int:
        """Take the aliases of this dataset's models from ``aliases``; returns how many.
        ``ValueError`` (nothing taken) if two models would then look the same."""
        used = {m: a for m, a in aliases.items() if m in self.all and a != m}
        clash = self._clash({**self.aliases, **used})
        if clash:
            raise ValueError(clash)
        self.aliases.update(used)
        self._save()
        self.changed.emit()
        return len(used)

    def set_highlighted(self, models: Iterable[str]) -> None:
        """Highlight these models in the curves (thicker, with markers)."""
        highlighted = {m for m in models if m in self._shown}
        if highlighted != self.highlighted:
            self.highlighted = highlighted
            self.highlight_changed.emit()

    def toggle_highlight(self, model: str) -> None:
        self.set_highlighted(self.highlighted ^ {model})

    def set_curve_hidden(self, model: str, hidden: bool) -> None:
        """Hide (or show again) a model's curves only; it stays in the grid and the table."""
        before = set(self.hidden_curves)
        if hidden:
            self.hidden_curves.add(model)
        else:
            self.hidden_curves.discard(model)
        if before != self.hidden_curves:
            self.highlight_changed.emit()
