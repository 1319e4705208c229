"""How many votes each study design needs to recover a known ranking.

A study of ``--groups`` images × ``--maps`` maps per image (default 200 × 8, the issue's
case) is created three times — full, incomplete and active design — and simulated
Bradley–Terry voters (each map ``--gap`` logit better than the next; no side bias, no
lapses) vote through :class:`~fminspect.ranking.store.VotingSession`, the API of the
voting window, so every vote is stored and every active chunk is chosen exactly as in a
real study. After every ``--every`` votes per group, each group's order is estimated by
the Bradley–Terry MAP under the product's prior (precision ``BT_PRIOR``: :func:`fit`) and
compared with the true order by Kendall's τ-b; the curve is the mean over
groups.

Prints, per design, the votes per group at which the mean τ first reaches ``--target``
(0.9) in each run (seed), each run's ratio to the full design's run on the same seed, and
the median over the runs (the goal: active ≤ 65 % with neighbours 0.5 logit apart, ≤ 55 %
with 1 logit), and the mean information a vote carries in the full design against the
closest pairs' (p(1 − p) of the logit difference: how much the full design spends on pairs
whose answer is nearly certain). At equal votes — each run's votes to the target — it
prints the score RMSE (logits, centred per group) of every design against the truth.
Writes the curves as CSV and a PNG (``--out``). Runs can be split over processes by seed
(``--first-seed``); ``--noise-variance 2`` tries ASAP-approx's observer noise in the
active design.

    python benchmarks/bench_designs.py --out benchmarks/results/designs
    python benchmarks/bench_designs.py --gap 1 --designs full active --seeds 5
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fminspect.ranking.aggregate import BT_PRIOR
from fminspect.ranking.design import Group, Item, new_design
from fminspect.ranking.store import StudyStore, VotingSession

DESIGNS = ("full", "incomplete", "active")


def make_study(path: Path, sampling: str, groups: int, maps: int, per: int) -> StudyStore:
    """A study without files (nothing is shown; the store does not open them)."""
    gs = [
        Group(
            f"g{k:04d}",
            "bench",
            f"s{k:04d}",
            None,
            None,
            tuple(
                Item(f"g{k:04d}m{m}", f"model{m}", f"/nonexistent/{k}_{m}.png") for m in range(maps)
            ),
        )
        for k in range(groups)
    ]
    design = new_design(
        f"bench-{sampling}",
        gs,
        seed=7,
        sampling=sampling,
        per_participant=per if sampling != "full" else 0,
        coverage=1 if sampling == "incomplete" else 0,
    )
    return StudyStore.create(path, design)


def fit(n: int, pairs: list[tuple[int, int]]) -> np.ndarray:
    """Bradley–Terry strengths under the product's prior, N(0, 1/BT_PRIOR) for each map.

    ``choix.opt_pairwise(alpha=a)`` penalises ``a·Σθ²``, i.e. a Gaussian prior of precision
    2a (its docstring's "variance 1/alpha" is off by that factor), so the product's precision
    is ``alpha=BT_PRIOR / 2``. The product reports the posterior mean (expectation
    propagation, ``choix.ep_pairwise(alpha=BT_PRIOR)``, whose ``alpha`` is the precision) and
    this is the posterior mode under the same prior: the same model, 20× faster."""
    import choix

    return choix.opt_pairwise(n, pairs, alpha=BT_PRIOR / 2) if pairs else np.zeros(n)


def mean_tau(store: StudyStore, maps: int, gap: float) -> tuple[float, float]:
    """Mean over groups of Kendall's τ-b between the Bradley–Terry MAP order and the truth,
    and the root mean square error of the scores (logits, each group's centred) against the
    true strengths (centred)."""
    from scipy.stats import kendalltau

    truth = -gap * np.arange(maps)
    by_group: dict[str, list[tuple[int, int]]] = {}
    for group, left, right, choice in store.db.execute(
        "SELECT grp, left_item, right_item, choice FROM votes WHERE kind = 'pair'"
    ):
        a, b = int(left.rsplit("m", 1)[1]), int(right.rsplit("m", 1)[1])
        by_group.setdefault(group, []).append((a, b) if choice == "left" else (b, a))
    taus, squares = [], []
    for g in store.design.groups:
        pairs = by_group.get(g.id, [])
        est = fit(maps, pairs)
        tau = kendalltau(est, truth).statistic if np.ptp(est) > 0 else 0.0
        taus.append(0.0 if math.isnan(tau) else float(tau))
        squares.append(np.mean(((est - est.mean()) - (truth - truth.mean())) ** 2))
    return float(np.mean(taus)), float(np.sqrt(np.mean(squares)))


def run(
    sampling: str, args: argparse.Namespace, workdir: Path, seed: int
) -> list[tuple[float, float, float]]:
    """The τ curve of one design: (votes per group, mean τ, score RMSE)."""
    store = make_study(
        workdir / f"{sampling}-{seed}.sqlite", sampling, args.groups, args.maps, args.per
    )
    rng = np.random.default_rng(seed)
    strength = {i.id: -args.gap * k for g in store.design.groups for k, i in enumerate(g.items)}
    budget = args.max_votes * args.groups
    step = args.every * args.groups
    curve: list[tuple[float, float, float]] = []
    votes, participant = 0, 0
    while votes < budget:
        participant += 1
        session = VotingSession(store, f"sim-{participant:03d}")
        while not session.finished and votes < budget:
            trial = session.current()
            assert trial is not None
            p_left = 1 / (1 + math.exp(-(strength[trial.left] - strength[trial.right])))
            session.vote("left" if rng.random() < p_left else "right", 1000.0)
            votes += 1
            if votes % step == 0:
                tau, rmse = mean_tau(store, args.maps, args.gap)
                curve.append((votes / args.groups, tau, rmse))
                print(
                    f"  {sampling:10s} {votes / args.groups:6.1f} votes/group  τ {tau:.3f}"
                    f"  RMSE {rmse:.3f}",
                    flush=True,
                )
                if tau >= args.target + 0.02 and votes / args.groups >= args.min_votes:
                    store.close()
                    return curve
    store.close()
    return curve


def first_reaching(curve: list[tuple[float, float, float]], target: float) -> float:
    """Votes per group at which the curve first reaches ``target`` (NaN if never)."""
    return next((v for v, t, _ in curve if t >= target), math.nan)


def rmse_at(curve: list[tuple[float, float, float]], votes: float) -> float:
    """The score RMSE of the curve's point at ``votes`` per group (NaN if not evaluated)."""
    return next((e for v, _, e in curve if abs(v - votes) < 1e-9), math.nan)


def information_bound(maps: int, gap: float) -> tuple[float, float]:
    """Mean Fisher information p(1 − p) per vote when every pair is voted on equally (full
    design), and the most one vote can carry in this study (the closest pairs)."""
    diffs = [gap * (b - a) for a in range(maps) for b in range(a + 1, maps)]
    info = [1 / (1 + math.exp(-d)) * (1 - 1 / (1 + math.exp(-d))) for d in diffs]
    return float(np.mean(info)), float(max(info))


#: Fixed allocations of votes over the pair distances (in the true order) for the oracle:
#: name → weight of the pairs d maps apart.
ORACLE_ALLOCATIONS = {
    "every pair (the full design's spread)": dict.fromkeys(range(1, 32), 1.0),
    "neighbours only (d = 1)": {1: 1.0},
    "d = 1, 2": {1: 1.0, 2: 1.0},
    "d = 1, 2, 3": {1: 1.0, 2: 1.0, 3: 1.0},
    "d = 1 twice, 2, 3": {1: 2.0, 2: 1.0, 3: 1.0},
}


def oracle_tau(alloc: dict[int, float], votes: int, args: argparse.Namespace, seed: int) -> float:
    """Mean τ when ``votes`` votes per group are spread over the pairs by ``alloc`` — a
    design that knows the true order, which no real one does: what the best fixed choice of
    pairs could reach with that many votes."""
    from scipy.stats import kendalltau

    rng = np.random.default_rng(seed)
    n = args.maps
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    weight = np.array([alloc.get(j - i, 0.0) for i, j in pairs])
    weight /= weight.sum()
    taus = []
    for _ in range(args.groups):
        # as balanced as the budget allows: the whole part of each pair's share, the rest
        # one vote each to the pairs with the largest remainders (ties at random)
        share = votes * weight
        counts = np.floor(share).astype(int)
        rest = votes - int(counts.sum())
        order = np.lexsort((rng.random(len(share)), -(share - counts)))
        counts[order[:rest]] += 1
        data: list[tuple[int, int]] = []
        for (i, j), c in zip(pairs, counts, strict=True):
            k = rng.binomial(c, 1 / (1 + math.exp(-args.gap * (j - i))))
            data += [(i, j)] * k + [(j, i)] * (c - k)
        est = fit(n, data)
        tau = kendalltau(est, -np.arange(n)).statistic if np.ptp(est) > 0 else 0.0
        taus.append(0.0 if math.isnan(tau) else float(tau))
    return float(np.mean(taus))


def plot(
    curves: dict[str, list[list[tuple[float, float, float]]]],
    target: float,
    out: Path,
    title: str,
) -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.8), dpi=120)
    colours = {"full": "#4c72b0", "incomplete": "#8c8c8c", "active": "#dd8452"}
    for name, runs in curves.items():
        for k, c in enumerate(runs):
            ax.plot(
                [v for v, _, _ in c],
                [t for _, t, _ in c],
                color=colours[name],
                lw=1.4,
                alpha=0.85,
                label=name if k == 0 else None,
            )
    ax.axhline(target, color="k", lw=0.8, ls="--")
    ax.set_xlabel("votes per group (image)")
    ax.set_ylabel("mean Kendall τ-b to the true order")
    ax.set_title(title, fontsize=9)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", type=int, default=200)
    ap.add_argument("--maps", type=int, default=8)
    ap.add_argument("--gap", type=float, default=0.5, help="logit gap between adjacent maps")
    ap.add_argument(
        "--per", type=int, default=280, help="pairs per participant (incomplete, active)"
    )
    ap.add_argument("--every", type=float, default=4, help="evaluate every N votes per group")
    ap.add_argument("--max-votes", type=float, default=200, help="votes per group at most")
    ap.add_argument("--min-votes", type=float, default=0, help="run at least this far")
    ap.add_argument("--target", type=float, default=0.9)
    ap.add_argument("--seeds", type=int, default=2, help="independent runs per design")
    ap.add_argument("--first-seed", type=int, default=0, help="seeds start here")
    ap.add_argument(
        "--noise-variance",
        type=float,
        help="the active design's observer noise variance (the product's "
        "NOISE_VARIANCE unless given; ASAP-approx's one-step update uses 2)",
    )
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=DESIGNS)
    ap.add_argument("--out", type=Path, help="write curves.csv and curves.png here")
    ap.add_argument(
        "--prior-variance",
        type=float,
        help="the active design's prior variance of a map's quality (the product's "
        "PRIOR_VARIANCE, ASAP's 0.5, unless given)",
    )
    args = ap.parse_args()
    from fminspect.ranking import active

    if args.noise_variance is not None:
        active.NOISE_VARIANCE = args.noise_variance
    if args.prior_variance is not None:
        active.PRIOR_VARIANCE = args.prior_variance
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    curves: dict[str, list[list[tuple[float, float, float]]]] = {}
    needed: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.designs:
            for seed in seeds:
                t0 = time.perf_counter()
                curve = run(name, args, Path(tmp), seed)
                curves.setdefault(name, []).append(curve)
                needed.setdefault(name, []).append(first_reaching(curve, args.target))
                print(
                    f"{name} seed {seed}: τ ≥ {args.target} at {needed[name][-1]:.0f} "
                    f"votes/group ({time.perf_counter() - t0:.0f} s)",
                    flush=True,
                )
    mean_full, best = information_bound(args.maps, args.gap)
    print(
        f"\n{args.groups} groups × {args.maps} maps, adjacent gap {args.gap:g} logit, "
        f"{args.per} pairs per participant (incomplete: coverage 1 per round), "
        f"seeds {seeds.start}–{seeds.stop - 1}"
        + (f", active noise variance {args.noise_variance:g}" if args.noise_variance else "")
        + (f", active prior variance {args.prior_variance:g}" if args.prior_variance else "")
    )
    print(
        f"{'design':12s} {'median votes/group to τ≥' + format(args.target, 'g'):>30s} "
        f"{'runs (by seed)':>24s} {'ratio to full, by seed':>28s} {'median ratio':>13s}"
    )
    for name, values in needed.items():
        runs = ", ".join(f"{v:.0f}" for v in values)
        ratios = (
            [v / f for v, f in zip(values, needed["full"], strict=True)]
            if "full" in needed
            else [math.nan] * len(values)
        )
        print(
            f"{name:12s} {float(np.median(values)):30.0f} {runs:>24s} "
            f"{', '.join(f'{r:.0%}' for r in ratios):>28s} {float(np.median(ratios)):13.0%}"
        )
    if "full" in needed:
        print("\nscore RMSE (logits, centred) at equal votes: each run's votes to the target")
        for name in needed:
            if name == "full":
                continue
            for k, seed in enumerate(seeds):
                at = needed[name][k]
                print(
                    f"  seed {seed}, {at:.0f} votes/group: {name} "
                    f"{rmse_at(curves[name][k], at):.3f}, full "
                    f"{rmse_at(curves['full'][k], at):.3f}"
                )
    print(
        f"information per vote (p(1−p) of the logit difference): full design mean "
        f"{mean_full:.3f}, closest pairs {best:.3f} ({mean_full / best:.0%})"
    )
    if "active" in needed and not all(math.isnan(v) for v in needed["active"]):
        at = round(float(np.nanmedian(needed["active"])))
        print(
            f"\nat the active design's median, {at} votes per group, a design that knew the "
            f"true order and spent them on fixed pairs would reach:"
        )
        for label, alloc in ORACLE_ALLOCATIONS.items():
            print(f"  {label:40s} τ {oracle_tau(alloc, at, args, 99):.3f}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "curves.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["design", "seed", "votes_per_group", "mean_kendall_tau", "score_rmse"])
            for name, runs in curves.items():
                for seed, c in zip(seeds, runs, strict=True):
                    w.writerows([name, seed, f"{v:g}", f"{t:.4f}", f"{e:.4f}"] for v, t, e in c)
        plot(
            curves,
            args.target,
            args.out / "curves.png",
            f"{args.groups} images × {args.maps} maps, simulated BT voters, adjacent gap "
            f"{args.gap:g} logit",
        )
        print(f"curves written to {args.out}")


if __name__ == "__main__":
    main()
