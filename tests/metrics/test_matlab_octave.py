"""``--convention matlab`` against the authors' toolbox's ``main.m`` run under GNU Octave,
per image and per curve point, on real data: the toolbox's own three COD10K images (SINet's
maps) and SalBench DataSet1's photographs with four classic methods' maps (FT, GC, HC, RC;
CA's maps need MATLAB's ``imresize``, which Octave does not reproduce: left out).

``tests/reference/octave_toolbox.py`` runs ``main.m`` on copies with MATLAB's documented
colon, an exact ``bwdist`` with MATLAB's ties and a ``mapminmax`` stand-in. Targets: 1e-10
for every value and curve point, 1e-8 for the weighted F-measure. A pair takes Octave about
4 s: here the three COD10K pairs and three SalBench images × four methods (about a minute);
``FMINSPECT_OCTAVE_ALL=1`` takes all 18 SalBench images. Skips where Octave or ``../shared``
is missing (``.ci/run`` installs Octave).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from fminspect.io.loading import load_map
from fminspect.metrics import compute_suite
from fminspect.pipeline.conventions import convention
from tests.reference.octave_toolbox import SHARED, TOOLBOX, OctaveUnavailable, octave, run_main

SALBENCH = SHARED / "realdata" / "SalBench-DataSet1"
METHODS = ("FT", "GC", "HC", "RC")
#: fminspect's key → main.m's per-image array
VALUES = {
    "MAE": "MAE",
    "Sm": "Smeasure",
    "wFm": "wFmeasure",
    "adpFm": "adpFmeasure",
    "adpEm": "adpEmeasure",
}
CURVES = {
    "Fm": "threshold_Fmeasure",
    "Em": "threshold_Emeasure",
    "Precision": "threshold_Precion",
    "Recall": "threshold_Recall",
}


@pytest.fixture(scope="module")
def runnable() -> None:
    if not TOOLBOX.exists():
        pytest.skip(f"{TOOLBOX} is not here (../shared beside the project)")
    try:
        octave()
    except OctaveUnavailable as exc:
        pytest.skip(str(exc))


def _compare(ran: dict, gts: dict[str, Path], maps: dict[str, dict[str, Path]]) -> int:
    """Every value and curve point of every pair against main.m's; the pairs compared."""
    params = convention("matlab").apply()
    pairs = 0
    for model, files in maps.items():
        theirs = ran[model]
        assert sorted(theirs["names"]) == sorted(files), model
        for i, name in enumerate(theirs["names"]):
            gt = load_map(gts[name]).array
            suite = compute_suite(load_map(files[name]).array, gt, params=params, keys=[*VALUES])
            ours, f = suite.scores(), suite.fmeasure
            curves = {
                "Fm": f.fmeasure.curve,
                "Precision": f.precision.curve,
                "Recall": f.recall.curve,
                "Em": suite.emeasure.curve,
            }
            for key, array in VALUES.items():
                atol = 1e-8 if key == "wFm" else 1e-10  # MATLAB's single-precision weights
                want = float(theirs[array].ravel()[i])
                assert ours[key] == pytest.approx(want, abs=atol), (model, name, key)
            for curve, array in CURVES.items():
                want_curve = theirs[array][i][::-1]  # main.m's thresholds run from 1 down
                np.testing.assert_allclose(
                    curves[curve], want_curve, rtol=0, atol=1e-10, err_msg=f"{model} {name} {curve}"
                )
            pairs += 1
    return pairs


@pytest.mark.slow
@pytest.mark.reference
def test_the_toolbox_s_own_images(runnable: None, tmp_path: Path) -> None:
    gts = {p.stem: p for p in sorted((TOOLBOX / "CamDataset" / "COD10K").glob("*.png"))}
    folder = TOOLBOX / "CamMap" / "2020-CVPR-SINet" / "COD10K"
    maps = {"SINet": {n: folder / f"{n}.png" for n in gts}}
    ran = run_main(tmp_path, "COD10K", gts, maps)
    assert _compare(ran, gts, maps) == 3


@pytest.mark.slow
@pytest.mark.reference
def test_salbench_photographs_with_four_classic_methods(runnable: None, tmp_path: Path) -> None:
    if not SALBENCH.exists():
        pytest.skip(f"{SALBENCH} is not here")
    names = sorted(p.stem for p in (SALBENCH / "GT").glob("*.png"))
    if os.environ.get("FMINSPECT_OCTAVE_ALL") != "1":
        names = names[:3]  # about a minute; FMINSPECT_OCTAVE_ALL=1: all 18
    gts = {n: SALBENCH / "GT" / f"{n}.png" for n in names}
    maps = {m: {n: SALBENCH / "Pred" / m / f"{n}.png" for n in names} for m in METHODS}
    ran = run_main(tmp_path, "SalBench", gts, maps)
    assert _compare(ran, gts, maps) == len(names) * len(METHODS)
