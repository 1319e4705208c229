"""The synthetic maps and perturbations of the meta-measures (pure numpy/OpenCV).

Every map is float64 in [0, 1], scored "as it is" (no min–max stretch), and every random
draw comes from a generator seeded by :func:`case_seed` from the run's recorded seed and
the case's names, so a case can be recomputed alone and gives the same map.
"""

from __future__ import annotations

import hashlib

import cv2
import numpy as np


def case_seed(seed: int, *names: str) -> int:
    """A 64-bit seed for one case, derived from the run seed and the case's names."""
    digest = hashlib.sha256(":".join([str(seed), *names]).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def centred_circle(shape: tuple[int, int], radius: float = 0.25) -> np.ndarray:
    """A binary disc at the centre of the image; ``radius`` × min(height, width)."""
    h, w = shape
    yy, xx = np.mgrid[:h, :w]
    r = radius * min(h, w)
    inside = (yy - (h - 1) / 2) ** 2 + (xx - (w - 1) / 2) ** 2 <= r * r
    return inside.astype(np.float64)


def centred_gaussian(shape: tuple[int, int], sigma: float = 0.25) -> np.ndarray:
    """exp(−d²/2σ²) about the centre, σ = ``sigma`` × min(height, width); peak 1."""
    h, w = shape
    yy, xx = np.mgrid[:h, :w]
    s = sigma * min(h, w)
    d2 = (yy - (h - 1) / 2) ** 2 + (xx - (w - 1) / 2) ** 2
    return np.exp(-d2 / (2 * s * s))


def gaussian_noise_map(
    shape: tuple[int, int], rng: np.random.Generator, mean: float = 0.5, std: float = 0.25
) -> np.ndarray:
    """Independent N(mean, std²) per pixel, clipped to [0, 1]."""
    return np.clip(rng.normal(mean, std, size=shape), 0.0, 1.0)


def inject_noise(
    pred: np.ndarray,
    gt: np.ndarray,
    rng: np.random.Generator,
    *,
    fraction: float = 0.01,
    std: float = 0.2,
    fg_threshold: float = 0.5,
) -> tuple[np.ndarray, np.ndarray]:
    """The Context-measure paper's noise test: N(0, std²) added to ``fraction`` of the pixels
    of the region predicted foreground (``pred >= fg_threshold``) where the GT is background;
    values below 0 are truncated to 0 (and above 1 to 1, the map's range).

    Returns the noisy map and the mask of changed pixels (empty if the region is empty).
    """
    region = np.flatnonzero((pred >= fg_threshold) & ~gt)
    n = round(fraction * region.size)
    changed = np.zeros(pred.shape, bool)
    out = pred.copy()
    if n == 0:
        return out, changed
    picked = rng.choice(region, size=n, replace=False)
    flat = out.reshape(-1)
    flat[picked] = np.clip(flat[picked] + rng.normal(0.0, std, size=n), 0.0, 1.0)
    changed.reshape(-1)[picked] = True
    return out, changed


def morph_gt(gt: np.ndarray, op: str, size: int = 3, iterations: int = 1) -> np.ndarray:
    """The GT dilated or eroded with a ``size``×``size`` square kernel (uint8 0/255)."""
    kernel = np.ones((size, size), np.uint8)
    mask = gt.astype(np.uint8) * 255
    if op == "dilate":
        return cv2.dilate(mask, kernel, iterations=iterations)
    if op == "erode":
        return cv2.erode(mask, kernel, iterations=iterations, borderType=cv2.BORDER_REPLICATE)
    raise ValueError(f"op must be 'dilate' or 'erode', got {op!r}")


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random permutation with no fixed point (every image gets another image's GT)."""
    if n < 2:
        raise ValueError("a ground-truth switch needs at least two images")
    while True:
        perm = rng.permutation(n)
        if not np.any(perm == np.arange(n)):
            return perm
