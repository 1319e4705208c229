"""What changes the inspector's numbers: the measures' parameters, the resize rule and the
measures computed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fminspect.metrics import DEFAULT_PARAMS, Params, measure_keys
from fminspect.metrics.suite import families_for
from fminspect.pipeline.config import EvalConfig

#: Keys whose families the inspector computes whatever measures are chosen: its curves
#: panel, the metrics table's @t columns and the threshold overlay read them.
PANEL_KEYS = ("maxFm", "maxEm", "maxIoU")


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that changes the numbers: measure parameters, the resize rule and which
    measures are computed (``keys``; empty: the default ones)."""

    params: Params = DEFAULT_PARAMS
    interpolation: str = "bilinear"
    keys: tuple[str, ...] = ()

    def measure_keys(self) -> tuple[str, ...]:
        """The measures computed (the default ones when none were chosen)."""
        return measure_keys(self.keys or None)

    def families(self) -> tuple[str, ...]:
        """The measure families computed for them, and those the window's panels always draw
        (the curves, the @t columns, the TP/FP/FN overlay: F, E and IoU/Dice, cheap from
        the one threshold sweep)."""
        return families_for([*self.measure_keys(), *PANEL_KEYS])

    def eval_config(self) -> EvalConfig:
        """The dataset evaluation's configuration for these settings (the browser's and the
        dataset view's scores, as ``fminspect eval`` makes them)."""
        return EvalConfig(self.params, self.keys or None, self.interpolation)

    def key(self) -> tuple[Any, ...]:
        """Hashable identity (part of the result-cache key)."""
        return (tuple(sorted(self.params.as_dict().items())), self.interpolation, self.families())
