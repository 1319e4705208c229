"""Synthetic datasets on disk for the io/batch tests and benchmarks/bench_eval.py."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from tests.reference.cases import random_gt, random_pred


def write_png(path: Path, array: np.ndarray) -> None:
    """Write with imencode + write_bytes (works for non-ASCII paths)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ok, buf = cv2.imencode(path.suffix or ".png", array)
    assert ok
    path.write_bytes(buf.tobytes())


def make_dataset(
    root: Path,
    *,
    n_images: int = 6,
    size: tuple[int, int] = (48, 64),
    methods: tuple[str, ...] = ("MethodA", "MethodB"),
    layout: str = "flat",
    dataset: str = "DS",
    with_images: bool = True,
    seed: int = 0,
    missing: dict[str, int] | None = None,
) -> Path:
    """Write a dataset in one of the layouts fminspect discovers.

    ``layout``: ``'flat'`` (ROOT/{Imgs,GT,Pred/<m>}), ``'nested'``
    (ROOT/{GT/<ds>, Imgs/<ds>, Pred/<m>/<ds>}) or ``'multi'`` (ROOT/<ds>/{Imgs,GT,Pred/<m>}).
    ``missing`` drops the last k predictions of a method.
    """
    rng = np.random.default_rng(seed)
    h, w = size
    for i in range(n_images):
        name = f"img{i + 1}"
        gt = random_gt(rng, h, w)
        if not gt.any():
            gt[h // 4 : h // 2, w // 4 : w // 2] = 255
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        img[gt > 128] //= 2
        if layout == "flat":
            gt_path, img_path = root / "GT" / f"{name}.png", root / "Imgs" / f"{name}.jpg"
        elif layout == "nested":
            gt_path, img_path = (
                root / "GT" / dataset / f"{name}.png",
                root / "Imgs" / dataset / f"{name}.jpg",
            )
        else:
            gt_path, img_path = (
                root / dataset / "GT" / f"{name}.png",
                root / dataset / "Imgs" / f"{name}.jpg",
            )
        write_png(gt_path, gt)
        if with_images:
            write_png(img_path, img)
        for j, m in enumerate(methods):
            if missing and i >= n_images - missing.get(m, 0):
                continue
            pred = random_pred(np.random.default_rng(seed * 1000 + i * 10 + j), gt)
            if layout == "flat":
                p = root / "Pred" / m / f"{name}.png"
            elif layout == "nested":
                p = root / "Pred" / m / dataset / f"{name}.png"
            else:
                p = root / dataset / "Pred" / m / f"{name}.png"
            write_png(p, pred)
    return root
