"""Speed of the classic measures against pysodmetrics 1.6.2, measured in the same run.

    python benchmarks/bench_metrics.py [--repeats 20] [--rounds 3] [--sizes 400 1024]

Both libraries run single-threaded (BLAS/OpenMP threads = 1, cv2.setNumThreads(1)), each in
its own environment (pysodmetrics pins old numpy/scikit-image/OpenCV), on the same inputs,
twice: with glibc's default allocator settings and with the settings fminspect's own
processes use (see fminspect/_runtime.py), applied to both sides. Printed: the median time of
one call per measure, and the ratio. Targets (issue #2): the classic suite (MAE, F-family,
wFm, Sm, Em) ≥ 3× faster than pysodmetrics' equivalent calls summed; the weighted F-measure
alone ≥ 5× faster.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from statistics import median

from _harness import ratio_table, reference_python, rows_of, run_rounds
from _inputs import write_inputs

CLASSIC = ["MAE", "Fmeasure", "FmeasureV2 IoU+Dice", "Emeasure", "Smeasure", "WeightedFmeasure"]
WARM = ("WeightedFmeasure", "Smeasure")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[400, 1024])
    args = ap.parse_args()
    ref_python = reference_python()
    with tempfile.TemporaryDirectory() as tmp:
        npz = Path(tmp) / "inputs.npz"
        write_inputs(npz, args.sizes)
        for tuned in (False, True):
            common = [str(npz), str(args.repeats), "metrics"]
            rounds = run_rounds(ref_python, common, tuned, args.rounds)
            alloc = "fminspect allocator settings" if tuned else "default allocator"
            for s in args.sizes:
                pairs = [(r[str(s)], o[str(s)]) for r, o in rounds]
                for r, _ in pairs:
                    r["classic suite"] = sum(r[k] for k in CLASSIC)
                spec = [(k, k, k) for k in [*CLASSIC, "MSIoU adaptive+binary"]]
                spec += [(f"{k} (warm GT)", k, f"{k} (warm GT)") for k in WARM]
                spec += [
                    ("classic suite (sum of the six above)", "classic suite", "classic suite"),
                    ("classic suite (warm GT)", "classic suite", "classic suite (warm GT)"),
                ]
                title = f"\n{s}×{s}, {alloc}, {args.rounds} rounds of {args.repeats} calls"
                print(ratio_table(rows_of(pairs, spec), title))
                full = median([o["full suite"] for _, o in pairs])
                print(
                    f"  (fminspect full suite incl. relaxF, MSIoU, classification rates: "
                    f"{full:.2f} ms)"
                )


if __name__ == "__main__":
    main()
