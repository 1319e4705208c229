"""One prediction file scored against its GT file, and what ``fminspect score`` prints of it.

:func:`score_pair` is ``fminspect score PRED GT [--img IMAGE]`` as a function, with the same
arguments; :meth:`PairScore.table` and :meth:`PairScore.as_json` are what the command prints
without and with ``--json``. No Qt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fminspect import __version__
from fminspect.io.limits import MAX_PIXELS
from fminspect.metrics import MEASURES, Params, SuiteResult, measure_keys
from fminspect.pipeline.sample import ScoredPair, score_files

__all__ = ["PairScore", "score_pair"]


@dataclass(frozen=True, slots=True)
class PairScore:
    """A prediction scored against its GT (:func:`score_pair`): the files and parameters it
    was scored with, and the result (:attr:`suite` holds every measure's intermediates)."""

    pred: Path
    gt: Path
    image: Path | None
    params: Params
    interpolation: str
    scored: ScoredPair
    keys: tuple[str, ...] = ()  # the measures asked for (empty: every one computed)

    @property
    def suite(self) -> SuiteResult:
        """Every measure's full result."""
        return self.scored.suite

    @property
    def notes(self) -> tuple[str, ...]:
        """What was done to the inputs and what each measure warns about, as text."""
        return tuple(str(n) for n in self.scored.notes)

    def scores(self) -> dict[str, float]:
        """Per-image scores of the measures asked for, under the stable keys of
        :data:`~fminspect.metrics.MEASURES`."""
        scores = self.scored.scores()
        return {k: v for k, v in scores.items() if not self.keys or k in self.keys}

    def labels(self) -> dict[str, str]:
        """Each scored measure's exact variant label (e.g. ``'maxFm β²=0.3'``)."""
        scores = self.scores()
        return {m.key: m.label(self.params) for m in MEASURES if m.key in scores}

    def as_json(self) -> dict[str, Any]:
        """Plain JSON of the pair: what ``fminspect score --json`` prints."""
        scores = self.scores()
        return {
            "fminspect": __version__,
            "prediction": str(self.pred),
            "gt": str(self.gt),
            "params": {**self.params.as_dict(), "interpolation": self.interpolation},
            "normalization": self.params.norm.label,
            "scores": scores,
            "labels": self.labels(),
            "notes": list(self.notes),
        }

    def table(self) -> str:
        """Every measure with its label, value and direction, then the notes: what
        ``fminspect score`` prints."""
        scores = self.scores()
        shown = [m for m in MEASURES if m.key in scores]
        width = max(len(m.label(self.params)) for m in shown)
        lines = [
            f"prediction: {self.pred}\nGT:         {self.gt}\n"
            f"normalisation: {self.params.norm.label}   (fminspect {__version__})\n"
        ]
        for m in shown:
            arrow = "↑" if m.higher_is_better else "↓"
            lines.append(f"  {m.label(self.params):<{width}}  {scores[m.key]:.6f} {arrow}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def score_pair(
    pred: Path | str,
    gt: Path | str,
    *,
    image: Path | str | None = None,
    params: Params | None = None,
    interpolation: str = "bilinear",
    max_pixels: int = MAX_PIXELS,
    keys: Sequence[str] | str | None = None,
) -> PairScore:
    """Score one prediction file against its GT file (and the image, for CCm): the measures
    of ``keys`` (keys, family names, ``"all"``; default: the default measures), through the
    same pipeline as every command (:func:`~fminspect.pipeline.sample.score_files`).

    Parameters
    ----------
    pred, gt : path
        The prediction map and the ground-truth mask (PNG/JPEG/…, 8 or 16 bit).
    image : path, optional
        The RGB image: the camouflage Context-measure (CCm) is computed only with it.
    params : Params, optional
        The measures' parameters (default: the papers' and pysodmetrics').
    interpolation : str
        How a prediction of another size is resized to its GT.
    max_pixels : int
        A file whose header declares more pixels is refused before decoding.

    Raises
    ------
    LoadError
        A file cannot be read, or the image given cannot be used (the message says which).

    Examples
    --------
    >>> pair = score_pair("pred.png", "gt.png")           # doctest: +SKIP
    >>> pair.scores()["Sm"], pair.labels()["Sm"]          # doctest: +SKIP
    (0.865..., 'Sm α=0.5')
    >>> print(pair.table())                               # doctest: +SKIP
    """
    params = params or Params()
    scored = score_files(
        pred,
        gt,
        image=image,
        params=params,
        interpolation=interpolation,
        max_pixels=max_pixels,
        keys=keys,
    )
    return PairScore(
        Path(pred),
        Path(gt),
        Path(image) if image else None,
        params,
        interpolation,
        scored,
        measure_keys(keys),
    )
