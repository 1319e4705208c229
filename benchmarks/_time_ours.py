"""Time fminspect's measures (run by bench_*.py in fminspect's environment).

Usage: python _time_ours.py INPUTS.npz OUT.json REPEATS GROUP
"cold" timings start from the raw uint8 arrays every run (GT-only work included, as a
pysodmetrics ``step()``); "warm GT" timings reuse a prepared GroundTruth, as fminspect does
for several models of one sample.
"""

import json
import sys
import time

import cv2
import numpy as np

cv2.setNumThreads(1)

from fminspect import metrics as M


def _median_ms(fn, repeats):
    times = []
    for _ in range(repeats + 1):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times[1:]) * 1e3)


def classic(pred, gt):
    pair = M.prepare(pred, gt)
    M.mae(pair), M.fmeasure(pair), M.overlap(pair), M.weighted_fmeasure(pair)
    M.smeasure(pair), M.emeasure(pair)


def main():
    path, out, repeats, group = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    data = np.load(path)
    results = {}
    for size in json.loads(str(data["sizes"])):
        pred, gt, img = data[f"pred_{size}"], data[f"gt_{size}"], data[f"img_{size}"]
        r = {}
        if group == "metrics":
            fns = {
                "MAE": M.mae,
                "Fmeasure": M.fmeasure,
                "Emeasure": M.emeasure,
                "Smeasure": M.smeasure,
                "WeightedFmeasure": M.weighted_fmeasure,
                "FmeasureV2 IoU+Dice": M.overlap,
                "MSIoU adaptive+binary": M.msiou,
            }
            for name, fn in fns.items():
                r[name] = _median_ms(lambda fn=fn: fn(pred, gt), repeats)
                g = M.prepare_gt(gt)
                fn(pred, g)
                r[name + " (warm GT)"] = _median_ms(lambda fn=fn, g=g: fn(pred, g), repeats)
            r["classic suite"] = _median_ms(lambda: classic(pred, gt), repeats)
            g = M.prepare_gt(gt)
            classic(pred, g)
            r["classic suite (warm GT)"] = _median_ms(lambda: classic(pred, g), repeats)
            r["full suite"] = _median_ms(lambda: M.compute_suite(pred, gt), repeats)
        if group == "enlarged":
            # the same values as the reference calls of this group, one family at a time
            single = {
                "FmeasureV2 10 handlers": ["fmeasure", "overlap", "classification"],
                "MAE": ["mae"],
                "Emeasure": ["emeasure"],
                "Smeasure": ["smeasure"],
                "WeightedFmeasure": ["weighted_fmeasure"],
                "ContextMeasure": ["context"],
                # both forms of the SI curves (pysodmetrics' per-target curves give both)
                "SI (MAE + F family)": ["size_invariance", "size_invariance_curve"],
                "HumanCorrectionEffortMeasure": ["hce"],
                "MSIoU adaptive+binary": ["msiou"],
                "MSIoU dynamic": ["msiou_curve"],
            }
            for name, families in single.items():
                r[name] = _median_ms(
                    lambda f=families: M.compute_suite(pred, gt, families=f),
                    min(repeats, 5) if name == "MSIoU dynamic" else repeats,
                )
            # every value of the group in one call: shared work done once
            every = [f for fs in single.values() for f in fs if f != "msiou_curve"]
            r["enlarged suite"] = _median_ms(
                lambda: M.compute_suite(pred, gt, families=every), repeats
            )
            r["enlarged suite + MSIoU dynamic"] = _median_ms(
                lambda: M.compute_suite(pred, gt, families=[*every, "msiou_curve"]),
                min(repeats, 5),
            )
        if group == "context":
            r["ContextMeasure"] = _median_ms(lambda: M.context_measure(pred, gt), repeats)
            r["CamouflageContextMeasure"] = _median_ms(
                lambda: M.camouflage_context_measure(pred, gt, img=img), repeats
            )
            r["camouflage degree"] = _median_ms(lambda: M.camouflage_degree(img, gt), repeats)
            g = M.prepare_gt(gt)
            M.context_measure(pred, g)
            r["ContextMeasure (warm GT)"] = _median_ms(lambda: M.context_measure(pred, g), repeats)
            M.camouflage_context_measure(pred, g, img=img)
            r["CamouflageContextMeasure (warm GT)"] = _median_ms(
                lambda: M.camouflage_context_measure(pred, g, img=img), repeats
            )
        results[str(size)] = r
    with open(out, "w") as fh:
        json.dump(results, fh)


if __name__ == "__main__":
    main()
