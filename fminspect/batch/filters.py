"""Filters over the browser's list: which samples are listed and walked (no Qt).

A filter is typed as clauses joined by ``and``, each one possibly preceded by ``not``:

``Sm[FT] < 0.5``
    a measure of one model (any key being scored; ``<``, ``<=``, ``>``, ``>=``, ``=``);
``Sm[FT] - Sm[RC] < -0.05``
    the difference of two models on a measure (where FT is worse than RC by 0.05);
``name ~ Crab`` / ``name ~ *-Crab-1?``
    the sample's name holds the text (case-insensitive), or matches the pattern (a pattern
    with ``*``, ``?`` or ``[…]`` matches the whole name);
``dataset = COD10K`` / ``dataset ~ NC*``
    the sample's dataset (case-insensitive; ``~`` as for names);
``tag 1`` / ``tag "GT error"`` / ``tagged`` / ``untagged``
    the user's tags;
``cod10k=Aquatic`` / ``cod10k-sub=Crab`` / ``attrs.csv:occlusion`` / ``attrs.csv:size=small``
    COD10K's super- or sub-class from the name, or an attribute table's subset: the same
    rules and files as ``fminspect eval --subsets`` (:class:`~fminspect.batch.subsets.Subsets`;
    the class or value in any case: ``cod10k=aquatic``);
``share < 0.05`` / ``empty gt``
    the object's share of the image (the GT's foreground pixels over all), and a GT with no
    foreground at all (share 0);
``problems``
    a sample with a file that cannot be read, or that was converted (resized, 16-bit, …)
    when the window opened or scored it or when the ``eval`` whose stored scores it reads
    did (the Problems list);
``selected``
    the samples selected in the scatter view.

What a filter knows of the samples beyond their scores is a :class:`Facts`. A sample whose
score or share is not known yet does not pass a clause on it (nor its ``not``): it is listed
once that arrives. :func:`parse` says what it cannot read, naming the clause.
"""

from __future__ import annotations

import fnmatch
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fminspect.batch.scores import ScoreMatrix
from fminspect.batch.subsets import SUBSET_RULES, SubsetError, Subsets, subsets_rule

_OPS: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
    "=": lambda a, b: np.isclose(a, b, rtol=0, atol=5e-4),  # as printed: 3 decimals
}
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_TERM = r"(?P<{k}>[\w.@]+)\[(?P<{m}>[^\]]+)\]"
_SCORE = re.compile(
    rf"^{_TERM.format(k='key', m='a')}(?:\s*-\s*{_TERM.format(k='key2', m='b')})?"
    rf"\s*(?P<op><=|>=|<|>|=)\s*(?P<value>{_NUMBER})$"
)
_NAME = re.compile(r"^name\s*~\s*(?P<text>.+)$", re.IGNORECASE)
_DATASET = re.compile(r"^dataset\s*(?P<op>=|~)\s*(?P<text>.+)$", re.IGNORECASE)
_TAG = re.compile(r"^tag\s+(?P<tag>.+)$", re.IGNORECASE)
_SHARE = re.compile(rf"^share\s*(?P<op><=|>=|<|>|=)\s*(?P<value>{_NUMBER})$", re.IGNORECASE)
_SUBSET = re.compile(r"^(?P<rule>cod10k(?:-sub)?|.+\.csv)\s*[=:]\s*(?P<label>.+)$", re.IGNORECASE)


class FilterError(ValueError):
    """A filter that cannot be read; the message names the clause and what is expected."""


def _no_tags(name: str) -> frozenset[int]:
    return frozenset()


@dataclass(frozen=True)
class Facts:
    """What a filter knows of each sample beyond its scores (by name)."""

    tags_of: Callable[[str], frozenset[int]] = _no_tags
    #: the samples selected in the scatter view
    chosen: frozenset[str] = frozenset()
    #: the object's share of the image per sample (0: an empty GT); None: not read yet
    shares: Mapping[str, float] | None = None
    #: the samples with a problem file
    problems: frozenset[str] = frozenset()
    #: the dataset the samples belong to
    dataset: str = ""

    def share(self, names: Sequence[str]) -> np.ndarray:
        """The shares of ``names`` (NaN where not known)."""
        known = self.shares or {}
        return np.array([known.get(n, np.nan) for n in names], np.float64)


@dataclass(frozen=True)
class Clause:
    """One clause: what it says (for the bar), and its test over the samples."""

    text: str
    negated: bool
    #: (matrix, names, facts) -> bool per sample (natural order)
    test: Callable[[ScoreMatrix, Sequence[str], Facts], np.ndarray]
    #: a clause on values that arrive later (scores, shares): (matrix, names, facts) ->
    #: where the value is not known yet (passes neither way)
    unknown: Callable[[ScoreMatrix, Sequence[str], Facts], np.ndarray] | None = None
    #: it depends on scores (made again as they arrive)
    on_scores: bool = False
    #: it reads the objects' shares (which the window reads when a filter asks for them)
    uses_shares: bool = False
    #: it reads what :class:`Facts` hold (tags, shares, the selection, problems)
    on_facts: bool = False
    #: a subset clause's labels of some names (a clause that keeps nothing names those
    #: there are: a misspelt class)
    labels: Callable[[Sequence[str]], set[str]] | None = None

    def known_labels(self, names: Sequence[str]) -> list[str]:
        """The labels ``names`` have, for a subset clause (empty for others)."""
        return [] if self.labels is None else sorted(self.labels(names))


@dataclass(frozen=True)
class Filter:
    """Clauses that must all hold."""

    text: str
    clauses: tuple[Clause, ...]

    @property
    def on_scores(self) -> bool:
        return any(c.on_scores for c in self.clauses)

    @property
    def on_facts(self) -> bool:
        """It depends on what :class:`Facts` hold (made again when they change)."""
        return any(c.on_facts for c in self.clauses)

    def mask(
        self, matrix: ScoreMatrix, facts: Facts | Callable[[str], frozenset[int]] = _no_tags
    ) -> np.ndarray:
        """Which samples of ``matrix`` (natural order) pass; ``facts`` (or only a function
        giving a sample's tags) what is known of them beyond their scores."""
        if not isinstance(facts, Facts):
            facts = Facts(tags_of=facts)
        names = matrix.samples
        keep = np.ones(len(names), bool)
        for c in self.clauses:
            held = c.test(matrix, names, facts)
            if c.negated:  # an unknown value passes neither a clause nor its negation
                held = ~held
                if c.unknown is not None:
                    held &= ~c.unknown(matrix, names, facts)
            keep &= held
        return keep


def parse(
    text: str,
    keys: Sequence[str],
    methods: Sequence[str],
    tag_names: dict[int, str] | None = None,
    subsets: Callable[[str], Subsets] = subsets_rule,
) -> Filter | None:
    """The filter typed as ``text`` (None for an empty one). ``keys`` and ``methods``: the
    measures scored and the models of the dataset (named in the message of a wrong one).

    Raises
    ------
    FilterError
        A clause that cannot be read (its text, and the forms accepted).
    """
    text = text.strip()
    if not text:
        return None
    dangling = re.search(r"(^|\s)and$", text, re.I) and not re.search(r"~\s*and$", text, re.I)
    if dangling or re.match(r"and(\s|$)", text, re.I):  # (name ~ and: a name's text)
        raise FilterError(f"{text!r}: 'and' joins two filters; one is missing")
    parts = re.split(r"\s+and\s+", text, flags=re.IGNORECASE)
    return Filter(
        text, tuple(_clause(p.strip(), keys, methods, tag_names or {}, subsets) for p in parts)
    )


def _clause(
    part: str,
    keys: Sequence[str],
    methods: Sequence[str],
    tag_names: dict[int, str],
    subsets: Callable[[str], Subsets],
) -> Clause:
    negated = False
    body = part
    if re.match(r"^not\s+", body, re.IGNORECASE):
        negated, body = True, body[3:].strip()
    if not body:
        raise FilterError(f"{part!r}: nothing to filter by")
    m = _SCORE.match(body)
    if m:
        return _score_clause(part, negated, m, keys, methods)
    m = _NAME.match(body)
    if m:
        pattern = m["text"].strip().strip("\"'").lower()
        glob = any(ch in pattern for ch in "*?[")

        def named(mx: ScoreMatrix, names: Sequence[str], t: object) -> np.ndarray:
            low = [n.lower() for n in names]
            if glob:
                return np.array([fnmatch.fnmatchcase(n, pattern) for n in low], bool)
            return np.array([pattern in n for n in low], bool)

        return Clause(part, negated, named)
    m = _DATASET.match(body)
    if m:
        wanted = m["text"].strip().strip("\"'").lower()
        exact = m["op"] == "="
        glob = not exact and any(ch in wanted for ch in "*?[")

        def in_dataset(mx: ScoreMatrix, names: Sequence[str], f: Facts) -> np.ndarray:
            have = f.dataset.lower()
            if exact:
                held = have == wanted
            else:
                held = fnmatch.fnmatchcase(have, wanted) if glob else wanted in have
            return np.full(len(names), held, bool)

        return Clause(part, negated, in_dataset, on_facts=True)
    lowered = body.lower()
    if lowered in ("tagged", "untagged"):
        want = lowered == "tagged"
        return Clause(
            part,
            negated,
            lambda mx, names, f: np.array([bool(f.tags_of(n)) == want for n in names], bool),
            on_facts=True,
        )
    m = _TAG.match(body)
    if m:
        slot = _slot(m["tag"], tag_names, part)
        return Clause(
            part,
            negated,
            lambda mx, names, f: np.array([slot in f.tags_of(n) for n in names], bool),
            on_facts=True,
        )
    if lowered in ("selected", "problems", "empty gt"):
        return _fact_clause(part, negated, lowered)
    m = _SHARE.match(body)
    if m:
        op, value = _OPS[m["op"]], float(m["value"])

        def share(mx: ScoreMatrix, names: Sequence[str], f: Facts) -> np.ndarray:
            v = f.share(names)
            with np.errstate(invalid="ignore"):
                return np.asarray(op(v, value), bool) & ~np.isnan(v)

        unknown = lambda mx, names, f: np.isnan(f.share(names))  # noqa: E731
        return Clause(part, negated, share, unknown, uses_shares=True, on_facts=True)
    m = _SUBSET.match(body)
    if m:
        rule = m["rule"] if m["rule"].lower() not in SUBSET_RULES else m["rule"].lower()
        try:
            table = subsets(rule)
        except SubsetError as exc:
            raise FilterError(f"{part!r}: {exc}") from None
        label = m["label"].strip().lower()  # (a trial typed cod10k=aquatic: nothing listed)

        def in_subset(mx: ScoreMatrix, names: Sequence[str], t: object) -> np.ndarray:
            return np.array([label in {x.lower() for x in table.labels(n)} for n in names], bool)

        def labels(names: Sequence[str]) -> set[str]:
            return {x for n in names for x in table.labels(n)}

        return Clause(part, negated, in_subset, labels=labels)
    raise FilterError(
        f"{part!r} is not a filter; write e.g. Sm[{methods[0] if methods else 'A'}] < 0.5, "
        "Sm[A] - Sm[B] < -0.05, name ~ Crab, dataset = NC4K, tag 1, untagged, cod10k=Aquatic, "
        "cod10k-sub=Crab, FILE.csv:attribute, share < 0.05, empty gt, problems or selected, "
        "joined by 'and', each possibly after 'not'"
    )


def _fact_clause(part: str, negated: bool, fact: str) -> Clause:
    """``selected``, ``problems`` or ``empty gt``."""
    if fact in ("selected", "problems"):  # a set of names the Facts hold
        member = "chosen" if fact == "selected" else "problems"
        return Clause(
            part,
            negated,
            lambda mx, names, f: np.array([n in getattr(f, member) for n in names], bool),
            on_facts=True,
        )
    return Clause(
        part,
        negated,
        lambda mx, names, f: f.share(names) == 0,
        lambda mx, names, f: np.isnan(f.share(names)),
        uses_shares=True,
        on_facts=True,
    )


def _slot(text: str, tag_names: dict[int, str], part: str) -> int:
    name = text.strip().strip("\"'").strip()
    if name.isdigit() and 1 <= int(name) <= 9:
        return int(name)
    for slot, tag in tag_names.items():
        if tag.lower() == name.lower():
            return slot
    known = ", ".join(f"{s} {n}" for s, n in sorted(tag_names.items()))
    raise FilterError(f"{part!r}: no tag {name!r} (the tags: {known or '1–9'})")


def _score_clause(
    part: str, negated: bool, m: re.Match[str], keys: Sequence[str], methods: Sequence[str]
) -> Clause:
    key, a, key2, b = m["key"], m["a"].strip(), m["key2"], m["b"]
    for k in (key, key2):
        if k is not None and k not in keys:
            raise FilterError(f"{part!r}: {k} is not being scored (scored: {', '.join(keys)})")
    if key2 is not None and key2 != key:
        raise FilterError(f"{part!r}: a difference of two models is on one measure ({key})")
    for model in (a, b.strip() if b else None):
        if model is not None and model not in methods:
            raise FilterError(f"{part!r}: no model {model!r} (models: {', '.join(methods)})")
    op, value = _OPS[m["op"]], float(m["value"])

    def values(mx: ScoreMatrix) -> np.ndarray:
        if a not in mx.method_index or key not in mx.key_index:
            return np.full(len(mx.samples), np.nan)
        v = mx.column(a, key)
        if b is not None:
            v = v - mx.column(b.strip(), key) if b.strip() in mx.method_index else v * np.nan
        return np.asarray(v, dtype=np.float64)

    def test(mx: ScoreMatrix, names: Sequence[str], f: Facts) -> np.ndarray:
        v = values(mx)
        with np.errstate(invalid="ignore"):
            held = np.asarray(op(v, value), bool)
        return np.asarray(held & ~np.isnan(v), bool)

    def unknown(mx: ScoreMatrix, names: Sequence[str], f: Facts) -> np.ndarray:
        return np.asarray(np.isnan(values(mx)), bool)

    return Clause(part, negated, test, unknown, on_scores=True)
