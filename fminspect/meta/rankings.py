"""How two measures rank the same models (no Qt; used by the dataset browser)."""

from __future__ import annotations

import math

from scipy.stats import kendalltau

from fminspect.metrics import MEASURES_BY_KEY


def disagreement(scores: dict[str, dict[str, float]], x: str, y: str) -> float:
    """Kendall's τ between the model rankings by measures ``x`` and ``y`` (1 = same order).

    ``scores`` maps model → {measure: value}. Directions are taken into account (MAE is
    negated). NaN when fewer than two models have both values.
    """
    models = [
        m
        for m, s in scores.items()
        if x in s and y in s and not math.isnan(s[x]) and not math.isnan(s[y])
    ]
    if len(models) < 2:
        return math.nan
    sx = [scores[m][x] * (1 if MEASURES_BY_KEY[x].higher_is_better else -1) for m in models]
    sy = [scores[m][y] * (1 if MEASURES_BY_KEY[y].higher_is_better else -1) for m in models]
    tau = kendalltau(sx, sy).statistic
    return float(tau) if tau == tau else math.nan
