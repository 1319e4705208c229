"""Loading one sample (image, GT, every model's map) for the inspector, robustly.

Every file may be wrong; each problem becomes a :class:`Problem` and the rest loads. A
prediction of another size than its GT is resized (the note says how); a missing or
unreadable image is replaced by nothing (panels then show the maps alone).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fminspect.io.discovery import Sample
from fminspect.io.loading import fit_to, load_image, load_map
from fminspect.io.validation import LoadError, Problem, empty_gt_message, top_of_255


@dataclass(slots=True)
class LoadedSample:
    """A sample's arrays and what went wrong or was changed while reading them."""

    dataset: str
    name: str
    gt: np.ndarray | None
    image: np.ndarray | None
    preds: dict[str, np.ndarray] = field(default_factory=dict)
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # model → why its map failed

    @property
    def shape(self) -> tuple[int, int] | None:
        """(rows, cols) of the GT, or None if the GT could not be read."""
        return None if self.gt is None else (int(self.gt.shape[0]), int(self.gt.shape[1]))

    @property
    def key(self) -> str:
        """Identifier of the sample (dataset/name)."""
        return f"{self.dataset}/{self.name}"


def load_sample(sample: Sample, interpolation: str = "bilinear") -> LoadedSample:
    """Read a sample's GT, image and predictions (see the module notes)."""
    out = LoadedSample(sample.dataset, sample.name, None, None)
    where = {"dataset": sample.dataset, "name": sample.name}
    try:
        gt = load_map(sample.gt)
        out.gt = gt.array
        if gt.notes:
            out.notes["GT"] = gt.notes
            out.problems += [Problem(sample.gt, n, "warning", **where) for n in gt.notes]
        if top_of_255(gt.array) <= 128:  # nothing left by the default rule, GT > 128
            message = empty_gt_message(gt.array)
            out.notes["GT"] = (*out.notes.get("GT", ()), message)  # the GT panel shows ⚠
            out.problems.append(Problem(sample.gt, message, "warning", **where))
    except LoadError as exc:
        out.problems.append(Problem(exc.path, exc.problem, "error", **where))
        return out
    shape = out.shape
    if sample.image is not None:
        try:
            img = load_image(sample.image)
            if img.shape[:2] != shape:
                out.problems.append(
                    Problem(
                        sample.image,
                        f"image is {img.shape[1]}×{img.shape[0]} but the GT is "
                        f"{shape[1]}×{shape[0]}; the image is not shown",
                        "warning",
                        **where,
                    )
                )
            else:
                out.image = img
        except LoadError as exc:
            out.problems.append(Problem(exc.path, exc.problem, "warning", **where))
    for method, path in sample.preds.items():
        try:
            pred = load_map(path)
        except LoadError as exc:
            out.problems.append(Problem(exc.path, exc.problem, "error", method=method, **where))
            out.unreadable[method] = exc.problem
            continue
        array, note = fit_to(pred.array, shape, interpolation)
        notes = list(pred.notes) + ([note] if note else [])
        out.problems += [Problem(Path(path), n, "warning", method=method, **where) for n in notes]
        out.preds[method] = array
        if notes:
            out.notes[method] = tuple(notes)
    return out


def single_sample(gt: Path, preds: list[Path], image: Path | None = None) -> Sample:
    """A :class:`Sample` from explicit files (``fminspect --gt G --pred A --pred B``).

    Models are named after their files; repeated names get their folder as a prefix.
    """
    names: dict[str, Path] = {}
    for p in preds:
        name = p.stem
        if name in names:
            name = f"{p.parent.name}/{p.stem}"
        names[name] = p
    return Sample("files", gt.stem, gt, image, names)
