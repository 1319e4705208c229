"""Speed of the Context-measure and the camouflage degree against pysodmetrics 1.6.2.

    python benchmarks/bench_context.py [--repeats 10] [--sizes 400 1024]

Same protocol as bench_metrics.py: both sides single-threaded, same inputs, same run, each
in its own environment, with default and with fminspect's allocator settings. Targets
(issue #3): C_β ≥ 2× faster, the camouflage degree ≥ 3× faster. "warm GT" reuses what
depends on the GT (and image) only — the kernel, K ∗ Y, the camouflage degree — as fminspect
does for the several models of one image; pysodmetrics recomputes it for every call.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _harness import HERE, ratio_table, reference_python, run_json
from _inputs import write_inputs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--sizes", type=int, nargs="+", default=[400, 1024])
    args = ap.parse_args()
    ref_python = reference_python()
    with tempfile.TemporaryDirectory() as tmp:
        npz = Path(tmp) / "inputs.npz"
        write_inputs(npz, args.sizes)
        for tuned in (False, True):
            common = [str(npz), str(args.repeats), "context"]
            ref = run_json(ref_python, HERE / "_time_pysod.py", common, tuned)
            ours = run_json(sys.executable, HERE / "_time_ours.py", common, tuned)
            alloc = "fminspect allocator settings" if tuned else "default allocator"
            for s in args.sizes:
                r, o = ref[str(s)], ours[str(s)]
                rows = [
                    (k, r[k], o[k])
                    for k in ("ContextMeasure", "camouflage degree", "CamouflageContextMeasure")
                ]
                rows += [
                    (f"{k} (warm GT)", r[k], o[f"{k} (warm GT)"])
                    for k in ("ContextMeasure", "CamouflageContextMeasure")
                ]
                print(ratio_table(rows, f"\n{s}×{s}, {alloc}, median of {args.repeats}"))


if __name__ == "__main__":
    main()
