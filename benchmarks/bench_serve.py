"""The web voting server under a lab's load: simulated participants over HTTP on 127.0.0.1.

A study of ``--groups`` images × ``--maps`` maps (200 × 8 at 320 × 240 by default: real PNG
and JPEG files, written to a temporary folder) is served by ``fminspect rank serve`` in its
own process, as a lab runs it. ``--participants`` simulated participants (100) each open
their link, read their state and then, like the page, answer the pair on screen, wait for
the answer (which carries the next trial) and fetch the following trial's pictures ahead —
with a think time drawn uniformly from ``--think`` seconds (0.5–3, a person's pace) between
answers, for ``--seconds`` seconds. Three runs:

1. the full design at a person's pace: p50/p95/p99/max latency of an answer (from sending
   the vote to having the next trial), and of a picture; goal p99 ≤ 50 ms on 2 cores;
2. the active design at a person's pace (the next 10 pairs chosen from every vote stored,
   when a participant reaches them); goal p99 ≤ 150 ms;
3. the full design with no think time: the votes per second the server sustains.

After each run the study file is read back: every acknowledged vote must be there once, and
nothing else (zero lost, zero doubled). Latencies are absolute (what a participant feels),
not ratios; they depend on the machine, which the output names.

    python benchmarks/bench_serve.py                     # the three runs, ~4 minutes
    python benchmarks/bench_serve.py --seconds 20 --participants 30   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import httpx2 as httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fminspect.ranking import invites
from fminspect.ranking.design import Group, Item, new_design
from fminspect.ranking.store import StudyStore


def make_files(folder: Path, groups: int, maps: int, size: tuple[int, int]) -> list[Group]:
    """Images, GTs and maps on disk; one group per image with every map."""
    rng = np.random.default_rng(0)
    h, w = size
    yy, xx = np.mgrid[0:h, 0:w]
    out = []
    for k in range(groups):
        cy, cx, r = rng.uniform(0.3, 0.7) * h, rng.uniform(0.3, 0.7) * w, rng.uniform(0.15, 0.3) * h
        gt = (((yy - cy) ** 2 + (xx - cx) ** 2) < r * r).astype(np.uint8) * 255
        image = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
        image = cv2.GaussianBlur(image, (0, 0), 3)
        paths = {"gt": folder / f"gt_{k}.png", "image": folder / f"img_{k}.jpg"}
        cv2.imwrite(str(paths["gt"]), gt)
        cv2.imwrite(str(paths["image"]), image)
        items = []
        for m in range(maps):
            noisy = cv2.GaussianBlur(gt.astype(np.float32), (0, 0), 1 + m) + rng.normal(
                0, 8 * m + 1, (h, w)
            )
            p = folder / f"map_{k}_{m}.png"
            cv2.imwrite(str(p), np.clip(noisy, 0, 255).astype(np.uint8))
            items.append(Item(f"g{k:04d}m{m}", f"model{m}", str(p)))
        out.append(
            Group(
                f"g{k:04d}",
                "bench",
                f"s{k:04d}",
                str(paths["gt"]),
                str(paths["image"]),
                tuple(items),
            )
        )
    return out


def make_study(path: Path, groups: list[Group], sampling: str, participants: int) -> list[str]:
    """The study file and ``participants`` links' tokens."""
    options = {} if sampling == "full" else {"per_participant": 280}
    design = new_design(f"bench-{sampling}", groups, sampling=sampling, seed=1, **options)
    with StudyStore.create(path, design) as store:
        return [i.token for i in invites.invite(store, participants)]


@dataclass
class Tally:
    votes: list[float] = field(default_factory=list)  # seconds, answer round trips
    pictures: list[float] = field(default_factory=list)
    acknowledged: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


async def participant(
    base: str,
    token: str,
    think: tuple[float, float],
    until: float,
    tally: Tally,
    seed: int,
    pictures: bool = True,
) -> None:
    rng = random.Random(seed)
    mine: list[tuple[int, str]] = []
    tally.acknowledged[token] = mine
    limits = httpx.Limits(max_connections=2, max_keepalive_connections=2)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as c:
        state = (await c.get(f"/s/{token}/state")).json()
        await asyncio.sleep(rng.uniform(0, think[1]))  # participants do not start at once
        while state["status"] == "vote" and time.monotonic() < until:
            if think[1] > 0:
                await asyncio.sleep(rng.uniform(*think))
            index = state["trial"]["index"]
            choice = rng.choice(("left", "right"))
            started = time.perf_counter()
            answer = await c.post(
                f"/s/{token}/vote", json={"trial": index, "choice": choice, "rt_ms": 1000}
            )
            tally.votes.append(time.perf_counter() - started)
            if answer.status_code != 200:
                tally.errors.append(f"{answer.status_code} {answer.text[:80]}")
                return
            mine.append((index, choice))
            state = answer.json()
            ahead = state.get("next")
            if ahead is not None and pictures:  # the page loads the following pair's pictures ahead
                for slot in ("left", "right", "ref0", "ref1"):
                    started = time.perf_counter()
                    picture = await c.get(f"/s/{token}/img/{ahead['index']}/{slot}")
                    tally.pictures.append(time.perf_counter() - started)
                    if picture.status_code != 200:
                        tally.errors.append(f"picture {picture.status_code}")


def start_server(study: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fminspect", "rank", "serve", str(study), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    base = first.split(" at ")[1].split("/ ")[0]
    for _ in range(3000):
        try:
            httpx.get(f"{base}/favicon.ico", timeout=5)
            return proc, base
        except httpx.TransportError:
            time.sleep(0.01)
    raise SystemExit(f"the server did not start: {first}")


def check(study: Path, tally: Tally, tokens: list[str]) -> tuple[int, int, int]:
    """(acknowledged, lost, unexpected) votes, read back from the study file."""
    lost = unexpected = total = 0
    with StudyStore(study) as store:
        for k, token in enumerate(tokens, start=1):
            who = invites.participant_of(store, token)
            stored = {(v.trial, v.choice) for v in store.votes(who)} if who else set()
            mine = set(tally.acknowledged.get(token, []))
            total += len(mine)
            lost += len(mine - stored)
            unexpected += len(stored - mine)
            assert who == f"p{k:03d}"
    return total, lost, unexpected


def percentiles(values: list[float]) -> str:
    if not values:
        return "none"
    ms = np.asarray(values) * 1e3
    p50, p95, p99 = np.percentile(ms, [50, 95, 99])
    return (
        f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, p99 {p99:.1f} ms, "
        f"max {ms.max():.0f} ms (n = {len(ms)})"
    )


def run(
    name: str,
    files: list[Group],
    folder: Path,
    sampling: str,
    args: argparse.Namespace,
    think: tuple[float, float],
) -> None:
    study = folder / f"{name}.sqlite"
    tokens = make_study(study, files, sampling, args.participants)
    proc, base = start_server(study)
    tally = Tally()
    try:
        until = time.monotonic() + args.seconds
        started = time.monotonic()

        async def everyone() -> None:
            await asyncio.gather(
                *(
                    participant(base, t, think, until, tally, k, not args.no_pictures)
                    for k, t in enumerate(tokens)
                )
            )

        asyncio.run(everyone())
        elapsed = time.monotonic() - started
    finally:
        proc.terminate()
        proc.wait(60)
    total, lost, unexpected = check(study, tally, tokens)
    print(
        f"\n## {name}: {sampling} design, {args.participants} participants, "
        f"think {think[0]:g}–{think[1]:g} s, {args.seconds:g} s",
        flush=True,
    )
    print(f"answers:  {percentiles(tally.votes)}")
    print(f"pictures: {percentiles(tally.pictures)}")
    print(f"throughput: {len(tally.votes) / elapsed:.1f} votes/s over {elapsed:.1f} s")
    print(
        f"read back: {total} acknowledged votes, {lost} lost, {unexpected} not acknowledged"
        f"{'' if not tally.errors else f'; errors: {tally.errors[:3]}'}"
    )
    if lost or unexpected or tally.errors:
        raise SystemExit("FAILED: votes lost, doubled or refused")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--maps", type=int, default=8)
    parser.add_argument("--think", type=float, nargs=2, default=(0.5, 3.0))
    parser.add_argument("--only", choices=("full", "active", "flat-out"))
    parser.add_argument(
        "--no-pictures",
        action="store_true",
        help="answers only (to tell the answers' own cost from the pictures' load)",
    )
    args = parser.parse_args()
    print(
        f"# bench_serve: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {args.groups} groups × {args.maps} maps at 320×240"
    )
    with tempfile.TemporaryDirectory(prefix="fminspect-serve-") as tmp:
        folder = Path(tmp)
        files = make_files(folder, args.groups, args.maps, (240, 320))
        think = (args.think[0], args.think[1])
        if args.only in (None, "full"):
            run("full", files, folder, "full", args, think)
        if args.only in (None, "active"):
            run("active", files, folder, "active", args, think)
        if args.only in (None, "flat-out"):
            run("flat-out", files, folder, "full", args, (0.0, 0.0))


if __name__ == "__main__":
    main()
