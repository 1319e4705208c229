"""Foreground-map measures: pure numpy/SciPy/OpenCV, never Qt.

Every measure is a function ``measure(pred, gt, *, params...) -> <Measure>Result`` returning
a frozen dataclass with the score(s) **and** the intermediate matrices (some built on first
access), so a GUI can show *why* a map scores what it scores without recomputing anything.

Quick use::

    from fminspect.metrics import evaluate
    evaluate(pred_u8, gt_u8)          # {'MAE': ..., 'Sm': ..., 'maxFm': ..., ...}
    evaluate(pred_u8, gt_u8, keys="all")   # every registered measure in every variant

Conventions (pysodmetrics 1.6.2 / MATLAB): GT ``> 128``; prediction / 255 with a min–max
stretch unless constant; curves have 256 points indexed by threshold ascending
(``floor(255·pred) >= t``); ``beta2`` always means β². See each module's docstring for the
exact definition, the reference it matches and every deliberate difference.
"""

from fminspect.metrics._confusion import ConfusionSweep, Counts, ThresholdScores, confusion_sweep
from fminspect.metrics._inputs import (
    DEFAULT_NORMALIZATION,
    ORIGINAL_CONTEXT_NORMALIZATION,
    GroundTruth,
    Normalization,
    Pair,
    prepare,
    prepare_gt,
    unit_map,
)
from fminspect.metrics.auc import AUCResult, auc
from fminspect.metrics.boundary_accuracy import BoundaryAccuracyResult, boundary_accuracy
from fminspect.metrics.boundary_fmeasure import RelaxedFmeasureResult, relaxed_fmeasure
from fminspect.metrics.boundary_iou import BoundaryIoUResult, boundary_iou
from fminspect.metrics.camouflage_degree import CamouflageDegreeResult, camouflage_degree
from fminspect.metrics.classification import ClassificationResult, classification
from fminspect.metrics.context_measure import (
    CamouflageContextMeasureResult,
    ContextKernel,
    ContextMeasureResult,
    camouflage_context_measure,
    context_kernel,
    context_measure,
)
from fminspect.metrics.dataset import DatasetAccumulator, aggregate
from fminspect.metrics.emeasure import EmeasureAt, EmeasureResult, emeasure, emeasure_at
from fminspect.metrics.fmeasure import FmeasureResult, fmeasure
from fminspect.metrics.hce import HCEResult, hce
from fminspect.metrics.mae import MAEResult, mae
from fminspect.metrics.msiou import MSIoUResult, MSIoUScore, msiou, msiou_at
from fminspect.metrics.overlap import OverlapResult, overlap
from fminspect.metrics.registry import REGISTRY, CurveInfo, DatasetValue, Family, Parameter
from fminspect.metrics.size_invariance import SizeInvarianceResult, size_invariance
from fminspect.metrics.smeasure import SmeasureResult, smeasure
from fminspect.metrics.suite import (
    CURVES,
    DEFAULT_PARAMS,
    MEASURE_KEYS,
    MEASURES,
    MEASURES_BY_KEY,
    MeasureInfo,
    Params,
    SuiteResult,
    compute_suite,
    default_keys,
    evaluate,
    measure_keys,
    parameters,
    update_suite,
)
from fminspect.metrics.weighted_fmeasure import WeightedFmeasureResult, weighted_fmeasure

__all__ = [
    "CURVES",
    "DEFAULT_NORMALIZATION",
    "DEFAULT_PARAMS",
    "MEASURES",
    "MEASURES_BY_KEY",
    "MEASURE_KEYS",
    "ORIGINAL_CONTEXT_NORMALIZATION",
    "REGISTRY",
    "AUCResult",
    "BoundaryAccuracyResult",
    "BoundaryIoUResult",
    "CamouflageContextMeasureResult",
    "CamouflageDegreeResult",
    "ClassificationResult",
    "ConfusionSweep",
    "ContextKernel",
    "ContextMeasureResult",
    "Counts",
    "CurveInfo",
    "DatasetAccumulator",
    "DatasetValue",
    "EmeasureAt",
    "EmeasureResult",
    "Family",
    "FmeasureResult",
    "GroundTruth",
    "HCEResult",
    "MAEResult",
    "MSIoUResult",
    "MSIoUScore",
    "MeasureInfo",
    "Normalization",
    "OverlapResult",
    "Pair",
    "Parameter",
    "Params",
    "RelaxedFmeasureResult",
    "SizeInvarianceResult",
    "SmeasureResult",
    "SuiteResult",
    "ThresholdScores",
    "WeightedFmeasureResult",
    "aggregate",
    "auc",
    "boundary_accuracy",
    "boundary_iou",
    "camouflage_context_measure",
    "camouflage_degree",
    "classification",
    "compute_suite",
    "confusion_sweep",
    "context_kernel",
    "context_measure",
    "default_keys",
    "emeasure",
    "emeasure_at",
    "evaluate",
    "fmeasure",
    "hce",
    "mae",
    "measure_keys",
    "msiou",
    "msiou_at",
    "overlap",
    "parameters",
    "prepare",
    "prepare_gt",
    "relaxed_fmeasure",
    "size_invariance",
    "smeasure",
    "unit_map",
    "update_suite",
    "weighted_fmeasure",
]

from fminspect.metrics.suite import load_plugins as _load_plugins

_load_plugins()
