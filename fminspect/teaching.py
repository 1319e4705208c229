"""Teaching material: perturbations of a map and synthetic demonstrations of the flaws the
seed papers describe (no Qt; the playground window draws these).

Each :class:`FlawDemo` is a GT with two predictions, A and B, that a person would rank one
way (``preferred``); the demo records which paper argued it and which measure that paper
proposes, and :func:`rank_demo` shows which measures agree with the person. The pairs are
our own synthetic constructions *in the spirit of* the papers' figures (we did not copy the
figures), each built so that the plain pixel-wise measures cannot tell A from B.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from fminspect.metrics import (
    DEFAULT_PARAMS,
    MEASURES_BY_KEY,
    Params,
    compute_suite,
    prepare_gt,
)

# --------------------------------------------------------------------------- perturbations


def blur(m: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur with standard deviation ``sigma`` px."""
    return m.copy() if sigma <= 0 else cv2.GaussianBlur(m, (0, 0), float(sigma))


def erode_dilate(m: np.ndarray, radius: float) -> np.ndarray:
    """Dilate by ``radius`` px (positive) or erode (negative), disk-shaped."""
    r = round(abs(radius))
    if r == 0:
        return m.copy()
    disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    return cv2.dilate(m, disk) if radius > 0 else cv2.erode(m, disk)


def add_noise(m: np.ndarray, sigma: float, seed: int = 0) -> np.ndarray:
    """Additive Gaussian noise of ``sigma`` grey levels, clipped to 0–255."""
    rng = np.random.default_rng(seed)
    return np.clip(m + rng.normal(0, sigma, m.shape), 0, 255).astype(np.uint8)


def translate(m: np.ndarray, pixels: float) -> np.ndarray:
    """Shift right and down by ``pixels`` (zeros enter)."""
    d = round(pixels)
    matrix = np.array([[1, 0, d], [0, 1, d]], dtype=np.float32)
    return cv2.warpAffine(m, matrix, (m.shape[1], m.shape[0]), flags=cv2.INTER_NEAREST)


def hole(m: np.ndarray, radius: float, center: tuple[int, int] | None = None) -> np.ndarray:
    """Zero a disk of ``radius`` px at ``center`` (row, col; default: the map's centroid)."""
    out = m.copy()
    if radius <= 0:
        return out
    if center is None:
        rows, cols = np.nonzero(m > 127)
        center = (
            (int(rows.mean()), int(cols.mean()))
            if rows.size
            else (m.shape[0] // 2, m.shape[1] // 2)
        )
    cv2.circle(out, (center[1], center[0]), round(radius), 0, -1)
    return out


def salt(m: np.ndarray, percent: float, seed: int = 0) -> np.ndarray:
    """Set ``percent`` % of the pixels, chosen at random, to white or black."""
    rng = np.random.default_rng(seed)
    out = m.copy()
    n = round(m.size * percent / 100)
    idx = rng.choice(m.size, size=n, replace=False)
    out.flat[idx] = rng.choice(np.array([0, 255], np.uint8), size=n)
    return out


@dataclass(frozen=True, slots=True)
class Perturbation:
    """A named perturbation with its strength range (for sliders and sweeps)."""

    name: str
    unit: str
    lo: float
    hi: float
    apply: Callable[[np.ndarray, float], np.ndarray]


PERTURBATIONS: dict[str, Perturbation] = {
    p.name: p
    for p in (
        Perturbation("Gaussian blur", "σ px", 0, 20, blur),
        Perturbation("erosion (−) / dilation (+)", "px", -15, 15, erode_dilate),
        Perturbation("additive noise", "σ grey levels", 0, 120, add_noise),
        Perturbation("translation", "px", 0, 30, translate),
        Perturbation("hole at the centre", "radius px", 0, 60, hole),
        Perturbation("salt noise", "% of pixels", 0, 30, salt),
    )
}


def sweep(
    pred: np.ndarray,
    gt: np.ndarray,
    perturbation: str,
    strengths: Iterable[float],
    *,
    keys: Sequence[str],
    img: np.ndarray | None = None,
    params: Params = DEFAULT_PARAMS,
    on_gt: bool = False,
) -> dict[str, list[float]]:
    """Every measure in ``keys`` as the perturbation of ``pred`` (or of the GT, ``on_gt``)
    grows through ``strengths``."""
    p = PERTURBATIONS[perturbation]
    out: dict[str, list[float]] = {k: [] for k in keys}
    prepared = None if on_gt else prepare_gt(gt, params.norm)
    for s in strengths:
        if on_gt:
            scores = compute_suite(pred, p.apply(gt, s), params, img=img, keys=keys).scores()
        else:
            scores = compute_suite(p.apply(pred, s), prepared, params, img=img, keys=keys).scores()
        for k in keys:
            out[k].append(scores.get(k, float("nan")))
    return out


# --------------------------------------------------------------------------- flaw demos


@dataclass(frozen=True, slots=True)
class FlawDemo:
    """Two predictions of one GT that a person ranks one way."""

    key: str
    title: str
    paper: str
    description: str
    gt: np.ndarray
    a: np.ndarray
    b: np.ndarray
    label_a: str
    label_b: str
    proposed: str  # the measure key the paper proposes
    blind: tuple[str, ...] = ()  # measures the pair is built to fool (they tie or prefer B)
    image: np.ndarray | None = None
    preferred: str = "A"


def _blob(h: int = 120, w: int = 160) -> np.ndarray:
    gt = np.zeros((h, w), np.uint8)
    cv2.ellipse(gt, (w // 2, h // 2), (w // 4, h // 4), 0, 0, 360, 255, -1)
    return gt


def _interpolation() -> FlawDemo:
    gt = _blob()
    fg = gt > 0
    # float maps are used as they are (no min–max stretch, which would make both binary)
    a = np.where(fg, 0.9, 0.1)  # confident
    b = np.where(fg, 0.52, 0.48)  # barely separated
    return FlawDemo(
        "interpolation",
        "Interpolation flaw",
        "Margolin, Zelnik-Manor & Tal, CVPR 2014",
        "Both maps separate object and background perfectly at some threshold, so every "
        "threshold-based score (max F, max IoU, max E) is perfect for both. A is confident "
        "(0.9 inside, 0.1 outside); B hovers around 0.5. Only measures that use the values "
        "themselves see that A is better.",
        gt,
        a,
        b,
        "confident",
        "undecided",
        "wFm",
        ("maxFm", "maxIoU", "maxEm"),
    )


def _dependency() -> FlawDemo:
    gt = _blob()
    fg = np.argwhere(gt > 0)
    rng = np.random.default_rng(3)
    n = len(fg) // 8
    scattered = gt.copy()
    pick = fg[rng.choice(len(fg), n, replace=False)]
    scattered[pick[:, 0], pick[:, 1]] = 0
    chunk = gt.copy()
    order = np.argsort(fg[:, 1], kind="stable")  # the leftmost n foreground pixels
    gone = fg[order[:n]]
    chunk[gone[:, 0], gone[:, 1]] = 0
    return FlawDemo(
        "dependency",
        "Dependency flaw",
        "Margolin, Zelnik-Manor & Tal, CVPR 2014",
        "Both maps miss the same number of object pixels. A misses isolated pixels scattered "
        "over the object, which still reads as one whole object; B misses a solid slice of "
        "it. Pixel-wise measures count the same errors; a person (and F^w, which lets "
        "neighbours compensate) prefers A.",
        gt,
        scattered,
        chunk,
        "scattered misses",
        "a missing slice",
        "wFm",
        ("MAE", "maxFm", "maxIoU", "maxEm"),
    )


def _importance() -> FlawDemo:
    gt = _blob()
    near = erode_dilate(gt, 4)
    extra = int((near > 0).sum() - (gt > 0).sum())
    far = gt.copy()
    side = int(np.ceil(np.sqrt(extra)))
    far[2 : 2 + side, 2 : 2 + side] = 255
    surplus = int((far > 0).sum() - (gt > 0).sum()) - extra
    if surplus > 0:
        far[2 + side - 1, 2 : 2 + surplus] = 0
    return FlawDemo(
        "importance",
        "Equal-importance flaw",
        "Margolin, Zelnik-Manor & Tal, CVPR 2014",
        "Both maps add the same number of false-positive pixels. In A they hug the object "
        "(a slightly too large outline); in B they form a false blob in a far corner. "
        "Pixel-wise measures weigh every error alike; a person (and F^w, which weights "
        "background errors by their distance to the object) prefers A.",
        gt,
        near,
        far,
        "errors near the object",
        "errors far away",
        "wFm",
        ("MAE", "maxFm", "maxIoU", "maxEm"),
    )


def _uniform() -> FlawDemo:
    gt = _blob()
    fg = gt > 0
    a = np.where(fg, 0.7, 0.0)  # uniform 0.7 (float: used as it is, no stretch)
    # speckled: +0.3 / −0.3 in turn over the object's pixels (same mean, same MAE)
    speckle = np.zeros(int(fg.sum()))
    speckle[0::2], speckle[1::2] = 0.3, -0.3
    if speckle.size % 2:
        speckle[-1] = 0.0
    rng = np.random.default_rng(5)
    b = np.zeros(gt.shape)
    b[fg] = 0.7 + rng.permutation(speckle)
    return FlawDemo(
        "structure",
        "Structure: uniform vs speckled object",
        "Fan et al., ICCV 2017 (S-measure)",
        "Inside the object both maps average 0.7 and the background is 0, so MAE is the same "
        "and the maximum of every threshold-based curve too; A is uniform, B speckled. "
        "The S-measure's object part rewards a uniform foreground (its authors' premise that "
        "good maps have approximately uniform object regions), as a viewer does.",
        gt,
        a,
        b,
        "uniform object",
        "speckled object",
        "Sm",
        ("MAE", "maxFm", "maxIoU"),
    )


def _square() -> FlawDemo:
    h, w = 120, 120
    gt = np.zeros((h, w), np.uint8)
    cv2.putText(gt, "2", (28, 100), cv2.FONT_HERSHEY_SIMPLEX, 3.6, 255, 14)
    rows, cols = np.nonzero(gt)
    touching, detached = gt.copy(), gt.copy()
    mid = int(np.median(rows))
    touching[mid - 7 : mid + 7, cols.max() + 1 : cols.max() + 15] = 255
    detached[2:16, 2:16] = 255
    return FlawDemo(
        "square",
        "A false square touching the digit vs apart from it",
        "after the idea of Fan et al., ICCV 2017 (S-measure)",
        "Both maps add the same 14×14 false square to a perfect digit. In A it touches the "
        "digit (one object, slightly bulged); in B it floats apart (a second, false object). "
        "MAE, F, IoU and E cannot tell them apart; a viewer who sees objects prefers A, and so "
        "does the structure-aware S-measure.",
        gt,
        touching,
        detached,
        "square touching",
        "square apart",
        "Sm",
        ("MAE", "maxFm", "maxIoU", "maxEm"),
    )


def _noise() -> FlawDemo:
    gt = np.zeros((120, 160), np.uint8)
    cv2.ellipse(gt, (80, 60), (70, 50), 0, 0, 360, 255, -1)  # a large object (~57 %)
    rng = np.random.default_rng(11)
    sota = np.zeros_like(gt)
    cv2.ellipse(sota, (62, 52), (40, 30), 0, 0, 360, 255, -1)  # finds part of it, cleanly
    noise = (rng.random(gt.shape) < 0.85).astype(np.uint8) * 255  # random map
    return FlawDemo(
        "noise",
        "A real detection vs a random noise map",
        "Fan et al., IJCAI 2018 (E-measure)",
        "A detects a clean, well-placed part of a large object; B is random noise that switches "
        "on 85 % of the pixels. Because the object covers most of the image, IoU, Dice and F1 "
        "score the noise higher; a person — and the E-measure, which combines the image mean "
        "with the local match — prefers the real detection.",
        gt,
        sota,
        noise,
        "partial detection",
        "random noise",
        "adpEm",
        ("adpIoU", "meanIoU", "adpDice", "wFm"),
    )


def _context() -> FlawDemo:
    from skimage import data

    h, w = 90, 120
    gt = np.zeros((h, w), np.uint8)
    gt[25:65, 30:90] = 255
    grass = data.grass()[:h, :w]
    img = np.stack([grass, grass // 2 + 60, grass // 3 + 30], axis=2).astype(np.uint8)
    img[25:65, 60:90] = (230, 40, 200)  # right half conspicuous; left half = the grass itself
    a = gt.copy()
    a[25:65, 75:90] = 0  # misses part of the conspicuous half
    b = gt.copy()
    b[25:65, 30:45] = 0  # misses the same amount of the camouflaged half
    return FlawDemo(
        "context",
        "Context flaw: which half was missed?",
        "Wang et al., arXiv:2512.07076 (Context-measure)",
        "The object's left half is camouflaged in the grass, its right half is conspicuous. "
        "A and B miss mirror-image strips of equal size — A on the conspicuous side, B on the "
        "camouflaged side — so pixel-wise measures tie. Finding the camouflaged part is the "
        "hard part of the task: a person prefers A, and C^ω_β, which weights GT pixels by "
        "their camouflage degree, agrees.",
        gt,
        a,
        b,
        "misses the easy side",
        "misses the camouflaged side",
        "CCm",
        ("MAE", "maxFm", "maxIoU", "maxEm", "Cm"),
        image=img,
    )


def flaw_demos() -> list[FlawDemo]:
    """Every built-in demonstration."""
    return [
        _interpolation(),
        _dependency(),
        _importance(),
        _uniform(),
        _square(),
        _noise(),
        _context(),
    ]


def rank_demo(
    demo: FlawDemo, params: Params = DEFAULT_PARAMS
) -> dict[str, tuple[float, float, str]]:
    """For every measure: (score of A, score of B, which one it prefers: 'A', 'B' or 'tie')."""
    a = compute_suite(demo.a, demo.gt, params, img=demo.image).scores()
    b = compute_suite(demo.b, demo.gt, params, img=demo.image).scores()
    out = {}
    for key in a:
        va, vb = a[key], b[key]
        if np.isclose(va, vb, rtol=0, atol=1e-9):
            verdict = "tie"
        else:
            higher = MEASURES_BY_KEY[key].higher_is_better
            verdict = "A" if (va > vb) == higher else "B"
        out[key] = (va, vb, verdict)
    return out
