"""Batch evaluation of methods × datasets: parallel, cached, resumable, distributable.

It sits between :mod:`fminspect.io` (files) and :mod:`fminspect.metrics` (maths): ``io``
must not import the measures (STYLE §3.2), so the runner that joins them lives here; the CLI,
the GUI's dataset browser and the meta-measures use it. No Qt.
"""

from fminspect.batch.runner import EvalConfig, EvalReport, evaluate_datasets

__all__ = ["EvalConfig", "EvalReport", "evaluate_datasets"]
