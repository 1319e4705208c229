"""Speed of the classic measures against pysodmetrics 1.6.2, measured in the same run.

    python benchmarks/bench_metrics.py [--repeats 20] [--sizes 400 1024]

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
import sys
import tempfile
from pathlib import Path

from _harness import HERE, ratio_table, reference_python, run_json
from _inputs import write_inputs

CLASSIC = ["MAE", "Fmeasure", "FmeasureV2 IoU+Dice", "Emeasure", "Smeasure", "WeightedFmeasure"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--sizes", type=int, nargs="+", default=[400, 1024])
    args = ap.parse_args()
    ref_python = reference_python()
    with tempfile.TemporaryDirectory() as tmp:
        npz = Path(tmp) / "inputs.npz"
        write_inputs(npz, args.sizes)
        for tuned in (False, True):
            common = [str(npz), str(args.repeats), "metrics"]
            ref = run_json(ref_python, HERE / "_time_pysod.py", common, tuned)
            ours = run_json(sys.executable, HERE / "_time_ours.py", common, tuned)
            alloc = "fminspect allocator settings" if tuned else "default allocator"
            for s in args.sizes:
                r, o = ref[str(s)], ours[str(s)]
                rows = [(k, r[k], o[k]) for k in [*CLASSIC, "MSIoU adaptive+binary"]]
                rows += [
                    (f"{k} (warm GT)", r[k], o[f"{k} (warm GT)"])
                    for k in ("WeightedFmeasure", "Smeasure")
                ]
                ref_sum = sum(r[k] for k in CLASSIC)
                rows.append(("classic suite (sum of the six above)", ref_sum, o["classic suite"]))
                rows.append(("classic suite (warm GT)", ref_sum, o["classic suite (warm GT)"]))
                print(ratio_table(rows, f"\n{s}×{s}, {alloc}, median of {args.repeats}"))
                print(
                    f"  (fminspect full suite incl. relaxF, MSIoU, classification rates: "
                    f"{o['full suite']:.2f} ms)"
                )


if __name__ == "__main__":
    main()
