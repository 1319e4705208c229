"""Each registered measure family's reference, as the parity tester runs it.

One entry per family of :data:`fminspect.metrics.registry.REGISTRY` (the registry test fails
for a family without one): either :class:`Oracle` — the code the family's ``reference``
names, run in the reference environment (pysodmetrics 1.6.2 and scikit-learn, by
tests/reference/pysod_oracle.py), with the reference value of each of the family's keys —
or :class:`Elsewhere` — a reference that cannot be run here, with the tests that check the
family instead. Keys of an :class:`Oracle` family that one image cannot show (values pooled
over a dataset) name their test too. ``tests/metrics/test_parity_registry.py`` is the one
tester.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: a key's reference value from the oracle's result for one image (None: not computed there)
Extract = Callable[[Mapping[str, Any]], float | None]


@dataclass(frozen=True)
class Oracle:
    """A family checked per image against its reference, run."""

    #: what the family's registry entry names (the start of ``Family.reference``)
    names: str
    #: the oracle's groups that compute it
    groups: tuple[str, ...]
    #: {our key: its value from the oracle's result for one image}
    keys: Mapping[str, Extract]
    #: the largest difference allowed, and why when it is not 1e-10
    atol: float = 1e-10
    why: str = ""
    #: "pairs" (seeded random and edge-case maps) or "scenes" (with photographs' textures)
    cases: str = "pairs"
    #: fminspect's parameters for the check (the reference's variant of a key)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: {key: test}: keys checked by another test (a dataset's pooled values)
    elsewhere: Mapping[str, str] = field(default_factory=dict)
    #: a case the comparison leaves out, with the documented difference (and its test)
    differs: Callable[[Mapping[str, Any]], str] = lambda case: ""
    #: every how many cases it is compared on (1: all; a slow reference: fewer)
    every: int = 1
    #: the oracle's options for the i-th case
    meta: Callable[[int], Mapping[str, Any]] = lambda i: {}
    #: where the reference gives NaN and fminspect a finite value with a warning: why
    #: (the documented difference and its test)
    finite_where_nan: str = ""


@dataclass(frozen=True)
class Elsewhere:
    """A family whose reference cannot be run here: the tests that check it."""

    names: str
    tests: tuple[str, ...]
    why: str


def _defined(value: Any) -> Any:
    """scikit-learn's Cohen κ with its NaN where κ is 0/0 (p_e = 1) read as fminspect's 0."""
    return np.nan_to_num(np.asarray(value, dtype=np.float64), nan=0.0)


def _kappa_curve(r: Mapping[str, Any], how: str) -> float | None:
    if "ckappa_curve_ascending" not in r:
        return None  # not computed for this case
    return float(getattr(np, how)(_defined(r["ckappa_curve_ascending"])))


def _curve_of(name: str, how: str) -> Extract:
    return lambda r: float(getattr(np, how)(np.asarray(r[name], dtype=np.float64)))


def _handler(symbol: str, name: str, best: str = "max", source: str = "v2") -> dict[str, Extract]:
    """The five variants of one of FmeasureV2's handlers on one image (its pooled value is
    its binary one: one image's counts)."""
    return {
        f"adp{symbol}": lambda r: r[f"{source}_{name}_adaptive"],
        f"mean{symbol}": _curve_of(f"{source}_{name}_dynamic", "mean"),
        f"{best}{symbol}": _curve_of(f"{source}_{name}_dynamic", best),
        f"bin{symbol}": lambda r: r[f"{source}_{name}_binary"],
        f"pooled{symbol}": lambda r: r[f"{source}_{name}_binary"],
    }


def _si(symbol: str, name: str) -> dict[str, Extract]:
    return {
        f"si{kind}{symbol}": (lambda r, ref=ref: r[f"si_{name}_{ref}"])
        for kind, ref in (("Adp", "adaptive"), ("Bin", "binary"), ("Max", "max"), ("Mean", "mean"))
    }


def _full(case: Mapping[str, Any]) -> bool:
    gt = np.asarray(case["gt"])
    return bool(np.all(gt > 128) if gt.dtype == np.uint8 else np.all(gt))


_FULL_SI = (
    "a GT that is foreground everywhere: pysodmetrics stops on an assertion, fminspect scores "
    "it (tests/metrics/test_size_invariance.py::test_empty_gt_and_boxes_covering_the_image)"
)
SI = {"Fm": "fm", "Pre": "pre", "Rec": "rec", "IoU": "iou", "Dice": "dice"}
_CLASSIC_BENCHMARK = (
    "tests/metrics/test_classic_benchmark.py::test_eval_writes_the_benchmark_s_dataset_values"
)
_POOLED_SI = (
    "tests/metrics/test_size_invariance.py::test_parity_with_pysodmetrics_per_image_and_pooled"
)
_EMPTY_CONTEXT = (
    "an empty GT: pysodmetrics gives 0 whatever the map, fminspect 1 for an empty map "
    "(tests/metrics/test_parity_context.py::test_context_measures_agree_with_pysodmetrics)"
)

REFERENCES: dict[str, Oracle | Elsewhere] = {
    "mae": Oracle("pysodmetrics 1.6.2 MAE", ("classic",), {"MAE": lambda r: r["mae"]}),
    "smeasure": Oracle(
        "pysodmetrics 1.6.2 Smeasure",
        ("classic",),
        {"Sm": lambda r: r["sm"]},
        finite_where_nan=(
            "an empty quadrant (foreground only in the last row or column, 1×N maps): "
            "pysodmetrics multiplies its NaN mean by its zero area weight, fminspect gives it "
            "no weight, as Fan et al. 2017 define (tests/metrics/test_parity_classic.py::"
            "test_sm_nan_difference_only_where_documented)"
        ),
    ),
    "weighted_fmeasure": Oracle(
        "pysodmetrics 1.6.2 WeightedFmeasure", ("classic",), {"wFm": lambda r: r["wfm"]}
    ),
    "emeasure": Oracle(
        "pysodmetrics 1.6.2 Emeasure",
        ("classic",),
        {
            "adpEm": lambda r: r["em_adp"],
            "meanEm": _curve_of("em_curve", "mean"),
            "maxEm": _curve_of("em_curve", "max"),
        },
    ),
    "fmeasure": Oracle(
        "pysodmetrics 1.6.2 Fmeasure / FmeasureV2",
        ("handlers",),
        {**_handler("Fm", "fm"), **_handler("Pre", "pre"), **_handler("Rec", "rec")},
        elsewhere=dict.fromkeys(("maxFm_meanPR", "IoU_maxFm_meanPR"), _CLASSIC_BENCHMARK),
    ),
    "overlap": Oracle(
        "pysodmetrics 1.6.2 FmeasureV2 + IOUHandler / DICEHandler",
        ("handlers",),
        {**_handler("IoU", "iou"), **_handler("Dice", "dice")},
    ),
    "classification": Oracle(
        "pysodmetrics 1.6.2 FmeasureV2 + SpecificityHandler",
        ("handlers", "kappa"),
        {
            **_handler("TNR", "spec"),
            **_handler("FPR", "fpr", best="min"),
            **_handler("BER", "ber", best="min"),
            **_handler("OA", "oa"),
            **_handler("Kappa", "kappa"),
            "adpCKappa": lambda r: _defined(r["ckappa_adaptive"]),
            "binCKappa": lambda r: _defined(r["ckappa_binary"]),
            "pooledCKappa": lambda r: _defined(r["ckappa_binary"]),
            "meanCKappa": lambda r: _kappa_curve(r, "mean"),
            "maxCKappa": lambda r: _kappa_curve(r, "max"),
        },
        # scikit-learn's 256 calls a map cost ~1 s: the curve on every sixth case
        meta=lambda i: {"kappa_curve": i % 6 == 0},
        why="CKappa: scikit-learn's cohen_kappa_score on each binarisation, its NaN where κ "
        "is 0/0 read as 0 — the documented choice (fminspect/metrics/classification.py)",
    ),
    "msiou": Oracle(
        "pysodmetrics 1.6.2 MSIoU",
        ("msiou",),
        {"adpMSIoU": lambda r: r["msiou_adp"], "binMSIoU": lambda r: r["msiou_bin"]},
    ),
    "msiou_curve": Oracle(
        "pysodmetrics 1.6.2 MSIoU (with_dynamic)",
        ("msiou_dynamic",),
        {
            "meanMSIoU": _curve_of("msiou_curve", "mean"),
            "maxMSIoU": _curve_of("msiou_curve", "max"),
        },
        every=3,  # pysodmetrics' dynamic MSIoU takes ~1 s a map (real sizes: test_parity_msiou)
    ),
    "context": Oracle(
        "pysodmetrics 1.6.2 ContextMeasure",
        ("context",),
        {"Cm": lambda r: r["cm"]},
        atol=1e-7,
        why="the references' K ∗ Y is float32, fminspect's float64 (≤ 1.1e-7 on thin objects)",
        cases="scenes",
        differs=lambda case: _EMPTY_CONTEXT if not np.any(np.asarray(case["gt"]) > 128) else "",
    ),
    "camouflage_context": Oracle(
        "pysodmetrics 1.6.2 CamouflageContextMeasure",
        ("context",),
        {"CCm": lambda r: r["ccm"]},
        atol=1e-5,
        why="exact ties in the nearest-patch search may pick other, equally near patches",
        cases="scenes",
        differs=lambda case: _EMPTY_CONTEXT if not np.any(np.asarray(case["gt"]) > 128) else "",
    ),
    "auc": Oracle(
        "scikit-learn roc_auc_score / average_precision_score",
        ("auc",),
        {
            "AUCROC": lambda r: r["auc_roc"],
            "AUCPR": lambda r: r["auc_pr"],
            "AP": lambda r: r["ap_none"],
        },
        why="AP with ap_interpolation='none', scikit-learn's (the VOC interpolations: "
        "tests/metrics/test_auc.py::test_interpolations_by_hand)",
        params={"ap_interpolation": "none"},
    ),
    "size_invariance": Oracle(
        "pysodmetrics 1.6.2 SizeInvarianceMAE, SizeInvarianceFmeasureV2",
        ("si",),
        {"siMAE": lambda r: r["si_mae"]}
        | {k: v for s, n in SI.items() for k, v in _si(s, n).items()},
        elsewhere={f"siPooled{s}": _POOLED_SI for s in SI},
        differs=lambda case: _FULL_SI if _full(case) else "",
        finite_where_nan=(
            "the targets' boxes cover the whole image (no background term): pysodmetrics "
            "divides by a zero background, fminspect leaves the term out, with a warning "
            "(tests/metrics/test_size_invariance.py::test_empty_gt_and_boxes_covering_the_image)"
        ),
    ),
    "size_invariance_curve": Oracle(
        "pysodmetrics 1.6.2 SizeInvarianceFmeasureV2, dynamic, sample_based=False",
        ("si",),
        {
            f"siTgt{how.title()}{s}": _curve_of(f"si_{n}_target_curve", how)
            for s, n in SI.items()
            for how in ("mean", "max")
        },
        differs=lambda case: _FULL_SI if _full(case) else "",
    ),
    "hce": Oracle(
        "pysodmetrics 1.6.2 HumanCorrectionEffortMeasure", ("hce",), {"HCE": lambda r: r["hce"]}
    ),
    "relaxed_fmeasure": Elsewhere(
        "none in pysodmetrics",
        ("tests/metrics/test_boundary_msiou_mae.py::test_relaxed_f_within_and_beyond_rho",),
        "no runnable reference: TF Model Garden's BASNet code differs (METRICS §9.5)",
    ),
    "boundary_iou": Elsewhere(
        "github bowenc0221/boundary-iou-api",
        (
            "tests/metrics/test_boundary_band_measures.py::"
            "test_bands_equal_the_distance_transform_and_biou_its_iou",
        ),
        "the authors' code needs pycocotools and a checkout: its bands are derived "
        "independently (SciPy distance transforms)",
    ),
    "boundary_accuracy": Elsewhere(
        "github hkchengrex/CascadePSP",
        ("tests/metrics/test_boundary_band_measures.py::test_mba_radii_and_regions",),
        "CascadePSP is not installable here: its radii and regions are derived by hand",
    ),
    "curves255": Elsewhere(
        "pysodmetrics 1.6.2 formulas over zzhanghub/eval-co-sod's 255 thresholds",
        (
            "tests/metrics/test_thresholds255.py::test_the_thresholds_are_eval_co_sods",
            "tests/metrics/test_thresholds255.py::test_every_point_is_the_measure_of_its_binarisation",
        ),
        "eval-co-sod is a script over folders, not run: checked against its definition",
    ),
}
