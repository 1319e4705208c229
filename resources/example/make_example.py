"""Regenerate the example pair in this folder (run from the repository root).

GT: scikit-image's ``horse`` silhouette (CC0; True = background in the original, inverted
here). Prediction: the GT degraded by a one-pass algorithm nobody tuned for it — a Gaussian
blur, a 6-pixel shift, a smooth low-frequency error field and sensor-like noise — so that
every measure lands in its informative middle range.
"""

from pathlib import Path

import cv2
import numpy as np
from skimage import data

HERE = Path(__file__).parent


def main() -> None:
    gt = (~data.horse()).astype(np.uint8) * 255
    rng = np.random.default_rng(2026)
    h, w = gt.shape
    shifted = np.roll(gt, (4, 6), axis=(0, 1)).astype(np.float64)
    blurred = cv2.GaussianBlur(shifted, (0, 0), 5)
    field = cv2.resize(rng.random((5, 6)), (w, h), interpolation=cv2.INTER_CUBIC) * 90 - 30
    pred = np.clip(blurred * 0.85 + field + rng.normal(0, 12, (h, w)), 0, 255).astype(np.uint8)
    cv2.imwrite(str(HERE / "horse_gt.png"), gt)
    cv2.imwrite(str(HERE / "horse_pred.png"), pred)


if __name__ == "__main__":
    main()
