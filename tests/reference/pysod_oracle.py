"""Compute pysodmetrics 1.6.2 values for a batch of cases (the test oracle).

Runs in the reference virtual environment (pysodmetrics pins old numpy, scikit-image and
OpenCV, so it never shares an environment with fminspect). Usage::

    python pysod_oracle.py CASES.npz OUT.json
    python pysod_oracle.py --serve      # the same for each line CASES.npz<TAB>OUT.json read

``CASES.npz`` holds ``pred_<i>``, ``gt_<i>`` (uint8 or float/bool with ``normalize=False``)
and optionally ``img_<i>`` (RGB uint8), plus ``meta`` — a JSON string with, per case, the
measures wanted and whether to normalise. Output: one dict per case with every value the
reference computes; curves are stored as pysodmetrics stores them (threshold 255 → 0).
Errors are reported per measure as ``{"error": "..."}`` rather than aborting the batch.
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


def _classic(pred, gt, normalize):
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = psm.Fmeasure()
        fm.step(pred, gt, normalize=normalize)
    r = fm.get_results()
    out["fm_adp"] = _f(r["fm"]["adp"])
    out["fm_curve"] = _curve(r["fm"]["curve"])
    out["pr_p"] = _curve(r["pr"]["p"])
    out["pr_r"] = _curve(r["pr"]["r"])
    em = psm.Emeasure()
    em.step(pred, gt, normalize=normalize)
    r = em.get_results()["em"]
    out["em_adp"] = _f(r["adp"])
    out["em_curve"] = _curve(r["curve"])
    sm = psm.Smeasure()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm.step(pred, gt, normalize=normalize)
    out["sm"] = _f(sm.get_results()["sm"])
    wfm = psm.WeightedFmeasure()
    wfm.step(pred, gt, normalize=normalize)
    out["wfm"] = _f(wfm.get_results()["wfm"])
    mae = psm.MAE()
    mae.step(pred, gt, normalize=normalize)
    out["mae"] = _f(mae.get_results()["mae"])
    return out


def _handlers(pred, gt, normalize):
    names = {
        "fm": psm.FmeasureHandler,
        "f1": psm.FmeasureHandler,
        "pre": psm.PrecisionHandler,
        "rec": psm.RecallHandler,
        "iou": psm.IOUHandler,
        "dice": psm.DICEHandler,
        "spec": psm.SpecificityHandler,
        "fpr": psm.FPRHandler,
        "ber": psm.BERHandler,
        "oa": psm.OverallAccuracyHandler,
        "kappa": psm.KappaHandler,
    }
    handlers = {}
    for name, cls in names.items():
        kw = {"beta": 1.0} if name == "f1" else {}
        handlers[name] = cls(with_dynamic=True, with_adaptive=True, with_binary=True, **kw)
    fmv2 = psm.FmeasureV2(metric_handlers=handlers)
    fmv2.step(pred, gt, normalize=normalize)
    out = {}
    for name, res in fmv2.get_results().items():
        out[f"v2_{name}_dynamic"] = _curve(res["dynamic"])
        out[f"v2_{name}_adaptive"] = _f(res["adaptive"])
        out[f"v2_{name}_binary"] = _f(res["binary"])
    return out


def _msiou(pred, gt, normalize):
    m = psm.MSIoU(with_dynamic=False, with_adaptive=True, with_binary=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.step(pred, gt, normalize=normalize)
    r = m.get_results()
    return {"msiou_adp": _f(r["adaptive"]), "msiou_bin": _f(r["binary"])}


def _msiou_dynamic(pred, gt, normalize):
    m = psm.MSIoU(with_dynamic=True, with_adaptive=False, with_binary=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.step(pred, gt, normalize=normalize)
    return {"msiou_curve": _curve(m.get_results()["dynamic"])}


SI_HANDLERS = ("fm", "pre", "rec", "iou", "dice")


def _si(pred, gt, normalize):
    """Size-invariant MAE and F family: per image (the dynamic curves per target)."""
    mae = psm.SizeInvarianceMAE()
    mae.step(pred, gt, normalize=normalize)
    fm = psm.SizeInvarianceFmeasureV2(
        metric_handlers={
            n: HANDLERS[n](with_dynamic=True, with_adaptive=True, with_binary=True)
            for n in SI_HANDLERS
        }
    )
    fm.step(pred, gt, normalize=normalize)
    # sample_based=False: the curve averaged over the targets (of this one image)
    overall = psm.SizeInvarianceFmeasureV2(
        metric_handlers={
            n: HANDLERS[n](
                with_dynamic=True, with_adaptive=False, with_binary=False, sample_based=False
            )
            for n in SI_HANDLERS
        }
    )
    overall.step(pred, gt, normalize=normalize)
    out = {"si_mae": _f(mae.get_results()["si_mae"])}
    for name, res in fm.get_results().items():
        curves = np.asarray(res["dynamic"][0], dtype=np.float64)  # targets × 256
        out[f"si_{name}_adaptive"] = _f(res["adaptive"])
        out[f"si_{name}_binary"] = _f(res["binary"])
        out[f"si_{name}_max"] = _f(curves.max(axis=1).mean())
        out[f"si_{name}_mean"] = _f(curves.mean(axis=1).mean())
    for name, res in overall.get_results().items():
        out[f"si_{name}_target_curve"] = _curve(res["dynamic"])
    return out


def _hce(pred, gt, normalize):
    m = psm.HumanCorrectionEffortMeasure()
    m.step(pred, gt, normalize=normalize)
    return {"hce": _f(m.get_results()["hce"])}


def _context(pred, gt, normalize, img):
    out = {}
    cm = psm.ContextMeasure()
    cm.step(pred, gt, normalize=normalize)
    out["cm"] = _f(cm.get_results()["cm"])
    if img is not None:
        ccm = psm.CamouflageContextMeasure()
        ccm.step(pred, gt, img=img, normalize=normalize)
        out["ccm"] = _f(ccm.get_results()["ccm"])
    return out


def _degree(gt, img):
    """The camouflage degree map and the reconstruction (private API, as the tests need)."""
    ccm = psm.CamouflageContextMeasure()
    g = (gt > 128).astype(np.float64)
    recon, cd = ccm._calculate_camouflage_degree(img, g)
    return {"cd_sum": float(cd.sum()), "recon_sum": int(recon.astype(np.int64).sum())}


def _sklearn_inputs(pred, gt, normalize):
    """pysodmetrics' inputs: prepare_data's normalisation, flattened."""
    from py_sod_metrics.utils import prepare_data

    if normalize:
        pred, gt = prepare_data(pred, gt)
    return np.asarray(pred, dtype=np.float64).ravel(), np.asarray(gt, dtype=bool).ravel()


def _auc(pred, gt, normalize):
    """scikit-learn's ROC area, the area of its PR curve and its average precision, on the
    256-level map ``uint8(255·p)`` of pysodmetrics' sweep."""
    from sklearn.metrics import auc, average_precision_score, precision_recall_curve, roc_auc_score

    pred, gt = _sklearn_inputs(pred, gt, normalize)
    q = (pred * 255).astype(np.uint8)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # one class: no ROC; no positives: no PR curve (recall 0/0)
        out["auc_roc"] = float(roc_auc_score(gt, q)) if 0 < gt.sum() < gt.size else float("nan")
        out["auc_pr"] = out["ap_none"] = float("nan")
        if gt.any():
            precision, recall, _ = precision_recall_curve(gt, q)
            out["auc_pr"] = float(auc(recall, precision))
            out["ap_none"] = float(average_precision_score(gt, q))
    return out


def _kappa(pred, gt, normalize, curve):
    """scikit-learn's Cohen kappa of FmeasureV2's binarisations: the adaptive
    ``p >= min(2·mean, 1)``, the binary ``p > 0.5`` and (``curve``) the 256 ``uint8(255·p) >= t``.
    Each is scored on its four (GT, map) label pairs weighted by their counts — the same
    labels, weighted, as the whole map (checked on the first) — so that 256 calls stay cheap."""
    from py_sod_metrics.utils import get_adaptive_threshold
    from sklearn.metrics import cohen_kappa_score

    pred, gt = _sklearn_inputs(pred, gt, normalize)
    pairs_gt, pairs_map = np.array([0, 0, 1, 1], bool), np.array([0, 1, 0, 1], bool)

    def kappa(binary, whole=False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if whole:
                return float(cohen_kappa_score(gt, binary, labels=[False, True]))
            counts = [np.sum(~gt & ~binary), np.sum(~gt & binary), np.sum(gt & ~binary)]
            counts.append(np.sum(gt & binary))
            weights = np.asarray(counts, dtype=np.float64)
            return float(
                cohen_kappa_score(pairs_gt, pairs_map, labels=[False, True], sample_weight=weights)
            )

    adaptive = pred >= get_adaptive_threshold(pred, max_value=1)
    out = {"ckappa_adaptive": kappa(adaptive, whole=True), "ckappa_binary": kappa(pred > 0.5)}
    weighted = kappa(adaptive)
    assert np.isclose(weighted, out["ckappa_adaptive"], rtol=0, atol=1e-12, equal_nan=True)
    if curve:
        q = (pred * 255).astype(np.uint8)
        out["ckappa_curve_ascending"] = [kappa(q >= t) for t in range(256)]
    return out


GROUPS = {
    "auc": _auc,
    "classic": _classic,
    "handlers": _handlers,
    "msiou": _msiou,
    "msiou_dynamic": _msiou_dynamic,
    "si": _si,
    "hce": _hce,
}

#: FmeasureV2's handlers, as the dataset mode steps them (β² = 0.3 for fm)
HANDLERS = {
    "fm": psm.FmeasureHandler,
    "pre": psm.PrecisionHandler,
    "rec": psm.RecallHandler,
    "iou": psm.IOUHandler,
    "dice": psm.DICEHandler,
    "spec": psm.SpecificityHandler,
    "fpr": psm.FPRHandler,
    "ber": psm.BERHandler,
    "oa": psm.OverallAccuracyHandler,
    "kappa": psm.KappaHandler,
}


def _dataset(data, specs):
    """pysodmetrics' own accumulators stepped over every case, then get_results()."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm, em, sm, wfm, mae = (
            psm.Fmeasure(),
            psm.Emeasure(),
            psm.Smeasure(),
            psm.WeightedFmeasure(),
            psm.MAE(),
        )
        fmv2 = psm.FmeasureV2(
            metric_handlers={
                "iou": psm.IOUHandler(with_dynamic=True, with_adaptive=True),
                "dice": psm.DICEHandler(with_dynamic=True, with_adaptive=True),
            }
        )
        msiou = psm.MSIoU(with_dynamic=False, with_adaptive=True, with_binary=True)
        every = psm.FmeasureV2(
            metric_handlers={
                name: cls(with_dynamic=True, with_adaptive=True, with_binary=True)
                for name, cls in HANDLERS.items()
            }
        )
        pooled = psm.FmeasureV2(
            metric_handlers={
                name: cls(
                    with_dynamic=False, with_adaptive=False, with_binary=True, sample_based=False
                )
                for name, cls in HANDLERS.items()
            }
        )
        si_sets = [spec.get("si", False) for spec in specs]
        si_pooled = psm.SizeInvarianceFmeasureV2(
            metric_handlers={
                n: HANDLERS[n](
                    with_dynamic=True, with_adaptive=False, with_binary=True, sample_based=False
                )
                for n in SI_HANDLERS
            }
        )
        for i, spec in enumerate(specs):
            pred, gt = data[f"pred_{i}"], data[f"gt_{i}"]
            kw = {"normalize": spec.get("normalize", True)}
            for m in (fm, em, sm, wfm, mae, fmv2, msiou, every, pooled):
                m.step(pred, gt, **kw)
            if any(si_sets):
                si_pooled.step(pred, gt, **kw)
    f, e, v2, ms = fm.get_results(), em.get_results()["em"], fmv2.get_results(), msiou.get_results()
    handlers = {}
    for name, res in every.get_results().items():
        handlers[f"{name}_dynamic"] = _curve(res["dynamic"])
        handlers[f"{name}_adaptive"] = _f(res["adaptive"])
        handlers[f"{name}_binary"] = _f(res["binary"])
    for name, res in pooled.get_results().items():
        handlers[f"{name}_pooled"] = _f(res["binary"])
    if any(si_sets):
        for name, res in si_pooled.get_results().items():
            handlers[f"si_{name}_pooled"] = _f(res["binary"])
            handlers[f"si_{name}_target_curve"] = _curve(res["dynamic"])
    return {
        "handlers": handlers,
        "MAE": _f(mae.get_results()["mae"]),
        "Sm": _f(sm.get_results()["sm"]),
        "wFm": _f(wfm.get_results()["wfm"]),
        "adpEm": _f(e["adp"]),
        "meanEm": _f(e["curve"].mean()),
        "maxEm": _f(e["curve"].max()),
        "adpFm": _f(f["fm"]["adp"]),
        "meanFm": _f(f["fm"]["curve"].mean()),
        "maxFm": _f(f["fm"]["curve"].max()),
        "adpIoU": _f(v2["iou"]["adaptive"]),
        "meanIoU": _f(v2["iou"]["dynamic"].mean()),
        "maxIoU": _f(v2["iou"]["dynamic"].max()),
        "adpDice": _f(v2["dice"]["adaptive"]),
        "meanDice": _f(v2["dice"]["dynamic"].mean()),
        "maxDice": _f(v2["dice"]["dynamic"].max()),
        "adpMSIoU": _f(ms["adaptive"]),
        "binMSIoU": _f(ms["binary"]),
        "curve_Fm": _curve(f["fm"]["curve"]),
        "curve_Em": _curve(e["curve"]),
    }


def answer(cases_path, out_path):
    """Compute the cases of ``cases_path`` (npz) into ``out_path`` (JSON)."""
    data = np.load(cases_path)
    meta = json.loads(str(data["meta"]))
    if isinstance(meta, dict) and meta.get("mode") == "dataset":
        out = {"dataset": _dataset(data, meta["cases"])}
        with open(out_path, "w") as fh:
            json.dump(out, fh)
        return
    results = []
    for i, spec in enumerate(meta):
        pred, gt = data[f"pred_{i}"], data[f"gt_{i}"]
        img = data[f"img_{i}"] if f"img_{i}" in data.files else None
        normalize = spec.get("normalize", True)
        res = {}
        for group in spec["groups"]:
            try:
                if group == "kappa":
                    res.update(_kappa(pred, gt, normalize, spec.get("kappa_curve", True)))
                elif group == "context":
                    res.update(_context(pred, gt, normalize, img))
                elif group == "degree":
                    res.update(_degree(gt, img))
                else:
                    res.update(GROUPS[group](pred, gt, normalize))
            except Exception as exc:
                res[f"{group}_error"] = f"{type(exc).__name__}: {exc}"
        results.append(res)
    with open(out_path, "w") as fh:
        json.dump(
            {
                "pysodmetrics": psm.__version__ if hasattr(psm, "__version__") else "1.6.2",
                "numpy": np.__version__,
                "results": results,
            },
            fh,
        )


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
