"""fminspect against pysodmetrics 1.6.2 on real data: SalBench DataSet1's 18 photographs,
their real masks and the maps of five classic methods (FT, GC, HC, RC at the GT's size; CA's
grey JPEGs at 62 % of it, resized to the GT as PySODEvalToolkit resizes — bilinear — before
both score them). Per image every classic and confusion-count value, then each method's
dataset values from pysodmetrics' own accumulators; the Context-measures (with the
photograph) for one method. Target 1e-10 (C_β 1e-7, C^ω_β 1e-5: the float32 filter and the
patch-search ties documented in test_parity_real_size.py). Skips where ``../shared`` is
missing; the files are read from there and never copied into the project.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fminspect.io.loading import fit_to, load_image, load_map
from fminspect.metrics import compute_suite
from fminspect.metrics.dataset import DatasetAccumulator
from tests.metrics.test_parity_real_size import KEY_OF_CLASSIC
from tests.metrics.test_registry import HANDLER, dataset_reference
from tests.reference.octave_toolbox import SHARED

pytestmark = [pytest.mark.reference, pytest.mark.slow]

SALBENCH = SHARED / "realdata" / "SalBench-DataSet1"
METHODS = ("CA", "FT", "GC", "HC", "RC")


def _cases(method: str) -> list[dict]:
    if not SALBENCH.exists():
        pytest.skip(f"{SALBENCH} is not here (../shared beside the project)")
    cases = []
    for gt_path in sorted((SALBENCH / "GT").glob("*.png")):
        gt = load_map(gt_path).array
        found = sorted((SALBENCH / "Pred" / method).glob(f"{gt_path.stem}.*"))
        assert len(found) == 1, (method, gt_path.stem)
        pred, resized = fit_to(load_map(found[0]).array, gt.shape)
        assert (resized is not None) == (method == "CA"), (method, gt_path.stem)
        img = load_image(SALBENCH / "Imgs" / f"{gt_path.stem}.jpg")
        cases.append(
            {
                "id": f"{method}/{gt_path.stem}",
                "pred": pred,
                "gt": gt,
                "img": img,
                "normalize": True,
            }
        )
    return cases


@pytest.mark.parametrize("method", METHODS)
def test_every_image_and_the_dataset_equal_pysodmetrics(method: str, pysod) -> None:  # type: ignore[no-untyped-def]
    cases = _cases(method)
    groups = ["classic", "handlers", *(["context"] if method == "FT" else [])]
    results = pysod(cases, [{"groups": groups, "normalize": True} for _ in cases])["results"]
    acc = DatasetAccumulator()
    worst: dict[str, float] = {}
    for case, ref in zip(cases, results, strict=True):
        assert not any(k.endswith("_error") for k in ref), (case["id"], ref)
        img = case["img"] if method == "FT" else None
        suite = compute_suite(case["pred"], case["gt"], img=img, keys="default")
        ours = suite.scores()
        acc.add(case["id"], ours, suite.curves())
        wanted = {k: v for k, v in KEY_OF_CLASSIC.items() if k in ref}
        for ref_key, key in wanted.items():
            assert ours[key] == pytest.approx(ref[ref_key], abs=1e-10), (case["id"], key)
            worst[key] = max(worst.get(key, 0.0), abs(ours[key] - ref[ref_key]))
        for symbol, name in HANDLER.items():
            curve = np.asarray(ref[f"v2_{name}_dynamic"])
            best = "min" if symbol in ("FPR", "BER") else "max"
            for key, want in (
                (f"adp{symbol}", ref[f"v2_{name}_adaptive"]),
                (f"mean{symbol}", curve.mean()),
                (f"{best}{symbol}", getattr(curve, best)()),
            ):
                if key in ours:
                    assert ours[key] == pytest.approx(want, abs=1e-10), (case["id"], key)
        np.testing.assert_allclose(
            suite.fmeasure.fmeasure.curve[::-1], ref["fm_curve"], rtol=0, atol=1e-10
        )
        np.testing.assert_allclose(suite.emeasure.curve[::-1], ref["em_curve"], rtol=0, atol=1e-10)
        if method == "FT":
            assert ours["Cm"] == pytest.approx(ref["cm"], abs=1e-7), case["id"]
            assert ours["CCm"] == pytest.approx(ref["ccm"], abs=1e-5), case["id"]
    assert {"MAE", "Sm", "wFm", "adpEm", "adpFm"} <= set(worst)
    # the method over the 18 images, as pysodmetrics' accumulators give it
    meta = {"mode": "dataset", "cases": [{"normalize": True} for _ in cases]}
    ref = pysod(cases, meta)["dataset"]
    values = acc.results()
    classic = [k for k in ref if not k.startswith(("handlers", "curve_")) and k in values]
    assert {"MAE", "Sm", "wFm", "maxFm", "meanEm"} <= set(classic)
    for key in classic:
        assert values[key] == pytest.approx(ref[key], abs=1e-10), key
    curves = acc.mean_curves()
    for name in ("Fm", "Em"):
        np.testing.assert_allclose(curves[name][::-1], ref[f"curve_{name}"], rtol=0, atol=1e-10)
    checked = 0
    for key, value in values.items():
        want = dataset_reference(ref["handlers"], key)
        if want is not None:
            assert value == pytest.approx(want, abs=1e-10), key
            checked += 1
    assert checked >= 6


def test_the_files_stay_outside_the_project() -> None:
    # its terms forbid committing them: nothing under the project is one of them
    project = Path(__file__).resolve().parents[2]
    if not SALBENCH.exists():
        pytest.skip(f"{SALBENCH} is not here")
    names = {p.name for p in SALBENCH.rglob("*") if p.is_file()}
    tracked = {
        p.name
        for p in project.rglob("*")
        if p.is_file() and ".venv" not in p.parts and ".git" not in p.parts
    }
    assert not (names & tracked) - {"README.md"}, sorted(names & tracked)[:5]
