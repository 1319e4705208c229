"""The one per-sample pipeline and the one result store, shared by every command and the window.

``Sample`` (files, from :mod:`fminspect.io.discovery`) → :func:`load_sample` (arrays, notes on
every conversion and resize, problems) → :func:`prepare` (the GT under a normalisation, once
for all models) → :func:`score_sample` / :func:`score_model` (a
:class:`~fminspect.metrics.SuiteResult` per model) → :func:`records` (per measure family:
scores, curves, typed :class:`Note` s) → :class:`ResultStore` (keyed by file contents and
parameters, see :class:`EvalConfig`). Dataset-wide runs over many samples are in
:mod:`fminspect.batch.runner`. No Qt.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: each name of the package → the module that defines it. Loaded on first use, so that a
#: process needing only the store or the tags (a tagging process, a web server) does not
#: import every measure (half a second per process).
_HOMES = {
    "EvalConfig": "config",
    "families": "config",
    "family_keys": "config",
    "Note": "notes",
    "LoadedSample": "sample",
    "load_sample": "sample",
    "prepare": "sample",
    "records": "sample",
    "score_model": "sample",
    "score_sample": "sample",
    "Record": "store",
    "ResultStore": "store",
    "default_store_path": "store",
    "register_store": "store",
    "store_for": "store",
    "user_cache_dir": "store",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
