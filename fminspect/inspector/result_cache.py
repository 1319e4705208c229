"""The window's scored results, kept for going back and for the read-ahead.

Keyed ``(sample key, model, settings key)``, most recently used last, bounded both by a
count and by the bytes of the arrays the results hold (a result keeps its intermediate
matrices: ~10 MB for a 400×550 map with the camouflage degree, so a count alone would let
80 results of a large image take gigabytes); the oldest go first. No Qt.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from fminspect.metrics import SuiteResult

#: Results kept, at most.
RESULT_CACHE_SIZE = 80
#: Bytes of the arrays the kept results may hold.
RESULT_CACHE_BYTES = 600 * 2**20

Key = tuple[Any, ...]


class ResultCache:
    """Scored results under their keys, least recently used first out.

    Also remembers the samples (and GT rule) whose camouflage degree has been computed:
    it costs 35–290 ms per image, and a result that carries it says it exists."""

    def __init__(self, size: int = RESULT_CACHE_SIZE, max_bytes: int = RESULT_CACHE_BYTES) -> None:
        self.size, self.max_bytes = size, max_bytes
        self._results: OrderedDict[Key, SuiteResult] = OrderedDict()
        self._bytes: dict[Key, int] = {}
        self._degrees: set[tuple[str, str]] = set()

    def clear(self) -> None:
        self._results.clear()
        self._bytes.clear()
        self._degrees.clear()

    def __contains__(self, key: Key) -> bool:
        return key in self._results

    def __getitem__(self, key: Key) -> SuiteResult:
        return self._results[key]

    def take(self, key: Key) -> SuiteResult | None:
        """The result under ``key`` (now the most recently used), or None."""
        result = self._results.get(key)
        if result is not None:
            self._results.move_to_end(key)
        return result

    def store(self, key: Key, result: SuiteResult, nbytes: int) -> None:
        """Keep ``result`` (its arrays ``nbytes``), dropping the oldest beyond the bounds
        (the newest is always kept)."""
        self._results[key] = result
        self._results.move_to_end(key)
        self._bytes[key] = nbytes
        while len(self._results) > 1 and (
            len(self._results) > self.size or self.nbytes > self.max_bytes
        ):
            old, _ = self._results.popitem(last=False)
            self._bytes.pop(old, None)
        if result.camouflage_context is not None:
            self._degrees.add((key[0], result.pair.gt.norm.gt_rule))

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays held (arrays shared between results, such as a sample's GT
        and its distance maps, are counted with each: an upper bound)."""
        return sum(self._bytes.values())

    def has_degree(self, sample_key: str, gt_rule: str) -> bool:
        """Whether a result of this sample under this GT rule computed its camouflage
        degree (kept even when the result itself was dropped)."""
        return (sample_key, gt_rule) in self._degrees

    def reusable(
        self, sample_key: str, model: str, interpolation: str, norm: Any
    ) -> SuiteResult | None:
        """The latest result of this model under the same resize rule and normalisation
        (another settings key: an update of it computes only what the change affects)."""
        for (s, m, (_, interp, _)), result in reversed(self._results.items()):
            if (s, m, interp) == (sample_key, model, interpolation) and result.params.norm == norm:
                return result
        return None

    def models(self, sample_key: str, settings_key: Any) -> set[str]:
        """The models of a sample with a result under these settings."""
        return {m for (s, m, k) in self._results if s == sample_key and k == settings_key}
