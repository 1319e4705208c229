"""Coverage of `eval --ci`'s intervals and error rates of its tests, by simulation.

Datasets are drawn from laws whose dataset value is known in closed form (per-image scores
~ Beta(8, 2); per-image E curves a·exp(−((t − μ)/40)²) with a ~ Beta(6, 3), μ ~ N(140, 25²),
whose image-averaged curve has its max at E[a]·40/√(40² + 2·25²)); the procedures run as
``fminspect eval --ci`` runs them. The README's "Significance" numbers come from this script
(``python benchmarks/significance_coverage.py``, about two minutes on two cores);
tests/batch/test_significance.py repeats smaller versions with bounds.

    python benchmarks/significance_coverage.py [--datasets R] [--resamples B]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from fminspect.batch.significance import (
    Setup,
    bootstrap_pvalue,
    compare,
    percentile_interval,
    resampling_weights,
    wilcoxon_pvalue,
)
from fminspect.metrics.dataset import DatasetAccumulator

T = np.arange(256)


def mean_coverage(n: int, datasets: int, resamples: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    w = resampling_weights(n, resamples, seed + 1)
    hits = 0
    for _ in range(datasets):
        v = rng.beta(8, 2, n)
        low, high = percentile_interval(w @ v / n, 0.95)
        hits += low <= 0.8 <= high
    return hits / datasets


def curve_dataset(
    rng: np.random.Generator, n: int, height: np.ndarray | None = None, mu: np.ndarray | None = None
) -> DatasetAccumulator:
    a = rng.beta(6, 3, n) if height is None else height
    mu = rng.normal(140, 25, n) if mu is None else mu
    acc = DatasetAccumulator(keep_rows=True)
    for i in range(n):
        acc.add(str(i), {"maxEm": 0.0}, {"Em": a[i] * np.exp(-(((T - mu[i]) / 40) ** 2))})
    return acc


def curve_coverage(n: int, datasets: int, resamples: int, seed: int) -> float:
    truth = (6 / 9) * 40 / math.sqrt(40**2 + 2 * 25**2)
    rng = np.random.default_rng(seed)
    w = resampling_weights(n, resamples, seed + 1)
    hits = 0
    for _ in range(datasets):
        low, high = percentile_interval(
            curve_dataset(rng, n).replicates(w, ["maxEm"])["maxEm"], 0.95
        )
        hits += low <= truth <= high
    return hits / datasets


def paired(rng: np.random.Generator, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    base = rng.beta(8, 2, n)
    return (
        np.clip(base + rng.normal(0, 0.05, n), 0, 1),
        np.clip(base + shift + rng.normal(0, 0.05, n), 0, 1),
    )


def rejections(test: str, n: int, shift: float, datasets: int, resamples: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    w = resampling_weights(n, resamples, seed + 1)
    rejected = 0
    for _ in range(datasets):
        a, b = paired(rng, n, shift)
        if test == "wilcoxon":
            p = wilcoxon_pvalue(a, b)
        else:
            p = bootstrap_pvalue(a.mean() - b.mean(), w @ (a - b) / n, n)
        rejected += p <= 0.05
    return rejected / datasets


def curve_size(n: int, datasets: int, resamples: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    w = resampling_weights(n, resamples, seed + 1)
    rejected = 0
    for _ in range(datasets):
        a, mu = rng.beta(6, 3, n), rng.normal(140, 25, n)
        values, reps = {}, {}
        for m in ("A", "B"):
            acc = curve_dataset(rng, n, np.clip(a + rng.normal(0, 0.05, n), 0, 1), mu)
            values[m], reps[m] = acc.results(), acc.replicates(w, ["maxEm"])
        st = compare(values, reps, ["maxEm"], Setup(resamples=resamples), images=n)["maxEm"]
        rejected += st.pairs[0]["p"] <= 0.05
    return rejected / datasets


def familywise(n: int, datasets: int, resamples: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    w = resampling_weights(n, resamples, seed + 1)
    hit = 0
    for _ in range(datasets):
        base = rng.beta(8, 2, n)
        per = {f"M{j}": np.clip(base + rng.normal(0, 0.05, n), 0, 1) for j in range(5)}
        values = {m: {"Sm": float(v.mean())} for m, v in per.items()}
        reps = {m: {"Sm": w @ v / n} for m, v in per.items()}
        st = compare(values, reps, ["Sm"], Setup(resamples=resamples), images=n)["Sm"]
        hit += any(p["significant"] for p in st.pairs)
    return hit / datasets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1500, help="simulated datasets (1500)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (1000)")
    args = parser.parse_args()
    r, b = args.datasets, args.resamples
    se = math.sqrt(0.95 * 0.05 / r)
    start = time.perf_counter()
    print(f"{r} simulated datasets per line, B = {b}; Monte-Carlo SE of a 95 % coverage {se:.3f}")
    for n in (20, 50, 150, 300, 600):
        print(f"95 % interval of a mean, n = {n:4d}: coverage {mean_coverage(n, r, b, 10 + n):.3f}")
    for n in (50, 150):
        coverage = curve_coverage(n, r // 2, b, 20 + n)
        print(f"95 % interval of maxEm,  n = {n:4d}: coverage {coverage:.3f}")
    for n in (10, 20, 50, 120):
        print(
            f"paired bootstrap t-test, true null, n = {n:3d}: rejected "
            f"{rejections('bootstrap', n, 0.0, r, b, 30 + n):.3f}; Wilcoxon "
            f"{rejections('wilcoxon', n, 0.0, r, b, 30 + n):.3f}"
        )
    print(
        f"power at a shift of 0.025 (0.35 SD), n = 120: bootstrap "
        f"{rejections('bootstrap', 120, 0.025, r, b, 31):.3f}, Wilcoxon "
        f"{rejections('wilcoxon', 120, 0.025, r, b, 31):.3f}"
    )
    print(
        f"paired test of maxEm, true null, n = 150: rejected {curve_size(150, r // 2, b, 60):.3f}"
    )
    fwer = familywise(100, r // 2, b, 40)
    print(f"Holm, five equal methods, n = 100: any pair significant {fwer:.3f}")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
