"""Meta-measures: evaluating the measures themselves, as the seed papers do (no Qt).

See :mod:`fminspect.meta.protocol` for the definitions, :func:`fminspect.meta.runner.run_meta`
to run them and :mod:`fminspect.meta.outputs` for the files they produce.
"""

from fminspect.meta.protocol import META_MEASURES, MetaConfig
from fminspect.meta.runner import Case, MetaReport, SummaryRow, run_meta

__all__ = ["META_MEASURES", "Case", "MetaConfig", "MetaReport", "SummaryRow", "run_meta"]
