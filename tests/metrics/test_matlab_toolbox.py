"""``--convention matlab`` against the authors' MATLAB one-key toolbox's own output.

``../shared/reference/CODToolbox`` ships three COD10K test images' GTs, SINet's maps of them
and ``2020-CVPR-SINet.mat``: what MATLAB itself (its colon operator, its ``bwdist``) wrote
when ``main.m`` evaluated them — the dataset values and the 256-point mean F, E, precision
and recall curves at full precision. ``fminspect eval --convention matlab`` on copies of
those files must give the same numbers: 1e-10 for every value and curve point, 1e-8 for the
weighted F-measure (MATLAB computes its weights in single precision). The test skips where
``../shared`` is not beside the project (its terms keep its files out of the project).
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from fminspect.cli import main
from fminspect.metrics._inputs import CURVE_THRESHOLDS, MATLAB_THRESHOLDS
from fminspect.metrics._numerics import matlab_colon
from tests.datasets import write_png

TOOLBOX = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "reference"
    / "CODToolbox"
    / "Onekey_Evaluation_Code"
)
MAT = TOOLBOX / "Results" / "Result-COD10K-test" / "COD10K-mat" / "2020-CVPR-SINet.mat"
#: fminspect's key → the .mat's variable
VALUES = {
    "MAE": "mae",
    "Sm": "Sm",
    "wFm": "wFm",
    "adpFm": "adpFm",
    "meanFm": "meanFm",
    "maxFm": "maxFm",
    "adpEm": "adpEm",
    "meanEm": "meanEm",
    "maxEm": "maxEm",
}
CURVES = {"Fm": "column_F", "Em": "column_E", "Precision": "column_Pr", "Recall": "column_Rec"}


def test_matlab_s_colon_operator_as_documented() -> None:
    x, y = matlab_colon(0, 0.1, 0.3), matlab_colon(0, 0.1, 0.4)
    d = x - y[:-1]  # MathWorks' example: x - y(1:end-1) = [0 0 -0.2776 -0.5551]e-16
    assert d[0] == d[1] == 0.0
    assert d[2] == pytest.approx(-0.2776e-16, rel=1e-3)
    assert d[3] == pytest.approx(-0.5551e-16, rel=1e-3)
    assert len(MATLAB_THRESHOLDS) == 256 and MATLAB_THRESHOLDS[0] == 0 == 1 - MATLAB_THRESHOLDS[-1]
    assert np.all(np.diff(MATLAB_THRESHOLDS) > 0)
    # they are t/255 but in the last bit of 36 of them
    assert np.count_nonzero(MATLAB_THRESHOLDS != CURVE_THRESHOLDS) == 36
    assert np.max(np.abs(MATLAB_THRESHOLDS - CURVE_THRESHOLDS)) <= np.spacing(1.0) / 2


def _toolbox_copy(tmp: Path) -> Path:
    if not MAT.exists():
        pytest.skip(f"{TOOLBOX} is not here (../shared beside the project)")
    root = tmp / "COD10K"
    shutil.copytree(TOOLBOX / "CamDataset" / "COD10K", root / "GT")
    shutil.copytree(TOOLBOX / "CamMap" / "2020-CVPR-SINet" / "COD10K", root / "Pred" / "SINet")
    return root


def test_the_matlab_convention_is_the_toolbox_s_own_matlab_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scipy.io import loadmat

    root = _toolbox_copy(tmp_path)
    out = tmp_path / "out"
    code = main(
        [
            *("eval", str(root), "--convention", "matlab", "--measures", *VALUES),
            *("--out", str(out), "--no-plots", "--quiet"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    mat = loadmat(MAT)
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["convention"] == "matlab"
    assert "MATLAB thresholds" in results["config"]["normalization"]
    values = results["datasets"]["COD10K"]["SINet"]["values"]
    assert results["datasets"]["COD10K"]["SINet"]["images"] == 3
    for key, name in VALUES.items():
        atol = 1e-8 if key == "wFm" else 1e-10  # MATLAB's single-precision weights
        assert values[key] == pytest.approx(float(mat[name].squeeze()), abs=atol), key
    curves: dict[str, list[float]] = {}
    with (out / "curves.csv").open(newline="") as fh:
        for row in csv.DictReader(fh):
            curves.setdefault(row["curve"], []).append(float(row["value"]))
    for curve, name in CURVES.items():
        theirs = mat[name].ravel()[::-1]  # MATLAB's thresholds run from 1 down to 0
        np.testing.assert_allclose(curves[curve], theirs, rtol=0, atol=1e-10, err_msg=curve)


def test_an_empty_gt_is_left_out_under_the_matlab_convention_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _toolbox_copy(tmp_path)
    write_png(root / "GT" / "blank.png", np.zeros((40, 60), np.uint8))
    write_png(root / "Pred" / "SINet" / "blank.png", np.full((40, 60), 9, np.uint8))
    out = tmp_path / "out"
    keys = ["MAE", "Sm", "wFm"]
    assert (
        main(["eval", str(root), "--convention", "matlab", "--measures", *keys, "--out", str(out)])
        == 0
    )
    err = capsys.readouterr().err
    assert "--convention matlab leaves out the images whose GT is empty" in err
    assert "COD10K: 1 image with an empty GT left out." in err
    results = json.loads((out / "results.json").read_text())
    assert results["datasets"]["COD10K"]["SINet"]["images"] == 3
    assert results["empty_gt"]["COD10K"]["names"] == ["blank"]
    mat = _mat_scalars()
    assert results["datasets"]["COD10K"]["SINet"]["values"]["Sm"] == pytest.approx(
        mat["Sm"], abs=1e-10
    )


def _mat_scalars() -> dict[str, float]:
    from scipy.io import loadmat

    mat = loadmat(MAT)
    return {k: float(v.squeeze()) for k, v in mat.items() if not k.startswith("__") and v.size == 1}
