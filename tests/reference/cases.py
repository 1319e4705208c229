"""Seeded random and edge-case (prediction, GT) pairs for parity tests.

Every case is a dict ``{"id", "pred", "gt", "normalize"}``: uint8 maps for
``normalize=True`` (the usual path), or a float prediction in [0, 1] with a bool GT for
``normalize=False`` (pysodmetrics' pre-normalised path, which fminspect takes for float/bool
inputs).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np


def random_gt(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A GT with 0–4 objects of varied shapes, some touching the border; soft edges sometimes."""
    gt = np.zeros((h, w), np.uint8)
    for _ in range(int(rng.integers(0, 5))):
        kind = rng.integers(0, 5)
        cx, cy = int(rng.integers(-w // 8, w + w // 8)), int(rng.integers(-h // 8, h + h // 8))
        size = int(rng.integers(1, max(2, min(h, w) // 2)))
        if kind == 0:
            cv2.circle(gt, (cx, cy), size, 255, -1)
        elif kind == 1:
            cv2.rectangle(gt, (cx, cy), (cx + size, cy + int(rng.integers(1, size + 2))), 255, -1)
        elif kind == 2:
            pts = rng.integers(0, [w, h], size=(int(rng.integers(3, 8)), 2)).astype(np.int32)
            cv2.fillPoly(gt, [pts], 255)
        elif kind == 3:
            cv2.ellipse(
                gt, (cx, cy), (size, max(1, size // 3)), float(rng.uniform(0, 180)), 0, 360, 255, -1
            )
        else:  # thin structure
            cv2.line(
                gt,
                (cx, cy),
                (int(rng.integers(0, w)), int(rng.integers(0, h))),
                255,
                int(rng.integers(1, 4)),
            )
    if rng.random() < 0.2:  # anti-aliased / soft GT with values around 128
        gt = cv2.GaussianBlur(gt, (0, 0), float(rng.uniform(0.5, 2)))
    return gt


def random_pred(rng: np.random.Generator, gt: np.ndarray) -> np.ndarray:
    """A plausible or adversarial prediction for ``gt``."""
    h, w = gt.shape
    kind = rng.integers(0, 8)
    base = gt.astype(np.float64)
    if kind == 0:  # blurred, noisy version of the GT
        out = cv2.GaussianBlur(base, (0, 0), float(rng.uniform(0.5, 6)))
        out += rng.normal(0, rng.uniform(0, 60), (h, w))
    elif kind == 1:  # shifted and scaled
        m = np.float32([[1, 0, rng.integers(-8, 9)], [0, 1, rng.integers(-8, 9)]])
        out = cv2.warpAffine(base, m, (w, h)) * rng.uniform(0.3, 1)
    elif kind == 2:  # smooth random field
        out = cv2.resize(rng.random((max(1, h // 8), max(1, w // 8))), (w, h)) * 255
    elif kind == 3:  # uniform noise
        out = rng.random((h, w)) * 255
    elif kind == 4:  # low-contrast map (exercises the min–max stretch)
        lo = rng.uniform(0, 120)
        out = lo + cv2.GaussianBlur(base, (0, 0), 2.0) / 255 * rng.uniform(5, 100)
    elif kind == 5:  # binary map
        out = (cv2.GaussianBlur(base, (0, 0), 3) > rng.uniform(30, 220)) * 255.0
    elif kind == 6:  # eroded / dilated GT
        k = np.ones((int(rng.integers(2, 6)),) * 2, np.uint8)
        op = cv2.erode if rng.random() < 0.5 else cv2.dilate
        out = op(gt, k).astype(np.float64)
    else:  # few grey levels
        out = np.round(rng.random((h, w)) * 3) * 85 * (rng.random() < 0.5) + base * 0.5
    return np.clip(out, 0, 255).astype(np.uint8)


def random_cases(
    n: int, seed: int, *, min_size: int = 2, max_size: int = 160
) -> list[dict[str, Any]]:
    """``n`` random pairs of varied sizes; about 10% take the float/bool path."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(n):
        h, w = (int(v) for v in rng.integers(min_size, max_size, 2))
        if rng.random() < 0.05:
            h = 1 if rng.random() < 0.5 else h
            w = 1 if h != 1 else w
        gt = random_gt(rng, h, w)
        pred = random_pred(rng, gt)
        case = {"id": f"random-{seed}-{i}-{h}x{w}", "pred": pred, "gt": gt, "normalize": True}
        if rng.random() < 0.1:
            case.update(pred=pred / 255.0, gt=gt > 128, normalize=False)
        cases.append(case)
    return cases


def edge_cases() -> list[dict[str, Any]]:
    """METRICS §15 and the issues' edge cases, each with a descriptive id."""
    h, w = 64, 64
    z = np.zeros((h, w), np.uint8)
    full = np.full((h, w), 255, np.uint8)
    blob = z.copy()
    blob[20:40, 10:50] = 255
    soft = cv2.GaussianBlur(blob, (0, 0), 3)
    out: list[tuple[str, np.ndarray, np.ndarray]] = []
    for gname, g in (("empty", z), ("full", full), ("blob", blob)):
        for pname, p in (
            ("zeros", z),
            ("ones", full),
            ("const128", np.full((h, w), 128, np.uint8)),
            ("soft", soft),
            ("const1", np.full((h, w), 1, np.uint8)),
        ):
            out.append((f"gt-{gname}/pred-{pname}", p, g))
    one = z.copy()
    one[31, 17] = 255
    out.append(("one-pixel-gt/soft", soft, one))
    out.append(("one-pixel-gt/exact", one.copy(), one))
    out.append(
        (
            "one-pixel-gt/corner",
            soft,
            np.pad(np.full((1, 1), 255, np.uint8), ((0, h - 1), (0, w - 1))),
        )
    )
    last_col = z.copy()
    last_col[10:30, -1] = 255
    out.append(("gt-last-column", soft, last_col))
    last_row = z.copy()
    last_row[-1, 5:40] = 255
    out.append(("gt-last-row", soft, last_row))
    corner = z.copy()
    corner[-1, -1] = 255
    out.append(("gt-bottom-right-pixel", soft, corner))
    out.append(("gt-exactly-128", soft, np.where(blob > 0, 128, 0).astype(np.uint8)))
    out.append(("gt-129", soft, np.where(blob > 0, 129, 0).astype(np.uint8)))
    out.append(("pred-range-0-100", (soft / 255 * 100).astype(np.uint8), blob))
    out.append(("pred-range-10-240", (10 + soft / 255 * 230).astype(np.uint8), blob))
    out.append(("pred-equals-gt", blob.copy(), blob))
    out.append(("pred-inverse", 255 - blob, blob))
    rng = np.random.default_rng(7)
    out.append(
        (
            "pred-all-256-levels",
            rng.permutation(np.arange(h * w) % 256).reshape(h, w).astype(np.uint8),
            blob,
        )
    )
    # degenerate shapes
    for shape in ((1, 37), (37, 1), (1, 1), (2, 2), (3, 5), (5, 3)):
        g = np.zeros(shape, np.uint8)
        g.flat[len(g.flat) // 2] = 255
        p = (np.arange(np.prod(shape)).reshape(shape) * 37 % 256).astype(np.uint8)
        out.append((f"shape-{shape[0]}x{shape[1]}", p, g))
        out.append((f"shape-{shape[0]}x{shape[1]}-emptygt", p, np.zeros(shape, np.uint8)))
    # odd sizes with thin structures
    thin = np.zeros((33, 47), np.uint8)
    thin[16, :] = 255
    out.append(("thin-row-line", cv2.GaussianBlur(thin, (0, 0), 1), thin))
    diag = np.eye(40, dtype=np.uint8) * 255
    out.append(("diagonal-line", cv2.GaussianBlur(diag, (0, 0), 1), diag))
    cases = [{"id": cid, "pred": p, "gt": g, "normalize": True} for cid, p, g in out]
    # the float/bool path
    for cid, p, g in out[:6]:
        cases.append({"id": f"float/{cid}", "pred": p / 255.0, "gt": g > 128, "normalize": False})
    return cases
