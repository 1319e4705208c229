"""What a participant sees, as RGB arrays (pure numpy/OpenCV, shared by the voting window,
its screenshots and the tests).

* ``side_by_side``: each candidate map in grey, at its GT's size.
* ``overlay`` (as CamoHR showed its maps): the image, with the map laid over it in a
  saturated colour at opacity ``alpha`` × map value, so a confident map is clearly tinted
  and a soft one faintly.

References are the image and/or the GT (binarised, white on black), as the design asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fminspect.io.loading import fit_to, load_image, load_map, to_u8
from fminspect.ranking.design import Design, Item
from fminspect.ranking.schedule import Trial

OVERLAY_COLOUR = np.array([255, 40, 40], np.float32)  # red reads well on natural images


@dataclass(frozen=True, slots=True)
class Screen:
    """The pictures of one trial: references (label, RGB) and the two candidates."""

    references: tuple[tuple[str, np.ndarray], ...]
    left: np.ndarray
    right: np.ndarray


def _grey(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.repeat(to_u8(a)[..., None], 3, axis=2))


def candidate(
    path: str, shape: tuple[int, int], presentation: str, alpha: float, image: np.ndarray | None
) -> np.ndarray:
    """One candidate map as shown: grey, or overlaid on ``image``."""
    m, _ = fit_to(to_u8(load_map(path).array), shape)
    if presentation != "overlay" or image is None:
        return _grey(m)
    w = (alpha * m.astype(np.float32) / 255.0)[..., None]
    out = image.astype(np.float32) * (1 - w) + OVERLAY_COLOUR * w
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


class Presenter:
    """Builds (and caches) the pictures of a design's trials; paths may be remapped (packs)."""

    def __init__(self, design: Design, cache_size: int = 16) -> None:
        self.design = design
        self._cache: dict[str, np.ndarray] = {}
        self._order: list[str] = []
        self._size = cache_size

    def _get(self, key: str, make: Callable[[], np.ndarray]) -> np.ndarray:
        if key not in self._cache:
            self._cache[key] = make()
            self._order.append(key)
            while len(self._order) > self._size:
                self._cache.pop(self._order.pop(0), None)
        return self._cache[key]

    def _items(self, trial: Trial) -> tuple[str | None, str | None, Item, Item]:
        if trial.kind == "check":
            check = self.design.check(trial.group)
            group = self.design.group(check.group)
            items = {check.good.id: check.good, check.bad.id: check.bad}
        else:
            group = self.design.group(trial.group)
            items = {i.id: i for i in group.items}
        return group.gt, group.image, items[trial.left], items[trial.right]

    def screen(self, trial: Trial) -> Screen:
        """The pictures of ``trial`` (raises LoadError naming a file that cannot be read)."""
        d = self.design
        gt_path, image_path, left, right = self._items(trial)
        gt = self._get(f"gt:{gt_path}", lambda: to_u8(load_map(gt_path).array)) if gt_path else None
        image = (
            self._get(f"img:{image_path}", lambda: load_image(image_path)) if image_path else None
        )
        if gt is not None:
            shape = gt.shape[:2]
        elif image is not None:
            shape = image.shape[:2]
        else:
            shape = load_map(left.path).array.shape[:2]
        if image is not None and image.shape[:2] != shape:
            image, _ = fit_to(image, shape)
        refs: list[tuple[str, np.ndarray]] = []
        if d.show_image and image is not None:
            refs.append(("image", image))
        if d.show_gt and gt is not None:
            refs.append(("ground truth", _grey(np.where(gt > 128, 255, 0).astype(np.uint8))))

        def make(item: Item) -> np.ndarray:
            key = f"cand:{item.path}:{d.presentation}:{d.overlay_alpha}"
            return self._get(
                key, lambda: candidate(item.path, shape, d.presentation, d.overlay_alpha, image)
            )

        return Screen(tuple(refs), make(left), make(right))
