"""pysodmetrics 1.4.2's classic measures for a batch of cases: the version PySODEvalToolkit
pins, the reference of fminspect's ``pysodevaltoolkit`` convention.

Runs in its own virtual environment (``.venv-ref-1.4.2``). Usage::

    python pysod142_oracle.py CASES.npz OUT.json

Same input as ``pysod_oracle.py`` (uint8 ``pred_<i>``, ``gt_<i>``); 1.4.2 always normalises
(its ``step`` has no ``normalize`` argument). Output: per case MAE, adaptive and curve
F-measure and E-measure (stored threshold 255 → 0), S-measure and weighted F-measure.
"""

import json
import sys
import warnings

import numpy as np
import py_sod_metrics as psm


def _f(x):
    return float(np.asarray(x, dtype=np.float64))


def _curve(x):
    return [float(v) for v in np.asarray(x, dtype=np.float64).ravel()]


def _classic(pred, gt):
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = psm.Fmeasure()
        fm.step(pred, gt)
        r = fm.get_results()
        out["fm_adp"] = _f(r["fm"]["adp"])
        out["fm_curve"] = _curve(r["fm"]["curve"])
        em = psm.Emeasure()
        em.step(pred, gt)
        r = em.get_results()["em"]
        out["em_adp"] = _f(r["adp"])
        out["em_curve"] = _curve(r["curve"])
        sm = psm.Smeasure()
        sm.step(pred, gt)
        out["sm"] = _f(sm.get_results()["sm"])
        wfm = psm.WeightedFmeasure()
        wfm.step(pred, gt)
        out["wfm"] = _f(wfm.get_results()["wfm"])
        mae = psm.MAE()
        mae.step(pred, gt)
        out["mae"] = _f(mae.get_results()["mae"])
    return out


def answer(cases_path, out_path):
    """Compute the cases of ``cases_path`` (npz) into ``out_path`` (JSON)."""
    data = np.load(cases_path)
    meta = json.loads(str(data["meta"]))
    results = []
    for i in range(len(meta)):
        try:
            results.append(_classic(data[f"pred_{i}"], data[f"gt_{i}"]))
        except Exception as exc:
            results.append({"error": f"{type(exc).__name__}: {exc}"})
    with open(out_path, "w") as fh:
        json.dump({"pysodmetrics": "1.4.2", "numpy": np.__version__, "results": results}, fh)


def serve(answer):
    """``--serve``: answer ``CASES.npz<TAB>OUT.json`` lines from standard input with one line
    each, ``done`` or ``error …`` (the tests keep one oracle process per test process instead
    of starting one, ~2 s of imports, for every batch)."""
    for line in sys.stdin:
        cases, out = line.rstrip("\n").split("\t")
        try:
            answer(cases, out)
        except Exception as exc:  # said to the test, which fails naming it
            print(f"error {type(exc).__name__}: {exc}".replace("\n", " "), flush=True)
        else:
            print("done", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve(answer)
    else:
        answer(sys.argv[1], sys.argv[2])
