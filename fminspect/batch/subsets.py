"""Evaluating on part of a dataset: an image list, attribute subsets, without empty GTs.

* **An image list** (``eval --images FILE``) restricts each dataset to the images it names
  before anything is read: one name per line (a stem, or a file name whose extension is
  dropped), ``#`` comments; ``DATASET/name`` names an image of that dataset only. A CSV
  whose header has a ``sample`` column (and optionally ``dataset``) is read as such: the
  case list the window exports with its tags; so is the window's JSON export (or a JSON
  list of names). Names found in no dataset are counted and the
  first ones shown; a list that matches nothing in a dataset is an error naming the file
  and the dataset. ``eval --exclude-images FILE`` leaves the images of such a list out
  instead (GT errors found in the window, say); both are recorded in ``results.json``.
* **Subsets** (``eval --subsets cod10k|cod10k-sub|FILE.csv``) are evaluated *as well as* the
  whole dataset, from the same per-image results (nothing is computed twice): each becomes a
  dataset of its own in every output, named ``DATASET[subset]``, so that ``fminspect table``
  and ``fminspect figure`` show them like any dataset (``--datasets 'COD10K[Aquatic]' …``).
  ``cod10k`` groups COD10K's images by the super-class in their names
  (``COD10K-CAM-1-Aquatic-3-Crab-12`` → ``Aquatic``), ``cod10k-sub`` by the sub-class
  (``Crab``); a CSV has the image name in its first column and one attribute per further
  column: a column of 0/1 (or yes/no, true/false) gives the subset of images where it is
  true (``COD10K[occlusion]``), any other column one subset per value
  (``COD10K[size=small]``); an empty cell leaves the image out of that attribute.
* **Empty GTs**: the number of images whose GT has no foreground pixel is always reported
  per dataset; ``eval --exclude-empty-gt`` leaves them out of every dataset value (they are
  still scored and stored, and listed in ``per_image.csv``).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fminspect.io.discovery import Coverage, Dataset, natural_key

#: Largest list or attribute file read (bytes).
MAX_LIST_FILE = 64 << 20
#: COD10K's file names: COD10K-CAM-<super id>-<Super>-<sub id>-<Sub>-<number>.
COD10K_NAME = re.compile(
    r"COD10K-(?P<kind>CAM|NonCAM)-(?P<super_id>\d+)-(?P<super>[^-]+)-(?P<sub_id>\d+)-"
    r"(?P<sub>[^-]+)-(?P<number>\d+)"
)
SUBSET_RULES = ("cod10k", "cod10k-sub")
_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f"}


class SubsetError(ValueError):
    """A list or attribute file that cannot be used; the message names the file and why."""


def _read_text(path: Path, what: str) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_LIST_FILE:
            raise SubsetError(f"{path}: {size} bytes is too large for {what}")
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SubsetError(f"{path}: file not found") from None
    except UnicodeDecodeError:
        raise SubsetError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise SubsetError(f"{path}: cannot be read ({exc.strerror})") from None


def _stem(name: str) -> str:
    name = name.strip().replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, ext = name.rpartition(".")
    return stem if dot and ext.lower() in _EXTENSIONS else name


_EXTENSIONS = {"png", "jpg", "jpeg", "bmp", "tif", "tiff", "webp", "pgm", "ppm"}


@dataclass(frozen=True, slots=True)
class ImageList:
    """The images of an image list file: for every dataset (key ``""``) or one."""

    source: str
    names: Mapping[str, frozenset[str]]
    #: (dataset or "", name) in the file's order, each once: the order a figure shows them
    order: tuple[tuple[str, str], ...] = ()
    #: a case list with a ``tags`` column: rows per tag ("" for rows with none)
    tags: Mapping[str, int] = field(default_factory=dict)

    def wanted(self, dataset: str) -> frozenset[str]:
        return self.names.get("", frozenset()) | self.names.get(dataset, frozenset())

    def tag_line(self) -> str:
        """What the rows of a case list are tagged with, so that a list holding more than
        the cases meant is seen (``''`` for a plain list)."""
        if not self.tags:
            return ""
        parts = [f"{n} tagged {t!r}" for t, n in sorted(self.tags.items()) if t]
        if self.tags.get(""):
            # (a note, or nothing: a filter's listed samples; a trial read "(a note only)")
            parts.append(f"{self.tags['']} with no tag")
        rows = len(self.order)
        line = f"{self.source}: {rows} case{'s' if rows != 1 else ''}: {', '.join(parts)}"
        if len(self.tags) > 1:  # cases of several kinds: perhaps more than meant
            line += (
                " — every row counts, whatever its tags (export one tag's cases from the "
                "window's File → Export case list)"
            )
        return line


def read_image_list(path: Path | str, datasets: Iterable[str] = ()) -> ImageList:
    """An image list file (see the module notes); ``datasets`` are the names a
    ``DATASET/name`` line may start with."""
    path = Path(path)
    known = set(datasets)
    names: dict[str, set[str]] = {}
    order: dict[tuple[str, str], None] = {}
    text = _read_text(path, "an image list")
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        return _json_list(path, text)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    # a spreadsheet saved in a locale whose decimal mark is a comma separates with ";"
    delimiter = ";" if lines and ";" in lines[0] and "," not in lines[0] else ","
    header = next(csv.reader(lines[:1], delimiter=delimiter), [])
    fields = [h.strip().lower() for h in header]
    if "sample" in fields:  # a case list the window exported
        tags: dict[str, int] = {}
        for row in csv.DictReader(lines, fieldnames=fields, delimiter=delimiter):
            name = (row.get("sample") or "").strip()
            if name and name != "sample":
                dataset = (row.get("dataset") or "").strip()
                names.setdefault(dataset, set()).add(_stem(name))
                order[dataset, _stem(name)] = None
                if "tags" in fields:
                    carried = [t.strip() for t in (row.get("tags") or "").split(";")]
                    for t in [t for t in carried if t] or [""]:
                        tags[t] = tags.get(t, 0) + 1
        if not names:
            raise SubsetError(f"{path}: names no image")
        frozen = {k: frozenset(v) for k, v in names.items()}
        return ImageList(str(path), frozen, tuple(order), tags)
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.replace("\\", "/").split("/")
        if len(parts) == 2 and (parts[0] in known or ":" not in parts[0]):
            # DATASET/name — for that dataset only, even one not evaluated now
            names.setdefault(parts[0], set()).add(_stem(parts[1]))
            order[parts[0], _stem(parts[1])] = None
        else:  # a name, or a path whose file name is the image's
            names.setdefault("", set()).add(_stem(line))
            order["", _stem(line)] = None
    if not names:
        raise SubsetError(f"{path}: names no image")
    return ImageList(str(path), {k: frozenset(v) for k, v in names.items()}, tuple(order))


def _json_list(path: Path, text: str) -> ImageList:
    """The case list the window exports as JSON (``{"cases": [{"dataset", "sample",
    "tags"…}]}``), or a JSON list of names (or of such objects)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SubsetError(f"{path}: not a JSON case list ({exc})") from None
    rows = doc.get("cases") if isinstance(doc, dict) else doc
    if not isinstance(rows, list):
        raise SubsetError(f'{path}: a JSON case list holds a list "cases" (as the window exports)')
    names: dict[str, set[str]] = {}
    order: dict[tuple[str, str], None] = {}
    tags: dict[str, int] = {}
    for k, row in enumerate(rows, 1):
        if isinstance(row, str):
            row = {"sample": row}
        sample = row.get("sample") if isinstance(row, dict) else None
        if not isinstance(sample, str) or not sample.strip():
            raise SubsetError(f"{path}: case {k} has no sample name")
        dataset = row.get("dataset") or ""
        if not isinstance(dataset, str):
            raise SubsetError(f"{path}: case {k}: its dataset is not a name")
        name = _stem(sample.strip())
        names.setdefault(dataset.strip(), set()).add(name)
        order[dataset.strip(), name] = None
        carried = row.get("tags") if "tags" in row else None
        if isinstance(carried, list):
            for t in [str(t).strip() for t in carried if str(t).strip()] or [""]:
                tags[t] = tags.get(t, 0) + 1
    if not names:
        raise SubsetError(f"{path}: names no image")
    return ImageList(str(path), {k: frozenset(v) for k, v in names.items()}, tuple(order), tags)


def apply_exclusion_list(
    datasets: Sequence[Dataset], images: ImageList
) -> tuple[list[Dataset], dict[str, tuple[int, int]], list[str]]:
    """Every dataset without the list's images, per dataset (images left out, of), and the
    list's names found in no dataset (a typo leaves nothing out: said, as for
    ``--images``); :class:`SubsetError` if a dataset would keep none."""
    out, left_out = [], {}
    found: set[str] = set()
    for ds in datasets:
        unwanted = images.wanted(ds.name)
        kept = restrict(ds, [s.name for s in ds.samples if s.name not in unwanted])
        if not kept.samples:
            raise SubsetError(f"{images.source}: leaves out every image of {ds.name}")
        found |= {s.name for s in ds.samples if s.name in unwanted}
        left_out[ds.name] = (len(ds.samples) - len(kept.samples), len(ds.samples))
        out.append(kept)
    evaluated = {d.name for d in datasets}
    every = set(images.names.get("", ())) | {
        n for ds, names in images.names.items() if ds in evaluated for n in names
    }
    return out, left_out, sorted(every - found, key=natural_key)


def restrict(ds: Dataset, keep: Iterable[str], name: str | None = None) -> Dataset:
    """``ds`` with only the samples named in ``keep`` (their order kept), its coverage
    recomputed; renamed ``name`` if given (a subset)."""
    wanted = set(keep)
    samples = [s for s in ds.samples if s.name in wanted]
    coverage = {}
    for m, cov in ds.coverage.items():
        coverage[m] = Coverage(
            m,
            matched=[s.name for s in samples if m in s.preds],
            missing=[s.name for s in samples if m not in s.preds],
            extra=list(cov.extra) if name is None else [],
        )
    return Dataset(
        name if name is not None else ds.name,
        ds.gt,
        ds.image,
        ds.methods,
        samples,
        coverage,
        list(ds.problems) if name is None else [],
        ds.layout,
    )


@dataclass(slots=True)
class ListReport:
    """What an image list did: per dataset, images kept of how many; names found nowhere."""

    kept: dict[str, tuple[int, int]] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)

    def lines(self, source: str) -> list[str]:
        out = [
            f"{ds}: {kept} of {total} images (image list {source})"
            for ds, (kept, total) in self.kept.items()
        ]
        if self.unmatched:
            out.append(unmatched_line(self.unmatched, source))
        return out


def unmatched_line(unmatched: Sequence[str], source: str) -> str:
    """``3 names of FILE are in no dataset: a, b, c`` (the first five shown)."""
    shown = ", ".join(unmatched[:5]) + (", …" if len(unmatched) > 5 else "")
    n = len(unmatched)
    are = "names of" if n != 1 else "name of"
    return f"{n} {are} {source} {'are' if n != 1 else 'is'} in no dataset: {shown}"


def apply_image_list(
    datasets: Sequence[Dataset], images: ImageList
) -> tuple[list[Dataset], ListReport]:
    """Every dataset restricted to the list's images (:class:`SubsetError` if a dataset keeps
    none)."""
    report = ListReport()
    out = []
    found: set[str] = set()
    for ds in datasets:
        wanted = images.wanted(ds.name)
        kept = restrict(ds, wanted)
        if not kept.samples:
            hint = (
                f"; it names images of {', '.join(sorted(k for k in images.names if k))} only: "
                "choose those with --datasets"
                if not images.names.get("") and len(images.names) >= 1
                else ""
            )
            raise SubsetError(
                f"{images.source}: names none of the {len(ds.samples)} images of {ds.name} "
                f"(e.g. {ds.samples[0].name if ds.samples else 'none'}){hint}"
            )
        found |= {s.name for s in kept.samples}
        report.kept[ds.name] = (len(kept.samples), len(ds.samples))
        out.append(kept)
    evaluated = {d.name for d in datasets}
    every = set(images.names.get("", ())) | {
        n for ds, names in images.names.items() if ds in evaluated for n in names
    }
    report.unmatched = sorted(every - found, key=natural_key)
    return out, report


# ----------------------------------------------------------------------------- subsets
@dataclass(frozen=True, slots=True)
class Subsets:
    """How to split a dataset: a rule of :data:`SUBSET_RULES` or an attribute table."""

    rule: str = ""
    source: str = ""
    #: image name → {attribute: value} (attribute tables)
    attributes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: attributes whose values are all true/false: one subset (where true) each
    boolean: frozenset[str] = frozenset()

    def describe(self) -> dict[str, str]:
        return {"rule": self.rule or "attributes", "source": self.source}

    def split(self, ds: Dataset) -> list[tuple[str, list[str]]]:
        """``[(label, sample names)]``, labels in natural order, empty subsets left out."""
        groups: dict[str, list[str]] = {}
        for s in ds.samples:
            for label in self.labels(s.name):
                groups.setdefault(label, []).append(s.name)
        return [(label, groups[label]) for label in sorted(groups, key=natural_key)]

    def check(self, datasets: Sequence[Dataset]) -> list[str]:
        """What the user must know before the run: raises :class:`SubsetError` when no
        image of any dataset falls in a subset; lines naming the table's images found in
        no dataset."""
        matched = {s.name for ds in datasets for s in ds.samples if self.labels(s.name)}
        if not matched:
            what = (
                "no image name is a COD10K name (COD10K-CAM-1-Aquatic-3-Crab-12)"
                if self.rule
                else "no image it names is in the datasets, or no attribute is true or set"
            )
            raise SubsetError(f"--subsets {self.source}: {what}")
        if self.rule:
            return []
        names = {s.name for ds in datasets for s in ds.samples}
        absent = sorted(set(self.attributes) - names, key=natural_key)
        if not absent:
            return []
        shown = ", ".join(absent[:5]) + (", …" if len(absent) > 5 else "")
        return [f"{len(absent)} images of {self.source} are in no dataset: {shown}"]

    def labels(self, name: str) -> list[str]:
        """The subsets the image ``name`` falls in (its labels)."""
        if self.rule in SUBSET_RULES:
            m = COD10K_NAME.fullmatch(name)
            if m is None:
                return []
            return [m["super"] if self.rule == "cod10k" else m["sub"]]
        row = self.attributes.get(name)
        if row is None:
            return []
        out = []
        for attr, value in row.items():
            if not value:
                continue
            if attr in self.boolean:
                if value.lower() in _TRUE:
                    out.append(attr)
            else:
                out.append(f"{attr}={value}")
        return out


def subsets_rule(spec: str) -> Subsets:
    """``cod10k``, ``cod10k-sub`` or the path of an attribute CSV (see the module notes)."""
    if spec in SUBSET_RULES:
        return Subsets(rule=spec, source=spec)
    path = Path(spec)
    if path.suffix.lower() != ".csv" and not path.exists():
        raise SubsetError(
            f"--subsets {spec}: not {' or '.join(SUBSET_RULES)}, and no such CSV file"
        )
    text = _read_text(path, "an attribute table")
    rows = list(csv.reader(text.splitlines()))
    if len(rows) < 2 or len(rows[0]) < 2:
        raise SubsetError(f"{path}: expected a header (image, attribute, …) and one row per image")
    header = [h.strip() for h in rows[0]]
    attrs = header[1:]
    if any(not a for a in attrs) or len(set(attrs)) != len(attrs):
        raise SubsetError(f"{path}: every attribute column needs a name of its own")
    table: dict[str, dict[str, str]] = {}
    lines: dict[str, int] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not row or not row[0].strip():
            continue
        if len(row) != len(header):
            raise SubsetError(
                f"{path}, line {line}: {len(row)} cells, the header has {len(header)}"
            )
        name = _stem(row[0])
        if name in table:
            raise SubsetError(f"{path}: {name} is on lines {lines[name]} and {line}: give it once")
        lines[name] = line
        table[name] = {a: v.strip() for a, v in zip(attrs, row[1:], strict=True)}
    boolean = frozenset(
        a for a in attrs if all(r[a].lower() in _TRUE | _FALSE for r in table.values() if r[a])
    )
    return Subsets(source=str(path), attributes=table, boolean=boolean)


# ------------------------------------------------------------------------------ groups
#: A name's group under the ``prefix`` rule: what comes before its last number, without
#: the separators (``bear_00012`` → ``bear``, ``cat-3`` → ``cat``).
GROUP_PREFIX = re.compile(r"(?P<group>.*?)[_\-\s.]*\d+")


@dataclass(frozen=True, slots=True)
class Groups:
    """The group of every image (co-SOD groups, video sequences): by a rule or a table."""

    rule: str = ""
    source: str = ""
    table: Mapping[str, str] = field(default_factory=dict)

    def of(self, name: str) -> str | None:
        if self.rule == "folders":  # <group>/<name>, as grouped discovery names samples
            return name.split("/", 1)[0] if "/" in name else None
        if self.rule == "prefix":
            m = GROUP_PREFIX.fullmatch(name)
            return m["group"] if m is not None and m["group"] else name
        return self.table.get(name)

    def describe(self) -> dict[str, str]:
        return {"rule": self.rule or "table", "source": self.source}

    def check(self, datasets: Sequence[Dataset]) -> list[str]:
        """Lines saying how many groups each dataset has; :class:`SubsetError` when an image
        has no group (a table that misses it) or a dataset has a single group."""
        out = []
        for ds in datasets:
            missing = [s.name for s in ds.samples if self.of(s.name) is None]
            if missing:
                shown = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
                where = (
                    " (not in a group's sub-folder: GT/<group>/x.png)"
                    if self.rule == "folders"
                    else ""
                )
                raise SubsetError(
                    f"--groups {self.source}: {len(missing)} images of {ds.name} have no "
                    f"group{where}: {shown}"
                )
            groups = {self.of(s.name) for s in ds.samples}
            if len(groups) < 2:
                raise SubsetError(
                    f"--groups {self.source}: every image of {ds.name} is in one group "
                    f"({next(iter(groups), '')!r}): nothing to average over"
                )
            out.append(
                f"{ds.name}: {len(ds.samples)} images in {len(groups)} groups (values: the "
                "mean over the groups of each group's values)"
            )
        return out


def groups_rule(spec: str) -> Groups:
    """``folders``, ``prefix`` or a CSV of (image, group) rows (see the module notes)."""
    if spec in ("prefix", "folders"):
        return Groups(rule=spec, source=spec)
    path = Path(spec)
    if path.suffix.lower() != ".csv" and not path.exists():
        raise SubsetError(f"--groups {spec}: not 'folders' or 'prefix', and no such CSV file")
    rows = list(csv.reader(_read_text(path, "a group table").splitlines()))
    header = bool(rows and rows[0] and rows[0][0].strip().lower() in ("image", "name"))
    table: dict[str, str] = {}
    for line, row in enumerate(rows[1:] if header else rows, start=2 if header else 1):
        if not row:
            continue
        if len(row) < 2 or not row[0].strip() or not row[1].strip():
            raise SubsetError(f"{path}, line {line}: expected image,group")
        name = _stem(row[0])
        if name in table and table[name] != row[1].strip():
            raise SubsetError(f"{path}, line {line}: {name} is given two groups")
        table[name] = row[1].strip()
    if not table:
        raise SubsetError(f"{path}: no (image, group) row")
    return Groups(source=str(path), table=table)


@dataclass(frozen=True, slots=True)
class Selection:
    """Which images make the dataset values of an evaluation (see the module notes)."""

    subsets: Subsets | None = None
    exclude_empty_gt: bool = False
    #: what an image list did, as results.json records it ({"source", "kept"})
    image_list: Mapping[str, object] = field(default_factory=dict)
    #: grouped evaluation (co-SOD, video): per-group values, then their mean
    groups: Groups | None = None
    #: what an exclusion list left out, as results.json records it ({"source", "left_out"})
    excluded_images: Mapping[str, object] = field(default_factory=dict)

    def describe(self) -> dict[str, object]:
        out: dict[str, object] = {"exclude_empty_gt": self.exclude_empty_gt}
        if self.subsets is not None:
            out["subsets"] = self.subsets.describe()
        if self.image_list:
            out["image_list"] = dict(self.image_list)
        if self.groups is not None:
            out["groups"] = self.groups.describe()
        if self.excluded_images:
            out["excluded_images"] = dict(self.excluded_images)
        return out


def select(
    datasets: Sequence[Dataset],
    *,
    images: Path | str | None = None,
    exclude_images: Path | str | None = None,
    subsets: str | None = None,
    groups: str | None = None,
    exclude_empty_gt: bool = False,
) -> tuple[list[Dataset], Selection, list[str]]:
    """The datasets restricted to the image list ``images`` and without the images of
    ``exclude_images``, the :class:`Selection` of the rest (``eval --images``,
    ``--exclude-images``, ``--subsets``, ``--groups``, ``--exclude-empty-gt``), and the lines
    saying what each did (what was kept or left out, names found in no dataset, a case
    list's tags). :class:`SubsetError` for a list or rule that cannot be used."""
    out = list(datasets)
    lines: list[str] = []
    image_list: dict[str, object] = {}
    excluded: dict[str, object] = {}
    if images is not None:
        wanted = read_image_list(images, [d.name for d in out])
        out, done = apply_image_list(out, wanted)
        lines += [wanted.tag_line(), *done.lines(str(images))]
        image_list = {
            "source": str(images),
            "kept": {ds: {"images": k, "of": n} for ds, (k, n) in done.kept.items()},
            "unmatched": len(done.unmatched),
        }
    if exclude_images is not None:
        unwanted = read_image_list(exclude_images, [d.name for d in out])
        out, left_out, unmatched = apply_exclusion_list(out, unwanted)
        lines.append(unwanted.tag_line())
        lines += [
            f"{exclude_images} leaves out {k} of the {n} images of {ds}"
            for ds, (k, n) in left_out.items()
        ]
        if unmatched:
            lines.append(unmatched_line(unmatched, str(exclude_images)))
        excluded = {
            "source": str(exclude_images),
            "left_out": {ds: {"images": k, "of": n} for ds, (k, n) in left_out.items()},
            "unmatched": len(unmatched),
        }
    rule = subsets_rule(subsets) if subsets else None
    if rule is not None:
        lines += rule.check(out)
    grouping = groups_rule(groups) if groups else None
    if grouping is not None:
        lines += grouping.check(out)
    selection = Selection(rule, exclude_empty_gt, image_list, grouping, excluded)
    return out, selection, [line for line in lines if line]


def subset_name(dataset: str, label: str) -> str:
    """The name a subset has in every output: ``DATASET[label]``."""
    return f"{dataset}[{label}]"
