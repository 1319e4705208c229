"""Speed of the Context-measure and the camouflage degree against pysodmetrics 1.6.2.

    python benchmarks/bench_context.py [--repeats 10] [--rounds 3] [--sizes 400 1024]

Same protocol as bench_metrics.py: both sides single-threaded, same inputs, same run, each
in its own environment, alternating over ``--rounds`` rounds, with default and with
fminspect's allocator settings. Targets
(issue #3): C_β ≥ 2× faster, the camouflage degree ≥ 3× faster. "warm GT" reuses what
depends on the GT (and image) only — the kernel, K ∗ Y, the camouflage degree — as fminspect
does for the several models of one image; pysodmetrics recomputes it for every call.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _harness import ratio_table, reference_python, rows_of, run_rounds
from _inputs import write_inputs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[400, 1024])
    args = ap.parse_args()
    ref_python = reference_python()
    with tempfile.TemporaryDirectory() as tmp:
        npz = Path(tmp) / "inputs.npz"
        write_inputs(npz, args.sizes)
        for tuned in (False, True):
            common = [str(npz), str(args.repeats), "context"]
            rounds = run_rounds(ref_python, common, tuned, args.rounds)
            alloc = "fminspect allocator settings" if tuned else "default allocator"
            for s in args.sizes:
                pairs = [(r[str(s)], o[str(s)]) for r, o in rounds]
                cold = ("ContextMeasure", "camouflage degree", "CamouflageContextMeasure")
                spec = [(k, k, k) for k in cold]
                spec += [
                    (f"{k} (warm GT)", k, f"{k} (warm GT)")
                    for k in ("ContextMeasure", "CamouflageContextMeasure")
                ]
                title = f"\n{s}×{s}, {alloc}, {args.rounds} rounds of {args.repeats} calls"
                print(ratio_table(rows_of(pairs, spec), title))


if __name__ == "__main__":
    main()
