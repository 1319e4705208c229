"""The curve figures of ``fminspect figure`` at 20 and 40 methods over three datasets, as
the README and ``screenshots/`` show them.

Three generated COD-like datasets (``make_benchmark.py``: 40 images of 160×220 each, 40
methods of varied quality) are evaluated with ``fminspect eval``, then drawn with
``fminspect figure`` exactly as a user would call it: PR, F-, E-, IoU-threshold and ROC
curves with all 40 methods (the best by max F on the first dataset highlighted as "ours"),
the PR curves with 20 of them, the 40-method PR curves converted to greyscale (what a
black-and-white print shows), and a separate legend. About half a minute on two cores.

    python benchmarks/paper_figures.py screenshots/ [--work /tmp/paper-figures]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cv2

HERE = Path(__file__).resolve().parent
DATASETS = {"CAMO": 1, "COD10K": 2, "NC4K": 3}


def run(*args: str) -> None:
    print("$", " ".join(args), flush=True)
    subprocess.run(args, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder for the PNG files (e.g. screenshots/)")
    ap.add_argument("--work", type=Path, help="folder for the data and results (temporary)")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="paper-figures-"))
    data, results, figs = work / "data", work / "results", work / "figures"
    for name, seed in DATASETS.items():
        if not (data / name).is_dir():
            run(
                sys.executable, str(HERE / "make_benchmark.py"), str(data / name),
                "--images", "40", "--methods", "40", "--size", "160x220",
                "--seed", str(seed), "--names", "plain", "--jobs", "2",
            )  # fmt: skip
    fminspect = [sys.executable, "-m", "fminspect"]
    run(
        *fminspect, "eval", str(data), "--out", str(results), "--jobs", "2", "--quiet",
        "--no-plots", "--measures", "Sm", "MAE", "maxFm", "maxEm", "maxIoU", "maxDice",
    )  # fmt: skip
    summary = json.loads((results / "summary.json").read_text())
    first = summary[next(iter(DATASETS))]
    methods = sorted(first, key=lambda m: -first[m]["maxFm"])
    ours = methods[0]
    twenty = sorted(methods[:: max(1, len(methods) // 20)][:20])
    if ours not in twenty:
        twenty[-1] = ours
    common = ["--format", "png", "--dpi", "110", "--highlight", ours]
    run(*fminspect, "figure", str(results), "--out", str(figs / "40"),
        "--curves", "pr", "fm", "em", "iou", "roc", "--prefix", "figure_40_", *common)  # fmt: skip
    run(*fminspect, "figure", str(results), "--out", str(figs / "20"), "--curves", "pr", "fm",
        "--prefix", "figure_20_", "--methods", *twenty, *common)  # fmt: skip
    run(*fminspect, "figure", str(results), "--out", str(figs / "legend"), "--curves", "em",
        "--prefix", "figure_20_separate_", "--legend", "separate", "--methods", *twenty,
        *common)  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    for png in sorted(figs.rglob("*.png")):
        shutil.copyfile(png, args.out / png.name)
        print("wrote", args.out / png.name)
    grey = cv2.imread(str(figs / "40" / "figure_40_pr.png"), cv2.IMREAD_GRAYSCALE)
    cv2.imwrite(str(args.out / "figure_40_pr_greyscale.png"), grey)
    print("wrote", args.out / "figure_40_pr_greyscale.png")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
