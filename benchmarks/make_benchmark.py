"""Write a benchmark-sized dataset: N images × M methods, as a real COD/SOD benchmark is laid out.

    python benchmarks/make_benchmark.py OUT [--images 1000] [--methods 20] [--jobs 2]
                                            [--names cod10k|plain] [--size 400x550]

``OUT/{Imgs,GT,Pred/<method>}``: JPEG images, PNG GTs (one to three objects of varied shape
on a textured background that partly imitates the object, as camouflaged scenes do) and one
PNG map per method. Sizes vary by up to ±10 % around ``--size`` (rows×cols), as in COD10K,
and every 50th map of the first method is saved at half size (a real benchmark's maps are
not all at the GT's size). Methods differ in quality (blur, shift, noise, missed parts,
false alarms) with per-image variation, so that their ranking flips on some images.

``--names cod10k`` gives COD10K-style names (``COD10K-CAM-1-Aquatic-3-Crab-12``), which sort
wrongly as strings; ``plain`` gives ``img_00000``… Deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np

CLASSES = ("Aquatic-3-Crab", "Terrestrial-23-Cat", "Flying-9-Bird", "Amphibian-1-Frog")


def sample_names(n: int, style: str) -> list[str]:
    """``n`` distinct sample names in generation order."""
    if style == "plain":
        return [f"img_{i:05d}" for i in range(n)]
    per = -(-n // len(CLASSES))
    return [f"COD10K-CAM-1-{CLASSES[i // per]}-{i % per + 1}" for i in range(n)]


def method_names(m: int) -> list[str]:
    """Method names like a paper's comparison table (long names, as people write them)."""
    stems = ("SINet", "PFNet", "ZoomNet", "FEDER", "HitNet", "FSPNet", "BSA-Net", "SegMaR")
    return [
        f"{stems[j % len(stems)]}{'-v' + str(j // len(stems) + 1) if j >= 8 else ''}"
        for j in range(m)
    ]


def _gt(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    gt = np.zeros((h, w), np.uint8)
    for _ in range(int(rng.integers(1, 4))):
        cx, cy = int(rng.integers(w // 6, 5 * w // 6)), int(rng.integers(h // 6, 5 * h // 6))
        a, b = int(rng.integers(h // 12, h // 4)), int(rng.integers(h // 14, h // 5))
        if rng.random() < 0.6:
            cv2.ellipse(gt, (cx, cy), (a, b), float(rng.uniform(0, 180)), 0, 360, 255, -1)
        else:
            pts = np.array(
                [
                    (
                        cx + a * np.cos(t) * rng.uniform(0.5, 1.2),
                        cy + b * np.sin(t) * rng.uniform(0.5, 1.2),
                    )
                    for t in np.linspace(0, 2 * np.pi, 9)[:-1]
                ],
                np.int32,
            )
            cv2.fillPoly(gt, [pts], 255)
    return gt


def _smooth_noise(rng: np.random.Generator, h: int, w: int, cell: int) -> np.ndarray:
    small = rng.random((max(1, h // cell), max(1, w // cell)))
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _pred(rng: np.random.Generator, gt: np.ndarray, quality: float) -> np.ndarray:
    h, w = gt.shape
    q = float(np.clip(quality + rng.normal(0, 0.12), 0.05, 0.98))
    base = gt.astype(np.float64) / 255
    shift = round((1 - q) * 12)
    if shift:
        m = np.float32(
            [[1, 0, rng.integers(-shift, shift + 1)], [0, 1, rng.integers(-shift, shift + 1)]]
        )
        base = cv2.warpAffine(base, m, (w, h))
    k = int(rng.integers(1, 2 + int((1 - q) * 10)))
    base = (cv2.erode if rng.random() < 0.5 else cv2.dilate)(base, np.ones((k, k), np.uint8))
    if rng.random() > q:  # a missed part
        y, x = int(rng.integers(0, h)), int(rng.integers(0, w))
        cv2.circle(base, (x, y), int(rng.integers(h // 10, h // 4)), 0, -1)
    out = cv2.GaussianBlur(base, (0, 0), 1 + (1 - q) * 8)
    out = q * out + (1 - q) * 0.7 * _smooth_noise(rng, h, w, 24) ** 2
    return np.clip(out * 255, 0, 255).astype(np.uint8)


def _write(path: Path, array: np.ndarray, params: list[int] | None = None) -> None:
    ok, buf = cv2.imencode(path.suffix, array, params or [])
    if not ok:
        raise OSError(f"cannot encode {path}")
    path.write_bytes(buf.tobytes())


def _one(args: tuple[Path, int, str, int, tuple[int, int], list[str], int]) -> None:
    root, i, name, seed, (h0, w0), methods, _ = args
    rng = np.random.default_rng([seed, i])
    h = int(h0 * rng.uniform(0.9, 1.1))
    w = int(w0 * rng.uniform(0.9, 1.1))
    gt = _gt(rng, h, w)
    tex = _smooth_noise(rng, h, w, 6)[..., None] * np.array([90, 120, 70]) + 60
    obj = _smooth_noise(rng, h, w, 5)[..., None] * np.array([80, 110, 80]) + 70
    img = np.where(gt[..., None] > 128, obj, tex) + rng.normal(0, 8, (h, w, 3))
    _write(
        root / "Imgs" / f"{name}.jpg",
        np.clip(img, 0, 255).astype(np.uint8),
        [cv2.IMWRITE_JPEG_QUALITY, 85],
    )
    _write(root / "GT" / f"{name}.png", gt, [cv2.IMWRITE_PNG_COMPRESSION, 1])
    n = len(methods)
    for j, m in enumerate(methods):
        quality = 0.9 - 0.6 * j / max(1, n - 1)
        pred = _pred(np.random.default_rng([seed, i, j]), gt, quality)
        if j == 0 and i % 50 == 49:
            pred = cv2.resize(pred, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
        _write(root / "Pred" / m / f"{name}.png", pred, [cv2.IMWRITE_PNG_COMPRESSION, 1])


def make_benchmark(
    root: Path,
    *,
    images: int = 1000,
    methods: int = 20,
    size: tuple[int, int] = (400, 550),
    names: str = "cod10k",
    seed: int = 0,
    jobs: int = 2,
) -> Path:
    """Write the dataset (see the module notes); returns ``root``."""
    root = Path(root)
    mnames = method_names(methods)
    for sub in ("Imgs", "GT", *(f"Pred/{m}" for m in mnames)):
        (root / sub).mkdir(parents=True, exist_ok=True)
    todo = [
        (root, i, n, seed, size, mnames, methods) for i, n in enumerate(sample_names(images, names))
    ]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(_one, todo, chunksize=8))
    else:
        for t in todo:
            _one(t)
    return root


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", type=Path)
    ap.add_argument("--images", type=int, default=1000)
    ap.add_argument("--methods", type=int, default=20)
    ap.add_argument("--size", default="400x550", help="rows×cols (default 400x550)")
    ap.add_argument("--names", choices=("cod10k", "plain"), default="cod10k")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    h, w = (int(v) for v in args.size.lower().split("x"))
    t = time.perf_counter()
    make_benchmark(
        args.out,
        images=args.images,
        methods=args.methods,
        size=(h, w),
        names=args.names,
        seed=args.seed,
        jobs=args.jobs,
    )
    print(
        f"wrote {args.images} images × {args.methods} methods to {args.out} "
        f"in {time.perf_counter() - t:.1f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
