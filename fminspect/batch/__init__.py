"""Batch evaluation of methods × datasets: parallel, cached, resumable, distributable.

It sits between :mod:`fminspect.io` (files) and :mod:`fminspect.metrics` (maths): ``io``
must not import the measures (STYLE §3.2), so the runner that joins them lives here; the CLI,
the GUI's dataset browser and the meta-measures use it. No Qt.

The names below are imported on first use, so that :mod:`fminspect.batch.pool` can start
worker processes before the main process has imported the measures.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fminspect.batch.runner import EvalConfig, EvalReport, evaluate_datasets

__all__ = ["EvalConfig", "EvalReport", "evaluate_datasets"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from fminspect.batch import runner

        return getattr(runner, name)
    raise AttributeError(f"module 'fminspect.batch' has no attribute {name!r}")
