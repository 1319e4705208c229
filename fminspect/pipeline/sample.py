"""The per-sample pipeline: load → normalise → score → notes, written once.

Every command and the window go through these functions (``eval``, ``score``, ``meta``,
``rank``, the inspector, the dataset browser), so a missing image, a size mismatch, an
unreadable file or a degenerate GT is handled the same way everywhere:

* an unreadable GT: the sample is skipped (an error naming the file);
* an unreadable prediction: that model is skipped for that sample (an error naming the file);
  the others are scored;
* a prediction of another size than its GT: resized to the GT's size with the chosen
  interpolation (a note says from what size and how);
* 16-bit, colour, RGBA or palette files: converted (a note says how, see
  :mod:`fminspect.io.loading`);
* an image that is missing, unreadable or of another size than its GT: not used — the
  camouflage Context-measure (CCm) is not computed for that sample and a note on its records
  says why; the other measures do not need the image;
* a GT with no foreground pixel under the GT rule: scored (each measure defines its value
  for an empty GT), with a note, and a hint when the mask looks like a 0/1 mask saved as 8-bit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fminspect.io.discovery import Sample
from fminspect.io.limits import MAX_PIXELS
from fminspect.io.loading import fit_to, load_image, load_map
from fminspect.io.validation import LoadError, Problem, empty_gt_message
from fminspect.metrics import GroundTruth, Normalization, Params, SuiteResult, compute_suite
from fminspect.metrics import prepare_gt as _prepare_gt
from fminspect.metrics.registry import MEASURES, REGISTRY
from fminspect.pipeline.config import family_keys
from fminspect.pipeline.notes import Note, measure_notes
from fminspect.pipeline.store import Record


@dataclass(slots=True)
class LoadedSample:
    """A sample's arrays as read from disk, and what went wrong or was changed.

    ``notes`` maps ``'GT'``, ``'image'`` and each model to the notes on that file;
    ``problems`` holds the same as :class:`~fminspect.io.validation.Problem` s (with paths)
    plus the errors; ``unreadable`` maps a model whose map could not be read to why.
    """

    sample: Sample
    gt: np.ndarray | None = None
    image: np.ndarray | None = None
    preds: dict[str, np.ndarray] = field(default_factory=dict)
    notes: dict[str, tuple[Note, ...]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)
    #: why the GT could not be read ("" when it was): nothing is scored then
    gt_error: str = ""

    @property
    def dataset(self) -> str:
        """The dataset's name."""
        return self.sample.dataset

    @property
    def name(self) -> str:
        """The sample's name."""
        return self.sample.name

    @property
    def key(self) -> str:
        """Identifier of the sample (dataset/name)."""
        return f"{self.dataset}/{self.name}"

    @property
    def shape(self) -> tuple[int, int] | None:
        """(rows, cols) of the GT — or, when it could not be read, of the image and maps
        shown without it (:func:`load_sample`'s ``without_gt``); None if there is none."""
        shown = self.gt if self.gt is not None else self.image
        if shown is None and self.preds:
            shown = next(iter(self.preds.values()))
        return None if shown is None else (int(shown.shape[0]), int(shown.shape[1]))

    def _note(self, about: str, key: str, kind: str, message: str, path: Path) -> None:
        self.notes[key] = (*self.notes.get(key, ()), Note(about, kind, message))
        self.problems.append(
            Problem(
                path,
                message,
                "warning",
                self.dataset,
                "" if key in ("GT", "image") else key,
                self.name,
            )
        )


def load_sample(
    sample: Sample,
    interpolation: str = "bilinear",
    *,
    models: Iterable[str] | None = None,
    image: bool = True,
    max_pixels: int = MAX_PIXELS,
    without_gt: bool = False,
) -> LoadedSample:
    """Read a sample's GT, image (unless ``image=False``) and the maps of ``models`` (default:
    every model of the sample); see the module notes for what happens to bad files. A file
    whose header declares more than ``max_pixels`` pixels is refused before decoding.

    A GT that cannot be read leaves the sample unscored; with ``without_gt`` its image and
    maps are still read, to be looked at (the window): the maps at the image's size, or at
    the first map's when there is no image."""
    out = LoadedSample(sample)
    where = {"dataset": sample.dataset, "name": sample.name}
    try:
        gt = load_map(sample.gt, max_pixels=max_pixels)
    except LoadError as exc:
        out.problems.append(Problem(exc.path, exc.problem, "error", **where))
        out.gt_error = exc.problem
        if without_gt:
            _read_without_gt(out, models, image, max_pixels)
        return out
    _set_gt(out, gt.array, gt.notes)
    if image:
        if sample.image is None:
            _set_image(out, None)
        else:
            try:
                _set_image(out, load_image(sample.image, max_pixels=max_pixels))
            except LoadError as exc:
                message = f"{exc.problem}; {_image_keys()} not computed"
                out._note("image", "image", "image-unreadable", message, exc.path)
    for method in sample.preds if models is None else models:
        try:
            pred = load_map(sample.preds[method], max_pixels=max_pixels)
        except LoadError as exc:
            out.problems.append(Problem(exc.path, exc.problem, "error", method=method, **where))
            out.unreadable[method] = exc.problem
            continue
        _add_pred(out, method, pred.array, pred.notes, interpolation)
    return out


def _read_without_gt(
    out: LoadedSample, models: Iterable[str] | None, image: bool, max_pixels: int
) -> None:
    """The image and the maps of a sample whose GT cannot be read, for looking at them."""
    sample, shape = out.sample, None
    if image and sample.image is not None:
        try:
            out.image = load_image(sample.image, max_pixels=max_pixels)
            shape = (int(out.image.shape[0]), int(out.image.shape[1]))
        except LoadError as exc:
            out._note("image", "image", "image-unreadable", exc.problem, exc.path)
    for method in sample.preds if models is None else models:
        try:
            pred = load_map(sample.preds[method], max_pixels=max_pixels).array
        except LoadError as exc:
            out.unreadable[method] = exc.problem
            continue
        if shape is None:
            shape = (int(pred.shape[0]), int(pred.shape[1]))
        out.preds[method] = fit_to(pred, shape)[0]  # shown together, zoomed together


def sample_from_arrays(
    name: str,
    gt: np.ndarray,
    preds: Mapping[str, np.ndarray],
    *,
    image: np.ndarray | None = None,
    interpolation: str = "bilinear",
    dataset: str = "arrays",
) -> LoadedSample:
    """A :class:`LoadedSample` from arrays already in memory (a human-ranked group, a
    notebook), under the same rules as :func:`load_sample`: maps of another size are resized
    to the GT's with a note, an image of another size is not used."""
    where = Path(name)
    out = LoadedSample(Sample(dataset, name, where, where if image is not None else None, {}))
    _set_gt(out, gt, ())
    _set_image(out, image)
    for model, array in preds.items():
        out.sample.preds[model] = where / model
        _add_pred(out, model, array, (), interpolation)
    return out


def _set_gt(out: LoadedSample, gt: np.ndarray, notes: Iterable[str]) -> None:
    out.gt = gt
    for n in notes:
        out._note("GT", "GT", "conversion", n, out.sample.gt)


def _set_image(out: LoadedSample, img: np.ndarray | None) -> None:
    """Use ``img`` if it has the GT's size; otherwise say why the measures that need it
    (CCm) will not be computed."""
    shape = out.shape
    if img is None:
        message = f"no image for this GT, so {_image_keys()} cannot be computed"
        out.notes["image"] = (Note("image", "no-image", message),)
    elif img.shape[:2] != shape:
        assert shape is not None and out.sample.image is not None
        message = (
            f"image is {img.shape[1]}×{img.shape[0]} but the GT is {shape[1]}×{shape[0]}: "
            f"not shown, and {_image_keys()} not computed"
        )
        out._note("image", "image", "image-size", message, out.sample.image)
    else:
        out.image = img


def _image_keys() -> str:
    """The measures that need the image, as a note names them (``CCm``)."""
    return ", ".join(m.key for m in MEASURES if m.needs_image) or "no measure"


def _add_pred(
    out: LoadedSample, model: str, array: np.ndarray, notes: Iterable[str], interpolation: str
) -> None:
    path = Path(out.sample.preds[model])
    for n in notes:
        out._note("prediction", model, "conversion", n, path)
    assert out.shape is not None
    fitted, note = fit_to(array, out.shape, interpolation)
    if note:
        out._note("prediction", model, "resize", note, path)
    out.preds[model] = fitted


def prepare(
    loaded: LoadedSample, norm: Normalization
) -> tuple[GroundTruth | None, tuple[Note, ...]]:
    """The sample's GT prepared under ``norm`` (its distance transform, centroid, kernel and
    camouflage degree are then computed once for every model), and the notes on the GT: its
    conversions and, when it has no foreground under the GT rule, a note saying so."""
    if loaded.gt is None:
        return None, ()
    gt = _prepare_gt(loaded.gt, norm)
    notes = loaded.notes.get("GT", ())
    if gt.is_empty:
        notes = (*notes, Note("GT", "empty-gt", empty_gt_message(loaded.gt, norm.gt_rule)))
    return gt, notes


def score_model(
    loaded: LoadedSample,
    model: str,
    gt: GroundTruth,
    params: Params,
    *,
    keys: Sequence[str] | str | None = None,
    families: Sequence[str] | None = None,
) -> SuiteResult:
    """The measures behind ``keys`` (default: the default ones) and the ``families`` named
    of one model's map; the camouflage Context-measure only when the sample's image could be
    used."""
    return compute_suite(
        loaded.preds[model], gt, params, img=loaded.image, keys=keys, families=families
    )


def suite_notes(suite: SuiteResult) -> tuple[Note, ...]:
    """The notes of a scored pair: the normalisation's (e.g. a constant map not stretched),
    then every computed family's warnings, in the registry's order — once where a family's
    repeat another's (``Family.repeats_notes_of``: both Context-measure forms warn about the
    same GT)."""
    out = list(_pair_notes(suite))
    families = REGISTRY.families
    repeated = {
        f.repeats_notes_of for f in families.values() if f.repeats_notes_of and _has(suite, f.field)
    }
    for name in families:
        if name not in repeated:
            out += _family_notes(suite, name)
    return tuple(out)


def _has(suite: SuiteResult, field: str) -> bool:
    return getattr(suite, field, None) is not None


def _pair_notes(suite: SuiteResult) -> tuple[Note, ...]:
    return tuple(Note("input", "normalisation", n) for n in suite.pair.notes)


def _family_notes(suite: SuiteResult, family: str) -> tuple[Note, ...]:
    result = getattr(suite, family, None)
    return () if result is None else measure_notes(family, getattr(result, "warnings", ()))


def records(
    suite: SuiteResult,
    families: Iterable[str],
    *,
    gt_notes: Sequence[Note] = (),
    pred_notes: Sequence[Note] = (),
    image_notes: Sequence[Note] = (),
) -> dict[str, Record]:
    """One :class:`Record` per measure family of a scored model: its scores (NaN for CCm
    without an image), its curves and its notes — the GT's, the image's (with the CCm record
    only: no other measure uses the image), the prediction file's, the normalisation's and
    the family's own warnings."""
    scores = suite.scores()
    pair_notes = _pair_notes(suite)
    out = {}
    for fam in families:
        out[fam] = Record(
            {k: scores.get(k, float("nan")) for k in family_keys(fam)},
            suite.arrays(fam),
            (
                *gt_notes,
                *(image_notes if REGISTRY.families[fam].needs_image else ()),
                *pred_notes,
                *pair_notes,
                *_family_notes(suite, fam),
            ),
        )
    return out


#: Pixels above which :func:`score_sample` scores one measure family at a time (4 MP: a
#: 2000 × 2000 map). Below it, the families share their common work (the prepared pair,
#: the threshold sweep of the E/F/IoU families) at a peak of a few hundred MB; above it,
#: each family's intermediates are freed before the next. Measured on an 8000 × 8000 image
#: with two maps and every measure: 3.6 GB above the decoded inputs instead of 4.7 GB, in
#: 54 s instead of 49 s (docs/reliability.md, 'Limits').
LARGE_MAP = 4_000_000


def score_sample(
    loaded: LoadedSample,
    params: Params,
    todo: Mapping[str, Sequence[str]],
) -> dict[str, dict[str, Record]]:
    """Score the models of a loaded sample: ``todo`` maps a model to the measure families it
    needs; returns ``{model: {family: record}}`` for the models whose map could be read."""
    gt, gt_notes = prepare(loaded, params.norm)
    if gt is None:
        return {}
    image_notes = loaded.notes.get("image", ())
    # a large map is scored one measure family at a time, each family's full-size
    # intermediates freed before the next (see LARGE_MAP): the peak is then the largest
    # family's, not the sum of all of them
    one_by_one = gt.size > LARGE_MAP
    out: dict[str, dict[str, Record]] = {}
    for model, fams in todo.items():
        if model not in loaded.preds:
            continue
        for group in [[f] for f in fams] if one_by_one else [list(fams)]:
            suite = score_model(loaded, model, gt, params, families=group)
            out.setdefault(model, {}).update(
                records(
                    suite,
                    group,
                    gt_notes=gt_notes,
                    pred_notes=loaded.notes.get(model, ()),
                    image_notes=image_notes,
                )
            )
            del suite
    return out


@dataclass(frozen=True, slots=True)
class ScoredPair:
    """One prediction scored against its GT (:func:`score_files`)."""

    suite: SuiteResult
    notes: tuple[Note, ...]  # the GT's, the prediction's, then every measure's

    def scores(self) -> dict[str, float]:
        """Per-image scores under the stable keys of :data:`~fminspect.metrics.MEASURES`."""
        return self.suite.scores()


def score_files(
    pred: Path | str,
    gt: Path | str,
    *,
    image: Path | str | None = None,
    params: Params | None = None,
    interpolation: str = "bilinear",
    max_pixels: int = MAX_PIXELS,
    keys: Sequence[str] | str | None = None,
) -> ScoredPair:
    """Score one prediction file against its GT file (and image, for CCm), through the same
    pipeline as every command.

    Raises
    ------
    LoadError
        The GT or the prediction cannot be read, or the image given cannot be used (the
        message names the file and the problem).

    Examples
    --------
    >>> scored = score_files("pred.png", "gt.png")            # doctest: +SKIP
    >>> scored.scores()["Sm"], [str(n) for n in scored.notes]  # doctest: +SKIP
    (0.865..., [])
    """
    params = params or Params()
    files = Sample(
        "files", Path(gt).stem, Path(gt), Path(image) if image else None, {"prediction": Path(pred)}
    )
    loaded = load_sample(files, interpolation, image=image is not None, max_pixels=max_pixels)
    for p in loaded.problems:
        if p.severity == "error":
            raise LoadError(p.path, p.message)
    if image is not None:
        for n in loaded.notes.get("image", ()):
            raise LoadError(Path(image), n.message)
    prepared, gt_notes = prepare(loaded, params.norm)
    assert prepared is not None  # the GT was read
    suite = score_model(loaded, "prediction", prepared, params, keys=keys)
    return ScoredPair(suite, (*gt_notes, *loaded.notes.get("prediction", ()), *suite_notes(suite)))
