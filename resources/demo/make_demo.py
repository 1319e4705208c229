#!/usr/bin/env python3
"""Regenerate the fminspect demo dataset (Imgs/, GT/, Pred/) next to this file.

Everything is derived from images bundled with scikit-image (CC0 / public
domain, no download needed); see README.md for provenance and licences.

Environment (opencv-contrib is needed for cv2.saliency; do NOT install it next
to opencv-python or opencv-python-headless in the same environment):

    python3 -m venv .venv
    .venv/bin/pip install opencv-contrib-python-headless==5.0.0.93 \
        scikit-image==0.26.0 numpy==2.4.6 scipy==1.17.1

Versions used to build the committed files: Python 3.11.7,
opencv-contrib-python-headless 5.0.0.93 (cv2 5.0.0), scikit-image 0.26.0,
numpy 2.4.6, scipy 1.17.1.

Run:  .venv/bin/python make_demo.py    (deterministic, about 25 s)

Imgs/, GT/ and Pred/ are deleted and recreated on every run.
"""

import shutil
import zlib
from pathlib import Path

import cv2
import numpy as np
from scipy import ndimage as ndi
from scipy.spatial.distance import cdist
from skimage import color, data, segmentation

ROOT = Path(__file__).resolve().parent
MAX_SIDE = 400  # longer image side of every sample
JPEG_QUALITY = 90


# --------------------------------------------------------------------------
# Generic helpers
# --------------------------------------------------------------------------


def rgb_to_bgr(rgb):
    """RGB (or grey) uint8 array -> 3-channel BGR array for OpenCV."""
    if rgb.ndim == 2:
        return cv2.cvtColor(rgb, cv2.COLOR_GRAY2BGR)
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)


def fit_size(bgr, mask, max_side=MAX_SIDE, upscale=1.0):
    """Resize image and mask together so the longer side is <= max_side.

    `upscale` enlarges small crops first.  The mask is resampled with area
    interpolation and thresholded at 50 %, i.e. each output pixel is
    foreground iff at least half of its footprint was foreground.
    """
    h, w = mask.shape
    scale = min(upscale, max_side / max(h, w))
    if scale == 1.0:
        return bgr, mask
    size = (round(w * scale), round(h * scale))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    small = cv2.resize(bgr, size, interpolation=interp)
    m = cv2.resize(mask.astype(np.float32), size, interpolation=interp)
    return small, m >= 0.5


def largest_component(mask):
    """Keep only the largest 8-connected foreground component."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if n <= 1:
        return mask
    return labels == 1 + np.argmax(stats[1:, cv2.CC_STAT_AREA])


def draw_strokes(gc_mask, strokes, label):
    """Burn hand-placed polylines [(points, thickness), ...] into a GrabCut mask."""
    for points, thickness in strokes:
        cv2.polylines(gc_mask, [np.array(points, np.int32)], False, label, thickness)


def run_grabcut(bgr, gc_mask, iterations=10):
    """Run cv2.grabCut from an initial label mask; return the foreground."""
    cv2.setRNGSeed(0)  # GrabCut's GMM initialisation uses k-means
    cv2.grabCut(
        bgr, gc_mask, None, np.zeros((1, 65)), np.zeros((1, 65)), iterations, cv2.GC_INIT_WITH_MASK
    )
    return np.isin(gc_mask, (cv2.GC_FGD, cv2.GC_PR_FGD))


def grabcut_outline(bgr, outlines, band, fg_strokes=(), bg_strokes=()):
    """GrabCut refinement of a hand-traced outline.

    The union of the `outlines` polygons is the rough object.  Pixels more
    than `band` px inside it are definite foreground, pixels more than `band`
    px outside are definite background; GrabCut decides the band in between.
    """
    rough = np.zeros(bgr.shape[:2], np.uint8)
    for poly in outlines:
        cv2.fillPoly(rough, [np.array(poly, np.int32)], 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * band + 1,) * 2)
    gc_mask = np.full(bgr.shape[:2], cv2.GC_BGD, np.uint8)
    gc_mask[cv2.dilate(rough, kernel) == 1] = cv2.GC_PR_BGD
    gc_mask[rough == 1] = cv2.GC_PR_FGD
    gc_mask[cv2.erode(rough, kernel) == 1] = cv2.GC_FGD
    draw_strokes(gc_mask, bg_strokes, cv2.GC_BGD)
    draw_strokes(gc_mask, fg_strokes, cv2.GC_FGD)
    return run_grabcut(bgr, gc_mask)


def grabcut_rect(bgr, rect, fg_strokes, bg_strokes):
    """GrabCut inside rect=(x0, y0, x1, y1) with hand-placed strokes."""
    x0, y0, x1, y1 = rect
    gc_mask = np.full(bgr.shape[:2], cv2.GC_BGD, np.uint8)
    gc_mask[y0:y1, x0:x1] = cv2.GC_PR_BGD
    draw_strokes(gc_mask, bg_strokes, cv2.GC_BGD)
    draw_strokes(gc_mask, fg_strokes, cv2.GC_FGD)
    return run_grabcut(bgr, gc_mask)


# --------------------------------------------------------------------------
# Salient samples: real photographs, masks from hand-traced outlines/strokes
# refined with GrabCut.  All coordinates are (x, y) pixels of the original
# skimage image, read off zoomed, gridded renderings of it.
# --------------------------------------------------------------------------


def sample_astronaut():
    """Eileen Collins in her suit, including the helmet she holds."""
    bgr = rgb_to_bgr(data.astronaut())
    outline = [
        (225, 14),
        (250, 17),
        (275, 28),
        (292, 45),
        (302, 70),
        (305, 100),
        (300, 115),
        (288, 125),
        (275, 130),
        (263, 135),
        (259, 150),
        (257, 165),
        (258, 172),
        (270, 177),
        (282, 185),
        (290, 195),
        (296, 210),
        (300, 225),
        (303, 236),
        (320, 238),
        (335, 248),
        (350, 262),
        (360, 290),
        (365, 330),
        (365, 345),
        (385, 344),
        (420, 345),
        (455, 358),
        (480, 380),
        (495, 410),
        (500, 450),
        (512, 455),
        (512, 512),
        (27, 512),
        (20, 440),
        (22, 400),
        (25, 350),
        (35, 300),
        (42, 280),
        (50, 260),
        (70, 240),
        (110, 215),
        (118, 195),
        (120, 180),
        (170, 150),
        (175, 135),
        (162, 120),
        (152, 100),
        (152, 75),
        (162, 50),
        (180, 30),
        (200, 18),
    ]
    mask = grabcut_outline(bgr, [outline], band=8)
    return bgr, ndi.binary_fill_holes(largest_component(mask))


def sample_coffee():
    """Espresso cup, saucer and spoon."""
    bgr = rgb_to_bgr(data.coffee())
    saucer = [
        (178, 71),
        (170, 74),
        (160, 79),
        (150, 83),
        (140, 87),
        (130, 91),
        (117, 100),
        (105, 110),
        (97, 120),
        (92, 130),
        (87, 140),
        (84, 150),
        (80, 170),
        (77, 190),
        (77, 220),
        (78, 240),
        (82, 260),
        (88, 280),
        (96, 298),
        (106, 307),
        (126, 324),
        (146, 341),
        (166, 354),
        (186, 366),
        (206, 376),
        (240, 384),
        (260, 388),
        (320, 388),
        (350, 385),
        (380, 378),
        (395, 372),
        (405, 362),
        (420, 350),
        (432, 340),
        (445, 330),
        (455, 320),
        (465, 300),
        (467, 290),
        (473, 270),
        (477, 250),
        (479, 240),
        (478, 220),
        (476, 200),
        (474, 190),
        (471, 180),
        (466, 170),
        (461, 160),
        (455, 150),
        (447, 140),
        (440, 130),
        (428, 120),
        (420, 110),
        (412, 105),
    ]
    cup = [
        (174, 105),
        (175, 90),
        (177, 80),
        (180, 70),
        (184, 60),
        (200, 47),
        (225, 30),
        (250, 21),
        (278, 17),
        (330, 26),
        (355, 35),
        (377, 50),
        (392, 70),
        (400, 85),
        (405, 100),
    ]
    spoon = [(398, 80), (404, 67), (412, 66), (420, 72), (421, 80), (418, 95), (413, 110)]
    mask = grabcut_outline(bgr, [saucer, cup, spoon], band=4)
    return bgr, ndi.binary_fill_holes(largest_component(mask))


def sample_chelsea():
    """Chelsea the cat (head and the visible part of the body)."""
    bgr = rgb_to_bgr(data.chelsea())
    outline = [
        (30, 0),
        (398, 0),
        (385, 30),
        (372, 55),
        (362, 80),
        (362, 110),
        (365, 140),
        (362, 170),
        (355, 200),
        (350, 240),
        (345, 270),
        (340, 299),
        (0, 299),
        (0, 125),
        (28, 110),
        (30, 60),
    ]
    mask = grabcut_outline(bgr, [outline], band=10)
    return bgr, ndi.binary_fill_holes(largest_component(mask))


def sample_rocket():
    """Falcon 9 on the pad (launch towers and pad excluded)."""
    bgr = rgb_to_bgr(data.rocket())
    outline = [
        (322, 127),
        (316, 132),
        (313, 138),
        (311, 148),
        (310, 160),
        (310, 175),
        (313, 180),
        (314, 182),
        (314, 300),
        (312, 310),
        (312, 405),
        (332, 405),
        (332, 310),
        (331, 300),
        (331, 182),
        (334, 178),
        (335, 160),
        (334, 148),
        (332, 138),
        (328, 131),
    ]
    mask = grabcut_outline(bgr, [outline], band=2)
    return bgr, ndi.binary_fill_holes(largest_component(mask))


def sample_cameraman():
    """The cameraman with his camera and tripod."""
    grey = data.camera()
    bgr = rgb_to_bgr(grey)
    # Person and camera: GrabCut in a rectangle with definite strokes.
    fg = [
        ([(220, 90), (220, 130), (150, 200), (60, 300), (40, 500)], 12),  # body
        ([(100, 300), (200, 270), (250, 230)], 10),  # arm
        ([(262, 150), (318, 150)], 8),
        ([(270, 175), (310, 175)], 6),  # camera
        ([(322, 190), (322, 205)], 4),
        ([(235, 150), (240, 170)], 6),  # glove, face
        ([(20, 350), (120, 420)], 12),
        ([(115, 480), (120, 505)], 6),  # coat, trousers
        ([(170, 158), (180, 200)], 5),
    ]  # shirt collar
    bg = [
        ([(0, 40), (340, 40)], 8),
        ([(330, 60), (330, 130)], 6),  # sky
        ([(20, 120), (90, 110)], 6),
        ([(200, 420), (210, 500)], 10),
        ([(340, 250), (340, 440)], 10),  # grass
        ([(244, 185), (270, 185)], 6),
        ([(246, 195), (270, 198)], 5),  # gaps at the chin
        ([(248, 205), (256, 225)], 5),
        ([(250, 230), (255, 242)], 3),
        ([(338, 190), (338, 245)], 6),
        ([(308, 238), (345, 238)], 4),
    ]  # right of the glove
    person = grabcut_rect(bgr, (0, 50, 345, 512), fg, bg)
    # Tripod: thin metal tubes on textured grass, drawn from measured edges.
    tripod = np.zeros(grey.shape, np.uint8)
    for start, end, thickness in [
        ((286, 330), (233, 512), 9),  # left leg
        ((310, 330), (405, 512), 6),  # right leg
        ((294, 200), (294, 487), 10),  # centre column
        ((305, 318), (332, 305), 5),  # pan handle
        ((300, 482), (385, 481), 3),
    ]:  # spreader bar
        cv2.line(tripod, start, end, 1, thickness)
    for poly in [
        [(280, 310), (310, 310), (310, 340), (280, 340)],  # head
        [(328, 300), (338, 300), (338, 308), (328, 308)],  # handle knob
        [
            (255, 468),
            (292, 478),
            (300, 482),
            (300, 488),  # spreader
            (248, 490),
            (250, 480),
        ],
    ]:
        cv2.fillPoly(tripod, [np.array(poly, np.int32)], 1)
    return bgr, largest_component(person | (tripod > 0))


# --------------------------------------------------------------------------
# Two objects and a tiny object: crops with threshold-based masks
# --------------------------------------------------------------------------


def sample_coins_two():
    """Two Greek coins cropped from `coins`, enlarged 2x."""
    crop = data.coins()[78:152, 238:384]
    _, fg = cv2.threshold(crop, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, disk)  # bridge dark relief lines
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, disk)  # drop background speckle
    fg = ndi.binary_fill_holes(fg)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(fg.astype(np.uint8))
    two = 1 + np.argsort(stats[1:, cv2.CC_STAT_AREA])[-2:]
    return fit_size(rgb_to_bgr(crop), np.isin(labels, two), upscale=2.0)


def sample_galaxy_tiny():
    """One small elliptical galaxy in a 300x300 crop of the Hubble deep field."""
    rgb = data.hubble_deep_field()[25:325, 668:968]
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    cx, cy, r = 150, 140, 20  # galaxy centre in the crop, search radius
    window = grey[cy - r : cy + r, cx - r : cx + r].astype(np.float64)
    # Foreground = pixels above the local sky level plus 30 % of the galaxy's
    # peak brightness over it (an isophote), connected to the galaxy centre.
    sky = np.median(window)
    fg = np.zeros(grey.shape, bool)
    fg[cy - r : cy + r, cx - r : cx + r] = window >= sky + 0.3 * (window.max() - sky)
    labels, _ = ndi.label(fg)
    mask = ndi.binary_fill_holes(labels == labels[cy, cx])
    return rgb_to_bgr(rgb), mask


# --------------------------------------------------------------------------
# Camouflaged samples: a shape cut from the same texture elsewhere and pasted
# back, so the ground truth is exact by construction.
# --------------------------------------------------------------------------


def blob_shape(size, seed, harmonics=5, roughness=0.18):
    """Random smooth star-shaped blob (Fourier-perturbed circle), bool mask."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(0, 2 * np.pi, 360, endpoint=False)
    radius = np.ones_like(theta)
    for k in range(2, harmonics + 1):
        radius += roughness / k * rng.normal() * np.cos(k * theta + rng.uniform(0, 2 * np.pi))
    radius *= 0.45 * size / radius.max()
    pts = np.stack([size / 2 + radius * np.cos(theta), size / 2 + radius * np.sin(theta)], 1)
    mask = np.zeros((size, size), np.uint8)
    cv2.fillPoly(mask, [np.round(pts).astype(np.int32)], 1)
    return mask > 0


def fish_shape():
    """Hand-drawn fish silhouette (body ellipse, tail, dorsal fin), bool mask."""
    mask = np.zeros((90, 170), np.uint8)
    cv2.ellipse(mask, (70, 45), (62, 28), 0, 0, 360, 1, -1)
    cv2.fillPoly(mask, [np.array([(118, 45), (166, 12), (155, 45), (166, 78)], np.int32)], 1)
    cv2.fillPoly(mask, [np.array([(50, 20), (78, 3), (95, 20)], np.int32)], 1)
    return mask > 0


def horse_shape(scale):
    """skimage's CC0 horse silhouette (True = horse here), resized."""
    horse = (~data.horse()).astype(np.float32)
    resized = cv2.resize(horse, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return resized >= 0.5


def paste_from_texture(texture, shape, dst_xy, src_xy, angle=0.0, offset=0):
    """Copy a `shape`-shaped piece of `texture` from src_xy to dst_xy.

    The source patch is rotated by `angle` degrees about its centre (cubic
    interpolation) and shifted by `offset` grey levels before pasting.
    Returns the composite and the exact ground-truth mask.
    """
    h, w = shape.shape
    sx, sy = src_xy
    rot = cv2.getRotationMatrix2D((sx + w / 2, sy + h / 2), angle, 1.0)
    rotated = cv2.warpAffine(
        texture, rot, texture.shape[::-1], flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REFLECT
    )
    patch = rotated[sy : sy + h, sx : sx + w].astype(np.int16) + offset
    out = texture.copy()
    dx, dy = dst_xy
    region = out[dy : dy + h, dx : dx + w]
    region[shape] = np.clip(patch, 0, 255).astype(np.uint8)[shape]
    gt = np.zeros(texture.shape, bool)
    gt[dy : dy + h, dx : dx + w] = shape
    return out, gt


def lattice_aligned_source(texture, dst_xy, size, min_shift=60):
    """Top-left corner elsewhere in a periodic texture that best matches the
    square of side `size` at dst_xy (normalised cross-correlation), so that
    a piece copied from there continues the pattern across its border."""
    dx, dy = dst_xy
    template = texture[dy : dy + size, dx : dx + size]
    score = cv2.matchTemplate(texture, template, cv2.TM_CCOEFF_NORMED)
    yy, xx = np.mgrid[: score.shape[0], : score.shape[1]]
    score[np.hypot(xx - dx, yy - dy) < min_shift] = -1  # not the trivial match
    sy, sx = np.unravel_index(np.argmax(score), score.shape)
    return int(sx), int(sy)


def sample_camo_grass_horse():
    """Horse-shaped piece of grass pasted onto the same grass."""
    texture = data.grass()
    shape = horse_shape(0.5)
    img, gt = paste_from_texture(
        texture, shape, dst_xy=(170, 200), src_xy=(30, 20), angle=8.0, offset=4
    )
    return rgb_to_bgr(img), gt


def sample_camo_gravel_blob():
    """Blob-shaped piece of gravel pasted onto the same gravel."""
    texture = data.gravel()
    shape = blob_shape(150, seed=7, roughness=0.35)
    img, gt = paste_from_texture(
        texture, shape, dst_xy=(260, 140), src_xy=(40, 320), angle=-15.0, offset=-3
    )
    return rgb_to_bgr(img), gt


def sample_camo_brick_fish():
    """Fish-shaped piece of brick wall copied from a pattern-aligned position."""
    texture = data.brick()
    shape = fish_shape()
    dst = (180, 250)
    src = lattice_aligned_source(texture, dst, size=max(shape.shape))
    img, gt = paste_from_texture(texture, shape, dst_xy=dst, src_xy=src)
    return rgb_to_bgr(img), gt


SAMPLES = {
    "astronaut": sample_astronaut,
    "coffee": sample_coffee,
    "chelsea": sample_chelsea,
    "rocket": sample_rocket,
    "cameraman": sample_cameraman,
    "coins_two": sample_coins_two,
    "galaxy_tiny": sample_galaxy_tiny,
    "camo_grass_horse": sample_camo_grass_horse,
    "camo_gravel_blob": sample_camo_gravel_blob,
    "camo_brick_fish": sample_camo_brick_fish,
}


# --------------------------------------------------------------------------
# Saliency models (none of them sees the ground truth)
# --------------------------------------------------------------------------


def normalise(sal):
    """Min-max scale a float map to uint8 0..255 (all-zero if constant)."""
    sal = sal.astype(np.float64)
    span = sal.max() - sal.min()
    if span == 0:
        return np.zeros(sal.shape, np.uint8)
    return np.round(255 * (sal - sal.min()) / span).astype(np.uint8)


def opencv_saliency(detector, bgr):
    """Run an OpenCV contrib static saliency detector, normalised to 0..255."""
    ok, sal = detector.computeSaliency(bgr)
    if not ok:
        raise RuntimeError(f"{type(detector).__name__} failed")
    return normalise(sal)


def model_sr(bgr):
    """Spectral residual (Hou & Zhang, CVPR 2007), OpenCV contrib."""
    return opencv_saliency(cv2.saliency.StaticSaliencySpectralResidual_create(), bgr)


def model_fg(bgr):
    """Fine-grained saliency (Montabone & Soto, IVC 2010), OpenCV contrib."""
    return opencv_saliency(cv2.saliency.StaticSaliencyFineGrained_create(), bgr)


def frequency_tuned(bgr):
    """Frequency-tuned saliency (Achanta et al., CVPR 2009) as float map:
    distance of the 5x5-binomial-blurred Lab image to the mean Lab colour."""
    lab = cv2.cvtColor(bgr.astype(np.float32) / 255, cv2.COLOR_BGR2Lab)
    blurred = cv2.GaussianBlur(lab, (5, 5), 0)  # kernel [1 4 6 4 1]/16
    return np.linalg.norm(blurred - lab.reshape(-1, 3).mean(0), axis=2)


def model_ft(bgr):
    """Frequency-tuned saliency map, 0..255."""
    return normalise(frequency_tuned(bgr))


def model_grabcut(bgr, margin=4):
    """GrabCut (Rother et al., SIGGRAPH 2004) initialised with the bounding
    box of the largest Otsu blob of the FT map, enlarged by 10 %."""
    ft = model_ft(bgr)
    _, blob = cv2.threshold(ft, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    ys, xs = np.nonzero(largest_component(blob))
    h, w = ft.shape
    pad_x, pad_y = 0.1 * (xs.max() - xs.min()) + 2, 0.1 * (ys.max() - ys.min()) + 2
    x0, x1 = int(max(margin, xs.min() - pad_x)), int(min(w - margin, xs.max() + pad_x))
    y0, y1 = int(max(margin, ys.min() - pad_y)), int(min(h - margin, ys.max() + pad_y))
    gc_mask = np.zeros((h, w), np.uint8)
    cv2.setRNGSeed(0)
    cv2.grabCut(
        bgr,
        gc_mask,
        (x0, y0, x1 - x0, y1 - y0),
        np.zeros((1, 65)),
        np.zeros((1, 65)),
        5,
        cv2.GC_INIT_WITH_RECT,
    )
    return np.where(np.isin(gc_mask, (cv2.GC_FGD, cv2.GC_PR_FGD)), 255, 0).astype(np.uint8)


def model_rc(bgr, n_segments=200, sigma_s2=0.4):
    """Region contrast (Cheng et al., CVPR 2011 / TPAMI 2015) on SLIC
    superpixels: S(k) = sum_i exp(-Ds(k,i)/sigma_s^2) * |r_i| * Dr(k,i) with
    Dr the Lab distance of mean colours, Ds the distance of centroids in
    image-normalised coordinates and |r_i| the superpixel's pixel count."""
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    labels = segmentation.slic(rgb, n_segments=n_segments, compactness=10, start_label=0)
    lab = color.rgb2lab(rgb)
    h, w = labels.shape
    flat = labels.ravel()
    n = flat.max() + 1
    size = np.bincount(flat, minlength=n).astype(np.float64)
    mean_lab = np.stack([np.bincount(flat, lab[..., c].ravel(), n) for c in range(3)], 1)
    ys, xs = np.mgrid[:h, :w]
    centroid = np.stack(
        [np.bincount(flat, xs.ravel() / w, n), np.bincount(flat, ys.ravel() / h, n)], 1
    )
    mean_lab /= size[:, None]
    centroid /= size[:, None]
    weight = np.exp(-cdist(centroid, centroid) / sigma_s2) * size[None, :]
    saliency = (weight * cdist(mean_lab, mean_lab)).sum(1)
    return normalise(saliency[labels])


def model_rw(bgr, fg_quantile=0.95, bg_quantile=0.30):
    """Random walker (Grady, TPAMI 2006) seeded from the FT map: the top 5 %
    of FT values are foreground seeds, the bottom 30 % background seeds; the
    output is the foreground probability (direct sparse solver, mode "bf")."""
    ft = frequency_tuned(bgr)
    seeds = np.zeros(ft.shape, np.int32)
    seeds[ft <= np.quantile(ft, bg_quantile)] = 1
    seeds[ft >= np.quantile(ft, fg_quantile)] = 2
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB).astype(np.float64) / 255
    prob = segmentation.random_walker(
        rgb, seeds, beta=130, mode="bf", channel_axis=-1, return_full_prob=True
    )
    return np.round(255 * np.clip(prob[1], 0, 1)).astype(np.uint8)


MODELS = {
    "SR": model_sr,
    "FG": model_fg,
    "FT": model_ft,
    "GrabCut": model_grabcut,
    "RC": model_rc,
    "RW": model_rw,
}


# --------------------------------------------------------------------------
# Degraded copies of the ground truth (sanity references for the metrics)
# --------------------------------------------------------------------------

DISK5 = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (11, 11))  # radius 5 px


def gt_noise(gt, name, sigma=40.0):
    """GT plus Gaussian noise (sigma in grey levels), seeded per sample."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    noisy = gt.astype(np.float64) + rng.normal(0.0, sigma, gt.shape)
    return np.clip(np.round(noisy), 0, 255).astype(np.uint8)


def gt_shift(gt, dx=6, dy=6):
    """GT translated by (dx, dy) px, uncovered area filled with background."""
    shift = np.float32([[1, 0, dx], [0, 1, dy]])
    return cv2.warpAffine(gt, shift, gt.shape[::-1], flags=cv2.INTER_NEAREST, borderValue=0)


DEGRADATIONS = {
    "GTblur": lambda gt, name: cv2.GaussianBlur(gt, (0, 0), 4.0),
    "GTerode": lambda gt, name: cv2.erode(gt, DISK5),
    "GTdilate": lambda gt, name: cv2.dilate(gt, DISK5),
    "GTnoise": gt_noise,
    "GTshift": lambda gt, name: gt_shift(gt),
}


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def write_png(path, grey):
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), grey, [cv2.IMWRITE_PNG_COMPRESSION, 9])


def main():
    for sub in ("Imgs", "GT", "Pred"):
        shutil.rmtree(ROOT / sub, ignore_errors=True)
        (ROOT / sub).mkdir()
    for name, make in SAMPLES.items():
        bgr, mask = fit_size(*make())
        jpg = ROOT / "Imgs" / f"{name}.jpg"
        cv2.imwrite(str(jpg), bgr, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        gt = np.where(mask, 255, 0).astype(np.uint8)
        write_png(ROOT / "GT" / f"{name}.png", gt)
        shown = cv2.imread(str(jpg))  # models see exactly the shipped JPEG
        for model, predict in MODELS.items():
            write_png(ROOT / "Pred" / model / f"{name}.png", predict(shown))
        for variant, degrade in DEGRADATIONS.items():
            write_png(ROOT / "Pred" / variant / f"{name}.png", degrade(gt, name))
        print(f"{name:18s} {bgr.shape[1]}x{bgr.shape[0]}  foreground {int(mask.sum())} px")


if __name__ == "__main__":
    main()
