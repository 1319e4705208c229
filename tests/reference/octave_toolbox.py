"""Run the authors' MATLAB one-key toolbox (``../shared/reference/CODToolbox``'s ``main.m``)
and the classic saliency benchmark's ``performCalcu.m`` (``../shared/reference/
sal_eval_toolbox``) under GNU Octave, on copies, and read what they computed.

Octave is not MATLAB in three places that change the numbers (the README beside the
toolbox says how each was measured); each is replaced by MATLAB's documented behaviour:

* ``Thresholds = 1:-1/255:0`` — Octave builds a range as ``base + k·step``, MATLAB from both
  ends: the line is replaced by MATLAB's values (:func:`fminspect.metrics._numerics.
  matlab_colon`, checked on MathWorks' own example), written to a file with 17 digits;
* ``bwdist`` — Octave's is not exactly Euclidean and breaks ties otherwise: a stand-in
  ``bwdist.m`` first on the path returns the exact transform with the nearest pixel SciPy's
  ``distance_transform_edt`` picks (MATLAB's, on its documented example), computed here
  and saved for each GT;
* ``mapminmax`` — not in Octave: a stand-in with MathWorks' documented formula, the input
  returned as it is when its values are all equal.

``main.m`` runs otherwise unmodified but for the datasets and models it is given and the
per-image arrays it is asked to save with its own results. Nothing is written into
``../shared``. About 4 s a pair.

``performCalcu.m`` needs none of those: its thresholds ``[255:-1:0]/255`` divide integers
element by element (Octave's values equal MATLAB's, checked), and it has no ``bwdist`` or
``mapminmax``. Its progress bar (``waitbar``/``close``) needs a display Octave does not have
here: stand-ins that draw nothing. It runs unmodified, called as ``evaluate_models.m`` calls
it, on every map at its GT's size (``imresize`` to the same size returns the map unchanged in
both). A few seconds for 72 pairs.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from fminspect.metrics._numerics import matlab_colon

SHARED = Path(__file__).resolve().parents[3] / "shared"
TOOLBOX = SHARED / "reference" / "CODToolbox" / "Onekey_Evaluation_Code"
CODE = TOOLBOX / "OnekeyEvaluationCode"
BENCHMARK = SHARED / "reference" / "sal_eval_toolbox" / "Curve_BenchCode"

NO_PROGRESS_BAR = {
    "waitbar.m": "function h = waitbar(varargin)\n% no display here: nothing drawn\nh = 0;\nend\n",
    "close.m": "function close(varargin)\n% the waitbar stand-in opened nothing\nend\n",
}

MAPMINMAX = """function y = mapminmax(x, ymin, ymax)
% MathWorks' documented algorithm, row by row; a row whose values are all equal is returned
% as it is.
y = x;
for r = 1:size(x, 1)
  xmin = min(x(r, :)); xmax = max(x(r, :));
  if xmax ~= xmin && isfinite(xmin) && isfinite(xmax)
    y(r, :) = (ymax - ymin) * (x(r, :) - xmin) / (xmax - xmin) + ymin;
  end
end
end
"""

BWDIST = """function [D, IDX] = bwdist(BW)
% The exact Euclidean transform with SciPy's choice among equally near pixels, computed
% beforehand by the test for each GT (keyed by its size and foreground pixels).
f = find(BW);
key = sprintf('%d_%d_%d_%d', size(BW, 1), size(BW, 2), numel(f), sum(f));
s = load(fullfile('BWDIST_FOLDER', ['bwdist_' key '.mat']));
D = s.D; IDX = s.IDX;
end
"""


class OctaveUnavailable(RuntimeError):
    """GNU Octave with its image package cannot be run here."""


def octave() -> str:
    """The ``octave`` command (:class:`OctaveUnavailable` when it or its image package is
    missing)."""
    exe = shutil.which("octave") or shutil.which("octave-cli")
    if exe is None:
        raise OctaveUnavailable("GNU Octave is not installed (apt-get install octave octave-image)")
    probe = subprocess.run(
        [exe, "--no-gui", "--quiet", "--eval", "pkg load image; disp(exist('imfilter'))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0 or "2" not in probe.stdout:
        raise OctaveUnavailable(f"Octave's image package cannot be loaded: {probe.stderr[-300:]}")
    return exe


def _key(mask: np.ndarray) -> str:
    linear = np.flatnonzero(mask.T) + 1  # MATLAB's column-major, 1-based indices
    return f"{mask.shape[0]}_{mask.shape[1]}_{linear.size}_{int(linear.sum())}"


def _bwdist(mask: np.ndarray, folder: Path) -> None:
    from scipy import io, ndimage

    d, (rows, cols) = ndimage.distance_transform_edt(~mask, return_indices=True)
    idx = cols * mask.shape[0] + rows + 1  # the nearest foreground pixel, MATLAB's index
    io.savemat(folder / f"bwdist_{_key(mask)}.mat", {"D": d, "IDX": idx.astype(np.float64)})


def run_main(
    work: Path,
    dataset: str,
    gts: Mapping[str, Path],
    maps: Mapping[str, Mapping[str, Path]],
    *,
    timeout: float = 3600,
) -> dict[str, dict[str, Any]]:
    """``main.m`` on copies in ``work`` of the GT PNGs ``gts`` ({name: path}) and the maps
    ``maps`` ({model: {name: path}}): per model, its images' names (main.m's order) and the
    per-image arrays (``Smeasure``, ``wFmeasure``, ``adpFmeasure``, ``adpEmeasure``, ``MAE``;
    ``threshold_Fmeasure``, ``threshold_Emeasure``, ``threshold_Precion``,
    ``threshold_Recall``: images × 256, thresholds from 1 down to 0)."""
    import cv2
    from scipy import io

    exe = octave()
    code = work / "OnekeyEvaluationCode"
    shutil.copytree(CODE, code)
    (work / "CamDataset" / dataset).mkdir(parents=True)
    stand_ins = work / "stand_ins"
    stand_ins.mkdir()
    for name, path in gts.items():
        shutil.copyfile(path, work / "CamDataset" / dataset / f"{name}.png")
        gt = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
        _bwdist(gt > 128, stand_ins)
    for model, files in maps.items():
        folder = work / "CamMap" / model / dataset
        folder.mkdir(parents=True)
        for name, path in files.items():
            shutil.copyfile(path, folder / f"{name}.png")
    (stand_ins / "mapminmax.m").write_text(MAPMINMAX)
    (stand_ins / "bwdist.m").write_text(BWDIST.replace("BWDIST_FOLDER", str(stand_ins)))
    thresholds = matlab_colon(1.0, -1 / 255, 0.0)
    (code / "thresholds.txt").write_text("\n".join(f"{t:.17g}" for t in thresholds) + "\n")
    main = (code / "main.m").read_text()
    replaced = {
        "Thresholds = 1:-1/255:0;": "Thresholds = load('thresholds.txt')';",
        "Models = {'2020-CVPR-SINet'};": "Models = {" + ",".join(f"'{m}'" for m in maps) + "};",
        "Datasets = {'COD10K'};": f"Datasets = {{'{dataset}'}};",
        "save([ResPath model],": "save('-mat7-binary', [ResPath model '.mat'], 'imgFiles', "
        "'Smeasure', 'wFmeasure', 'adpFmeasure', 'adpEmeasure', 'MAE', 'threshold_Fmeasure', "
        "'threshold_Emeasure', 'threshold_Precion', 'threshold_Recall',",
    }
    for old, new in replaced.items():
        assert main.count(old) == 1, f"main.m no longer holds {old!r}: update the test"
        main = main.replace(old, new)
    (code / "main.m").write_text(main)
    script = f"pkg load image; addpath('{stand_ins}'); cd('{code}'); main"
    done = subprocess.run(
        [exe, "--no-gui", "--quiet", "--eval", script],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"main.m under Octave failed:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
        )
    out = {}
    for model in maps:
        saved = io.loadmat(
            work / "Results" / "Result-COD10K-test" / f"{dataset}-mat" / f"{model}.mat"
        )
        names = [str(f["name"][0]).removesuffix(".png") for f in saved["imgFiles"].ravel()]
        out[model] = {
            "names": names,
            **{k: np.asarray(v) for k, v in saved.items() if not k.startswith("__")},
        }
    return out


def run_benchmark(
    work: Path, gts: Mapping[str, Path], maps: Mapping[str, Mapping[str, Path]]
) -> dict[str, Any]:
    """``performCalcu.m`` on copies in ``work`` of the GT PNGs ``gts`` ({name: path}) and the
    maps ``maps`` ({method: {name: path}}, PNG at the GT's size): its ``Metrics`` struct —
    dataset arrays with one column per method in ``maps``' order (``MaxFmeasure``,
    ``mean_Fmeasure`` rows P, R, F; ``MAE``, ``S_measure``, ``meanIoU``, ``maxIoU``,
    ``IoU_at_maxF``; curves ``Pre``, ``Recall``, ``IoU``, ``Fmeasure_Curve`` 256 × methods,
    thresholds from 1 down) and per image (``Pre_image``, ``Recall_image``: images × 256 ×
    methods; ``MAE_image``, ``S_measure_image``: images × 1 × methods; ``mean_Fmeasure_image``:
    images × 3 × methods), images in the order of its ``dir`` (``names``)."""
    from scipy import io

    exe = octave()
    code = work / "Curve_BenchCode"
    shutil.copytree(BENCHMARK, code)
    stand_ins = work / "stand_ins"
    stand_ins.mkdir()
    for file, text in NO_PROGRESS_BAR.items():
        (stand_ins / file).write_text(text)
    gt_dir = work / "GT"
    gt_dir.mkdir()
    for name, path in gts.items():
        shutil.copyfile(path, gt_dir / f"{name}.png")
    structs = []
    for method, files in maps.items():
        folder = work / "maps" / method
        folder.mkdir(parents=True)
        for name, path in files.items():
            shutil.copyfile(path, folder / f"{name}.png")
        structs.append(
            f"A{{end+1}} = struct('dir', '{folder}', 'prefix', '', 'postfix', '', 'ext', 'png');"
        )
    out = work / "metrics.mat"
    script = (
        f"pkg load image; addpath('{stand_ins}'); addpath('{code}'); "
        f"D.datasetName = 'test'; D.GTdir = '{gt_dir}/'; A = {{}}; {' '.join(structs)} "
        f"M = performCalcu(D, A); f = dir([D.GTdir '*.png']); M.names = {{f.name}}; "
        f"save('-mat7-binary', '{out}', '-struct', 'M');"
    )
    done = subprocess.run(
        [exe, "--no-gui", "--quiet", "--eval", script], capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(
            f"performCalcu.m under Octave failed:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
        )
    saved = io.loadmat(out)
    names = [str(n[0]).removesuffix(".png") for n in saved["names"].ravel()]
    metrics: dict[str, Any] = {"names": names}
    for key, value in saved.items():
        if not key.startswith("__") and key != "names":
            # MATLAB drops trailing singleton dimensions (one method): put them back
            shape = (len(names), -1, len(maps)) if key.endswith("_image") else (-1, len(maps))
            metrics[key] = np.asarray(value).reshape(shape)
    return metrics
