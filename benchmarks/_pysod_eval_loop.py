"""The reference batch loop, as PySODEvalToolkit runs it (run in the reference venv).

Usage: python _pysod_eval_loop.py ROOT OUT.json
For each method: for each image read the GT and the prediction as grey, resize the
prediction to the GT if needed (bilinear), and step MAE, S-measure, weighted F, E-measure
and FmeasureV2 (F-measure, IoU, Dice; dynamic + adaptive); then get_results().
"""

import json
import sys
import time
from pathlib import Path

import cv2
import py_sod_metrics as psm

cv2.setNumThreads(1)


def main():
    root, out = Path(sys.argv[1]), sys.argv[2]
    t0 = time.perf_counter()
    n = 0
    results = {}
    for method_dir in sorted((root / "Pred").iterdir()):
        mae, sm, wfm, em = psm.MAE(), psm.Smeasure(), psm.WeightedFmeasure(), psm.Emeasure()
        fmv2 = psm.FmeasureV2(
            metric_handlers={
                "fm": psm.FmeasureHandler(with_dynamic=True, with_adaptive=True, beta=0.3),
                "iou": psm.IOUHandler(with_dynamic=True, with_adaptive=True),
                "dice": psm.DICEHandler(with_dynamic=True, with_adaptive=True),
            }
        )
        for gt_path in sorted((root / "GT").iterdir()):
            gt = cv2.imread(str(gt_path), cv2.IMREAD_GRAYSCALE)
            pred = cv2.imread(str(method_dir / gt_path.name), cv2.IMREAD_GRAYSCALE)
            if pred.shape != gt.shape:
                pred = cv2.resize(pred, gt.shape[::-1], interpolation=cv2.INTER_LINEAR)
            for m in (mae, sm, wfm, em, fmv2):
                m.step(pred, gt)
            n += 1
        r = fmv2.get_results()
        results[method_dir.name] = {
            "MAE": float(mae.get_results()["mae"]),
            "Sm": float(sm.get_results()["sm"]),
            "wFm": float(wfm.get_results()["wfm"]),
            "maxEm": float(em.get_results()["em"]["curve"].max()),
            "maxFm": float(r["fm"]["dynamic"].max()),
            "maxIoU": float(r["iou"]["dynamic"].max()),
        }
    seconds = time.perf_counter() - t0
    with open(out, "w") as fh:
        json.dump({"seconds": seconds, "pairs": n, "results": results}, fh)


if __name__ == "__main__":
    main()
