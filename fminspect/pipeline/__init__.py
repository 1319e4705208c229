"""The one per-sample pipeline and the one result store, shared by every command and the window.

``Sample`` (files, from :mod:`fminspect.io.discovery`) → :func:`load_sample` (arrays, notes on
every conversion and resize, problems) → :func:`prepare` (the GT under a normalisation, once
for all models) → :func:`score_sample` / :func:`score_model` (a
:class:`~fminspect.metrics.SuiteResult` per model) → :func:`records` (per measure family:
scores, curves, typed :class:`Note` s) → :class:`ResultStore` (keyed by file contents and
parameters, see :class:`EvalConfig`). Dataset-wide runs over many samples are in
:mod:`fminspect.batch.runner`. No Qt.
"""

from fminspect.pipeline.config import EvalConfig, families, family_keys
from fminspect.pipeline.notes import Note
from fminspect.pipeline.sample import (
    LoadedSample,
    load_sample,
    prepare,
    records,
    score_model,
    score_sample,
)
from fminspect.pipeline.store import (
    Record,
    ResultStore,
    default_store_path,
    register_store,
    store_for,
    user_cache_dir,
)

__all__ = [
    "EvalConfig",
    "LoadedSample",
    "Note",
    "Record",
    "ResultStore",
    "default_store_path",
    "families",
    "family_keys",
    "load_sample",
    "prepare",
    "records",
    "register_store",
    "score_model",
    "score_sample",
    "store_for",
    "user_cache_dir",
]
