"""Batch throughput: ``fminspect eval`` against the PySODEvalToolkit-style pysodmetrics loop.

    python benchmarks/bench_eval.py [--images 200] [--size 400] [--methods 5] [--no-reference]

Generates a dataset (ROOT/{GT,Imgs,Pred/<m>}) of IMAGES images with METHODS methods, then
in the same run times (wall clock, including process start-up) the reference loop (read,
resize, step MAE, S, wF, E and FmeasureV2 F/IoU/Dice per image and method, single process)
and ``fminspect eval`` with ``--jobs 1`` and ``--jobs 2`` and an empty cache, computing the
same measures. Prints (image, method) pairs per second and the ratios. Target (issue #4):
``--jobs 1`` ≥ 3× the reference's throughput, ``--jobs 2`` near-linear. ``--no-reference``
times only fminspect (e.g. to see how ``--jobs 2`` scales end to end on a larger dataset,
where the reference loop would take minutes).

``--against-decoding`` measures issue #50's ratios instead, on a benchmark-like dataset
(``make_benchmark.py``: 60 images × 20 methods at about 400 × 550, with images): the time
one process needs to decode every file once (start-up included), then ``fminspect eval
--no-plots`` with the default measures at ``--jobs 1`` and ``--jobs 2`` and with the classic
measures only, each as a multiple of the decoding time (targets: default measures ≤ 4×,
classic ≤ 2×, ``--jobs 2`` ≥ 1.8× ``--jobs 1``).

Every mode first compiles fminspect's bytecode, as an installed copy has it: a caller's
``PYTHONDONTWRITEBYTECODE`` would otherwise add the compiling of its modules to each run.

    python benchmarks/bench_eval.py --against-decoding [--images 60 --methods 20]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import REPO, SINGLE_THREAD, reference_python

sys.path.insert(0, str(REPO))
from tests.datasets import make_dataset

MEASURES = [
    "MAE",
    "Sm",
    "wFm",
    "adpEm",
    "meanEm",
    "maxEm",
    "adpFm",
    "meanFm",
    "maxFm",
    "adpIoU",
    "meanIoU",
    "maxIoU",
    "adpDice",
    "meanDice",
    "maxDice",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--images", type=int, default=200)
    ap.add_argument("--size", type=int, default=400)
    ap.add_argument("--methods", type=int, default=5)
    ap.add_argument("--no-reference", action="store_true", help="skip the pysodmetrics loop")
    ap.add_argument(
        "--against-decoding",
        action="store_true",
        help="issue #50's ratios to the decoding time (defaults: 60 images × 20 methods)",
    )
    args = ap.parse_args()
    env = {**os.environ, **SINGLE_THREAD, "PYTHONWARNINGS": "ignore"}
    # start-up as an installed copy has it, with the modules' bytecode compiled: under the
    # caller's PYTHONDONTWRITEBYTECODE every run (and every worker) compiled ~75 modules
    # from source again, ~0.25 s of each run
    compileall.compile_dir(REPO / "fminspect", quiet=1)
    if args.against_decoding:
        against_decoding(args, env)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "BenchDS"
        t = time.perf_counter()
        make_dataset(
            root,
            n_images=args.images,
            size=(args.size, args.size),
            methods=tuple(f"M{i}" for i in range(args.methods)),
            seed=7,
        )
        print(
            f"generated {args.images} images × {args.methods} methods at {args.size}² "
            f"in {time.perf_counter() - t:.1f} s"
        )
        pairs = args.images * args.methods
        ref = None
        if not args.no_reference:
            t = time.perf_counter()
            subprocess.run(
                [
                    str(reference_python()),
                    str(Path(__file__).with_name("_pysod_eval_loop.py")),
                    str(root),
                    str(Path(tmp) / "ref.json"),
                ],
                check=True,
                env=env,
            )
            ref_wall = time.perf_counter() - t
            ref = json.loads((Path(tmp) / "ref.json").read_text())
            print(
                f"pysodmetrics loop:        {ref_wall:7.1f} s wall "
                f"({ref['seconds']:.1f} s in the loop)  {pairs / ref_wall:6.1f} pairs/s"
            )
        fmi = Path(sys.executable).with_name("fminspect")
        phases: dict[int, float] = {}
        walls: dict[int, float] = {}
        for jobs in (1, 2):
            out = Path(tmp) / f"out{jobs}"
            t = time.perf_counter()
            proc = subprocess.run(
                [
                    str(fmi),
                    "eval",
                    str(root),
                    "--out",
                    str(out),
                    "--jobs",
                    str(jobs),
                    "--quiet",
                    "--measures",
                    *MEASURES,
                ],
                check=True,
                env=env,
                stderr=subprocess.PIPE,
                text=True,
            )
            wall = time.perf_counter() - t
            phase = float(proc.stderr.split(" computed in ")[1].split(" s")[0])
            phases[jobs] = phase
            walls[jobs] = wall
            line = f"fminspect eval --jobs {jobs}: {wall:7.1f} s wall  {pairs / wall:6.1f} pairs/s"
            work = f"    of which the per-image work: {phase:.1f} s ({pairs / phase:.1f} pairs/s"
            if ref is not None:
                summary = json.loads((out / "summary.json").read_text())["BenchDS"]
                worst = max(
                    abs(summary[m][k] - v)
                    for m, vals in ref["results"].items()
                    for k, v in vals.items()
                )
                line += (
                    f"  {ref_wall / wall:5.1f}× the reference   (max |Δ| vs reference {worst:.1e})"
                )
                work += f", {ref['seconds'] / phase:.1f}× the reference loop"
            print(f"{line}\n{work})")
        print(
            f"--jobs 2 vs --jobs 1: per-image work {phases[1] / phases[2]:.2f}× faster, "
            f"end to end {walls[1] / walls[2]:.2f}× (the rest is a cost of every run — "
            f"start-up, hashing the inputs, writing outputs and plots: "
            f"{walls[1] - phases[1]:.1f} s and {walls[2] - phases[2]:.1f} s)"
        )


#: Decodes every file of a dataset once, as eval reads them (maps grey, images colour).
_DECODE_ALL = """
import sys, pathlib, cv2
cv2.setNumThreads(1)
root = pathlib.Path(sys.argv[1])
n = 0
for p in sorted(root.rglob("*")):
    if p.suffix.lower() in (".png", ".jpg"):
        flag = cv2.IMREAD_COLOR if p.parent.name == "Imgs" else cv2.IMREAD_UNCHANGED
        assert cv2.imread(str(p), flag) is not None, p
        n += 1
print(n)
"""


def against_decoding(args: argparse.Namespace, env: dict[str, str]) -> None:
    """Issue #50: eval's wall time as a multiple of decoding every file once."""
    from make_benchmark import make_benchmark

    images = 60 if args.images == 200 else args.images  # this mode's own defaults
    methods = 20 if args.methods == 5 else args.methods
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "Bench"
        make_benchmark(root, images=images, methods=methods, size=(400, 550), jobs=2)
        pairs = images * methods

        def timed(cmd: list[str]) -> float:
            t = time.perf_counter()
            subprocess.run(cmd, check=True, env=env, capture_output=True)
            return time.perf_counter() - t

        decode = min(timed([sys.executable, "-c", _DECODE_ALL, str(root)]) for _ in range(3))
        fmi = str(Path(sys.executable).with_name("fminspect"))
        runs = {
            "default measures, --jobs 1": ["--jobs", "1"],
            "default measures, --jobs 2": ["--jobs", "2"],
            "classic measures, --jobs 1": ["--jobs", "1", "--measures", *MEASURES],
        }
        print(
            f"{images} images × {methods} methods at about 400×550 with images "
            f"({pairs} pairs); decoding every file once in one process: {decode:.2f} s "
            f"(best of 3, start-up included)"
        )
        walls = {}
        for k, (name, extra) in enumerate(runs.items()):
            out = Path(tmp) / f"out{k}"
            walls[name] = timed([fmi, "eval", str(root), "--out", str(out), "--no-plots",
                                 "--quiet", *extra])  # fmt: skip
            print(
                f"eval, {name}: {walls[name]:6.1f} s  {pairs / walls[name]:6.1f} pairs/s  "
                f"{walls[name] / decode:5.1f}× the decoding time"
            )
        one, two = walls["default measures, --jobs 1"], walls["default measures, --jobs 2"]
        print(
            f"targets: default measures ≤ 4× ({one / decode:.1f}×), classic ≤ 2× "
            f"({walls['classic measures, --jobs 1'] / decode:.1f}×), --jobs 2 ≥ 1.8× --jobs 1 "
            f"({one / two:.2f}×)"
        )


if __name__ == "__main__":
    main()
