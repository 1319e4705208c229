"""Uncertainty of dataset values and paired differences between methods, over images.

A dataset value (mean S-measure, max of the image-averaged F curve, pooled IoU…) is a
statistic of the dataset's images: another sample of images from the same distribution
would give another value. Following the usual practice for test sets (e.g. Dror et al.,
ACL 2018, on significance testing in NLP benchmarks), fminspect resamples **images**:

* **Confidence interval**: the percentile bootstrap (Efron & Tibshirani, *An Introduction to
  the Bootstrap*, 1993, §13.3): B resamples of the n images with replacement; each key's
  value is recomputed on every resample *as the dataset value is formed* (a weighted mean of
  per-image values; the max of the weighted image-averaged curve; weighted pooled counts —
  :meth:`~fminspect.metrics.dataset.DatasetAccumulator.replicates`), and the interval is the
  α/2 and 1 − α/2 quantiles of the B values.
* **Paired differences**: every method is evaluated on the *same* resamples, so the
  difference between two methods on each resample is a paired bootstrap draw of the
  difference of their dataset values. Two-sided p-value from the bootstrap standard error
  (Efron & Tibshirani §12): t = d / (SE*(d)·√(n/(n − 1))), p = 2·(1 − T_{n−1}(|t|)), d the
  observed difference, SE* the standard deviation of its B paired replicates (the bootstrap
  divides the variance by n where the unbiased estimate divides by n − 1), T_{n−1}
  Student's t distribution: for a mean this is the paired t-test with a bootstrap standard
  error, and it keeps its level down to a few dozen images (the normal approximation
  rejected a true null 15 % of the time at n = 5). Below :data:`MIN_IMAGES` images no test
  is made (p is NaN) and every interval is flagged as unreliable.
  The count-based bootstrap p-value, #{|d* − d| ≥ |d|}, cannot go below 1/(B + 1): with
  20 methods (190 pairs) Holm's correction would then need B ≥ 3800 for any difference
  to be significant. For keys that are a mean over images, the Wilcoxon signed-rank test
  on the per-image differences (``scipy.stats.wilcoxon``) is offered as well.
* **Multiple comparisons**: Holm's step-down correction over all pairs of methods of one key
  on one dataset (Holm, Scand. J. Statist. 1979), controlling the family-wise error rate.
* **Groups**: the compact letter display of Piepho (*J. Comput. Graph. Statist.* 13, 2004,
  "insert-absorb"): two methods share a letter exactly when they do not differ
  significantly; letters are given in the order of the best method each covers.

Coverage and error rates of these procedures are checked by simulation in
``tests/batch/test_significance.py`` (numbers in the README).

Only images every compared method has are used (a method with missing maps is compared on
the images it has with the others left out of its pairs: it gets its own interval, no
group), so the pairing is exact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Fewest images a test is made on (fewer: p is NaN; the intervals are flagged).
MIN_IMAGES = 10
#: Defaults: resamples, level, seed.
RESAMPLES = 1000
LEVEL = 0.95
SEED = 0
TESTS = ("bootstrap", "wilcoxon")


@dataclass(frozen=True, slots=True)
class Setup:
    """How intervals and tests are made (written beside every number they give)."""

    resamples: int = RESAMPLES
    level: float = LEVEL
    seed: int = SEED
    test: str = "bootstrap"
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if self.resamples < 100:
            raise ValueError(f"at least 100 bootstrap resamples are needed, got {self.resamples}")
        if not 0.5 <= self.level < 1:
            raise ValueError(f"the confidence level must lie in [0.5, 1), got {self.level}")
        if self.test not in TESTS:
            raise ValueError(f"test must be one of {', '.join(TESTS)}, got {self.test!r}")

    def describe(self, n: int, unit: str = "images") -> dict[str, Any]:
        """The method, its parameters and n, as every output names them; ``unit``: what is
        resampled and counted — ``images``, or ``groups`` for a grouped evaluation (the
        cluster bootstrap: whole groups are drawn)."""
        test = (
            "paired bootstrap t-test of the difference: t = d / (SE*·√(n/(n − 1))), n − 1 "
            "degrees of freedom, SE* over the shared resamples"
            if self.test == "bootstrap"
            else "Wilcoxon signed-rank test on the per-image differences (keys that are a "
            "mean over images; the paired bootstrap for the others)"
        )
        if unit == "groups":
            test = test.replace("per-image differences", "differences of the groups' means")
        return {
            "reliable": n >= MIN_IMAGES,
            "interval": f"percentile bootstrap over {unit}, {self.level:.0%}"
            + (" (whole groups resampled)" if unit == "groups" else ""),
            "test": test,
            "correction": "Holm over every pair of methods, per key and dataset",
            "alpha": self.alpha,
            "resamples": self.resamples,
            "images": n,
            "unit": unit,
            "units": n,
            "seed": self.seed,
        }


def spread(value: float, interval: tuple[float, float], decimals: int) -> tuple[str, ...]:
    """How an interval is written beside its value at ``decimals`` decimals:
    ``("±", h)`` when both ends are as far from the value at that precision;
    ``("+-", up, down)`` when they are not (percentile intervals may be asymmetric); and
    ``("[]", low, high)`` when the value lies outside its interval (the bootstrap of a
    maximum can put it there). Numbers are returned formatted."""
    low, high = interval
    up, down = high - value, value - low
    if round(up, decimals) < 0 or round(down, decimals) < 0:  # outside at that precision
        return ("[]", f"{low:.{decimals}f}", f"{high:.{decimals}f}")
    up, down = max(up, 0.0), max(down, 0.0)  # (rounding noise: not "-0.000")
    a, b = f"{up:.{decimals}f}", f"{down:.{decimals}f}"
    return ("±", a) if a == b else ("+-", a, b)


def spread_text(value: float, interval: tuple[float, float], decimals: int) -> str:
    """:func:`spread` as plain text: ``±0.004``, ``+0.004/−0.005`` or ``[0.801, 0.812]``."""
    kind, *parts = spread(value, interval, decimals)
    if kind == "±":
        return f"±{parts[0]}"
    if kind == "+-":
        return f"+{parts[0]}/−{parts[1]}"
    return f"[{parts[0]}, {parts[1]}]"


#: How the tables and the window write an interval (the captions say it).
SPREAD_NOTE = (
    "± where both ends of the interval are as far from the value at the printed precision, "
    "+above/−below where they are not, [low, high] where the value lies outside it"
)


def resampling_weights(n: int, resamples: int, seed: int) -> np.ndarray:
    """(B, n) counts: how often each of the n images is drawn in each resample."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(resamples, n))
    weights = np.zeros((resamples, n), np.float64)
    np.add.at(weights, (np.repeat(np.arange(resamples), n), draws.ravel()), 1.0)
    return weights


def percentile_interval(replicates: np.ndarray, level: float) -> tuple[float, float]:
    """The (1 − level)/2 and (1 + level)/2 quantiles of the finite replicates (NaN, NaN if
    there are none)."""
    r = replicates[np.isfinite(replicates)]
    if not r.size:
        return math.nan, math.nan
    low, high = np.quantile(r, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def bootstrap_pvalue(observed: float, differences: np.ndarray, n: int) -> float:
    """Two-sided p-value of ``observed`` (a difference over ``n`` images) from the standard
    deviation of its paired bootstrap replicates (module notes); NaN when it cannot be
    tested (fewer than :data:`MIN_IMAGES` images, no spread)."""
    from scipy.stats import t as student

    d = differences[np.isfinite(differences)]
    if d.size < 2 or n < MIN_IMAGES or not math.isfinite(observed):
        return math.nan
    se = float(np.std(d, ddof=1)) * math.sqrt(n / (n - 1))
    if se <= 1e-12:  # the same on every resample (to rounding): no spread to judge by
        return 1.0 if observed == 0 else math.nan
    return float(2 * student.sf(abs(observed) / se, n - 1))


def wilcoxon_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired per-image values (NaN pairs left
    out; 1 when every difference is 0)."""
    from scipy.stats import wilcoxon

    ok = np.isfinite(a) & np.isfinite(b)
    d = a[ok] - b[ok]
    if d.size < MIN_IMAGES:
        return math.nan
    if not np.any(d != 0):
        return 1.0
    return float(wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (NaN stays NaN and is not counted)."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    running = 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[idx]))
        out[idx] = running
    return [float(v) for v in out]


def groups(order: Sequence[str], different: set[frozenset[str]]) -> dict[str, str]:
    """Piepho's compact letter display of ``order`` (best first): two methods share a
    letter exactly when their pair is not in ``different``. No method, no letter."""
    columns: list[set[str]] = [set(order)] if order else []
    for pair in sorted(different, key=lambda p: sorted(order.index(m) for m in p)):
        i, j = sorted(pair, key=order.index)
        split: list[set[str]] = []
        for col in columns:  # insert: a column holding both is split in two
            if i in col and j in col:
                split += [col - {i}, col - {j}]
            else:
                split.append(col)
        # absorb: a column inside another says nothing more
        columns = [
            c
            for k, c in enumerate(split)
            if c
            and not any((c < other) or (c == other and k2 < k) for k2, other in enumerate(split))
        ]
    # letters in the order of the best method of each column
    columns.sort(key=lambda c: min(order.index(m) for m in c))
    letters: dict[str, str] = dict.fromkeys(order, "")
    for n, col in enumerate(columns):
        for m in order:
            if m in col:
                letters[m] += _letter(n)
    return letters


def _letter(i: int) -> str:
    text = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        text = chr(ord("a") + r) + text
    return text


@dataclass(slots=True)
class KeyStats:
    """One key on one dataset: intervals, pairwise tests and groups."""

    key: str
    higher_is_better: bool
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    pairs: list[dict[str, Any]] = field(default_factory=list)
    groups: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "higher_is_better": self.higher_is_better,
            "intervals": {m: list(v) for m, v in self.intervals.items()},
            "pairs": self.pairs,
            "groups": self.groups,
        }


def compare(
    values: Mapping[str, Mapping[str, float]],
    replicates: Mapping[str, Mapping[str, np.ndarray]],
    keys: Sequence[str],
    setup: Setup,
    *,
    per_image: Mapping[str, Mapping[str, np.ndarray]] | None = None,
    comparable: Sequence[str] | None = None,
    images: int,
) -> dict[str, KeyStats]:
    """Intervals, paired tests (Holm-corrected) and groups for every key.

    Parameters
    ----------
    values : {method: {key: dataset value}}
    replicates : {method: {key: (B,) values on the shared resamples}}
    keys : the keys to report
    per_image : {method: {key: per-image values, same image order}} for the Wilcoxon test
    comparable : the methods evaluated on every image (the only ones tested and grouped;
        default: all)
    images : the number of images the values rest on (n of the t-test)
    """
    from fminspect.metrics import MEASURES_BY_KEY

    methods = list(values)
    tested = [m for m in methods if comparable is None or m in comparable]
    out: dict[str, KeyStats] = {}
    for k in keys:
        higher = MEASURES_BY_KEY[k].higher_is_better
        st = KeyStats(k, higher)
        for m in methods:
            if k in replicates.get(m, {}):
                st.intervals[m] = percentile_interval(replicates[m][k], setup.level)
        have = [m for m in tested if k in replicates.get(m, {}) and math.isfinite(values[m][k])]
        mean_kind = MEASURES_BY_KEY[k].dataset.kind == "mean"
        raw: list[float] = []
        pairs: list[tuple[str, str]] = []
        for i, a in enumerate(have):
            for b in have[i + 1 :]:
                d = values[a][k] - values[b][k]
                if setup.test == "wilcoxon" and mean_kind and per_image is not None:
                    p = wilcoxon_pvalue(per_image[a][k], per_image[b][k])
                else:
                    p = bootstrap_pvalue(d, replicates[a][k] - replicates[b][k], images)
                raw.append(p)
                pairs.append((a, b))
        adjusted = holm(raw)
        different: set[frozenset[str]] = set()
        for (a, b), p, q in zip(pairs, raw, adjusted, strict=True):
            sig = bool(q <= setup.alpha)  # NaN (not testable) is never significant
            if sig:
                different.add(frozenset((a, b)))
            st.pairs.append(
                {
                    "a": a,
                    "b": b,
                    "difference": values[a][k] - values[b][k],
                    "p": p,
                    "p_holm": q,
                    "significant": sig,
                }
            )
        order = sorted(have, key=lambda m: values[m][k], reverse=higher)
        st.groups = groups(order, different)
        out[k] = st
    return out
