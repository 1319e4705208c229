"""The walk: the order in which the current dataset's samples are listed and stepped through.

Whatever orders the browser — by a measure of one model (worst or best first), by the
difference of two models on a measure, by how differently two measures rank the models on a
sample (Kendall's τ, lowest first), or by name — is the order ``D``/``→`` and ``A``/``←``
walk: :meth:`Walk.neighbour` is what stepping asks. The scores come from the dataset's
:class:`~fminspect.batch.scores.ScoreMatrix` as the background evaluation fills it (never
pixels), and an order by a score is made again as they land, with NumPy: thousands of
samples × dozens of models sort in milliseconds.

A filter (:mod:`fminspect.batch.filters`) narrows the list: only the samples it passes
are listed and walked, in the same order.

Columns (what the browser shows, and sorts by): 0 the sample's name; 1…k a model's value of
the measure (the shown models, then A and B of the pair when not shown); k + 1 the
difference A − B; k + 2 τ of the two measures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from fminspect.batch.filters import Facts, Filter
from fminspect.batch.scores import ScoreMatrix
from fminspect.meta.rankings import disagreement
from fminspect.metrics import MEASURES_BY_KEY, default_keys


class Walk:
    """The samples of one dataset in the order they are listed and walked (no Qt).

    Attributes
    ----------
    matrix : ScoreMatrix
        The dataset's scores (filled as they arrive).
    models : list of str
        The model columns: the shown models, then A and B of the pair if not shown.
    order : ndarray of intp
        Row → sample index (into ``matrix.samples``, natural order): the samples the
        filter passes, in the order.
    sort_column : int
        The column the order follows (0: the name).
    descending : bool
        Largest first (for a score column; for the name: Z to A).
    """

    def __init__(self) -> None:
        self.matrix = ScoreMatrix([], [], default_keys())
        self.models: list[str] = []
        self.shown: list[str] = []
        self.measure = "Sm"
        self.pair = ("", "")
        self.measures_xy = ("maxFm", "Sm")
        self.order = np.zeros(0, dtype=np.intp)
        self.sort_column = 0
        self.descending = False
        self._tau = np.zeros(0)  # τ(X, Y) per sample; NaN also where not computed yet
        self._tau_known = np.zeros(0, bool)
        self._row_of: np.ndarray | None = None  # sample index → row, made when asked
        self._sorted = np.zeros(0, dtype=np.intp)  # the order before the filter
        self.filter: Filter | None = None
        #: a sample's tags, for a filter by tags (by its name)
        self.tags_of: Callable[[str], frozenset[int]] = lambda name: frozenset()
        #: the listed dataset's name, for a filter by dataset
        self.dataset_name: Callable[[], str] = lambda: ""
        #: the scatter view's selection, the objects' shares (None: not read yet) and the
        #: samples with problems: what a filter knows beyond the scores
        self.chosen: frozenset[str] = frozenset()
        self.shares: dict[str, float] | None = None
        self.problems: frozenset[str] = frozenset()
        self._passed: np.ndarray | None = None  # the filter's verdict per sample

    # ------------------------------------------------------------------ what is listed
    @property
    def samples(self) -> list[str]:
        """Every sample, in natural order."""
        return self.matrix.samples

    def set_matrix(self, matrix: ScoreMatrix, shown: Iterable[str]) -> None:
        """List a dataset: its samples at once, its scores as they arrive in ``matrix``."""
        if self.matrix.samples and matrix.samples != self.matrix.samples:  # another dataset:
            self.chosen, self.shares, self.problems = frozenset(), None, frozenset()  # forget
        self.matrix, self.shown = matrix, [m for m in shown if m in matrix.method_index]
        every = matrix.methods
        if every and (self.pair[0] not in every or self.pair[1] not in every):
            self.pair = (every[0], every[1] if len(every) > 1 else every[0])
        self._recolumn()
        n = len(matrix.samples)
        self._tau, self._tau_known = np.full(n, np.nan), np.zeros(n, bool)
        self._sort()

    def set_columns(self, shown: Iterable[str]) -> None:
        """A column for each of the ``shown`` models."""
        self.shown = list(shown)
        self._recolumn()
        self._sort()

    def _recolumn(self) -> None:
        """Models A and B first (the orders by their scores sort by those columns: beside
        the names, in view however many models are shown), then the other shown models. A
        sort by a column keeps to its model (or to the difference or disagreement column)
        when the columns move."""
        known = self.matrix.method_index
        cols = [m for m in dict.fromkeys(self.pair) if m in known]
        cols += [m for m in self.shown if m in known and m not in cols]
        before, c = self.models, self.sort_column
        if 0 < c <= len(before):
            self.sort_column = 1 + cols.index(before[c - 1]) if before[c - 1] in cols else 0
        elif c > len(before):
            self.sort_column = c - len(before) + len(cols)
        self.models = cols

    def set_view(self, measure: str, pair: tuple[str, str], xy: tuple[str, str]) -> None:
        """Which measure, model pair and measure pair the columns hold."""
        if xy != self.measures_xy:
            self._tau_known[:] = False
        self.measure, self.pair, self.measures_xy = measure, pair, xy
        self._recolumn()
        self._sort()

    def scores_changed(self, samples: Iterable[int]) -> bool:
        """New scores for these sample indices; True if the order was made again (it
        depends on scores)."""
        changed = list(samples)
        if changed:
            self._tau_known[changed] = False
        on_scores = self.filter is not None and self.filter.on_scores
        if on_scores:
            self._passed = None
        if self.sort_column == 0 and not on_scores:
            return False
        self._sort()
        return True

    def set_filter(self, flt: Filter | None) -> None:
        """List only the samples ``flt`` passes (None: every sample)."""
        self.filter, self._passed = flt, None
        self._sort()

    def listed_mask(self) -> np.ndarray | None:
        """Which samples (natural order) the filter passes; None without a filter."""
        if self.filter is None:
            return None
        if self._passed is None or len(self._passed) != len(self.matrix.samples):
            self._passed = self.filter.mask(self.matrix, self.facts())
        return self._passed

    def facts(self) -> Facts:
        """What a filter knows of the samples beyond their scores."""
        return Facts(self.tags_of, self.chosen, self.shares, self.problems, self.dataset_name())

    def tags_changed(self) -> bool:
        """The user's tags, the scatter's selection, the shares or the problems changed:
        True if the list was made again (a filter on them)."""
        if self.filter is None:
            return False
        self._passed = None
        self._sort()
        return True

    @property
    def total(self) -> int:
        """Every sample of the dataset, listed or not."""
        return len(self.matrix.samples)

    # ------------------------------------------------------------------ the order
    def worst_first(self) -> bool:
        """Whether "worst first" on the current measure is largest first (lower is better)."""
        return not MEASURES_BY_KEY[self.measure].higher_is_better

    def sort(self, column: int, descending: bool = False) -> None:
        """Order by ``column`` (see the module notes); ties and unknown values keep the
        natural order, unknown values last in either direction."""
        self.sort_column, self.descending = column, descending
        self._sort()

    def _sort(self) -> None:
        self._row_of = None
        n = len(self.matrix.samples)
        if self.sort_column == 0 or n == 0 or self.sort_column > len(self.models) + 2:
            natural = np.arange(n)
            order = natural[::-1].copy() if self.descending else natural
        else:
            key = self.column_values(self.sort_column).copy()
            if self.descending:
                key = -key
            key[np.isnan(key)] = np.inf
            order = np.argsort(key, kind="stable")
        self._sorted = order  # unfiltered: where a sample the filter dropped would be
        passed = self.listed_mask()
        if passed is not None:
            order = order[passed[order]]
        self.order = order

    def row_of(self, name: str) -> int | None:
        """The row of the sample ``name`` (None if it is not listed)."""
        i = self.matrix.sample_index.get(name)
        if i is None:
            return None
        if self._row_of is None:
            self._row_of = np.full(len(self.matrix.samples), -1, dtype=np.intp)
            self._row_of[self.order] = np.arange(len(self.order))
        row = int(self._row_of[i])
        return None if row < 0 else row

    def neighbour(self, name: str, delta: int) -> str | None:
        """The sample ``delta`` rows after ``name`` in the order (wrapping around). A sample
        the filter leaves out (the one just tagged, under ``untagged``) counts from where it
        would be listed; None for a name of no sample."""
        if not len(self.order):
            return None
        row = self.row_of(name)
        if row is None:  # filtered out (a tagged sample leaving "untagged"): from its place
            i, passed = self.matrix.sample_index.get(name), self._passed
            if i is None or passed is None:
                return None
            # the rows listed before it in the order unfiltered: it sits between two rows
            place = int(np.flatnonzero(self._sorted == i)[0])
            before = int(np.count_nonzero(passed[self._sorted[:place]]))
            row = before - 1 if delta > 0 else before  # as if on the row before (after) it
        return self.matrix.samples[int(self.order[(row + delta) % len(self.order)])]

    def ordered(self) -> list[str]:
        """Every listed sample, in the order."""
        return [self.matrix.samples[int(i)] for i in self.order]

    def every_in_order(self) -> list[str]:
        """Every sample, listed or not, in the order (as if there were no filter)."""
        return [self.matrix.samples[int(i)] for i in self._sorted]

    # ------------------------------------------------------------------ values
    def column_values(self, col: int) -> np.ndarray:
        """The values of a score column for every sample (natural order)."""
        m = self.matrix
        if col <= len(self.models):
            return np.asarray(m.column(self.models[col - 1], self.measure))
        if col == len(self.models) + 1:
            a, b = self.pair
            if a not in m.method_index or b not in m.method_index:
                return np.full(len(m.samples), np.nan)
            return np.asarray(m.column(a, self.measure) - m.column(b, self.measure))
        return self._taus()

    def _taus(self) -> np.ndarray:
        todo = np.flatnonzero(~self._tau_known)
        x, y = self.measures_xy
        for i in todo:
            self._tau[i] = disagreement(self.matrix.per_model(int(i)), x, y)
        self._tau_known[todo] = True
        return self._tau

    def cell(self, row: int, col: int) -> float | str:
        """The value at ``row`` (in the order), ``col``."""
        i = int(self.order[row])
        if col == 0:
            return self.matrix.samples[i]
        return float(self.column_values(col)[i])
