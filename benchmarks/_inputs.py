"""Benchmark inputs shared by the scripts in this folder (written to an .npz file)."""

from __future__ import annotations

import cv2
import numpy as np


def make_pair(size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A (pred, gt, rgb image) triple like METRICS §12: two objects (~24 % foreground), a
    prediction using all 256 grey levels, and a textured RGB image."""
    rng = np.random.default_rng(seed)
    s = size / 400
    gt = np.zeros((size, size), np.uint8)
    cv2.circle(gt, (int(150 * s), int(150 * s)), int(80 * s), 255, -1)
    cv2.rectangle(gt, (int(250 * s), int(250 * s)), (int(350 * s), int(380 * s)), 255, -1)
    soft = cv2.GaussianBlur(gt, (0, 0), 4 * s).astype(np.float64)
    pred = np.clip(soft * 0.8 + rng.normal(0, 40, gt.shape) + 20, 0, 255).astype(np.uint8)
    pred.flat[:256] = np.arange(256, dtype=np.uint8)  # every grey level present
    texture = cv2.resize(rng.random((size // 8, size // 8, 3)), (size, size)) * 160
    img = np.clip(texture + rng.normal(0, 20, (size, size, 3)) + (gt[..., None] > 0) * 30, 0, 255)
    return pred, gt, img.astype(np.uint8)


def write_inputs(path, sizes: list[int]) -> None:  # type: ignore[no-untyped-def]
    """Save a (pred, gt, img) triple per size in one .npz, read by _time_ours/_time_pysod."""
    import json

    arrays = {"sizes": np.array(json.dumps(sizes))}
    for s in sizes:
        arrays[f"pred_{s}"], arrays[f"gt_{s}"], arrays[f"img_{s}"] = make_pair(s)
    np.savez(path, **arrays)
