"""Qualitative figures: the "Image | GT | Ours | other methods" grid every SOD/COD paper
prints, over a few chosen samples.

Rows are samples and columns are the image, the GT and the methods in the order given;
``transpose`` swaps them. The method names go on top (on the left when transposed), in the
largest size from 8 down to 5 pt at which the longest fits its cell; below 5 pt they are
turned upright. The figure is exactly the width asked for (3.5 in, one column of a
two-column paper; 7 in, the page; or any width), the height follows from the cells. Each
sample's cells take its GT's shape: a row's height follows its sample's shape (the columns
share the width), and in a transposed figure a column's width does (the rows share one
height, the widths filling the figure's), so that no picture is stretched or framed by
empty margins.

The pictures are resampled once to the size they are printed at (``dpi``, 300 by default),
so that a PDF of 8 samples × 10 methods stays a few MB whatever the photographs' size; text
is vector text (TrueType in PDFs). A map of another size than its GT is resized to the GT as
``eval`` does (bilinear by default). A sample can carry a zoomed inset of a region of its
image: the region is outlined in every cell of the row and shown enlarged in a corner of
the cell (``inset_corner``, the lower right by default; ``inset_share`` of the cell's
width, 45 % by default), so that it can be kept off the object.

A map that is missing or cannot be read is an empty cell marked "missing" or "unreadable",
and :attr:`Planned.notes` names the file; so is an unreadable GT or image. Files carry no
dates: the same inputs give the same bytes. :func:`latex_snippet` writes the ``figure``
environment that includes the file, with a caption naming the columns.
"""

from __future__ import annotations

import difflib
import math
import statistics
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from fminspect.batch.figures import STABLE_RC, FigureError, import_matplotlib, save
from fminspect.io.discovery import Dataset, Sample, sample_name
from fminspect.io.loading import fit_to, load_image, load_map, to_u8
from fminspect.io.validation import LoadError

#: Formats written.
FORMATS = ("pdf", "svg", "png")
#: Named widths in inches: one column of a two-column paper, and the page.
WIDTHS = {"column": 3.5, "page": 7.0}
#: Resolution of the pictures in the file (and of a PNG) unless asked otherwise.
DEFAULT_DPI = 300
#: The most cells a figure holds: beyond it no name or picture is legible on a page.
MAX_CELLS = 2000
#: The most pixels a figure's canvas may have (its width × height at its dpi): 10,000 ×
#: 10,000. Beyond it Matplotlib's canvas alone takes gigabytes (a 200 in figure filled
#: 21 GB in a trial and was killed).
MAX_FIGURE_PIXELS = 100_000_000
#: Label sizes tried, in points, before the names are turned upright.
LABEL_SIZES = (8.0, 7.5, 7.0, 6.5, 6.0, 5.5, 5.0)
#: Space between cells, in inches.
GAP = 0.02
#: Cells narrower than this (inches, 7.6 mm) are said: details of a map are lost in print
SMALL_CELL = 0.3
#: The inset's width as a share of its cell's, by default, and the shares allowed.
INSET_SHARE = 0.45
INSET_SHARES = (0.2, 0.8)
#: The width of the inset's frame, in points.
INSET_FRAME = 0.8
#: The corners an inset can take (the first is the default).
INSET_CORNERS = ("lower right", "lower left", "upper right", "upper left")
INSET_COLOUR = "#e8000b"


#: Matplotlib's pyplot and rcParams belong to the whole process: figures drawn on worker
#: threads (the window's dialog) take turns.
_MATPLOTLIB = threading.Lock()


class QualitativeError(FigureError):
    """A figure that cannot be made as asked (an unknown sample or method, a bad region)."""


@dataclass(frozen=True, slots=True)
class Region:
    """A rectangle of the image, in its pixels: left, top, width, height."""

    def __str__(self) -> str:
        return f"{self.x:g},{self.y:g},{self.w:g},{self.h:g}"

    def cut_to(self, w: int, h: int) -> Region:
        """The part of the region inside a ``w`` × ``h`` image."""
        return Region(self.x, self.y, min(self.w, w - self.x), min(self.h, h - self.y))

    x: float
    y: float
    w: float
    h: float

    @classmethod
    def parse(cls, text: str) -> Region:
        """``X,Y,W,H`` in pixels of the image."""
        parts = [p.strip() for p in text.split(",")]
        try:
            x, y, w, h = (float(p) for p in parts)
        except ValueError:
            raise QualitativeError(
                f"region {text!r} is not X,Y,W,H (pixels of the image, e.g. 40,60,120,90)"
            ) from None
        return cls.checked(x, y, w, h, text)

    @classmethod
    def checked(cls, x: float, y: float, w: float, h: float, text: str = "") -> Region:
        """The region, if X, Y ≥ 0 and W, H > 0 (finite); ``text``: as the user wrote it."""
        x, y, w, h = (float(v) for v in (x, y, w, h))
        if not all(math.isfinite(v) for v in (x, y, w, h)) or w <= 0 or h <= 0 or x < 0 or y < 0:
            shown = text or f"{x:g},{y:g},{w:g},{h:g}"
            raise QualitativeError(f"region {shown!r} needs X, Y ≥ 0 and W, H > 0")
        return cls(x, y, w, h)


@dataclass(frozen=True, slots=True)
class QualitativeSpec:
    """What the figure shows and how (see the module notes)."""

    methods: tuple[str, ...]
    labels: Mapping[str, str] = field(default_factory=dict)  # method → name printed
    highlight: tuple[str, ...] = ()  # methods whose names are bold ("ours")
    show_image: bool = True
    show_gt: bool = True
    transpose: bool = False
    width: float = WIDTHS["page"]  # inches
    dpi: int = DEFAULT_DPI
    insets: Mapping[str, Region] = field(default_factory=dict)  # sample key → region
    inset_corner: str = INSET_CORNERS[0]  # where the enlarged region goes in its cell
    inset_share: float = INSET_SHARE  # its width as a share of the cell's
    sample_labels: bool = False  # the samples' names beside their row (above when transposed)
    interpolation: str = "bilinear"  # a map of another size than its GT, as eval resizes it
    style: Mapping[str, Any] = field(default_factory=dict)  # Matplotlib rcParams

    @property
    def columns(self) -> list[str]:
        """The printed column names, in order."""
        head = (["Image"] if self.show_image else []) + (["GT"] if self.show_gt else [])
        return head + [self.labels.get(m, m) for m in self.methods]


@dataclass(frozen=True, slots=True)
class Cell:
    """One picture of the grid, already at the size it is printed; ``array`` None is an
    empty cell and ``mark`` says why ("missing", "unreadable")."""

    array: np.ndarray | None
    grey: bool = True
    mark: str = ""
    scale: float = 1.0  # printed pixels per pixel of the image: to place the inset's outline
    zoom: np.ndarray | None = None  # the inset's picture


@dataclass(slots=True)
class Row:
    label: str
    cells: list[Cell]
    region: Region | None = None


@dataclass(frozen=True, slots=True)
class Layout:
    """Sizes in inches: the grid's column widths and row heights, the margins the names
    take; the names' size in points and whether they stand upright."""

    widths: tuple[float, ...]
    heights: tuple[float, ...]
    left: float
    top: float
    size: float
    upright: bool
    transposed: bool = False

    @property
    def cell_w(self) -> float:
        """The narrowest cell's width."""
        return min(self.widths)

    @property
    def height(self) -> float:
        """The figure's height."""
        return self.top + sum(self.heights) + GAP * (len(self.heights) - 1)

    def cell(self, sample: int) -> tuple[float, float]:
        """The (width, height) of the cells of the ``sample``-th sample."""
        if self.transposed:
            return self.widths[sample], self.heights[0]
        return self.widths[0], self.heights[sample]


@dataclass(slots=True)
class Planned:
    """The grid, ready to draw: one :class:`Row` per sample."""

    rows: list[Row]
    columns: list[str]
    layout: Layout
    notes: list[str] = field(default_factory=list)


def sample_key(sample: Sample, several: bool) -> str:
    return f"{sample.dataset}/{sample.name}" if several else sample.name


def find_insets(
    datasets: Sequence[Dataset], samples: Sequence[Sample], regions: Mapping[str, Region]
) -> dict[str, Region]:
    """``{sample name: region}`` (names as :func:`find_samples` takes them) keyed by the
    ``dataset/name`` of their sample, as :attr:`QualitativeSpec.insets` wants them.

    Raises
    ------
    QualitativeError
        A name of no sample, or of a sample not among ``samples`` (those shown).
    """
    shown = {(s.dataset, s.name) for s in samples}
    insets = {}
    for name, region in regions.items():
        (found,) = find_samples(datasets, [name])
        if (found.dataset, found.name) not in shown:
            raise QualitativeError(f"an inset names {name}, not one of the samples shown")
        insets[f"{found.dataset}/{found.name}"] = region
    return insets


def find_samples(datasets: Sequence[Dataset], wanted: Sequence[str]) -> list[Sample]:
    """The samples named, in the order given: a name, or ``DATASET/name`` when several
    datasets hold one of that name; an unknown name is an error naming the closest ones."""
    by_name: dict[str, list[Sample]] = {}
    by_key: dict[str, Sample] = {}
    for ds in datasets:
        for s in ds.samples:
            by_name.setdefault(s.name, []).append(s)
            by_key[f"{ds.name}/{s.name}"] = s
    found: list[Sample] = []
    wrong: list[str] = []  # every name that cannot be used, said at once
    for text in dict.fromkeys(w.strip() for w in wanted if w.strip()):
        if text in by_key:
            found.append(by_key[text])
            continue
        stem = sample_name(text)
        hits = by_name.get(stem) or by_name.get(text) or []
        if len(hits) == 1:
            found.append(hits[0])
        elif hits:
            where = ", ".join(f"{s.dataset}/{s.name}" for s in hits)
            wrong.append(f"{text!r} is in several datasets: name one of {where}")
        else:
            near = difflib.get_close_matches(stem, list(by_name), n=3, cutoff=0.6)
            if not near:  # a part of a long name ("Crab-28" of COD10K-CAM-1-…-Crab-28)
                part = stem.lower()
                near = sorted((n for n in by_name if part in n.lower()), key=len)[:3]
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            wrong.append(f"no sample {text!r} in {_names(datasets)}{hint}")
    if len(wrong) == 1:
        raise QualitativeError(wrong[0])
    if wrong:
        raise QualitativeError(f"{len(wrong)} samples cannot be shown:\n  " + "\n  ".join(wrong))
    if not found:
        raise QualitativeError("no sample named: give --samples NAME… or --samples-from FILE")
    return found


def _names(datasets: Sequence[Dataset]) -> str:
    return ", ".join(ds.name for ds in datasets) or "the folder"


def find_methods(datasets: Sequence[Dataset], methods: Sequence[str]) -> tuple[str, ...]:
    """The methods named, in that order (all, in natural order, when none is named); an
    unknown one is an error listing those there are."""
    if not methods:
        known: dict[str, None] = {}
        for ds in datasets:
            known.update(dict.fromkeys(ds.method_names))
        return tuple(known)
    from fminspect.batch.workflow import SelectionError, check_methods

    try:  # the words `eval --methods` and every command say
        check_methods(datasets, methods)
    except SelectionError as exc:
        raise QualitativeError(str(exc)) from None
    return tuple(dict.fromkeys(methods))


def plan(
    samples: Sequence[Sample],
    spec: QualitativeSpec,
    *,
    on_progress: Callable[[int, int], None] | None = None,
) -> Planned:
    """Read every file once and resample it to its printed size."""
    columns = spec.columns
    n_pictures = len(columns)
    if not n_pictures:
        raise QualitativeError("nothing to show: no method, and image and GT left out")
    if len(samples) * n_pictures > MAX_CELLS:
        raise QualitativeError(
            f"{len(samples)} samples × {n_pictures} columns is more than {MAX_CELLS} cells: "
            "no name or picture would be legible; choose fewer"
        )
    if spec.width <= 0 or spec.dpi <= 0:
        raise QualitativeError("the width and the dpi must be more than 0")
    if spec.inset_corner.replace("-", " ") not in INSET_CORNERS:  # the command's words too
        raise QualitativeError(
            f"the inset's corner {spec.inset_corner!r} is not one of {', '.join(INSET_CORNERS)}"
        )
    if not INSET_SHARES[0] <= spec.inset_share <= INSET_SHARES[1]:
        raise QualitativeError(
            f"the inset's share of its cell, {spec.inset_share:g}, is not between "
            f"{INSET_SHARES[0]:g} and {INSET_SHARES[1]:g}"
        )
    several = len({s.dataset for s in samples}) > 1
    notes: list[str] = []
    shapes = [_shape(s) for s in samples]
    known = [h / w for h, w in shapes if h and w]
    usual = statistics.median(known) if known else 0.75  # for a sample whose shape is unknown
    lay = layout(spec, [min(max(h / w if h and w else usual, 0.4), 2.5) for h, w in shapes])
    pixels = spec.width * spec.dpi * lay.height * spec.dpi
    if pixels > MAX_FIGURE_PIXELS:  # refused before Matplotlib allocates the canvas
        raise QualitativeError(
            f"{spec.width:g} × {lay.height:.1f} in at {spec.dpi} dpi is "
            f"{pixels / 1e6:,.0f} million pixels, more than {MAX_FIGURE_PIXELS // 10**6} "
            "million: choose a smaller --width or --dpi (a page is 7 in, print 300–600 dpi)"
        )
    if lay.cell_w < SMALL_CELL:
        across = len(samples) if spec.transpose else n_pictures
        notes.append(
            f"{across} pictures across {spec.width:g} in make each {lay.cell_w:.2f} in "
            f"({25.4 * lay.cell_w:.1f} mm) wide: too small to see a map's details in print; "
            + (
                "make the figure wider (--width page), transpose it, or show fewer"
                if spec.width < WIDTHS["page"]
                else "transpose it, or show fewer"
            )
        )
    rows: list[Row] = []
    for k, s in enumerate(samples):
        w_px, h_px = (max(1, round(v * spec.dpi)) for v in lay.cell(k))
        key = sample_key(s, several)
        region = next(
            (spec.insets[k] for k in (key, s.name, f"{s.dataset}/{s.name}") if k in spec.insets),
            None,
        )
        try:
            rows.append(_row(s, key, spec, (w_px, h_px), region, notes))
        except QualitativeError as exc:
            raise QualitativeError(f"{key}: {exc}") from None
        if on_progress:
            on_progress(k + 1, len(samples))
    if spec.sample_labels:
        notes += _shortened_names([r.label for r in rows], lay)
    return Planned(rows, columns, lay, notes)


def _shortened_names(labels: Sequence[str], lay: Layout) -> list[str]:
    """A note when sample names must be shortened to fit beside their cells (as drawn:
    :func:`elide` at the smallest label size), naming the first of them."""
    rooms = lay.widths if lay.transposed else lay.heights
    short = [
        (text, cut)
        for text, room in zip(labels, rooms, strict=False)
        if (cut := elide(text, LABEL_SIZES[-1], room * 0.96)) != text
    ]
    if not short:
        return []
    text, cut = short[0]
    return [
        f"{len(short)} of {len(labels)} sample names are shortened to fit beside their cells "
        f"({text!r} is printed {cut!r}): make the cells larger (a wider figure, fewer "
        f"{'samples' if lay.transposed else 'methods'}, or --transpose)"
    ]


def _shape(sample: Sample) -> tuple[int, int]:
    """The GT's (rows, cols) from its header, or (0, 0)."""
    from fminspect.io.headers import header_size

    for path in (sample.gt, sample.image):
        if path is None:
            continue
        try:
            with open(path, "rb") as fh:
                size = header_size(fh.read(1 << 16))
        except OSError:
            continue
        if size:
            return size[1], size[0]
    return 0, 0


def _row(
    sample: Sample,
    key: str,
    spec: QualitativeSpec,
    px: tuple[int, int],
    region: Region | None,
    notes: list[str],
) -> Row:
    cells: list[Cell] = []
    gt: np.ndarray | None = None
    try:
        gt = load_map(sample.gt).array
    except LoadError as exc:
        notes.append(f"{key}: GT unreadable: {exc}")
    shape = gt.shape[:2] if gt is not None else None
    if spec.show_image:
        if sample.image is None:
            notes.append(f"{key}: no image")
            cells.append(Cell(None, mark="missing"))
        else:
            try:
                image = load_image(sample.image)
                if shape is None:
                    shape = image.shape[:2]
                cells.append(
                    _cell(_fit(image, shape, "bilinear"), px, region, spec.inset_share, grey=False)
                )
            except LoadError as exc:
                notes.append(f"{key}: image unreadable: {exc}")
                cells.append(Cell(None, mark="unreadable"))
    if spec.show_gt:
        cells.append(
            _cell(to_u8(gt), px, region, spec.inset_share)
            if gt is not None
            else Cell(None, mark="unreadable")
        )
    for method in spec.methods:
        path = sample.preds.get(method)
        if path is None:
            notes.append(f"{key}: no map of {method}")
            cells.append(Cell(None, mark="missing"))
            continue
        try:
            pred = load_map(path).array
        except LoadError as exc:
            notes.append(f"{key}: {method}'s map unreadable: {exc}")
            cells.append(Cell(None, mark="unreadable"))
            continue
        if shape is None:
            shape = pred.shape[:2]
        cells.append(
            _cell(to_u8(_fit(pred, shape, spec.interpolation)), px, region, spec.inset_share)
        )
    if region is not None and shape is not None:  # outlined as it is enlarged: cut to the image
        h, w = shape
        cut = region.cut_to(w, h)
        if cut != region:
            notes.append(
                f"{key}: the inset's region {region} reaches past the {w}×{h} image; "
                f"{cut} is outlined and enlarged"
            )
            region = cut
        gain = _magnification(region, (w, h), px, spec.inset_share)
        if gain < 1:
            notes.append(
                f"{key}: the inset shows its region at {gain:.2g}× — smaller than the region "
                "outlined; choose a smaller region or a larger inset size"
            )
    return Row(key if spec.sample_labels else "", cells, region)


def _magnification(
    region: Region, image: tuple[int, int], px: tuple[int, int], share: float
) -> float:
    """How much larger the inset shows ``region`` than its outline in the picture (an
    ``image`` (w, h) fitted in ``px``): the inset is ``share`` of the cell's width, at most
    60 % of the picture's height (as :func:`_draw_cell` draws it)."""
    scale = min(px[0] / image[0], px[1] / image[1])
    inset_w = share * px[0]
    if inset_w * region.h / region.w > 0.6 * image[1] * scale:
        inset_w = 0.6 * image[1] * scale * region.w / region.h
    return inset_w / (region.w * scale)


def _fit(array: np.ndarray, shape: tuple[int, int] | None, interpolation: str) -> np.ndarray:
    if shape is None:
        return array
    fitted, _ = fit_to(array, shape, interpolation)
    return fitted


def _cell(
    array: np.ndarray,
    px: tuple[int, int],
    region: Region | None,
    share: float = INSET_SHARE,
    *,
    grey: bool = True,
) -> Cell:
    """The picture fitted inside ``px`` (width, height) without changing its shape, and the
    inset's enlarged region (``share`` of the cell's width)."""
    h, w = array.shape[:2]
    scale = min(px[0] / w, px[1] / h)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    shrink = scale < 1
    printed = cv2.resize(array, size, interpolation=cv2.INTER_AREA if shrink else cv2.INTER_CUBIC)
    zoom = None
    if region is not None:
        if region.x >= w or region.y >= h:
            raise QualitativeError(
                f"the inset's region {region.x:g},{region.y:g},{region.w:g},{region.h:g} is "
                f"outside the {w}×{h} image"
            )
        region = region.cut_to(w, h)
        x0, y0 = int(region.x), int(region.y)
        x1, y1 = (
            min(w, int(np.ceil(region.x + region.w))),
            min(h, int(np.ceil(region.y + region.h))),
        )
        crop = array[y0:y1, x0:x1]
        if crop.size:
            zw = max(1, round(px[0] * share))
            zh = max(1, round(zw * crop.shape[0] / crop.shape[1]))
            zoom = cv2.resize(
                crop, (zw, zh), interpolation=cv2.INTER_NEAREST if grey else cv2.INTER_CUBIC
            )
    return Cell(printed, grey=grey, scale=scale, zoom=zoom)


def _text_width(text: str, size: float, bold: bool = False) -> float:
    """The width of ``text`` in inches at ``size`` points, in the current font."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    prop = FontProperties(size=size, weight="bold" if bold else "normal")
    return float(TextPath((0, 0), text, prop=prop).get_extents().width) / 72.0


def elide(text: str, size: float, room: float) -> str:
    """``text`` as it fits ``room`` inches at ``size`` points: whole, or its end after "…"
    (a COD10K name keeps its class and number: "…Aquatic-3-Crab-154")."""
    if _text_width(text, size) <= room:
        return text
    for k in range(len(text) - 1, 0, -1):
        short = "…" + text[-k:]
        if _text_width(short, size) <= room:
            return short
    return "…"


def _widest(labels: Sequence[str], bold: Sequence[bool], size: float) -> float:
    return max((_text_width(t, size, b) for t, b in zip(labels, bold, strict=True)), default=0.0)


def _line(size: float) -> float:
    """The height in inches a line of labels at ``size`` points takes."""
    return size * 1.45 / 72


def layout(spec: QualitativeSpec, aspects: Sequence[float]) -> Layout:
    """Where everything goes (see the module notes), for samples of these shapes (height /
    width): the method names' size is the largest at which the longest fits, the cells share
    what is left of the width."""
    n_samples = len(aspects)
    import_matplotlib()
    import matplotlib

    heads = spec.columns
    bold = _bold(spec)
    small = LABEL_SIZES[-1]
    with matplotlib.rc_context(_rc(spec)):
        if spec.transpose:  # the names down the left, horizontal; the samples across
            across = n_samples
            size = next(
                (z for z in LABEL_SIZES if _widest(heads, bold, z) <= spec.width * 0.25),
                small,
            )
            left = min(_widest(heads, bold, size), spec.width * 0.25) + 0.05
            top = _line(small) if spec.sample_labels else 0.0
            # one height for the rows; each sample's column as wide as its shape asks
            cell_h = (spec.width - left - GAP * (across - 1)) / sum(1 / a for a in aspects)
            widths = tuple(cell_h / a for a in aspects)
            heights: tuple[float, ...] = (cell_h,) * len(heads)
            upright = False
        else:  # the names on top, the samples down the left, upright
            across = len(heads)
            left = _line(small) + 0.02 if spec.sample_labels else 0.0
            cell_w = (spec.width - left - GAP * (across - 1)) / across
            size = next((z for z in LABEL_SIZES if _widest(heads, bold, z) <= cell_w * 0.96), 0)
            upright = not size
            size = size or small
            top = _widest(heads, bold, size) + 0.05 if upright else _line(size)
            widths, heights = (cell_w,) * across, tuple(cell_w * a for a in aspects)
    if min(widths) <= 0.05:
        raise QualitativeError(
            f"{across} cells across do not fit in {spec.width:g} in; make the figure wider "
            "or show fewer"
        )
    return Layout(widths, heights, left, top, size, upright, spec.transpose)


def _rc(spec: QualitativeSpec) -> Any:
    """The settings a figure is drawn under: the stable ones, then the user's style."""
    return {**STABLE_RC, **spec.style, "savefig.dpi": spec.dpi}


def _bold(spec: QualitativeSpec) -> list[bool]:
    head = int(spec.show_image) + int(spec.show_gt)
    return [False] * head + [m in spec.highlight for m in spec.methods]


def draw(planned: Planned, spec: QualitativeSpec, out: Path, formats: Sequence[str]) -> list[Path]:
    """Write the figure as ``out`` with each format's suffix; the paths written."""
    import_matplotlib()
    import matplotlib
    import matplotlib.pyplot as plt

    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise QualitativeError(f"format {', '.join(bad)} is not one of {', '.join(FORMATS)}")
    written: list[Path] = []
    with matplotlib.rc_context(_rc(spec)):
        fig = _figure(planned, spec, plt)
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            for fmt in dict.fromkeys(formats):
                path = out.with_suffix(f".{fmt}")
                save(fig, path, fmt, tight=False)
                written.append(path)
        finally:
            plt.close(fig)
    return written


def _figure(planned: Planned, spec: QualitativeSpec, plt: Any) -> Any:
    lay = planned.layout
    heads = planned.columns
    bold = _bold(spec)
    W = spec.width
    H = lay.height
    fig = plt.figure(figsize=(W, H))
    xs = lay.left + np.concatenate([[0.0], np.cumsum(np.add(lay.widths, GAP))])
    tops = H - lay.top - np.concatenate([[0.0], np.cumsum(np.add(lay.heights, GAP))])

    def corner(i: int, j: int) -> tuple[float, float]:  # lower left of cell (row i, column j)
        return float(xs[j]), float(tops[i]) - lay.heights[i]

    for r, row in enumerate(planned.rows):
        cw, ch = lay.cell(r)
        for c, cell in enumerate(row.cells):
            x, y = corner(*((c, r) if spec.transpose else (r, c)))
            _draw_cell(fig, cell, row.region, (x, y, cw, ch), spec)
    small = LABEL_SIZES[-1]
    samples = [r.label for r in planned.rows] if spec.sample_labels else []
    if spec.transpose:
        for k, text in enumerate(heads):
            _, y = corner(k, 0)
            fig.text(
                (lay.left - 0.04) / W,
                (y + lay.heights[k] / 2) / H,
                text,
                ha="right",
                va="center",
                fontsize=lay.size,
                fontweight="bold" if bold[k] else "normal",
            )
        for k, text in enumerate(samples):
            x, _ = corner(0, k)
            fig.text(
                (x + lay.widths[k] / 2) / W,
                (H - lay.top + 0.02) / H,
                elide(text, small, lay.widths[k] * 0.96),
                ha="center",
                va="bottom",
                fontsize=small,
            )
    else:
        for k, text in enumerate(heads):
            x, _ = corner(0, k)
            fig.text(
                (x + lay.widths[k] / 2) / W,
                (H - lay.top + 0.03) / H,
                text,
                ha="center",
                va="bottom",
                rotation=90 if lay.upright else 0,
                fontsize=lay.size,
                fontweight="bold" if bold[k] else "normal",
            )
        for k, text in enumerate(samples):
            _, y = corner(k, 0)
            fig.text(
                (lay.left - 0.03) / W,
                (y + lay.heights[k] / 2) / H,
                elide(text, small, lay.heights[k] * 0.96),
                ha="right",
                va="center",
                rotation=90,
                fontsize=small,
            )
    return fig


def _draw_cell(
    fig: Any,
    cell: Cell,
    region: Region | None,
    box: tuple[float, float, float, float],
    spec: QualitativeSpec,
) -> None:
    """One cell; ``box`` is its (left, bottom, width, height) in inches; the inset goes in
    ``spec``'s corner."""
    from matplotlib.patches import Rectangle

    W, H = fig.get_figwidth(), fig.get_figheight()
    x, y, w, h = box
    if cell.array is None:
        ax = fig.add_axes((x / W, y / H, w / W, h / H))
        ax.set_facecolor("#ececec")
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_color("#b0b0b0")
            spine.set_linewidth(0.4)
        ax.text(
            0.5,
            0.5,
            cell.mark,
            ha="center",
            va="center",
            fontsize=5,
            color="#606060",
            style="italic",
            transform=ax.transAxes,
        )
        return
    ph, pw = cell.array.shape[:2]
    k = min(w / pw, h / ph)  # the picture fitted and centred in its cell
    fw, fh = pw * k, ph * k
    ax = fig.add_axes(((x + (w - fw) / 2) / W, (y + (h - fh) / 2) / H, fw / W, fh / H))
    ax.set_axis_off()
    shown: dict[str, Any] = {"interpolation": "none", "aspect": "auto"}
    if cell.grey:
        shown.update(cmap="gray", vmin=0, vmax=255)
    ax.imshow(cell.array, **shown)
    if region is None or cell.zoom is None:
        return
    s = cell.scale
    ax.add_patch(
        Rectangle(
            (region.x * s - 0.5, region.y * s - 0.5),
            region.w * s,
            region.h * s,
            fill=False,
            edgecolor=INSET_COLOUR,
            linewidth=0.6,
        )
    )
    zh, zw = cell.zoom.shape[:2]
    iw = spec.inset_share * w  # inches
    ih = iw * zh / zw
    if ih > 0.6 * fh:  # a tall region: as high as 60 % of the picture
        ih = 0.6 * fh
        iw = ih * zw / zh
    iw = min(iw, fw)
    right, top = spec.inset_corner.endswith("right"), spec.inset_corner.startswith("upper")
    wi, hi = iw / fw, ih / fh  # the inset, in the picture's axes fractions, flush in its corner
    inset = ax.inset_axes((1 - wi if right else 0, 1 - hi if top else 0, wi, hi))
    inset.imshow(cell.zoom, **shown)
    inset.set_axis_off()
    frame = _inset_frame(wi, hi, INSET_FRAME / 72 / fw, INSET_FRAME / 72 / fh, right, top)
    frame.set_transform(ax.transAxes)
    ax.add_patch(frame)


def _inset_frame(wi: float, hi: float, lx: float, ly: float, right: bool, top: bool) -> Any:
    """The inset's frame as a filled ring in the picture's axes fractions: ``lx`` × ``ly``
    wide, centred on the inset's inner edges, and on its outer edges reaching past the picture
    so that the picture's own clip cuts both at the same pixel (a frame drawn as lines ended a
    pixel short of the picture's edge at some dpi, a strip of the picture showing beyond it)."""
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path as MplPath

    def corner_box(x0: float, y0: float, x1: float, y1: float) -> list[tuple[float, float]]:
        # drawn for the lower-right corner, mirrored into the others
        xs = [1 - x for x in (x0, x1)] if not right else [x0, x1]
        ys = [1 - y for y in (y0, y1)] if top else [y0, y1]
        return [(xs[0], ys[0]), (xs[1], ys[0]), (xs[1], ys[1]), (xs[0], ys[1]), (xs[0], ys[0])]

    outer = corner_box(1 - wi - lx / 2, -ly, 1 + lx, hi + ly / 2)
    inner = corner_box(1 - wi + lx / 2, ly, 1 - lx, hi - ly / 2)[::-1]  # a hole: wound back
    codes = [MplPath.MOVETO, *[MplPath.LINETO] * 3, MplPath.CLOSEPOLY]
    ring = MplPath(outer + inner, codes * 2)
    return PathPatch(ring, facecolor=INSET_COLOUR, edgecolor="none", zorder=6)


def latex_escape(text: str) -> str:
    """``text`` as LaTeX prints it literally."""
    table = {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\^{}",
    }
    return "".join(table.get(c, c) for c in text)


def latex_snippet(
    path: Path, spec: QualitativeSpec, n_samples: int, datasets: Sequence[str]
) -> str:
    """The ``figure`` environment that includes ``path`` at the width it was made for."""
    page = spec.width > WIDTHS["column"] + 0.5
    env = "figure*" if page else "figure"
    width = r"\textwidth" if page else r"\linewidth"
    names = (["image"] if spec.show_image else []) + (["ground truth"] if spec.show_gt else [])
    names += [spec.labels.get(m, m) for m in spec.methods]
    way = "From top to bottom" if spec.transpose else "From left to right"
    where = f" on {', '.join(latex_escape(d) for d in datasets)}" if datasets else ""
    return "\n".join(
        [
            f"% made by fminspect qualitative: {n_samples} samples x {len(spec.methods)} methods;",
            r"% needs \usepackage{graphicx}",
            f"\\begin{{{env}}}[t]",
            r"  \centering",
            f"  \\includegraphics[width={width}]{{{path.name}}}",
            f"  \\caption{{Qualitative comparison{where}. {way}: "
            f"{', '.join(latex_escape(n) for n in names)}.}}",
            r"  \label{fig:qualitative}",
            f"\\end{{{env}}}",
            "",
        ]
    )


@dataclass(frozen=True, slots=True)
class Made:
    """What :func:`make` wrote, and the warnings (missing or unreadable files)."""

    written: list[Path]
    notes: list[str]
    samples: int
    pictures: int  # of each sample: the image, the GT, the methods' maps
    transposed: bool  # a column per sample (a row otherwise)


def make(
    samples: Sequence[Sample],
    spec: QualitativeSpec,
    out: Path | str,
    formats: Sequence[str] = (),
    *,
    latex: bool = True,
    on_progress: Callable[[int, int], None] | None = None,
) -> Made:
    """Read, draw and write the figure as ``out`` in each format (default: ``out``'s suffix),
    and beside it the LaTeX snippet including the PDF (else the PNG) unless ``latex`` is
    false."""
    out = Path(out)
    formats = tuple(dict.fromkeys(formats or [out.suffix.lower().lstrip(".")]))
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise QualitativeError(
            f"{out.name}: the format {', '.join(bad) or '(none)'} is not one of "
            f"{', '.join(FORMATS)}"
        )
    with _MATPLOTLIB:  # one figure at a time: pyplot and rcParams are the process's
        planned = plan(samples, spec, on_progress=on_progress)
        written = draw(planned, spec, out, formats)
    notes = list(planned.notes)
    if latex:
        from fminspect.io.atomic import write_text

        by_suffix = {p.suffix: p for p in written}
        included = by_suffix.get(".pdf") or by_suffix.get(".png")  # vector text first
        if included is None:
            notes.append("LaTeX cannot include SVG: no snippet written")
        else:
            tex = out.with_suffix(".tex")
            shown = sorted({s.dataset for s in samples})
            write_text(tex, latex_snippet(included, spec, len(samples), shown))
            written.append(tex)
    return Made(written, notes, len(samples), len(spec.columns), spec.transpose)
