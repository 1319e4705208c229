"""Meta-measures: evaluating the measures themselves, as the seed papers do (no Qt).

See :mod:`fminspect.meta.protocol` for the definitions, :func:`fminspect.meta.runner.run_meta`
to run them and :mod:`fminspect.meta.outputs` for the files they produce. The names below are
loaded on first use, so ``fminspect --help`` does not import the measures.
"""

from __future__ import annotations

from typing import Any

#: The meta-measures, in the order of every output.
META_MEASURES = (
    "generic",
    "noise_map",
    "gt_switch",
    "noise_injection",
    "annotation",
    "application",
    "human",
)

_LAZY = {
    "MetaConfig": "fminspect.meta.protocol",
    "Case": "fminspect.meta.runner",
    "MetaReport": "fminspect.meta.runner",
    "SummaryRow": "fminspect.meta.runner",
    "run_meta": "fminspect.meta.runner",
}

__all__ = ["META_MEASURES", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'fminspect.meta' has no attribute {name!r}")
