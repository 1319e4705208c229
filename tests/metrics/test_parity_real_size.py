"""Every measure family against pysodmetrics 1.6.2 at real sizes: maps of ≥ 1000 × 1000 with
many objects of every size, thin structures and speckles — where float16 counts (MSIoU),
large sums (the sweep, the E-measure) and many targets (the size-invariant family) would
show any difference the small random cases of the other parity tests cannot.

Tolerances: 1e-10 for every value, except C_β, where the references' float32 K ∗ Y differs
from fminspect's float64 by up to ~1e-7 on thin straight objects (documented in
fminspect/metrics/context_measure.py and tested there in isolation), and C^ω_β, where exact
ties in the nearest-patch search allow 1e-5 as in test_parity_context.py (measured here:
7e-11 for C_β, 2e-9 for C^ω_β on the photographic scenes).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from skimage import data

from fminspect.metrics import compute_suite, evaluate
from fminspect.metrics.dataset import DatasetAccumulator
from tests.metrics.test_registry import HANDLER, dataset_reference

pytestmark = [pytest.mark.reference, pytest.mark.slow]

KEY_OF_CLASSIC = {
    "mae": "MAE",
    "sm": "Sm",
    "wfm": "wFm",
    "em_adp": "adpEm",
    "fm_adp": "adpFm",
    "msiou_adp": "adpMSIoU",
    "msiou_bin": "binMSIoU",
    "si_mae": "siMAE",
    "hce": "HCE",
}
SI = {"fm": "Fm", "pre": "Pre", "rec": "Rec", "iou": "IoU", "dice": "Dice"}


def _scene(seed: int, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Many objects (large, small, touching the border), thin lines and a prediction with
    blur, a shift, misses, false alarms and speckle."""
    rng = np.random.default_rng(seed)
    h, w = shape
    gt = np.zeros(shape, np.uint8)
    for _ in range(12):
        r = int(rng.choice([3, 6, 15, 40, 120, 260]))
        cv2.circle(gt, (int(rng.integers(0, w)), int(rng.integers(0, h))), r, 255, -1)
    for _ in range(6):
        p1 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        p2 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        cv2.line(gt, p1, p2, 255, int(rng.integers(1, 4)))
    pred = cv2.GaussianBlur(np.roll(gt, int(rng.integers(2, 9)), axis=1), (0, 0), 3)
    pred = pred.astype(np.int16)
    for _ in range(5):  # misses and false alarms
        y, x = int(rng.integers(0, h - 60)), int(rng.integers(0, w - 60))
        pred[y : y + 60, x : x + 60] = 255 - pred[y : y + 60, x : x + 60]
    pred += rng.integers(-35, 35, shape).astype(np.int16)
    return np.clip(pred, 0, 255).astype(np.uint8), gt


def test_every_family_equals_the_reference_at_real_sizes(pysod) -> None:  # type: ignore[no-untyped-def]
    """Per image, then over the three images as a dataset (pysodmetrics' own accumulators,
    the pooled and the size-invariant pooled ones included)."""
    cases = [
        {"id": f"real-{i}", "pred": p, "gt": g, "normalize": True}
        for i, (p, g) in enumerate(
            [_scene(1, (1024, 1280)), _scene(2, (1200, 1000)), _scene(3, (1100, 1100))]
        )
    ]
    groups = ["classic", "handlers", "msiou", "si", "hce", "context"]
    results = pysod(cases, [{"groups": groups, "normalize": True} for _ in cases])["results"]
    acc = DatasetAccumulator()
    for case, ref in zip(cases, results, strict=True):
        assert not any(k.endswith("_error") for k in ref), ref
        suite = compute_suite(case["pred"], case["gt"], keys="all")
        ours = suite.scores()
        acc.add(case["id"], ours, suite.curves())
        checked = 0
        for ref_key, key in KEY_OF_CLASSIC.items():
            assert ours[key] == pytest.approx(ref[ref_key], abs=1e-10), (case["id"], key)
            checked += 1
        for symbol, name in HANDLER.items():
            curve = np.asarray(ref[f"v2_{name}_dynamic"])
            best = "min" if symbol in ("FPR", "BER") else "max"
            for key, want in (
                (f"adp{symbol}", ref[f"v2_{name}_adaptive"]),
                (f"bin{symbol}", ref[f"v2_{name}_binary"]),
                (f"mean{symbol}", curve.mean()),
                (f"{best}{symbol}", getattr(curve, best)()),
            ):
                assert ours[key] == pytest.approx(want, abs=1e-10), (case["id"], key)
                checked += 1
        em = np.asarray(ref["em_curve"])
        assert ours["meanEm"] == pytest.approx(em.mean(), abs=1e-10)
        assert ours["maxEm"] == pytest.approx(em.max(), abs=1e-10)
        for name, symbol in SI.items():
            for kind, ref_kind in (
                ("Adp", "adaptive"),
                ("Bin", "binary"),
                ("Max", "max"),
                ("Mean", "mean"),
            ):
                key = f"si{kind}{symbol}"
                assert ours[key] == pytest.approx(ref[f"si_{name}_{ref_kind}"], abs=1e-10), key
                checked += 1
            curve = np.asarray(ref[f"si_{name}_target_curve"])  # sample_based=False
            assert ours[f"siTgtMax{symbol}"] == pytest.approx(curve.max(), abs=1e-10), symbol
            assert ours[f"siTgtMean{symbol}"] == pytest.approx(curve.mean(), abs=1e-10), symbol
            checked += 2
        assert ours["Cm"] == pytest.approx(ref["cm"], abs=1e-7)  # float32 K ∗ Y (see notes)
        assert checked >= 9 + 40 + 30
    # over the dataset
    meta = {"mode": "dataset", "cases": [{"normalize": True, "si": True} for _ in cases]}
    ref = pysod(cases, meta)["dataset"]
    values = acc.results()
    classic = [k for k in ref if not k.startswith(("handlers", "curve_"))]
    for key in classic:
        assert values[key] == pytest.approx(ref[key], abs=1e-10), key
    curves = acc.mean_curves()
    for name in ("Fm", "Em"):
        np.testing.assert_allclose(curves[name][::-1], ref[f"curve_{name}"], rtol=0, atol=1e-10)
    handlers = ref["handlers"]
    confusion = 0
    for key, value in values.items():
        want = dataset_reference(handlers, key)
        if want is not None:
            assert value == pytest.approx(want, abs=1e-10), key
            confusion += 1
    assert len(classic) >= 17 and confusion == 5 * len(HANDLER)
    for name, symbol in SI.items():
        assert values[f"siPooled{symbol}"] == pytest.approx(
            handlers[f"si_{name}_pooled"], abs=1e-10
        ), symbol
        curve = np.asarray(handlers[f"si_{name}_target_curve"])
        assert values[f"siTgtMax{symbol}"] == pytest.approx(curve.max(), abs=1e-10), symbol
        assert values[f"siTgtMean{symbol}"] == pytest.approx(curve.mean(), abs=1e-10), symbol


def _photo_scene(seed: int, shape: tuple[int, int], camouflaged: bool) -> dict[str, object]:
    """A real-size image made of scikit-image's photographs: the scene's objects cut from the
    same texture elsewhere (camouflaged) or from another photograph (salient)."""
    rng = np.random.default_rng(seed)
    h, w = shape
    pred, gt = _scene(seed, shape)
    background = cv2.resize(data.rocket() if camouflaged else data.coffee(), (w, h))
    if camouflaged:  # the same texture, shifted and flipped
        texture = np.ascontiguousarray(np.roll(background[::-1], int(rng.integers(50, 300)), 1))
    else:
        texture = cv2.resize(data.chelsea(), (w, h))
    img = background.copy()
    img[gt > 128] = texture[gt > 128]
    kind = "camo" if camouflaged else "salient"
    return {"id": f"real-{kind}-{seed}", "pred": pred, "gt": gt, "img": img, "normalize": True}


def test_both_context_measures_equal_the_reference_at_real_sizes(pysod) -> None:  # type: ignore[no-untyped-def]
    cases = [
        _photo_scene(7, (1024, 1100), camouflaged=True),
        _photo_scene(8, (1000, 1000), camouflaged=False),
    ]
    results = pysod(cases, [{"groups": ["context"], "normalize": True} for _ in cases])["results"]
    for case, ref in zip(cases, results, strict=True):
        assert not any(k.endswith("_error") for k in ref), ref
        ours = evaluate(case["pred"], case["gt"], img=case["img"], keys=["Cm", "CCm"])
        assert ours["Cm"] == pytest.approx(ref["cm"], abs=1e-7), case["id"]  # float32 K ∗ Y
        # ties in the nearest-patch search (test_parity_context.py): 1e-5 as there
        assert ours["CCm"] == pytest.approx(ref["ccm"], abs=1e-5), case["id"]
