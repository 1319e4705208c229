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
    of: str = "image",
    std: float = 0.2,
    fg_threshold: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The Context-measure paper's noise test (§4.3 (b)): noise ε ~ N(0, std²) with its
    negative values truncated (ε⁺ = max(ε, 0): the noise only adds false foreground) added
    to pixels drawn without replacement inside the region predicted foreground
    (``pred > fg_threshold``; 0: the map's support) where the GT is background; the sum is
    capped at 1, the map's range. (Signed noise would lower half of those false positives —
    a better map, which no measure should be blamed for preferring.)

    How many: ``fraction`` of the whole image's pixel count (``of='image'``, the paper's
    reading; all of the region when it is smaller) or of the region's (``of='region'``).

    Returns the noisy map and the mask of the drawn pixels (empty if the region is empty).
    """
    if of not in ("image", "region"):
        raise ValueError(f"of is 'image' or 'region', not {of!r}")
    region = np.flatnonzero((pred > fg_threshold) & ~gt)
    base = pred.size if of == "image" else region.size
    n = min(round(fraction * base), region.size)
    changed = np.zeros(pred.shape, bool)
    out = pred.copy()
    if n == 0:
        return out, changed
    picked = rng.choice(region, size=n, replace=False)
    flat = out.reshape(-1)
    noise = np.maximum(rng.normal(0.0, std, size=n), 0.0)
    flat[picked] = np.minimum(flat[picked] + noise, 1.0)
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


def other_indices(n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """For each of ``n`` images, ``k`` other images drawn without replacement (all the
    others when fewer than ``k``): the random GT switches of Margolin et al. §5.3."""
    if n < 2:
        raise ValueError("a ground-truth switch needs at least two images")
    k = min(k, n - 1)
    out = []
    for i in range(n):
        picked = rng.choice(n - 1, size=k, replace=False)
        out.append(np.sort(picked + (picked >= i)))  # skip the image itself
    return out


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random permutation with no fixed point (every image gets another image's GT)."""
    if n < 2:
        raise ValueError("a ground-truth switch needs at least two images")
    while True:
        perm = rng.permutation(n)
        if not np.any(perm == np.arange(n)):
            return perm
