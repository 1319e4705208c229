"""Speed of the classic measures against pysodmetrics 1.6.2, measured in the same run.

    python benchmarks/bench_metrics.py [--repeats 20] [--rounds 3] [--sizes 400 1024]

Both libraries run single-threaded (BLAS/OpenMP threads = 1, cv2.setNumThreads(1)), each in
its own environment (pysodmetrics pins old numpy/scikit-image/OpenCV), on the same inputs,
twice: with glibc's default allocator settings and with the settings fminspect's own
processes use (see fminspect/_runtime.py), applied to both sides. Printed: the median time of
one call per measure, and the ratio. Targets (issue #2): the classic suite (MAE, F-family,
wFm, Sm, Em) ≥ 3× faster than pysodmetrics' equivalent calls summed; the weighted F-measure
alone ≥ 5× faster. Issue #21: the enlarged suite — every value pysodmetrics can give but
C^ω_β (bench_context.py has it): the ten FmeasureV2 handlers in every mode, E, S, wF, MAE,
MSIoU, C_β, SI-MAE, the SI-F family, HCE — ≥ 3× faster than pysodmetrics computing the same
values; the MSIoU dynamic curve is shown apart (opt-in in fminspect, 257 thresholds).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from statistics import median

from _harness import ratio_table, reference_python, rows_of, run_rounds
from _inputs import write_inputs

CLASSIC = ["MAE", "Fmeasure", "FmeasureV2 IoU+Dice", "Emeasure", "Smeasure", "WeightedFmeasure"]
ENLARGED = [
    "FmeasureV2 10 handlers",
    "MAE",
    "Emeasure",
    "Smeasure",
    "WeightedFmeasure",
    "ContextMeasure",
    "SI (MAE + F family)",
    "HumanCorrectionEffortMeasure",
    "MSIoU adaptive+binary",
]
WARM = ("WeightedFmeasure", "Smeasure")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[400, 1024])
    ap.add_argument("--no-enlarged", action="store_true", help="only the classic suite (quicker)")
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
        if args.no_enlarged:
            return
        # every value pysodmetrics 1.6.2 can give but C^ω_β (bench_context.py): the confusion
        # family in every variant, E, S, wF, MAE, MSIoU (adaptive, binary; the dynamic curve
        # apart), C_β, SI-MAE and SI-F family, HCE
        common = [str(npz), str(max(3, args.repeats // 4)), "enlarged"]
        rounds = run_rounds(ref_python, common, True, args.rounds)
        for s in args.sizes:
            pairs = [(r[str(s)], o[str(s)]) for r, o in rounds]
            for r, _ in pairs:
                r["SI (MAE + F family)"] = (
                    r["SizeInvarianceMAE"] + r["SizeInvarianceFmeasureV2 5 handlers"]
                )
                r["enlarged suite"] = sum(r[k] for k in ENLARGED)
                r["enlarged suite + MSIoU dynamic"] = r["enlarged suite"] + r["MSIoU dynamic"]
            spec = [(k, k, k) for k in [*ENLARGED, "MSIoU dynamic"]]
            spec += [
                ("enlarged suite (one call, shared work)", "enlarged suite", "enlarged suite"),
                (
                    "enlarged suite + MSIoU dynamic",
                    "enlarged suite + MSIoU dynamic",
                    "enlarged suite + MSIoU dynamic",
                ),
            ]
            title = f"\n{s}×{s}, every value of pysodmetrics but C^ω_β, {args.rounds} rounds"
            print(ratio_table(rows_of(pairs, spec), title))


if __name__ == "__main__":
    main()
