"""Conventions: what each implementation in the field does, as a preset of fminspect's knobs.

"My number differs from the paper" is almost always a convention: how the GT is binarised,
whether the prediction is min–max stretched, how a map of another size is resized, how the
S-measure rounds its centroid and divides its variances, what an empty GT scores, how the
image-averaged curves become one number. Each
knob is a parameter of its own (``--param NAME=VALUE``, ``--gt-inclusive``, ``--no-stretch``,
``--interpolation``); a :class:`Convention` sets all of them as one implementation does
(``--convention NAME``), and the knobs given with it are applied after it. Every output
records every knob and the name of the convention they make (:func:`convention_of`:
``custom`` when none matches).

What an implementation does that fminspect does not reproduce is listed in its
:attr:`Convention.unreproduced`, so that nobody reads a preset as more than it is. Sources:
METRICS §0.1, §4, §5, §9, §10.7 and §11 (the reference notes on pysodmetrics 1.6.2, the
authors' MATLAB and the original Context-measure code). The ``matlab`` preset is checked
against the toolbox's own MATLAB output (``tests/metrics/test_matlab_toolbox.py``) and,
like ``classic-benchmark``, against its code run under GNU Octave
(``tests/metrics/test_matlab_octave.py``, ``tests/metrics/test_classic_benchmark.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from fminspect.metrics import Params

#: fminspect's default resize rule (that of PySODEvalToolkit: cv2.INTER_LINEAR).
DEFAULT_INTERPOLATION = "bilinear"


@dataclass(frozen=True, slots=True)
class Convention:
    """One implementation's choices, as fminspect's knobs."""

    name: str
    #: the implementation, with its version or commit
    implementation: str
    #: :class:`~fminspect.metrics.Params` fields that differ from fminspect's defaults
    params: Mapping[str, Any]
    interpolation: str
    #: what the implementation does that fminspect does not reproduce (said in outputs)
    unreproduced: tuple[str, ...] = ()
    #: the keys under which fminspect gives the implementation's own dataset values, with
    #: the names it prints them under (empty: the usual keys, as pysodmetrics names them)
    keys: Mapping[str, str] | None = None
    #: {the usual key of a value it prints: fminspect's key that gives its value} — its
    #: "max F" is maxFm_meanPR, its "mean F" adpFm (``compare`` reads its tables so)
    keys_as: Mapping[str, str] | None = None

    def apply(self, params: Params | None = None) -> Params:
        """``params`` (default: fminspect's defaults) with this convention's knobs set."""
        return replace(params or Params(), **dict(self.params))

    def knobs(self) -> dict[str, Any]:
        """Every knob this convention sets, with the interpolation (for outputs)."""
        return {**self.apply().as_dict(), "interpolation": self.interpolation}

    def describe(self) -> str:
        changed = ", ".join(f"{k}={v}" for k, v in self.params.items()) or "fminspect's defaults"
        return f"{self.name} ({self.implementation}): {changed}, resize {self.interpolation}"


CONVENTIONS: dict[str, Convention] = {
    c.name: c
    for c in (
        Convention(
            "pysodmetrics",
            "pysodmetrics 1.6.2 (PyPI), maps resized as PySODEvalToolkit does",
            {},
            DEFAULT_INTERPOLATION,
        ),
        Convention(
            "matlab",
            "the authors' MATLAB one-key toolbox (DengPingFan/CODToolbox main.m @ d3a5cec)",
            {"s_centroid": "matlab", "wfm_empty": "nan", "em_compare": ">", "thresholds": "matlab"},
            "bicubic",
            (
                "MATLAB's imresize (cubic kernel a = -0.5, antialiased when shrinking) is "
                "approximated by OpenCV's bicubic (a = -0.75, no antialiasing)",
                "it reads channel 1 of a colour prediction; fminspect converts to grey",
                "main.m stops at an image whose GT is empty (original_WFb.m indexes Et(0)): it "
                "gives no number at all; fminspect eval leaves such images out under this "
                "convention and says so (one image scored alone: its weighted F is NaN)",
            ),
        ),
        Convention(
            "classic-benchmark",
            "the classic MATLAB saliency benchmark (Borji et al., TIP 2015) as "
            "sal_eval_toolbox's performCalcu.m (ArcherFMY/sal_eval_toolbox @ b4696d6)",
            {
                "gt_threshold": 25.5,
                "gt_inclusive": True,
                "stretch_rule": "max",
                "s_centroid": "matlab",
                "mae_map": "min-max",
            },
            "bicubic",
            (
                "MATLAB's imresize (cubic kernel a = -0.5, antialiased when shrinking) is "
                "approximated by OpenCV's bicubic (a = -0.75, no antialiasing), and MATLAB's "
                "rgb2gray of a resized colour map by fminspect's grey conversion on reading",
                "it divides its image averages (precision, recall, IoU, mean F) by N − 1 when "
                "the last image's map is all zero (its count is reset inside the image loop), "
                "by N otherwise; fminspect always divides by N",
                "its IoU_at_maxF reads the first method's IoU curve for every method (linear "
                "indexing of a matrix): right for the first method only; fminspect's "
                "IoU_maxFm_meanPR gives each method its own",
                "an empty GT makes its averaged recall 0/0, so its max F and IoU at max F are "
                "NaN: so are fminspect's maxFm_meanPR and IoU_maxFm_meanPR (leave such images "
                "out with --exclude-empty-gt); its MAE, S-measure and mean F count the image",
                "its AUC (trapz of the image-averaged hit rate over the false-alarm rate at "
                "256 thresholds) is not offered",
            ),
            {
                "maxFm_meanPR": "max F-measure",
                "adpFm": "mean F-measure (adaptive threshold 2·mean)",
                "MAE": "MAE",
                "Sm": "S-measure",
                "meanIoU": "mean IoU",
                "maxIoU": "max IoU",
                "IoU_maxFm_meanPR": "IoU at max F",
            },
            {"maxFm": "maxFm_meanPR", "meanFm": "adpFm"},
        ),
        Convention(
            "pysodevaltoolkit",
            "PySODEvalToolkit (lartpang, @ a52dbcc), which pins pysodmetrics 1.4.2",
            {"s_denominator": "n-1"},
            "bilinear",
            ("it rounds dataset values to 3 decimals by default; fminspect keeps them whole",),
        ),
        Convention(
            "context-original",
            "the original Context-measure code (Wang et al. 2025)",
            {"gt_inclusive": True, "stretch": False},
            DEFAULT_INTERPOLATION,
            (
                "its epsilons are 1e-8 (pysodmetrics' 2.2e-16): C_β differs by ~1e-8",
                "it rounds the reconstruction's exact halves down (pysodmetrics: to even): "
                "C^ω_β differs by ~4e-6",
                "it crashes on an empty GT and on thin GTs, where fminspect gives a value",
            ),
        ),
    )
}


def convention(name: str) -> Convention:
    """The convention called ``name`` (``ValueError`` naming the known ones)."""
    try:
        return CONVENTIONS[name]
    except KeyError:
        raise ValueError(
            f"unknown convention {name!r} (choose from {', '.join(CONVENTIONS)})"
        ) from None


def convention_of(params: Params, interpolation: str) -> str:
    """The name of the convention that ``params`` and ``interpolation`` are exactly, the
    knobs it does not fix (β², α, …) aside; ``custom`` if none."""
    knobs = set().union(*(set(c.params) for c in CONVENTIONS.values()))
    for c in CONVENTIONS.values():
        wanted = c.apply()
        if interpolation == c.interpolation and all(
            getattr(params, k) == getattr(wanted, k) for k in knobs
        ):
            return c.name
    return "custom"


#: The knobs conventions differ in (Params fields), for ``compare``.
CONVENTION_KNOBS: tuple[str, ...] = tuple(
    f.name for f in fields(Params) if any(f.name in c.params for c in CONVENTIONS.values())
)
