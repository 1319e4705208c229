"""The object's share of the image per sample: the GT's foreground pixels over all of them
(0 for an empty GT), as the window's scatter view and its filters (``share < 0.05``,
``empty gt``) read it.

The foreground is the GT binarised by the measures' own rule
(:func:`fminspect.metrics.prepare_gt` under the chosen
:class:`~fminspect.metrics.Normalization`, ``gt > 128`` by default), so an "empty" GT here
is one the measures see as empty. Every GT is read once, in threads (decoding releases the
interpreter lock); a GT that cannot be read has no share (NaN).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from threading import Event

from fminspect.io.discovery import Sample
from fminspect.io.loading import load_map
from fminspect.io.validation import LoadError
from fminspect.metrics import DEFAULT_NORMALIZATION, Normalization, prepare_gt


def gt_share(sample: Sample, norm: Normalization = DEFAULT_NORMALIZATION) -> float:
    """The share of ``sample``'s GT that is foreground; NaN if the GT cannot be read."""
    try:
        gt = prepare_gt(load_map(sample.gt).array, norm)
    except LoadError:
        return float("nan")
    return gt.n_fg / gt.size


def gt_shares(
    samples: Sequence[Sample],
    norm: Normalization = DEFAULT_NORMALIZATION,
    *,
    threads: int = 2,
    stop: Event | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[str, float]:
    """``{name: share}`` of every sample (those read before ``stop`` was set)."""
    out: dict[str, float] = {}

    def one(sample: Sample) -> tuple[str, float]:
        if stop is not None and stop.is_set():
            return sample.name, float("nan")
        return sample.name, gt_share(sample, norm)

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        for k, (name, share) in enumerate(pool.map(one, samples), 1):
            out[name] = share
            if on_progress is not None and (k % 200 == 0 or k == len(samples)):
                on_progress(k, len(samples))
    return out
