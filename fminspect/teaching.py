"""Teaching material: perturbations of a map and the papers' figures that demonstrate the
flaws their measures fix (no Qt; the playground window draws these).

Each :class:`FlawDemo` is one figure of a paper — Margolin et al. (CVPR 2014) Figs. 2, 4
and 6, the S-measure paper's Fig. 4, the E-measure paper's Figs. 1 and 3, the
Context-measure paper's Fig. 2 (a1/a2 and b1/b2) — rebuilt from the figure's description,
with what the paper reports for each measure it discusses (``claims``), checked by
tests/gui/test_explain_and_playground.py; :func:`rank_demo` shows every measure's verdict.
The papers' images are not used: each pair is drawn anew with the property the figure
states (equal confusion counts, equal counts per quadrant, mirror images, the same
intersection) made exact. One pair, a uniform vs a speckled object, is ours and says so.
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
    measure_keys,
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

#: A paper's verdict on a pair: it prefers A or B, scores them the same ('tie') or almost
#: the same ('≈': within :data:`NEARLY`).
VERDICTS = ("A", "B", "tie", "≈")
NEARLY = 0.01


@dataclass(frozen=True, slots=True)
class FlawDemo:
    """A figure of a paper: one GT, two maps A and B, and what the paper reports.

    ``claims`` are the paper's own statements about this figure, one per measure it
    discusses (key, verdict in :data:`VERDICTS`), and nothing else; ``unmet`` names those
    of them the rebuilt pair cannot satisfy, with the reason (the paper's statement
    contradicts its own premise, or rests on its images). ``checks`` are *our* statements
    about the rebuilt pair — what follows from the figure's stated property (ties of
    measures that only count pixels) and what the proposed measure does — kept apart from
    the paper's. ``preferred`` is the map the paper (a person) prefers and ``proposed`` the
    measure that paper proposes. The pairs are rebuilt from each figure's description — the
    papers' own images are not used — with the property the paper states (equal TP/FP/FN/TN
    counts, equal counts per S-measure quadrant, mirror-image masks…) made exact.
    """

    key: str
    title: str
    paper: str
    figure: str
    description: str
    gt: np.ndarray
    a: np.ndarray
    b: np.ndarray
    label_a: str
    label_b: str
    proposed: str
    claims: tuple[tuple[str, str], ...]
    checks: tuple[tuple[str, str], ...] = ()
    unmet: tuple[tuple[str, str], ...] = ()
    image: np.ndarray | None = None
    preferred: str = "A"


def claim_holds(verdict: tuple[float, float, str], claim: str) -> bool:
    """Whether a measure's (A, B, verdict) from :func:`rank_demo` is the paper's ``claim``."""
    a, b, prefers = verdict
    if claim == "≈":
        return abs(a - b) <= NEARLY
    return prefers == claim


def _blob(h: int = 120, w: int = 160) -> np.ndarray:
    gt = np.zeros((h, w), np.uint8)
    cv2.ellipse(gt, (w // 2, h // 2), (w // 4, h // 4), 0, 0, 360, 255, -1)
    return gt


_MARGOLIN = "Margolin, Zelnik-Manor & Tal, CVPR 2014"
#: Figs. 4 and 6: "the exact same score by all current evaluation measures" — AUC, AP,
#: F_β and PASCAL (IoU) in the paper's §2–3, here in every form a binary map has
_CURRENT_MEASURES_TIE = (
    ("AUCROC", "tie"),
    ("AUCPR", "tie"),
    ("AP", "tie"),
    ("adpFm", "tie"),
    ("maxFm", "tie"),
    ("adpIoU", "tie"),
    ("maxIoU", "tie"),
)


def _margolin_fig2() -> FlawDemo:
    gt = _blob()
    fg = gt > 0
    # (b): four values, every object pixel above every background pixel, so each of its five
    # binary maps (b1–b5 of the figure: nothing, half the object, the object, the object
    # and half the background, everything) lies on the perfect ROC/PR path; (a), the GT,
    # has three (a1–a3)
    b = np.zeros(gt.shape, np.uint8)
    cols = np.indices(gt.shape)[1]
    b[fg & (cols % 2 == 0)] = 255
    b[fg & (cols % 2 == 1)] = 204
    b[~fg & (cols % 2 == 0)] = 102
    return FlawDemo(
        "margolin_fig2",
        "Interpolation flaw",
        _MARGOLIN,
        "Fig. 2",
        "(a) is the GT itself (three binary maps); (b) takes four values, every object pixel "
        "above every background pixel, so each of its five binary maps lies on the perfect "
        "curve and its interpolated ROC and PR curves are those of (a). AUC and AP cannot "
        "tell them apart and rank both as perfect, although (a) is better. (Not in the "
        "figure: F^w_β, which uses the values themselves, prefers (a).)",
        gt,
        gt.copy(),
        b,
        "(a) = the GT",
        "(b) five levels",
        "wFm",
        (("AUCROC", "tie"), ("AP", "tie")),
        checks=(("AUCPR", "tie"), ("wFm", "A")),
    )


def _margolin_fig4() -> FlawDemo:
    gt = _blob()
    fg = np.argwhere(gt > 0)
    rng = np.random.default_rng(3)
    n = len(fg) // 8
    chunk = gt.copy()
    order = np.argsort(fg[:, 1], kind="stable")  # the leftmost n foreground pixels
    gone = fg[order[:n]]
    chunk[gone[:, 0], gone[:, 1]] = 0
    scattered = gt.copy()
    pick = fg[rng.choice(len(fg), n, replace=False)]
    scattered[pick[:, 0], pick[:, 1]] = 0
    return FlawDemo(
        "margolin_fig4",
        "Dependency flaw",
        _MARGOLIN,
        "Fig. 4",
        "Both maps have the same TP, TN, FP and FN. In (a) the false negatives are "
        "concentrated: a whole piece of the object is not detected; in (b) they are sparsely "
        "scattered among the true positives, so the entire object is sampled. Every measure "
        "that counts pixels independently scores them the same, although (b) is better for "
        "most applications. (Not in the figure: F^w_β, which lets neighbours compensate, "
        "prefers (b).)",
        gt,
        chunk,
        scattered,
        "(a) a missing piece",
        "(b) scattered misses",
        "wFm",
        _CURRENT_MEASURES_TIE,
        checks=(("wFm", "B"),),
        preferred="B",
    )


def _margolin_fig6() -> FlawDemo:
    gt = _blob()
    near = erode_dilate(gt, 4)
    extra = int((near > 0).sum() - (gt > 0).sum())
    far = gt.copy()
    side = int(np.ceil(np.sqrt(extra)))
    # a blob in the far corner, exactly as many pixels as the outline: the first `extra`
    # pixels of a side × side square, row by row
    block = np.zeros(side * side, np.uint8)
    block[:extra] = 255
    far[2 : 2 + side, 2 : 2 + side] = block.reshape(side, side)
    return FlawDemo(
        "margolin_fig6",
        "Equal-importance flaw",
        _MARGOLIN,
        "Fig. 6",
        "Both maps have the same TP, TN, FP and FN. The false positives of (a) form a false "
        "blob far from the object; those of (b) hug its boundary (a slightly too large "
        "outline). Current measures deem both errors equally harmful; those of (b) are less "
        "damaging for many applications. (Not in the figure: F^w_β, which weights background "
        "errors by their distance to the object, prefers (b).)",
        gt,
        far,
        near,
        "(a) errors far away",
        "(b) errors at the boundary",
        "wFm",
        _CURRENT_MEASURES_TIE,
        checks=(("wFm", "B"),),
        preferred="B",
    )


def _smeasure_fig4() -> FlawDemo:
    h, w = 120, 120
    gt = np.zeros((h, w), np.uint8)
    cv2.putText(gt, "2", (28, 100), cv2.FONT_HERSHEY_SIMPLEX, 3.6, 255, 14, cv2.LINE_8)
    gt = np.where(gt > 127, 255, 0).astype(np.uint8)  # binary, whatever OpenCV anti-aliases
    fg = gt > 0
    bottom = np.nonzero(fg)[0].max()
    bar = np.nonzero(fg[bottom - 4])[0]  # the base stroke of the "2", one row above its foot
    side = 18
    # FM1: a black square inside the digit, cutting its base stroke in two
    centre = int(bar.min() + bar.max()) // 2
    inside = gt.copy()
    inside[bottom - side + 1 : bottom + 1, centre - side // 2 : centre + side // 2] = 0
    n = int(fg.sum() - (inside > 0).sum())
    # FM2: the same number of object pixels removed at the boundary: the rightmost n pixels
    # of the digit's lower part, so the base stroke only grows shorter (a block of the
    # stroke's height, one partial column)
    touching = gt.copy()
    right = np.argwhere(fg & (np.indices(fg.shape)[0] > bottom - side))
    order = np.lexsort((right[:, 0], -right[:, 1]))  # rightmost columns first
    gone = right[order[:n]]
    touching[gone[:, 0], gone[:, 1]] = 0
    return FlawDemo(
        "smeasure_fig4",
        "A black square inside the digit vs at its boundary",
        "Cheng & Fan, IJCV 2021 (S-measure)",
        "Fig. 4",
        "Both maps remove the same number of pixels from a perfect digit, so they have the "
        "same TP, TN, FP and FN. In FM1 (A) a black square falls inside the digit and cuts "
        "its base stroke in two; in FM2 (B) the pixels are taken at the boundary, from the "
        "end of the stroke, which only grows shorter. FM2 is favoured. The paper says MAE "
        "favours FM1; with equal counts MAE scores both the same (as F and IoU do). The "
        "paper does not score this figure with its S-measure: here S_α, whose structure term "
        "compares four quadrants, scores FM1 higher — it does not see a stroke cut in two.",
        gt,
        inside,
        touching,
        "FM1: square inside",
        "FM2: square at the boundary",
        "Sm",
        (("MAE", "A"),),
        checks=(("MAE", "tie"), ("maxFm", "tie"), ("maxIoU", "tie"), ("Sm", "A")),
        unmet=(
            (
                "MAE",
                "the maps have the same TP, TN, FP and FN (the figure's own premise), so MAE "
                "scores them the same",
            ),
        ),
        preferred="B",
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
        "Cheng & Fan, IJCV 2021 (S-measure)",
        "ours, after §4.2",
        "Not a figure of the paper: a pair built on its §4.2 premise that good maps have "
        "approximately uniform object regions. Inside the object both maps average 0.7 and "
        "the background is 0, so MAE is the same and the maximum of every threshold-based "
        "curve too; A is uniform, B speckled. The S-measure's object part rewards the "
        "uniform foreground, as a viewer does.",
        gt,
        a,
        b,
        "uniform object",
        "speckled object",
        "Sm",
        (),
        checks=(("MAE", "tie"), ("maxFm", "tie"), ("maxIoU", "tie"), ("Sm", "A")),
    )


def _emeasure_fig1() -> FlawDemo:
    gt = np.zeros((120, 160), np.uint8)
    cv2.ellipse(gt, (80, 60), (70, 50), 0, 0, 360, 255, -1)  # a large object (~57 %)
    rng = np.random.default_rng(11)
    sota = np.zeros_like(gt)
    cv2.ellipse(sota, (62, 52), (40, 30), 0, 0, 360, 255, -1)  # finds part of it, cleanly
    noise = (rng.normal(0, 1, gt.shape) > -1.04).astype(np.uint8) * 255  # binary noise, 85 %
    return FlawDemo(
        "emeasure_fig1",
        "A segmentation vs a random noise map",
        "Fan et al., IJCAI 2018 (E-measure)",
        "Fig. 1",
        "(c) is a binary map of a real model that finds a clean part of a large object; (d) "
        "is random Gaussian noise, binarised (85 % of the pixels on). IoU, F1 and F^w_β "
        "prefer the noise; only the E-measure, which combines the image-level mean with "
        "the local match, ranks (c) higher. (The caption also names CM and VQ, which "
        "fminspect does not compute.)",
        gt,
        sota,
        noise,
        "(c) the model's map",
        "(d) Gaussian noise",
        "adpEm",
        (("adpIoU", "B"), ("adpDice", "B"), ("wFm", "B"), ("adpEm", "A")),
        checks=(("binIoU", "B"), ("binDice", "B")),
    )


def _emeasure_fig3() -> FlawDemo:
    h, w = 140, 140
    gt = np.zeros((h, w), np.uint8)
    cv2.circle(gt, (70, 70), 45, 255, -1)
    smooth = np.zeros_like(gt)
    cv2.circle(smooth, (79, 76), 42, 255, -1)  # a slightly smaller circle, off-centre
    angle = np.linspace(0, 2 * np.pi, 721)
    spikes = 6 * np.sign(np.sin(18 * angle)) * (np.abs(np.sin(18 * angle)) > 0.5)
    wiggles = 2.5 * np.sin(5 * angle)

    def spiky_shape(base: float) -> np.ndarray:
        r = base + spikes + wiggles
        points = np.stack([70 + r * np.cos(angle), 70 + r * np.sin(angle)], axis=1)
        shape = np.zeros_like(gt)
        cv2.fillPoly(shape, [np.round(points).astype(np.int32)], 255)
        return shape

    def overlap(m: np.ndarray) -> float:  # intersection over union, by counting
        return float(((m > 0) & (gt > 0)).sum() / ((m > 0) | (gt > 0)).sum())

    # the figure's premise made exact: (b)'s base radius is the one whose IoU with the GT
    # is closest to (a)'s
    target = overlap(smooth)
    spiky = min(
        (spiky_shape(base) for base in np.arange(36.0, 50.0, 0.25)),
        key=lambda m: abs(overlap(m) - target),
    )
    return FlawDemo(
        "emeasure_fig3",
        "Region-based measures and shape",
        "Fan et al., IJCAI 2018 (E-measure)",
        "Fig. 3",
        "The GT is a circle; (a) is a smooth circle a little off, (b) a shape with spikes and "
        "wiggles. Their intersections with the GT are almost equal, so IoU and F1 score them "
        "almost the same although (b)'s shape differs. (On binary maps the E-measure too is "
        "a function of the TP, FP, FN and TN counts: the paper makes no claim for it here.)",
        gt,
        smooth,
        spiky,
        "(a) smooth",
        "(b) spikes and wiggles",
        "adpEm",
        (("adpIoU", "≈"), ("adpDice", "≈")),
        checks=(("binIoU", "≈"),),
    )


def _camo_image(h: int, w: int) -> np.ndarray:
    from skimage import data

    grass = data.grass()[:h, :w]
    return np.stack([grass, grass // 2 + 60, grass // 3 + 30], axis=2).astype(np.uint8)


_CONTEXT = "Wang et al., arXiv:2512.07076 (Context-measure)"


def _context_fig2a() -> FlawDemo:
    # width 122 and object columns 31..90 make the S-measure's centroid split (column 61)
    # the mirror axis, so mirror-image masks have mirror-image quadrants
    h, w = 90, 122
    gt = np.zeros((h, w), np.uint8)
    gt[25:65, 31:91] = 255
    img = _camo_image(h, w)
    img[25:65, 61:91] = (230, 40, 200)  # right half conspicuous; left half = the grass itself
    a = gt.copy()
    a[25:65, 76:91] = 0  # covers the camouflaged half, misses part of the conspicuous one
    b = a[:, ::-1].copy()  # the mirror image: misses the same strip of the camouflaged half
    return FlawDemo(
        "context_fig2a",
        "Context flaw: which half was found?",
        _CONTEXT,
        "Fig. 2 (a1, a2)",
        "Two mirror-image masks with equal numbers of pixels. The object's left half is "
        "camouflaged in the grass, its right half conspicuous; (a1) covers the camouflaged "
        "region and misses a strip of the conspicuous one, (a2) the reverse. E_φ and S_α "
        "give both the same score; C^ω_β, which weights GT pixels by their camouflage "
        "degree, scores the more camouflaged case (a1) higher. (The paper's own masks score "
        "E_φ = 0.75 and S_α = 0.70; this rebuilt pair has other values, with the ties "
        "exact.)",
        gt,
        a,
        b,
        "(a1) finds the camouflaged half",
        "(a2) finds the conspicuous half",
        "CCm",
        (("adpEm", "tie"), ("Sm", "tie"), ("CCm", "A")),
        checks=(("maxEm", "tie"), ("MAE", "tie"), ("Cm", "tie")),
        image=img,
    )


def _context_fig2b() -> FlawDemo:
    from fminspect.metrics import smeasure

    h, w = 120, 160
    gt = _blob(h, w)
    fg = gt > 0
    ring = (erode_dilate(gt, 5) > 0) & ~fg  # (b1): a slightly larger, coherent outline
    b1 = gt.copy()
    b1[ring] = 255
    # (b2): the same number of false positives in every S-measure quadrant, scattered at
    # random over that quadrant's background
    cy, cx = smeasure(gt, gt).centroid
    rng = np.random.default_rng(7)
    b2 = gt.copy()
    for rows, cols in (
        (slice(0, cy), slice(0, cx)),
        (slice(0, cy), slice(cx, w)),
        (slice(cy, h), slice(0, cx)),
        (slice(cy, h), slice(cx, w)),
    ):
        n = int(ring[rows, cols].sum())
        free = np.argwhere(~fg[rows, cols])
        pick = free[rng.choice(len(free), n, replace=False)]
        b2[rows, cols][pick[:, 0], pick[:, 1]] = 255
    return FlawDemo(
        "context_fig2b",
        "Correlation flaw: the same counts per quadrant, another layout",
        _CONTEXT,
        "Fig. 2 (b1, b2)",
        "The paper shows two masks with an equal number of foreground pixels in each of the "
        "quadrants the S-measure splits the image into, and distinct layouts: E_φ and S_α "
        "score them the same (0.41 and 0.45 for its masks), C^ω_β scores (b1), the better "
        "structure, higher. Rebuilt here (our layouts): both masks find the whole object "
        "and add the same number of false positives in each quadrant — in (b1) as a "
        "coherent outline around the object, in (b2) scattered over the quadrant.",
        gt,
        b1,
        b2,
        "(b1) coherent",
        "(b2) scattered",
        "CCm",
        (("adpEm", "tie"), ("Sm", "tie"), ("CCm", "A")),
        checks=(("maxEm", "tie"), ("MAE", "tie")),
        image=_camo_image(h, w),
    )


def flaw_demos() -> list[FlawDemo]:
    """Every built-in demonstration: the papers' figures, then our own pair."""
    return [
        _margolin_fig2(),
        _margolin_fig4(),
        _margolin_fig6(),
        _smeasure_fig4(),
        _emeasure_fig1(),
        _emeasure_fig3(),
        _context_fig2a(),
        _context_fig2b(),
        _uniform(),
    ]


def rank_demo(
    demo: FlawDemo, params: Params = DEFAULT_PARAMS
) -> dict[str, tuple[float, float, str]]:
    """For every default measure and every measure the paper discusses: (score of A, score
    of B, which one it prefers: 'A', 'B' or 'tie')."""
    said = [k for k, _ in (*demo.claims, *demo.checks)]
    keys = list(dict.fromkeys([*measure_keys(), *said, demo.proposed]))
    a = compute_suite(demo.a, demo.gt, params, img=demo.image, keys=keys).scores()
    b = compute_suite(demo.b, demo.gt, params, img=demo.image, keys=keys).scores()
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
