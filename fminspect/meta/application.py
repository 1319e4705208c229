"""Application ranking: how well does a measure predict a map's usefulness to a task?

An *application* is any callable ``app(image, gt, pred) -> float`` returning the quality of
the task's outcome when it is driven by ``pred`` (higher is better), where ``image`` is the
RGB uint8 image (or None), ``gt`` the binary GT and ``pred`` the map as float64 in [0, 1].
The meta-measure ranks each image's models by the application's quality and by the measure,
and reports θ = 1 − Spearman ρ averaged over images (Margolin et al., CVPR 2014).

Built in: ``grabcut`` — GrabCut initialised from the map, scored by IoU against GrabCut
initialised from the GT the same way. Others are named ``package.module:function``.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from typing import cast

import cv2
import numpy as np

Application = Callable[[np.ndarray | None, np.ndarray, np.ndarray], float]


def _grabcut(image: np.ndarray, seed_mask: np.ndarray, iterations: int, seed: int) -> np.ndarray:
    """GrabCut from a probable-foreground / probable-background mask; the segmentation."""
    if not seed_mask.any() or seed_mask.all():
        return seed_mask.copy()  # GrabCut needs both classes; nothing to refine
    mask = np.where(seed_mask, cv2.GC_PR_FGD, cv2.GC_PR_BGD).astype(np.uint8)
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    cv2.setRNGSeed(seed)  # GrabCut's k-means start is random: fix it
    bgr = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    # the stubs want a rect, which GC_INIT_WITH_MASK ignores: OpenCV takes None for it
    cv2.grabCut(bgr, mask, None, bgd, fgd, iterations, cv2.GC_INIT_WITH_MASK)  # type: ignore[call-overload]
    return (mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD)


_REFERENCES: dict[tuple[bytes, int, int], np.ndarray] = {}


def grabcut_iou(
    image: np.ndarray | None,
    gt: np.ndarray,
    pred: np.ndarray,
    *,
    threshold: float = 0.5,
    iterations: int = 3,
    seed: int = 0,
) -> float:
    """IoU between GrabCut seeded by ``pred >= threshold`` and GrabCut seeded by the GT."""
    if image is None:
        raise ValueError("the GrabCut application needs the image")
    # the GT-seeded reference is the same for every model of an image: compute it once
    key = (
        hashlib.blake2b(image.tobytes() + np.packbits(gt).tobytes(), digest_size=16).digest(),
        iterations,
        seed,
    )
    if key not in _REFERENCES:
        _REFERENCES.clear()
        _REFERENCES[key] = _grabcut(image, gt.astype(bool), iterations, seed)
    reference = _REFERENCES[key]
    result = _grabcut(image, pred >= threshold, iterations, seed)
    union = np.count_nonzero(reference | result)
    return float(np.count_nonzero(reference & result) / union) if union else 1.0


APPLICATIONS: dict[str, Application] = {"grabcut": grabcut_iou}


def resolve(name: str) -> Application:
    """A built-in application by name, or ``package.module:function``."""
    if name in APPLICATIONS:
        return APPLICATIONS[name]
    module, _, attr = name.partition(":")
    if not attr:
        raise ValueError(
            f"unknown application {name!r}: use {sorted(APPLICATIONS)} or package.module:function"
        )
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load the application {name!r}: {exc}") from None
    if not callable(fn):
        raise ValueError(f"{name!r} is not callable")
    return cast(Application, fn)
