"""Time pysodmetrics 1.6.2 ``step()`` calls (run by bench_*.py in the reference venv).

Usage: python _time_pysod.py INPUTS.npz OUT.json REPEATS GROUP
Each timing is one ``step()`` on a fresh metric object (including its own normalisation),
median over REPEATS runs after one warm-up.
"""

import json
import sys
import time
import warnings

import cv2
import numpy as np

cv2.setNumThreads(1)
warnings.simplefilter("ignore")
import py_sod_metrics as psm


def _median_ms(make, step, repeats):
    times = []
    for _ in range(repeats + 1):
        m = make()
        t0 = time.perf_counter()
        step(m)
        times.append(time.perf_counter() - t0)
    return float(np.median(times[1:]) * 1e3)


def main():
    path, out, repeats, group = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    data = np.load(path)
    results = {}
    for size in json.loads(str(data["sizes"])):
        pred, gt, img = data[f"pred_{size}"], data[f"gt_{size}"], data[f"img_{size}"]
        r = {}
        if group == "metrics":
            classes = {
                "MAE": psm.MAE,
                "Fmeasure": psm.Fmeasure,
                "Emeasure": psm.Emeasure,
                "Smeasure": psm.Smeasure,
                "WeightedFmeasure": psm.WeightedFmeasure,
            }
            for name, cls in classes.items():
                r[name] = _median_ms(cls, lambda m: m.step(pred, gt), repeats)
            r["FmeasureV2 IoU+Dice"] = _median_ms(
                lambda: psm.FmeasureV2(
                    metric_handlers={
                        "iou": psm.IOUHandler(with_dynamic=True, with_adaptive=True),
                        "dice": psm.DICEHandler(with_dynamic=True, with_adaptive=True),
                    }
                ),
                lambda m: m.step(pred, gt),
                repeats,
            )
            r["MSIoU adaptive+binary"] = _median_ms(
                lambda: psm.MSIoU(with_dynamic=False, with_adaptive=True, with_binary=True),
                lambda m: m.step(pred, gt),
                repeats,
            )
        if group == "enlarged":
            handlers = (
                psm.FmeasureHandler,
                psm.PrecisionHandler,
                psm.RecallHandler,
                psm.IOUHandler,
                psm.DICEHandler,
                psm.SpecificityHandler,
                psm.FPRHandler,
                psm.BERHandler,
                psm.OverallAccuracyHandler,
                psm.KappaHandler,
            )

            def every(cls=psm.FmeasureV2, hs=handlers):
                return cls(
                    metric_handlers={
                        str(i): h(with_dynamic=True, with_adaptive=True, with_binary=True)
                        for i, h in enumerate(hs)
                    }
                )

            r["FmeasureV2 10 handlers"] = _median_ms(every, lambda m: m.step(pred, gt), repeats)
            for name, cls in {
                "MAE": psm.MAE,
                "Emeasure": psm.Emeasure,
                "Smeasure": psm.Smeasure,
                "WeightedFmeasure": psm.WeightedFmeasure,
                "ContextMeasure": psm.ContextMeasure,
                "SizeInvarianceMAE": psm.SizeInvarianceMAE,
                "HumanCorrectionEffortMeasure": psm.HumanCorrectionEffortMeasure,
            }.items():
                r[name] = _median_ms(cls, lambda m: m.step(pred, gt), repeats)
            r["MSIoU adaptive+binary"] = _median_ms(
                lambda: psm.MSIoU(with_dynamic=False, with_adaptive=True, with_binary=True),
                lambda m: m.step(pred, gt),
                repeats,
            )
            r["SizeInvarianceFmeasureV2 5 handlers"] = _median_ms(
                lambda: every(psm.SizeInvarianceFmeasureV2, handlers[:5]),
                lambda m: m.step(pred, gt),
                repeats,
            )
            r["MSIoU dynamic"] = _median_ms(
                lambda: psm.MSIoU(with_dynamic=True, with_adaptive=False, with_binary=False),
                lambda m: m.step(pred, gt),
                min(repeats, 2),
            )
        if group == "context":
            r["ContextMeasure"] = _median_ms(
                psm.ContextMeasure, lambda m: m.step(pred, gt), repeats
            )
            r["CamouflageContextMeasure"] = _median_ms(
                psm.CamouflageContextMeasure, lambda m: m.step(pred, gt, img=img), repeats
            )
            ccm = psm.CamouflageContextMeasure()
            g = (gt > 128).astype(np.float64)
            r["camouflage degree"] = _median_ms(
                lambda: ccm, lambda m: m._calculate_camouflage_degree(img, g), repeats
            )
        results[str(size)] = r
    with open(out, "w") as fh:
        json.dump(results, fh)


if __name__ == "__main__":
    main()
