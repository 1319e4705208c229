"""Seeded (prediction, GT, RGB image) cases with real textures for Context-measure parity.

Backgrounds and objects are crops of scikit-image's bundled photographs and textures (CC0 /
public domain): a camouflaged object is cut from the *same* texture elsewhere, a salient one
from a different photo. GTs come from tests/reference/cases.py's shape generator, so there
are objects of many shapes, several objects, and objects touching the image border.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import cv2
import numpy as np
from skimage import data

from tests.reference.cases import random_gt, random_pred

_SOURCES = (
    "astronaut",
    "coffee",
    "chelsea",
    "rocket",
    "camera",
    "brick",
    "grass",
    "gravel",
    "immunohistochemistry",
    "hubble_deep_field",
)


@cache
def _photo(name: str) -> np.ndarray:
    img = getattr(data, name)()
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=2)
    return np.ascontiguousarray(img[..., :3]).astype(np.uint8)


def _crop(rng: np.random.Generator, h: int, w: int, name: str | None = None) -> np.ndarray:
    src = _photo(name or str(rng.choice(_SOURCES)))
    sh, sw = src.shape[:2]
    scale = max(h / sh, w / sw, rng.uniform(0.3, 1.0))
    if scale != 1:
        src = cv2.resize(src, (max(w, int(sw * scale) + 1), max(h, int(sh * scale) + 1)))
    y = int(rng.integers(0, src.shape[0] - h + 1))
    x = int(rng.integers(0, src.shape[1] - w + 1))
    return src[y : y + h, x : x + w].copy()


def context_cases(n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` cases, roughly half camouflaged, sizes 24–220 px."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(n):
        h, w = (int(v) for v in rng.integers(24, 220, 2))
        gt = random_gt(rng, h, w)
        name = str(rng.choice(_SOURCES))
        img = _crop(rng, h, w, name)
        camouflaged = rng.random() < 0.5
        obj = _crop(rng, h, w, name if camouflaged else None)
        m = gt > 128
        img[m] = obj[m]
        if rng.random() < 0.3:
            img = np.clip(img + rng.normal(0, 6, img.shape), 0, 255).astype(np.uint8)
        cases.append(
            {
                "id": f"ctx-{seed}-{i}-{h}x{w}-{'camo' if camouflaged else 'salient'}-{name}",
                "pred": random_pred(rng, gt),
                "gt": gt,
                "img": img,
                "normalize": True,
            }
        )
    return cases
