"""A shareable gallery of cases: a static HTML site of the worst, the tagged or the filtered
samples of a dataset, for a co-author, a reviewer or a lab meeting.

``index.html`` lists the cases in a table — rank, a thumbnail of the image and the GT, the
sample's name, dataset, tags and note, the ordering measure of every method and their mean —
sortable by any column (click its title) and filtered by a text box; each case has a page of
its own (``cases/0001.html``) with the image, the GT and every chosen method's map, under each
map its scores on the chosen measures, the best and the worst of the ordering measure marked,
and links to the previous and the next case. Every number names its exact variant in the
legend of the page (:meth:`~fminspect.metrics.registry.MeasureInfo.label`).

The site opens from ``file://`` in any browser with no server: the pages hold their script
and style, the pictures are files beside them, named by the case's rank and the method's
place (never by a sample's or a method's name, so that no name makes a path, and every name
is escaped where it is printed). Its size stays bounded: pictures are JPEG thumbnails
(:data:`PICTURE` pixels on their longer side on a case's page, :data:`THUMB` high in the
table), not the maps themselves — 100 cases × 20 methods take about 15–25 MB.

Which cases (:func:`choose_cases`): those a case list names, in its order; else the samples
a filter keeps (the browser's filter language, :mod:`fminspect.batch.filters`; tags are read
from the folder's tag store), ordered worst first by a measure — one method's score or the
mean over the chosen methods — and the first ``count`` of them.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import html
import json
import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from fminspect import __version__
from fminspect.batch.filters import Facts, Filter
from fminspect.batch.scores import ScoreMatrix
from fminspect.io.atomic import write_bytes, write_text
from fminspect.io.discovery import Dataset, Sample
from fminspect.io.limits import MAX_PIXELS
from fminspect.io.loading import fit_to, load_image, load_map, to_u8
from fminspect.io.validation import LoadError

#: Cases a gallery shows unless asked otherwise.
DEFAULT_COUNT = 100
#: Longer side of a picture on a case's page, and height of a thumbnail in the table (px).
PICTURE = 320
THUMB = 72
#: Widest a thumbnail is shown in the table (px; a wider one is cropped at its sides).
THUMB_MAX = 200
#: JPEG quality of the pictures.
QUALITY = 85
#: Measures shown on the pages unless asked otherwise (those scored).
DEFAULT_SHOWN = ("Sm", "wFm", "MAE", "maxEm", "maxFm")


class GalleryError(ValueError):
    """A gallery that cannot be made as asked (an unknown measure or method)."""


@dataclass(frozen=True, slots=True)
class Case:
    """One case of the gallery: its sample, its place, its ordering value and what the
    user wrote about it."""

    rank: int
    sample: Sample
    value: float  # the ordering measure (one method's, or the methods' mean); NaN: unknown
    tags: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class GallerySpec:
    """What the gallery shows (see the module notes)."""

    methods: tuple[str, ...]
    by: str  # the measure the cases are ordered by
    shown: tuple[str, ...]  # the measures printed under each map
    method: str | None = None  # whose score orders the cases (None: the methods' mean)
    count: int = DEFAULT_COUNT
    labels: Mapping[str, str] = field(default_factory=dict)  # method → name printed
    title: str = ""
    variants: Mapping[str, str] = field(default_factory=dict)  # key → its exact variant
    interpolation: str = "bilinear"  # a map of another size than its GT, as it was scored
    max_pixels: int = MAX_PIXELS  # the files' limit, as for scoring


@dataclass(frozen=True, slots=True)
class Written:
    """What :func:`write_gallery` wrote."""

    index: Path
    cases: int
    files: int
    bytes: int
    notes: list[str]


def _higher_is_better(key: str) -> bool:
    from fminspect.metrics.registry import MEASURES_BY_KEY

    return MEASURES_BY_KEY[key].higher_is_better


def check_spec(spec: GallerySpec, matrices: Sequence[ScoreMatrix]) -> None:
    """A :class:`GalleryError` naming what is unknown: a measure not scored, a method no
    dataset has."""
    from fminspect.metrics.registry import MEASURES_BY_KEY

    keys = matrices[0].keys if matrices else ()
    for key in dict.fromkeys((spec.by, *spec.shown)):
        if key not in MEASURES_BY_KEY:
            near = difflib.get_close_matches(key, list(MEASURES_BY_KEY), n=1, cutoff=0.5)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise GalleryError(f"{key} is not a measure{hint}; `fminspect measures` lists them")
        if key not in keys:
            raise GalleryError(
                f"{key} is not scored here (scored: {', '.join(keys)}); add it with --measures"
            )
    methods = {m for mx in matrices for m in mx.methods}
    for m in (*spec.methods, *([spec.method] if spec.method else [])):
        if m not in methods:
            raise GalleryError(f"no method {m} (there are: {', '.join(sorted(methods))})")
    if spec.method and spec.methods and spec.method not in spec.methods:
        raise GalleryError(
            f"--method {spec.method} orders the cases, so it is shown: add it to --methods"
        )


def ordering_values(matrix: ScoreMatrix, spec: GallerySpec) -> np.ndarray:
    """Per sample (natural order): the ordering measure of ``spec.method``, or its mean over
    the chosen methods that have a score (NaN where none has)."""
    c = matrix.key_index[spec.by]
    if spec.method:  # (a dataset without that method: no value)
        j = matrix.method_index.get(spec.method)
        if j is None:
            return np.full(len(matrix.samples), np.nan)
        return np.array(matrix.values[:, j, c], dtype=float)
    cols = [matrix.method_index[m] for m in spec.methods if m in matrix.method_index]
    block = matrix.values[:, cols, c]
    known = np.isfinite(block)
    total = np.where(known, block, 0.0).sum(axis=1)
    n = known.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def choose_cases(
    sources: Sequence[tuple[Dataset, ScoreMatrix]],
    spec: GallerySpec,
    *,
    listed: Sequence[tuple[str, str]] = (),
    filters: Mapping[str, Filter | None] | None = None,
    tags_of: Callable[[str, str], frozenset[int]] = lambda dataset, name: frozenset(),
    tag_names: Mapping[int, str] | None = None,
    note_of: Callable[[str, str], str] = lambda dataset, name: "",
) -> tuple[list[Case], int]:
    """The cases (see the module notes) and how many samples were candidates: the
    (dataset or "", name) pairs of ``listed`` in their order, else the samples each
    dataset's filter keeps, worst first by the ordering measure over all the datasets; the
    first ``spec.count`` (0: all)."""
    values = [ordering_values(mx, spec) for _, mx in sources]
    picked: list[tuple[int, int]] = []  # (source, sample index)
    if listed:
        for dataset, name in dict.fromkeys(listed):
            for d, (ds, mx) in enumerate(sources):
                if dataset in ("", ds.name) and name in mx.sample_index:
                    picked.append((d, mx.sample_index[name]))
                    break
    else:
        sign = 1.0 if _higher_is_better(spec.by) else -1.0
        worst: list[float] = []
        for d, (ds, mx) in enumerate(sources):
            flt = (filters or {}).get(ds.name)
            keep = np.ones(len(mx.samples), bool)
            if flt is not None:
                keep = flt.mask(
                    mx, Facts(tags_of=functools.partial(tags_of, ds.name), dataset=ds.name)
                )
            for i in np.flatnonzero(keep).tolist():
                v = sign * values[d][i]
                picked.append((d, i))
                worst.append(v if math.isfinite(v) else math.inf)  # unknown scores last
        order = np.argsort(np.array(worst, float), kind="stable")
        picked = [picked[int(k)] for k in order]
    total = len(picked)
    if spec.count:
        picked = picked[: spec.count]
    names = tag_names or {}
    cases = []
    for rank, (d, i) in enumerate(picked, 1):
        ds, mx = sources[d]
        name = mx.samples[i]
        tags = tuple(names.get(t, str(t)) for t in sorted(tags_of(ds.name, name)))
        sample = ds.samples[i] if ds.samples[i].name == name else ds.sample(name)
        cases.append(Case(rank, sample, float(values[d][i]), tags, note_of(ds.name, name)))
    return cases, total


# --------------------------------------------------------------------------- pictures
def _jpeg(array: np.ndarray, longest: int, *, rgb: bool) -> bytes:
    h, w = array.shape[:2]
    k = min(1.0, longest / max(h, w))
    if k < 1:
        size = (max(1, round(w * k)), max(1, round(h * k)))
        array = cv2.resize(array, size, interpolation=cv2.INTER_AREA)
    array = to_u8(array)
    if rgb:
        array = cv2.cvtColor(array, cv2.COLOR_RGB2BGR)
    ok, data = cv2.imencode(".jpg", array, [cv2.IMWRITE_JPEG_QUALITY, QUALITY])
    if not ok:  # (OpenCV encodes any uint8 picture)
        raise ValueError("a picture could not be encoded")
    return data.tobytes()


def _thumb(image: np.ndarray | None, gt: np.ndarray | None) -> np.ndarray | None:
    """The table's thumbnail: the image and the GT side by side, :data:`THUMB` high."""
    parts = []
    for array, rgb in ((image, True), (gt, False)):
        if array is None:
            continue
        h, w = array.shape[:2]
        size = (max(1, round(w * THUMB / h)), THUMB)
        small = to_u8(cv2.resize(array, size, interpolation=cv2.INTER_AREA))
        parts.append(small if rgb else np.repeat(small[:, :, None], 3, axis=2))
        parts.append(np.full((THUMB, 2, 3), 255, np.uint8))
    return np.concatenate(parts[:-1], axis=1) if parts else None


def _pictures(case: Case, spec: GallerySpec, folder: Path) -> tuple[dict[str, str], list[str], int]:
    """Write the case's pictures into ``folder``; the file of each ("image", "gt", "thumb",
    the methods' places "m01"…), the notes of what could not be read, and the thumbnail's
    width (at :data:`THUMB` high; 0 without one)."""
    notes: list[str] = []
    files: dict[str, str] = {}
    s = case.sample
    folder.mkdir(parents=True, exist_ok=True)
    gt = image = None
    try:
        gt = load_map(s.gt, max_pixels=spec.max_pixels).array
    except LoadError as exc:
        notes.append(f"{s.name}: GT unreadable: {exc}")
    if s.image is not None:
        try:
            image = load_image(s.image, max_pixels=spec.max_pixels)
        except LoadError as exc:
            notes.append(f"{s.name}: image unreadable: {exc}")
    shape = gt.shape[:2] if gt is not None else (image.shape[:2] if image is not None else None)
    for name, array, rgb in (("image", image, True), ("gt", gt, False)):
        if array is not None:
            write_bytes(folder / f"{name}.jpg", _jpeg(array, PICTURE, rgb=rgb))
            files[name] = f"{name}.jpg"
    thumb = _thumb(image, gt)
    width = 0 if thumb is None else thumb.shape[1]
    if thumb is not None:
        write_bytes(folder / "thumb.jpg", _jpeg(thumb, 10 * THUMB, rgb=True))
        files["thumb"] = "thumb.jpg"
    for k, method in enumerate(spec.methods, 1):
        path = s.preds.get(method)
        if path is None:
            continue
        try:
            pred = load_map(path, max_pixels=spec.max_pixels).array
        except LoadError as exc:
            notes.append(f"{s.name}: {method}'s map unreadable: {exc}")
            continue
        if shape is not None:
            pred, _ = fit_to(pred, shape, spec.interpolation)
        write_bytes(folder / f"m{k:02d}.jpg", _jpeg(pred, PICTURE, rgb=False))
        files[f"m{k:02d}"] = f"m{k:02d}.jpg"
    return files, notes, width


# --------------------------------------------------------------------------- pages
_STYLE = (
    """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.2em;color:#222}
h1{font-size:1.3em;margin:.2em 0} .muted{color:#666} a{color:#0b5cad}
table{border-collapse:collapse} th,td{padding:3px 7px;border-bottom:1px solid #e3e3e3}
th{position:sticky;top:0;z-index:1;background:#f5f5f5;cursor:pointer;white-space:nowrap;
text-align:left}
th.num,td.num{text-align:right;font-variant-numeric:tabular-nums}
th[aria-sort=ascending]::after{content:" \\25B2"} th[aria-sort=descending]::after{content:" \\25BC"}
td.pin{position:sticky;z-index:1;background:#fff} th.pin{z-index:2}
.p0{left:0} .p1{left:var(--pin1,0)} .p2{left:var(--pin2,0)}
td.name{white-space:nowrap}
img.thumb{height:THUMBpx;max-width:THUMB_MAXpx;object-fit:cover;display:block;
border:1px solid #bbb}
#filter{width:24em;padding:4px;margin:.5em 0} .grid{display:flex;flex-wrap:wrap;gap:10px}
.card{width:PICTUREpx} .card img{max-width:100%;display:block;border:1px solid #ddd}
.card .title{font-weight:600;overflow-wrap:anywhere} .card.best .title{color:#0a7d2c}
.card.worst .title{color:#b3261e} .empty{height:120px;background:#eee;display:flex;
align-items:center;justify-content:center;color:#777;font-style:italic}
.scores{font-size:12px;font-variant-numeric:tabular-nums} nav{margin:.6em 0}
.legend{font-size:12px;color:#555;margin-top:1.5em} .tag{background:#eef;border-radius:3px;
padding:0 4px;margin-right:3px;font-size:12px;white-space:nowrap}
""".replace("THUMB_MAX", str(THUMB_MAX))
    .replace("THUMB", str(THUMB))
    .replace("PICTURE", str(PICTURE))
)

_SCRIPT = """
(function(){
var table=document.getElementById('cases');var body=table.tBodies[0];
var heads=table.tHead.rows[0].cells;
function key(row,i){var c=row.cells[i];var v=c.getAttribute('data-v');
 if(v!==null){return v===''?NaN:parseFloat(v);}return c.textContent.toLowerCase();}
Array.prototype.forEach.call(heads,function(th,i){th.addEventListener('click',function(){
 var asc=th.getAttribute('aria-sort')!=='ascending';
 Array.prototype.forEach.call(heads,function(h){h.removeAttribute('aria-sort');});
 th.setAttribute('aria-sort',asc?'ascending':'descending');
 var rows=Array.prototype.slice.call(body.rows);
 rows.sort(function(a,b){var x=key(a,i),y=key(b,i);
  if(typeof x==='number'){if(isNaN(x))return 1;if(isNaN(y))return -1;return asc?x-y:y-x;}
  return asc?(x<y?-1:x>y?1:0):(x<y?1:x>y?-1:0);});
 rows.forEach(function(r){body.appendChild(r);});});});
var box=document.getElementById('filter');var count=document.getElementById('count');
function apply(){var q=box.value.toLowerCase().trim();var n=0;
 Array.prototype.forEach.call(body.rows,function(r){
  var hit=!q||r.getAttribute('data-text').indexOf(q)>=0;r.hidden=!hit;if(hit)n++;});
 count.textContent=n+' of '+body.rows.length+' cases';}
box.addEventListener('input',apply);apply();
function pin(){var x=0;for(var i=1;i<3;i++){x+=heads[i-1].offsetWidth;
 table.style.setProperty('--pin'+i,x+'px');}}
pin();window.addEventListener('resize',pin);
})();
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _number(value: float) -> str:
    return "—" if not math.isfinite(value) else f"{value:.3f}"


def _page(title: str, body: str, script: str = "") -> str:
    tail = f"<script>{script}</script>" if script else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{body}{tail}</body></html>\n"
    )


def _legend(spec: GallerySpec) -> str:
    keys = dict.fromkeys((spec.by, *spec.shown))
    items = "; ".join(f"<b>{_e(k)}</b>: {_e(spec.variants.get(k, k))}" for k in keys)
    return (
        f'<p class="legend">Every number is one image\'s own score. {items}. '
        f"Made by fminspect {_e(__version__)}.</p>"
    )


def _label(spec: GallerySpec, method: str) -> str:
    return spec.labels.get(method, method)


def _index(
    cases: Sequence[Case],
    spec: GallerySpec,
    matrices: Mapping[str, ScoreMatrix],
    files: Mapping[int, dict[str, str]],
    thumb_widths: Mapping[int, int],
    heading: str,
    listed: bool = False,
) -> str:
    by = spec.by
    order = "higher is better" if _higher_is_better(by) else "lower is better"
    whose = _label(spec, spec.method) if spec.method else "the mean over the methods"
    tagged = any(c.tags or c.note for c in cases)  # the tags and notes columns, if any
    heads = ["#", "", "sample", "dataset", *(["tags", "note"] if tagged else [])]
    first_score = len(heads)
    heads += [f"mean {by}"] + [_label(spec, m) for m in spec.methods]
    numeric = {0} | set(range(first_score, len(heads)))
    pinned = {0: "pin p0", 1: "pin p1", 2: "pin p2"}
    th = "".join(
        f'<th class="{" ".join(c for c in (pinned.get(i), "num" if i in numeric else "") if c)}"'
        f">{_e(h)}</th>"
        for i, h in enumerate(heads)
    )
    rows = []
    for case in cases:
        s = case.sample
        mx = matrices[s.dataset]
        scores = [mx.value(s.name, m, by) for m in spec.methods]
        known = [v for v in scores if math.isfinite(v)]
        mean = sum(known) / len(known) if known else math.nan
        link = f"cases/{case.rank:04d}.html"
        thumb = files.get(case.rank, {}).get("thumb")
        # its shown width: the table is laid out before the picture loads
        width = min(THUMB_MAX, thumb_widths.get(case.rank, THUMB_MAX))
        img = (
            f'<img class="thumb" loading="lazy" alt="" width="{width}" height="{THUMB}" '
            f'src="img/{case.rank:04d}/{thumb}">'
            if thumb
            else ""
        )
        text = " ".join([s.name, s.dataset, *case.tags, case.note]).lower()
        cells = [  # the rank, the picture and the name stay in view when scrolled sideways
            f'<td class="num pin p0" data-v="{case.rank}">{case.rank}</td>',
            f'<td class="pin p1"><a href="{link}">{img}</a></td>',
            f'<td class="name pin p2"><a href="{link}">{_e(s.name)}</a></td>',
            f"<td>{_e(s.dataset)}</td>",
        ]
        if tagged:
            tags = "".join(f'<span class="tag">{_e(t)}</span>' for t in case.tags)
            cells += [f"<td>{tags}</td>", f"<td>{_e(case.note)}</td>"]
        cells += [
            f'<td class="num" data-v="{v if math.isfinite(v) else ""}">{_number(v)}</td>'
            for v in [mean, *scores]
        ]
        rows.append(f'<tr data-text="{_e(text)}">{"".join(cells)}</tr>')
    body = (
        f"<h1>{_e(spec.title or 'fminspect gallery')}</h1>"
        f'<p class="muted">{_e(heading)}'
        + ("" if listed else f"; ordered by {_e(by)} ({order}) of {_e(whose)}")
        + f". The methods' columns are their {_e(by)}. Click a column's title to sort by it; "
        "click a case to open it.</p>"
        '<input id="filter" type="search" placeholder="filter by name, dataset, tag or note" '
        'aria-label="filter the cases"> <span id="count" class="muted"></span>'
        # the page itself scrolls both ways (a box of its own that scrolled sideways kept the
        # titles from staying on top, and its scroll bar was under the last case)
        f'<table id="cases"><thead><tr>{th}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>" + _legend(spec)
    )
    return _page(spec.title or "fminspect gallery", body, _SCRIPT)


def _case_page(
    case: Case, n: int, spec: GallerySpec, matrix: ScoreMatrix, files: dict[str, str]
) -> str:
    s = case.sample
    base = f"../img/{case.rank:04d}/"
    by = spec.by
    values = {m: matrix.value(s.name, m, by) for m in spec.methods}
    known = {m: v for m, v in values.items() if math.isfinite(v)}
    best = worst = None
    if len(known) > 1:
        pick = max if _higher_is_better(by) else min
        other = min if pick is max else max
        best, worst = pick(known, key=known.__getitem__), other(known, key=known.__getitem__)

    def card(title: str, file: str | None, scores: str = "", kind: str = "") -> str:
        picture = (
            f'<img loading="lazy" alt="{_e(title)}" src="{base}{file}">'
            if file
            else '<div class="empty">missing</div>'
        )
        return (
            f'<div class="card {kind}"><div class="title">{_e(title)}</div>{picture}'
            f'<div class="scores">{scores}</div></div>'
        )

    cards = [card("Image", files.get("image")), card("GT", files.get("gt"))]
    for k, m in enumerate(spec.methods, 1):
        scores = " · ".join(
            f"{_e(key)} {_number(matrix.value(s.name, m, key))}" for key in spec.shown
        )
        kind = "best" if m == best else "worst" if m == worst else ""
        mark = " ▲ best" if kind == "best" else " ▼ worst" if kind == "worst" else ""
        cards.append(card(_label(spec, m) + mark, files.get(f"m{k:02d}"), scores, kind))
    prev = f'<a href="{case.rank - 1:04d}.html">← previous</a>' if case.rank > 1 else ""
    nxt = f'<a href="{case.rank + 1:04d}.html">next →</a>' if case.rank < n else ""
    tags = "".join(f'<span class="tag">{_e(t)}</span>' for t in case.tags)
    note = f"<p>{_e(case.note)}</p>" if case.note else ""
    body = (
        f'<nav><a href="../index.html">all cases</a> · {prev} {nxt}</nav>'
        f"<h1>#{case.rank}: {_e(s.name)}</h1>"
        f'<p class="muted">{_e(s.dataset)} · {_e(by)} {_number(case.value)} '
        f"({_e(_label(spec, spec.method) if spec.method else 'mean over the methods')}) "
        f"{tags}</p>{note}"
        f'<p class="muted">best {_e(by)}: <b>{_e(_label(spec, best)) if best else "—"}</b>, '
        f"worst: <b>{_e(_label(spec, worst)) if worst else '—'}</b></p>"
        f'<div class="grid">{"".join(cards)}</div>' + _legend(spec)
    )
    return _page(f"#{case.rank} {s.name}", body)


def write_gallery(
    out: Path | str,
    cases: Sequence[Case],
    spec: GallerySpec,
    matrices: Mapping[str, ScoreMatrix],
    *,
    heading: str = "",
    listed: bool = False,
    jobs: int = 1,
    on_progress: Callable[[int, int], None] | None = None,
) -> Written:
    """Write the site into ``out`` (see the module notes): the pictures in ``jobs`` threads
    (decoding and encoding release the GIL), then the pages. ``listed``: the cases are a
    case list's, in its order (not ordered by a measure)."""
    out = Path(out)
    _clear(out)
    (out / "cases").mkdir(parents=True, exist_ok=True)
    files: dict[int, dict[str, str]] = {}
    widths: dict[int, int] = {}
    notes: list[str] = []

    def one(case: Case) -> tuple[int, dict[str, str], list[str], int]:
        found, said, width = _pictures(case, spec, out / "img" / f"{case.rank:04d}")
        return case.rank, found, said, width

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for done, (rank, found, said, width) in enumerate(pool.map(one, cases), 1):
            files[rank] = found
            widths[rank] = width
            notes += said
            if on_progress:
                on_progress(done, len(cases))
    for case in cases:
        page = _case_page(case, len(cases), spec, matrices[case.sample.dataset], files[case.rank])
        write_text(out / "cases" / f"{case.rank:04d}.html", page)
    index = out / "index.html"
    write_text(index, _index(cases, spec, matrices, files, widths, heading, listed))
    data = {
        "cases": [
            {
                "rank": c.rank,
                "dataset": c.sample.dataset,
                "sample": c.sample.name,
                "value": c.value if math.isfinite(c.value) else None,
                "tags": c.tags,
                "note": c.note,
                "scores": _scores_of(c, spec, matrices[c.sample.dataset]),
            }
            for c in cases
        ],
        "by": spec.by,
        "method": spec.method,
        "methods": list(spec.methods),
    }
    write_text(out / "cases.json", json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    paths = [index, out / "cases.json"]
    paths += [out / "cases" / f"{c.rank:04d}.html" for c in cases]
    paths += [
        out / "img" / f"{rank:04d}" / f for rank, found in files.items() for f in found.values()
    ]
    return Written(index, len(cases), len(paths), sum(p.stat().st_size for p in paths), notes)


def _check_out(out: Path) -> None:
    """A new or empty folder, or an earlier gallery; any other is refused."""
    if not out.exists():
        return
    if not out.is_dir():
        raise GalleryError(f"{out}: not a folder")
    if not (out / "cases.json").is_file() and any(out.iterdir()):
        raise GalleryError(
            f"{out}: the folder is not empty and holds no gallery; give a new or empty folder"
        )


def _scores_of(case: Case, spec: GallerySpec, matrix: ScoreMatrix) -> dict[str, Any]:
    """Each shown method's scores of the case on the ordering and shown measures (None
    where unknown), for ``cases.json``."""
    keys = list(dict.fromkeys((spec.by, *spec.shown)))
    out: dict[str, Any] = {}
    for m in spec.methods:
        values = {k: matrix.value(case.sample.name, m, k) for k in keys}
        out[m] = {k: (v if math.isfinite(v) else None) for k, v in values.items()}
    return out


def _clear(out: Path) -> None:
    """Make ``out`` ready (see :func:`_check_out`): an earlier gallery's pages and pictures
    removed, so that none of a longer list is left."""
    import shutil

    _check_out(out)
    if (out / "cases.json").is_file():
        for sub in ("cases", "img"):
            shutil.rmtree(out / sub, ignore_errors=True)


def describe(*, listed: bool, filtered: str, total: int, kept: int) -> str:
    """The index page's line saying which cases these are."""
    if listed:  # (a trial: 100 of a 250-case list kept, said as "100 cases of a case list")
        if kept < total:
            return f"the first {kept} of the {total} cases of a case list, in its order"
        return f"{kept} cases of a case list, in its order"
    what = f"the {kept} worst of {total} samples" if kept < total else f"all {total} samples"
    return what + (f" that pass the filter “{filtered}”" if filtered else "")


#: What a per-image value of each kind of key is (the pages show no dataset value).
_PER_IMAGE = {
    "max": "the max over the image's 256 thresholds",
    "mean": "the mean over the image's 256 thresholds",
    "min": "the min over the image's 256 thresholds",
    "adaptive": "at the image's adaptive threshold",
    "binary": "of the map binarised",
}


def variants(keys: Sequence[str], params: Any) -> dict[str, str]:
    """Each key's exact variant under ``params``, for the legend."""
    from fminspect.metrics.registry import MEASURES_BY_KEY

    out = {}
    for k in keys:
        info = MEASURES_BY_KEY[k]
        variant = info.variant(params)
        how = _PER_IMAGE.get(info.kind, "")
        out[k] = f"{info.family}{f' ({variant})' if variant else ''}{f', {how}' if how else ''}"
    return out


def score_dataset(
    dataset: Dataset,
    config: Any,
    store: Path | str,
    *,
    jobs: int = 1,
    on_message: Callable[[str], None] | None = None,
    progress: bool | None = None,
) -> ScoreMatrix:
    """The dataset's per-image scores: those ``store`` holds read (an earlier ``eval``),
    the rest computed on ``jobs`` processes with a progress bar (or plain lines in a log),
    as the window's browser fills its list."""
    from fminspect.batch.progress import Progress
    from fminspect.batch.scores import score_matrix
    from fminspect.batch.stream import Planned, stream_evaluation
    from fminspect.batch.stream import Progress as Step

    matrix = score_matrix(dataset, config)
    bar: Progress | None = None
    done = 0
    try:
        for event in stream_evaluation(dataset, matrix, config, store, jobs=jobs):
            if isinstance(event, Planned) and not event.units and on_message:
                on_message(f"{dataset.name}: every pair's scores read from {store}")
            if isinstance(event, Planned) and event.units and bar is None:
                if on_message:
                    on_message(
                        f"{dataset.name}: {event.stored} of {event.pairs} pairs' scores read "
                        f"from {store}, {event.units} images to score"
                    )
                bar = Progress(event.units, f"scoring {dataset.name}", enabled=progress)
                bar.__enter__()
            elif isinstance(event, Step) and bar is not None:
                bar.advance(event.done - done)
                done = event.done
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    return matrix


def make_gallery(
    datasets: Sequence[Dataset],
    out: Path | str,
    config: Any,
    *,
    methods: Sequence[str] = (),
    by: str = "Sm",
    method: str | None = None,
    count: int = DEFAULT_COUNT,
    shown: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    title: str = "",
    filter_text: str = "",
    listed: Sequence[tuple[str, str]] = (),
    store: Path | str | None = None,
    tags: Path | None = None,
    jobs: int = 1,
    on_message: Callable[[str], None] | None = None,
    progress: bool | None = None,
) -> Written:
    """Score ``datasets`` under ``config`` (reading what ``store``, else the store an
    ``eval`` used for each, holds), choose the cases and write the site into ``out`` (see
    the module notes). ``tags``: the folder's tag store, read for the filter's tag clauses
    and shown beside each case. ``methods`` and ``shown`` default to all and to
    :data:`DEFAULT_SHOWN`.

    Raises
    ------
    GalleryError
        A measure not scored, an unknown method, a filter that cannot be read or keeps no
        sample.
    """
    from fminspect.pipeline.store import store_for
    from fminspect.pipeline.tags import TagStore

    _check_out(Path(out))
    # a filter that cannot be read is said before anything is scored
    names: dict[int, str] = {}  # the tags' names, for the filter's tag clauses
    if tags is not None and Path(tags).is_file():
        with TagStore(tags) as store0:
            names = store0.names
    _filters(filter_text, [(ds, None) for ds in datasets], config.keys_for(True), names)
    sources = [
        (
            ds,
            score_dataset(
                ds,
                config,
                store or store_for(ds.gt.path),
                jobs=jobs,
                on_message=on_message,
                progress=progress,
            ),
        )
        for ds in datasets
    ]
    first = sources[0][1]
    spec = GallerySpec(
        methods=tuple(methods or dict.fromkeys(m for _, mx in sources for m in mx.methods)),
        by=by,
        shown=tuple(shown or [k for k in DEFAULT_SHOWN if k in first.key_index]),
        method=method,
        count=count,
        labels=dict(labels or {}),
        title=title or f"fminspect gallery: {', '.join(d.name for d in datasets)}",
        interpolation=config.interpolation,
        max_pixels=config.max_pixels,
    )
    check_spec(spec, [mx for _, mx in sources])
    spec = dataclasses.replace(spec, variants=variants([by, *spec.shown], config.params))
    filters = _filters(filter_text, sources, (), names)
    tag_store = TagStore(tags) if tags is not None and Path(tags).is_file() else None
    try:
        cases, total = choose_cases(
            sources,
            spec,
            listed=listed,
            filters=filters,
            tags_of=tag_store.tags if tag_store is not None else (lambda d, n: frozenset()),
            tag_names=tag_store.names if tag_store is not None else {},
            note_of=tag_store.note if tag_store is not None else (lambda d, n: ""),
        )
    finally:
        if tag_store is not None:
            tag_store.close()
    if listed and on_message:
        _note_unknown(listed, datasets, on_message)
    if not cases:
        keeps = " and ".join(
            w for w, on in (("the case list", listed), ("the filter", filter_text.strip())) if on
        )
        raise GalleryError(f"no case to show: {keeps or 'the selection'} keeps no sample")
    heading = describe(
        listed=bool(listed), filtered=filter_text.strip(), total=total, kept=len(cases)
    )
    if on_message:
        more = " (--count 0 writes them all)" if len(cases) < total and listed else ""
        on_message(
            f"gallery: {heading}; writing {len(cases)} page{'s' if len(cases) > 1 else ''}{more}"
        )
    bar = _bar(progress)
    try:
        return write_gallery(
            out,
            cases,
            spec,
            {d.name: m for d, m in sources},
            heading=heading,
            listed=bool(listed),
            jobs=jobs,
            on_progress=bar,
        )
    finally:
        bar(-1, -1)


def _filters(
    text: str,
    sources: Sequence[tuple[Dataset, Any]],
    keys: Sequence[str],
    names: dict[int, str],
) -> dict[str, Any]:
    """``text`` parsed for each dataset of ``sources`` (its scores' measures and methods,
    or ``keys`` and the dataset's methods before anything is scored; ``names``: the tags').
    A method one dataset lacks has no score there: its clause keeps none of that dataset's
    samples.

    Raises
    ------
    GalleryError
        The filter cannot be read.
    """
    from fminspect.batch.filters import FilterError, parse

    every = list(
        dict.fromkeys(
            m for ds, mx in sources for m in (mx.methods if mx is not None else ds.method_names)
        )
    )
    try:
        return {
            ds.name: parse(text, mx.keys if mx is not None else keys, every, names)
            for ds, mx in sources
        }
    except FilterError as exc:
        raise GalleryError(str(exc)) from None


def _note_unknown(
    listed: Sequence[tuple[str, str]],
    datasets: Sequence[Dataset],
    on_message: Callable[[str], None],
) -> None:
    """Say how many names of a case list are in no dataset (a dataset-less name matches a
    sample of that name in any dataset)."""
    known = {(ds.name, s.name) for ds in datasets for s in ds.samples}
    plain = {n for _, n in known}
    unknown = [
        n for d, n in dict.fromkeys(listed) if ((d, n) not in known if d else n not in plain)
    ]
    if unknown:
        on_message(
            f"note: {len(unknown)} name{'s' if len(unknown) != 1 else ''} of the case list "
            f"in no dataset (e.g. {', '.join(unknown[:3])})"
        )


def _bar(enabled: bool | None) -> Callable[[int, int], None]:
    """A progress callback drawing a bar of the pictures written; (-1, -1) ends it."""
    from fminspect.batch.progress import Progress

    state: dict[str, Progress] = {}

    def tick(done: int, total: int) -> None:
        if done < 0:
            if "bar" in state:
                state.pop("bar").__exit__(None, None, None)
            return
        if "bar" not in state:
            state["bar"] = Progress(total, "pictures", enabled=enabled)
            state["bar"].__enter__()
        state["bar"].advance()

    return tick
