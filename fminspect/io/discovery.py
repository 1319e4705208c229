"""Finding datasets on disk: layouts, name matching and coverage.

Layouts recognised (ECOSYSTEM §1.6), tried in this order by :func:`discover`:

1. **flat** — ``ROOT/{Imgs|Image|Images|img|RGB}/`` + ``ROOT/{GT|Mask|Masks|gt}/`` +
   ``ROOT/{Pred|Preds|Predictions|Results}/<method>/``: one dataset named after ROOT;
2. **several datasets** — ``ROOT/<dataset>/`` each laid out as in 1; predictions inside each
   dataset, or in ``ROOT/{Pred|…}/<method>/<dataset>/``;
3. **nested** (Evaluate-SOD, the MATLAB one-key toolbox) — ``ROOT/{GT|…}/<dataset>/`` (files
   directly, or a ``GT|Mask`` subfolder) with ``ROOT/{Pred|…}/<method>/<dataset>/`` and
   optionally ``ROOT/{Imgs|…}/<dataset>/``;
4. **PySODEvalToolkit JSON configs** — :func:`from_toolkit_configs`.

**Grouped** (``discover(root, grouped=True)``: co-SOD groups, video sequences, as CoCA,
CoSal2015, CoSOD3k and eval-co-sod lay them out) — in any of layouts 1–3, each GT, image and
method folder holds one sub-folder per group instead of the maps: ``GT/<group>/x.png`` with
``Pred/<method>/<group>/x.png``. A sample is then called ``<group>/<name>``, and
``fminspect eval --groups folders`` takes its group from that name.

Matching: a file's *key* is its name without extension, minus the folder's prefix and
suffix (``abc_sal.png`` ↔ ``abc.png`` with suffix ``_sal``); extensions are compared
case-insensitively; when one folder holds the same key twice (``a.png`` and ``a.jpg``) the
first of PNG, BMP, TIFF, WebP, JPEG is used and the other is reported. Samples are listed in
natural order (``img2`` before ``img10``).

Coverage (:class:`Coverage`) records, per method, which GT samples have a prediction
(matched), which do not (missing) and which predictions have no GT (extra). A method that
misses samples is flagged in every output; it is never silently evaluated on a subset.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fminspect.io.limits import read_text
from fminspect.io.validation import Problem

IMAGE_EXTENSIONS = (".png", ".bmp", ".tif", ".tiff", ".webp", ".jpg", ".jpeg")
IMAGE_DIRS = ("imgs", "image", "images", "img", "rgb", "im")
GT_DIRS = ("gt", "mask", "masks", "gts", "gt_object", "groundtruth", "ground_truth")
PRED_DIRS = ("pred", "preds", "prediction", "predictions", "results", "maps", "salmaps")


def natural_key(text: str) -> tuple[object, ...]:
    """Sort key that orders embedded numbers numerically (``img2`` < ``img10``)."""
    return tuple(int(t) if t.isdigit() else t.casefold() for t in re.split(r"(\d+)", text))


@dataclass(frozen=True, slots=True)
class FolderSpec:
    """A folder of maps and how its file names map to sample keys."""

    path: Path
    prefix: str = ""
    suffix: str = ""
    #: the maps lie in one sub-folder per group (keys ``<group>/<name>``)
    grouped: bool = False

    def as_dict(self) -> dict[str, object]:
        """Plain-JSON form."""
        out: dict[str, object] = {
            "path": str(self.path),
            "prefix": self.prefix,
            "suffix": self.suffix,
        }
        if self.grouped:
            out["grouped"] = True
        return out


@dataclass(slots=True)
class Coverage:
    """Which GT samples a method covers."""

    method: str
    matched: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    #: samples whose prediction exists but could not be evaluated (unreadable, invalid);
    #: filled in by the batch runner, not by discovery
    failed: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every GT sample has a prediction that was evaluated."""
        return not self.missing and not self.failed

    @property
    def label(self) -> str:
        """``'187/200'``: evaluated (or matched) of all GT samples, with a warning sign when
        incomplete."""
        total = len(self.matched) + len(self.missing) + len(self.failed)
        return f"{len(self.matched)}/{total}" + ("" if self.complete else " ⚠")

    def as_dict(self) -> dict[str, object]:
        """Plain-JSON form."""
        return {
            "method": self.method,
            "matched": len(self.matched),
            "missing": self.missing,
            "failed": self.failed,
            "extra": self.extra,
            "complete": self.complete,
            "label": self.label,
        }


@dataclass(frozen=True, slots=True)
class Sample:
    """One image of a dataset: its GT, optional image and every method's prediction."""

    dataset: str
    name: str
    gt: Path
    image: Path | None
    preds: dict[str, Path]


@dataclass(slots=True)
class Dataset:
    """A discovered dataset."""

    name: str
    gt: FolderSpec
    image: FolderSpec | None
    methods: dict[str, FolderSpec]
    samples: list[Sample] = field(default_factory=list)
    coverage: dict[str, Coverage] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    layout: str = ""

    @property
    def method_names(self) -> list[str]:
        """Methods in natural order."""
        return sorted(self.methods, key=natural_key)

    def sample(self, name: str) -> Sample:
        """The sample called ``name``."""
        for s in self.samples:
            if s.name == name:
                return s
        raise KeyError(f"{self.name} has no sample {name!r}")


_PREFERENCE = {ext: i for i, ext in enumerate(IMAGE_EXTENSIONS)}


def sample_name(text: str) -> str:
    """A sample's name as a user may type it: the name itself or its file's name
    (``COD10K-CAM-1-Aquatic-3-Crab-10.png`` → ``COD10K-CAM-1-Aquatic-3-Crab-10``; in a
    dataset of groups, ``group/name.png`` → ``group/name``)."""
    stem, dot, ext = text.strip().rpartition(".")
    return stem if dot and stem and f".{ext.lower()}" in _PREFERENCE else text.strip()


def list_maps(
    spec: FolderSpec, dataset: str = "", method: str = ""
) -> tuple[dict[str, Path], list[Problem]]:
    """Map sample keys to files in a folder (see the module notes on matching); in a grouped
    folder, the keys of every group's sub-folder as ``<group>/<key>``."""
    if spec.grouped:
        return _list_grouped(spec, dataset, method)
    problems: list[Problem] = []
    if not spec.path.is_dir():
        return {}, [Problem(spec.path, "folder not found", "error", dataset, method)]
    found: dict[str, Path] = {}
    undecodable: list[str] = []
    try:
        with os.scandir(spec.path) as entries:  # file types without a stat per file
            files = [e.name for e in entries if e.is_file()]
    except OSError as exc:  # an unreadable folder: named, and the other folders go on
        why = f"folder cannot be read ({exc.strerror or exc})"
        return {}, [Problem(spec.path, why, "error", dataset, method)]
    for name in files:
        stem, dot, ext = name.rpartition(".")
        if not dot or not stem or f".{ext.lower()}" not in _PREFERENCE:
            continue
        path = spec.path / name
        if spec.prefix and not stem.startswith(spec.prefix):
            continue
        if spec.suffix and not stem.endswith(spec.suffix):
            continue
        key = stem[len(spec.prefix) : len(stem) - len(spec.suffix) if spec.suffix else None]
        if not key.isprintable() or _has_surrogates(key):
            key = printable_name(key)
            undecodable.append(key)
        if key in found:
            keep, drop = sorted((found[key], path), key=lambda p: _PREFERENCE[p.suffix.lower()])
            found[key] = keep
            problems.append(
                Problem(
                    drop,
                    f"same name as {keep.name}; {keep.name} is used",
                    "warning",
                    dataset,
                    method,
                    key,
                )
            )
        else:
            found[key] = path
    if undecodable:
        n = len(undecodable)
        problems.append(
            Problem(
                spec.path,
                f"{n} file name{'s' if n != 1 else ''} not valid UTF-8 (or with control "
                f"characters): shown and written with those bytes escaped, e.g. "
                f"{undecodable[0]}",
                "warning",
                dataset,
                method,
            )
        )
    return found, problems


def _list_grouped(
    spec: FolderSpec, dataset: str, method: str
) -> tuple[dict[str, Path], list[Problem]]:
    """:func:`list_maps` of every group's sub-folder, keys ``<group>/<key>``."""
    if not spec.path.is_dir():
        return {}, [Problem(spec.path, "folder not found", "error", dataset, method)]
    found: dict[str, Path] = {}
    problems: list[Problem] = []
    for sub in _subdirs(spec.path):
        files, p = list_maps(FolderSpec(sub, spec.prefix, spec.suffix), dataset, method)
        found.update({f"{sub.name}/{key}": path for key, path in files.items()})
        problems += p
    return found, problems


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def printable_name(text: str) -> str:
    """A file name as text any output can hold: the bytes of a name that is not valid UTF-8
    (which Python holds as lone surrogates) and control characters become ``\\xff``-style
    escapes. Applied to every folder alike, so ``bad\\xff.png`` still matches across GT,
    image and prediction folders."""
    try:
        raw = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that is not an undecodable byte
        raw = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(
        c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
        for c in raw
    )


def _child(folder: Path, names: Iterable[str]) -> Path | None:
    """The first child folder whose name (case-insensitively) is in ``names``."""
    if not folder.is_dir():
        return None
    wanted = list(names)
    children = {p.name.casefold(): p for p in folder.iterdir() if p.is_dir()}
    for name in wanted:
        if name in children:
            return children[name]
    return None


def _subdirs(folder: Path) -> list[Path]:
    return sorted(
        (p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")),
        key=lambda p: natural_key(p.name),
    )


def _has_maps(folder: Path, grouped: bool = False) -> bool:
    """Whether ``folder`` holds maps (grouped: whether one of its sub-folders does)."""
    if grouped:
        return any(_has_maps(sub) for sub in _subdirs(folder))
    return any(p.suffix.lower() in _PREFERENCE for p in folder.iterdir() if p.is_file())


def build(dataset: Dataset) -> Dataset:
    """List files, match samples and compute coverage (fills the dataset in place)."""
    gts, problems = list_maps(dataset.gt, dataset.name)
    images: dict[str, Path] = {}
    if dataset.image is not None:
        images, p = list_maps(dataset.image, dataset.name)
        problems += p
    preds: dict[str, dict[str, Path]] = {}
    order = sorted(gts, key=natural_key)
    for method, spec in dataset.methods.items():
        files, p = list_maps(spec, dataset.name, method)
        problems += p
        preds[method] = files
        cov = Coverage(method)
        cov.matched = [k for k in order if k in files]
        cov.missing = [k for k in order if k not in files]
        cov.extra = sorted((k for k in files if k not in gts), key=natural_key)
        dataset.coverage[method] = cov
        if cov.missing:
            problems.append(
                Problem(
                    spec.path,
                    f"{len(cov.missing)} of {len(gts)} GT images have no prediction "
                    f"(e.g. {', '.join(cov.missing[:3])}); this method is evaluated on "
                    f"{len(cov.matched)} images and flagged as incomplete",
                    "warning",
                    dataset.name,
                    method,
                )
            )
        if cov.extra:
            problems.append(
                Problem(
                    spec.path,
                    (
                        f"{len(cov.extra)} predictions have no GT and are ignored"
                        if len(cov.extra) != 1
                        else "1 prediction has no GT and is ignored"
                    )
                    + f" (e.g. {', '.join(cov.extra[:3])})",
                    "warning",
                    dataset.name,
                    method,
                )
            )
    if dataset.image is not None:
        missing = [k for k in gts if k not in images]
        if missing:
            problems.append(
                Problem(
                    dataset.image.path,
                    f"{len(missing)} GT map{'s have' if len(missing) != 1 else ' has'} no "
                    f"image (e.g. {', '.join(missing[:3])})",
                    "warning",
                    dataset.name,
                )
            )
    methods = dataset.method_names
    dataset.samples = [
        Sample(
            dataset.name,
            key,
            gts[key],
            images.get(key),
            {m: preds[m][key] for m in methods if key in preds[m]},
        )
        for key in order
    ]
    if not gts:
        problems.append(Problem(dataset.gt.path, "no GT maps found", "error", dataset.name))
    dataset.problems += problems
    return dataset


def _no_maps(folder: Path, dataset: str, method: str) -> Problem:
    message = (
        f"no maps ({', '.join(IMAGE_EXTENSIONS)}) in this method folder: {method} is not evaluated"
    )
    holding = [sub.name for sub in _subdirs(folder) if _has_maps(sub)]
    if holding:  # e.g. Pred/<method>/<dataset>/ where Pred/<method>/ was expected
        which = ", ".join(holding[:3])
        message += (
            f"; its subfolder{'s' if len(holding) > 1 else ''} {which} "
            f"hold{'' if len(holding) > 1 else 's'} maps (the nested layout is "
            "Pred/<method>/<dataset>/ beside GT/<dataset>/)"
        )
    return Problem(folder, message, "warning", dataset, method)


def _flat(
    root: Path, name: str | None = None, pred_root: Path | None = None, grouped: bool = False
) -> Dataset | None:
    gt_dir = _child(root, GT_DIRS)
    if gt_dir is None or not _has_maps(gt_dir, grouped):
        return None
    img_dir = _child(root, IMAGE_DIRS)
    methods: dict[str, FolderSpec] = {}
    pred_dir = _child(root, PRED_DIRS)
    empty: list[Path] = []  # method folders without a single map
    if pred_dir is not None:
        for m in _subdirs(pred_dir):
            if _has_maps(m, grouped):
                methods[m.name] = FolderSpec(m, grouped=grouped)
            else:
                empty.append(m)
        if not methods and not grouped and _has_maps(pred_dir):
            methods[pred_dir.name] = FolderSpec(pred_dir)
            empty = []
    name = name or root.resolve().name
    if pred_root is not None:
        for m in _subdirs(pred_root):
            sub = _child(m, [name.casefold()])
            if sub is not None and _has_maps(sub, grouped):
                methods.setdefault(m.name, FolderSpec(sub, grouped=grouped))
    problems = [_no_maps(m, name, m.name) for m in empty]
    return Dataset(
        name,
        FolderSpec(gt_dir, grouped=grouped),
        FolderSpec(img_dir, grouped=grouped) if img_dir else None,
        methods,
        problems=problems,
        layout="flat" + (", grouped" if grouped else ""),
    )


def _nested(root: Path, grouped: bool = False) -> list[Dataset]:
    gt_root = _child(root, GT_DIRS)
    pred_root = _child(root, PRED_DIRS)
    if gt_root is None or pred_root is None or _has_maps(gt_root, grouped):
        return []
    img_root = _child(root, IMAGE_DIRS)
    out = []
    for ds in _subdirs(gt_root):
        gt_dir = ds if _has_maps(ds, grouped) else _child(ds, GT_DIRS)
        if gt_dir is None or not _has_maps(gt_dir, grouped):
            continue
        img_dir = None
        if img_root is not None:
            img_dir = _child(img_root, [ds.name.casefold()])
        elif _child(ds, IMAGE_DIRS) is not None:
            img_dir = _child(ds, IMAGE_DIRS)
        methods = {}
        empty = []
        for m in _subdirs(pred_root):
            sub = _child(m, [ds.name.casefold()])
            if sub is not None and _has_maps(sub, grouped):
                methods[m.name] = FolderSpec(sub, grouped=grouped)
            elif sub is not None:
                empty.append(sub)
        out.append(
            Dataset(
                ds.name,
                FolderSpec(gt_dir, grouped=grouped),
                FolderSpec(img_dir, grouped=grouped) if img_dir else None,
                methods,
                problems=[_no_maps(p, ds.name, p.parent.name) for p in empty],
                layout="nested" + (", grouped" if grouped else ""),
            )
        )
    return out


def folder_problem(root: Path | str) -> str:
    """Why ``root`` cannot be a dataset folder as a path ("" when it is a folder): said as
    a wrong path (exit status 2) before any reading, not as "no dataset found"."""
    path = Path(root)
    if path.is_dir():
        return ""
    return f"{root}: {'is a file, not a folder' if path.exists() else 'no such folder'}"


def discover(root: Path | str, grouped: bool = False) -> tuple[list[Dataset], list[Problem]]:
    """Find every dataset under ``root`` (see the module notes for the layouts; ``grouped``:
    the maps lie in one sub-folder per group).

    Returns
    -------
    datasets : list of Dataset
        Built (samples matched, coverage computed), in natural order.
    problems : list of Problem
        Anything that could not be used, or was used with a caveat.
    """
    root = Path(root)
    if not root.is_dir():
        return [], [Problem(root, "not a folder")]
    flat = _flat(root, grouped=grouped)
    if flat is not None:
        datasets = [flat]
    else:
        datasets = _nested(root, grouped)
        if not datasets:
            pred_root = _child(root, PRED_DIRS)
            for sub in _subdirs(root):
                ds = _flat(sub, sub.name, pred_root, grouped)
                if ds is not None:
                    ds.layout = "several datasets"
                    datasets.append(ds)
    if not datasets:
        return [], [
            Problem(
                root,
                "no dataset found: expected a GT folder (GT/, Mask/, masks/ "
                "…) next to Imgs/ and Pred/<method>/, or one such folder per "
                "dataset, or GT/<dataset>/ with Pred/<method>/<dataset>/",
            )
        ]
    for ds in datasets:
        build(ds)
    return datasets, [p for ds in datasets for p in ds.problems]


def _strip_extension(suffix: str) -> str:
    """Toolkit suffixes include the extension (``'_sal.png'``, ``'.png'``); keys do not."""
    for ext in IMAGE_EXTENSIONS:
        if suffix.lower().endswith(ext):
            return suffix[: -len(ext)]
    return suffix


def _spec(entry: dict[str, str], base: Path) -> FolderSpec:
    path = Path(entry["path"])
    return FolderSpec(
        path if path.is_absolute() else base / path,
        entry.get("prefix", ""),
        _strip_extension(entry.get("suffix", "")),
    )


def from_toolkit_configs(
    dataset_json: Path | str, method_json: Path | str
) -> tuple[list[Dataset], list[Problem]]:
    """Datasets from PySODEvalToolkit's two JSON configs.

    ``dataset_json``: ``{name: {"image": {path, prefix, suffix}, "mask": {path, prefix,
    suffix}}}``; ``method_json``: ``{method: {dataset: {path, prefix, suffix}}}``. A suffix may
    include the extension (``"_sal.png"``), as in the toolkit; relative paths are relative to
    the JSON file's folder.
    """
    dataset_json, method_json = Path(dataset_json), Path(method_json)
    problems: list[Problem] = []
    try:
        dsets = json.loads(read_text(dataset_json, what="toolkit config"))
        methods = json.loads(read_text(method_json, what="toolkit config"))
    except (OSError, ValueError) as exc:
        return [], [Problem(dataset_json, f"cannot read the toolkit configs: {exc}")]
    out = []
    for name, entry in dsets.items():
        if "mask" not in entry:
            problems.append(Problem(dataset_json, f"dataset {name!r} has no 'mask' entry"))
            continue
        gt = _spec(entry["mask"], dataset_json.parent)
        img = _spec(entry["image"], dataset_json.parent) if "image" in entry else None
        mspecs = {
            m: _spec(per[name], method_json.parent) for m, per in methods.items() if name in per
        }
        out.append(build(Dataset(name, gt, img, mspecs, layout="PySODEvalToolkit config")))
    return out, problems + [p for ds in out for p in ds.problems]


@dataclass(frozen=True, slots=True)
class ToolkitConfigs:
    """PySODEvalToolkit's two JSON configs, opened as one source of datasets (as a folder
    is): the window, ``eval`` and ``screenshots`` take either."""

    dataset_json: Path
    method_json: Path

    def __str__(self) -> str:
        return f"{self.dataset_json} + {self.method_json}"


#: Where datasets come from: a folder, or PySODEvalToolkit's configs.
Source = Path | ToolkitConfigs


def read_source(source: Path | str | ToolkitConfigs) -> tuple[list[Dataset], list[Problem]]:
    """The datasets of a folder (:func:`discover`) or of toolkit configs
    (:func:`from_toolkit_configs`), and what could not be used — with a problem of its own
    when what was found has no model's maps at all (a folder laid out for configs, say)."""
    if isinstance(source, ToolkitConfigs):
        datasets, problems = from_toolkit_configs(source.dataset_json, source.method_json)
    else:
        datasets, problems = discover(source)
    if datasets and not any(ds.methods for ds in datasets):
        problems = [*problems, Problem(Path(str(source)), no_models_message(source))]
    return datasets, problems


def no_models_message(source: Path | str | ToolkitConfigs) -> str:
    """What to say when ``source`` holds GTs but no model's maps."""
    if isinstance(source, ToolkitConfigs):
        return "no model's maps for any of its datasets: check the method config's paths"
    return (
        "GT maps but no model's maps (expected Pred/<method>/ beside the GT folder); for a "
        "PySODEvalToolkit layout give its configs (--dataset-config and --method-config, or "
        "File ▸ Open toolkit configs…)"
    )


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
