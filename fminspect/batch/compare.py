"""Why does my number differ from theirs? Evaluate under every candidate convention and say
which one reproduces a reference number.

The reference is a table from elsewhere — a paper's table typed into a CSV, another tool's
JSON or XLSX, another ``fminspect eval`` folder — read by :func:`read_reference`, its column
names as papers and toolboxes print them (:data:`MEASURE_NAMES`, listed in
``docs/evaluation.md``). A value agrees when rounding ours to its printed digits gives it —
once (0.873 means [0.8725, 0.8735]) or twice, through one to three more digits first
(0.79049 → 0.7905 → 0.791, a table made from a rounded table), which is said.

The dataset is evaluated under fminspect's settings (the *baseline*: the defaults, or the
options given) and under every *hypothesis* (:func:`hypotheses`): each knob of
:data:`fminspect.pipeline.conventions.CONVENTION_KNOBS` changed alone, each convention
preset, every other resize rule (only when some map needed resizing), the empty GTs left
out (only when there are some), the max keys formed as the mean of per-image maxima instead
of the max of the image-averaged curve, max F as the classic benchmark forms it (F of the
image-averaged precision and recall) and "mean F" as its adaptive F; then, for what none of
those reproduces, every two of them together where one only selects images or forms the
dataset value differently (a convention with the empty GTs left out; two knobs together are
tried only as a preset). A hypothesis is evaluated only for the measures it can change (a
knob of the S-measure, only ``Sm``); the result store makes a second run free. Then, per
dataset, method and measure (:class:`Finding`): the baseline agrees; or it does not and these
hypotheses reproduce the reference (``explained``); or none does (``unexplained``, with what
is known about the images — maps missing here, maps resized — that a convention cannot
account for; no "closest" hypothesis is named, as one that does not reproduce the value is
no lead).

Not tried (said in every report): a different image set than the one on disk.
"""

from __future__ import annotations

import csv
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from fminspect.metrics import MEASURES_BY_KEY, Params
from fminspect.metrics.suite import FIELD_PARAMS
from fminspect.pipeline.conventions import CONVENTION_KNOBS, CONVENTIONS

#: Alternative resize rules tried when some map needed resizing.
INTERPOLATIONS = ("bilinear", "bicubic", "nearest", "area", "lanczos")
#: What the report says is not tried.
NOT_TRIED = ("another image set than the one on disk",)
#: Largest reference file read (bytes).
MAX_REFERENCE = 32 << 20

#: Names other tools and papers give the measures, as :func:`measure_key` reduces them
#: (Unicode-normalised, case-folded, without spaces, arrows, punctuation, sub- and
#: superscript marks; ξ read as φ) → fminspect's keys.
MEASURE_NAMES = {
    **{k.lower(): k for k in MEASURES_BY_KEY},
    "s": "Sm",
    "smeasure": "Sm",
    "salpha": "Sm",
    "sα": "Sm",
    "wf": "wFm",
    "weightedf": "wFm",
    "weightedfmeasure": "wFm",
    "fwβ": "wFm",
    "fβw": "wFm",
    "fωβ": "wFm",
    "fβω": "wFm",
    "fbetaomega": "wFm",
    "fomegabeta": "wFm",
    "mathcalm": "MAE",
    "ephimax": "maxEm",
    "ephimean": "meanEm",
    "ephiadp": "adpEm",
    "fbetamax": "maxFm",
    "fbetamean": "meanFm",
    "fbetaadp": "adpFm",
    "m": "MAE",
    "maxf": "maxFm",
    "fmax": "maxFm",
    "maxfβ": "maxFm",
    "fβmax": "maxFm",
    "meanf": "meanFm",
    "avgf": "meanFm",
    "avgfm": "meanFm",
    "fβmean": "meanFm",
    "adpf": "adpFm",
    "fβadp": "adpFm",
    "maxe": "maxEm",
    "emax": "maxEm",
    "eφmax": "maxEm",
    "meane": "meanEm",
    "me": "meanEm",
    "avge": "meanEm",
    "avgem": "meanEm",
    "eφmean": "meanEm",
    "adpe": "adpEm",
    "eφadp": "adpEm",
    "fmaxβ": "maxFm",
    "fmeanβ": "meanFm",
    "fadpβ": "adpFm",
    "emaxφ": "maxEm",
    "emeanφ": "meanEm",
    "eadpφ": "adpEm",
    # words as papers and the MATLAB toolboxes print them
    "maxfmeasure": "maxFm",
    "meanfmeasure": "meanFm",
    "averagefmeasure": "meanFm",
    "adaptivefmeasure": "adpFm",
    "adpfmeasure": "adpFm",
    "maxemeasure": "maxEm",
    "meanemeasure": "meanEm",
    "adaptiveemeasure": "adpEm",
    "adpemeasure": "adpEm",
    "weightedfβ": "wFm",
    "smeasureα": "Sm",
    "structuremeasure": "Sm",
    "meanabsoluteerror": "MAE",
    "maxiou": "maxIoU",
    "meaniou": "meanIoU",
    "iouatmaxf": "IoU_maxFm_meanPR",
    "iouatmaxfm": "IoU_maxFm_meanPR",
    "ioumaxf": "IoU_maxFm_meanPR",
    "ioumaxfm": "IoU_maxFm_meanPR",
    "ioumaxfmeasure": "IoU_maxFm_meanPR",
}


class CompareError(ValueError):
    """A reference that cannot be read; the message names the file and the problem."""


def measure_key(name: str) -> str | None:
    """fminspect's key for a column name of another table (``None`` if unknown): case,
    Unicode form (``Fᵝ``, full-width letters), spacing, arrows, brackets, ``@``, LaTeX markup
    and sub/superscript marks do not matter (``F_β^max``, ``max F-measure``, ``IoU(@ max
    Fm)``, ``$E_\\xi^{mean}$``)."""
    plain = unicodedata.normalize("NFKC", str(name)).casefold()
    plain = plain.replace("\\xi", "ξ").replace("\\phi", "φ").replace("\\beta", "β")
    plain = plain.replace("\\alpha", "α").replace("\\omega", "ω").replace("\\mathcal", "mathcal")
    plain = re.sub(r"[\s_\-↑↓$\\{}^()\[\]@.,:;*'\"`]", "", plain)
    plain = plain.replace("mathrm", "").replace("text", "").replace("ϕ", "φ").replace("ξ", "φ")
    return MEASURE_NAMES.get(plain) or MEASURE_NAMES.get(plain.replace("φ", ""))


# ------------------------------------------------------------------------------ reference
@dataclass(frozen=True, slots=True)
class RefValue:
    value: float
    #: half a unit of the last printed digit (1e-9 for a value given in full)
    tolerance: float
    text: str
    #: decimals printed, in the value's units (None: given in full)
    decimals: int | None = None


@dataclass(slots=True)
class Reference:
    source: str
    #: (dataset, method, key) → value
    values: dict[tuple[str, str, str], RefValue] = field(default_factory=dict)
    #: columns or entries that were not used, and why
    notes: list[str] = field(default_factory=list)


#: Cells that mean "no value" in a table.
EMPTY_CELLS = {"", "-", "—", "–", "nan", "n/a", "na", "none", "null", "?"}


def _ref_value(cell: Any) -> RefValue | None:
    """A reference cell: its number and how exact it is (``None`` for an empty cell).

    A value is taken to be exact to half a unit of its last printed digit; a whole number
    (``1``, which tables print for 1.000) to half a unit of the third decimal; a number of
    a JSON or XLSX file likewise from its shortest form (so 0.873 is ±0.0005, and a value
    given in full, 0.8731234567891, is ±1e-9).
    """
    if cell is None or isinstance(cell, bool):
        if isinstance(cell, bool):
            raise ValueError(f"{cell!r} is not a number")
        return None
    if isinstance(cell, (int, float)):
        value = float(cell)
        if math.isnan(value):
            return None
        text = repr(value)
    else:
        text = str(cell).strip().split("±")[0].strip()
        text = text.replace("\\textbf{", "").replace("\\underline{", "").strip("{}*_ ")
        if text.lower() in EMPTY_CELLS:
            return None
        value = float(text)
        if math.isnan(value):
            return None
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text.lower() else 0
    if decimals == 0 or (isinstance(cell, (int, float)) and text.endswith(".0")):
        decimals = 3  # a whole number: 1 is 1.000 as tables print it
    tolerance = 0.5 * 10.0**-decimals if decimals <= 8 else 1e-9
    return RefValue(value, tolerance * (1 + 1e-9), text, decimals if decimals <= 8 else None)


def read_reference(path: Path | str, datasets: Sequence[str]) -> Reference:
    """A reference table (see the module notes); ``datasets`` are those evaluated here
    (a table without a dataset column is taken to be about the only one)."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    try:
        if path.stat().st_size > MAX_REFERENCE:
            raise CompareError(f"{path}: too large for a table of results")
    except FileNotFoundError:
        raise CompareError(f"{path}: file not found") from None
    ref = Reference(str(path))
    try:
        if path.suffix.lower() == ".json":
            _read_json(path, ref, datasets)
        elif path.suffix.lower() == ".xlsx":
            _read_xlsx(path, ref, datasets)
        else:
            _read_csv(path, ref, datasets)
    except CompareError:
        raise
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise CompareError(f"{path}: cannot be read as a table of results ({exc})") from None
    if not ref.values:
        raise CompareError(
            f"{path}: no value of a known measure (columns such as Sm, wFm, MAE, maxFm, "
            "meanEm; " + "; ".join(ref.notes[:3]) + ")"
        )
    _percent(ref)
    return ref


def _percent(ref: Reference) -> None:
    """A measure whose every value lies in (1, 100] was printed in percent: divide it."""
    for key in sorted({k for _, _, k in ref.values}):
        cells = {i: v for i, v in ref.values.items() if i[2] == key}
        if all(1 < v.value <= 100 for v in cells.values()):
            for i, v in cells.items():
                digits = None if v.decimals is None else v.decimals + 2
                ref.values[i] = RefValue(v.value / 100, v.tolerance / 100, v.text, digits)
            ref.notes.append(f"{key} is in percent in the table: divided by 100")


def _only_dataset(datasets: Sequence[str], path: Path) -> str:
    if len(datasets) != 1:
        raise CompareError(
            f"{path}: no dataset column, and {len(datasets)} datasets are evaluated here "
            f"({', '.join(datasets)}): add a 'dataset' column"
        )
    return datasets[0]


def _put(ref: Reference, ds: str, method: str, column: str, cell: Any, where: str) -> None:
    key = measure_key(column)
    if key is None:
        note = f"column {column!r} is not a measure fminspect knows"
        if note not in ref.notes:
            ref.notes.append(note)
        return
    try:
        v = _ref_value(cell)
    except ValueError:
        raise CompareError(f"{ref.source}, {where}: {cell!r} is not a number") from None
    if v is not None:
        if (ds, method, key) in ref.values:
            raise CompareError(
                f"{ref.source}, {where}: {method}'s {key} on {ds} is given twice: give it once"
            )
        ref.values[(ds, method, key)] = v


def _read_csv(path: Path, ref: Reference, datasets: Sequence[str]) -> None:
    rows = list(csv.reader(path.read_text(encoding="utf-8-sig").splitlines()))
    rows = [r for r in rows if any(c.strip() for c in r)]
    if len(rows) < 2:
        raise CompareError(f"{path}: expected a header and at least one row")
    head = [h.strip() for h in rows[0]]
    low = [h.lower() for h in head]
    if "method" not in low:
        raise CompareError(f"{path}: no 'method' column (header: {', '.join(head)})")
    mi = low.index("method")
    di = low.index("dataset") if "dataset" in low else None
    long = "measure" in low and "value" in low
    for n, row in enumerate(rows[1:], start=2):
        row = row + [""] * (len(head) - len(row))
        ds = row[di].strip() if di is not None else _only_dataset(datasets, path)
        method = row[mi].strip()
        if long:
            _put(ref, ds, method, row[low.index("measure")], row[low.index("value")], f"line {n}")
            continue
        for c, column in enumerate(head):
            if c not in (mi, di):
                _put(ref, ds, method, column, row[c], f"line {n}")


def _read_json(path: Path, ref: Reference, datasets: Sequence[str]) -> None:
    doc = json.loads(path.read_text(encoding="utf-8-sig"))
    if isinstance(doc, dict) and "datasets" in doc and "config" in doc:  # results.json
        subsets = doc.get("subsets") or {}
        if subsets:
            ref.notes.append(f"its {len(subsets)} subsets are left out (compare whole datasets)")
        doc = {
            ds: {m: r["values"] for m, r in methods.items()}
            for ds, methods in doc["datasets"].items()
            if ds not in subsets
        }
    if not isinstance(doc, dict):
        raise CompareError(f"{path}: expected {{dataset: {{method: {{measure: value}}}}}}")
    first = next(iter(doc.values()), None)
    if isinstance(first, dict) and all(
        isinstance(v, (int, float)) for v in first.values()
    ):  # {method: {measure: value}}: one dataset
        doc = {_only_dataset(datasets, path): doc}
    for ds, methods in doc.items():
        if not isinstance(methods, dict):
            raise CompareError(f"{path}: {ds!r} should map methods to their values")
        for method, values in methods.items():
            if not isinstance(values, dict):
                raise CompareError(f"{path}: {ds}/{method} should map measures to values")
            for column, cell in values.items():
                _put(ref, str(ds), str(method), str(column), cell, f"{ds}/{method}")


def _read_xlsx(path: Path, ref: Reference, datasets: Sequence[str]) -> None:
    """The first sheet: a header row of measures (after a 'method' column, with an optional
    'dataset' column), or PySODEvalToolkit's two header rows (datasets, merged over their
    measures, then the measures)."""
    try:
        import openpyxl
    except ImportError:
        raise CompareError(
            f"{path}: reading XLSX needs openpyxl (pip install 'fminspect[xlsx]')"
        ) from None
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    rows = [list(r) for r in book.worksheets[0].iter_rows(values_only=True)]
    rows = [r for r in rows if any(c not in (None, "") for c in r)]
    if len(rows) < 2:
        raise CompareError(f"{path}: expected a header and at least one row")
    top = [str(c).strip() if c is not None else "" for c in rows[0]]
    known = set(datasets)
    if any(c in known for c in top):  # datasets over measures
        measures = [str(c).strip() if c is not None else "" for c in rows[1]]
        current, owners = "", []
        for cell in top:
            current = cell or current
            owners.append(current)
        for n, row in enumerate(rows[2:], start=3):
            method = str(row[0]).strip()
            for c in range(1, len(row)):
                if c < len(measures) and measures[c] and owners[c]:
                    _put(ref, owners[c], method, measures[c], row[c], f"row {n}")
        return
    low = [c.lower() for c in top]
    mi = (
        low.index("method")
        if "method" in low
        else (low.index("methods") if "methods" in low else 0)
    )
    di = low.index("dataset") if "dataset" in low else None
    for n, row in enumerate(rows[1:], start=2):
        ds = str(row[di]).strip() if di is not None else _only_dataset(datasets, path)
        for c, column in enumerate(top):
            if c not in (mi, di) and c < len(row):
                _put(ref, ds, str(row[mi]).strip(), column, row[c], f"row {n}")


# ----------------------------------------------------------------------------- hypotheses
@dataclass(frozen=True, slots=True)
class Hypothesis:
    """One way the reference may have been computed."""

    name: str
    explanation: str
    params: Params
    interpolation: str
    exclude_empty_gt: bool = False
    #: max keys as the mean of the per-image maxima
    per_image_max: bool = False
    #: reference key → the key evaluated for it (e.g. maxFm → maxFm255)
    keys_as: Mapping[str, str] = field(default_factory=dict)
    #: the keys it can change (None: every key)
    affects: frozenset[str] | None = None

    @property
    def cheap(self) -> bool:
        """It only selects images or forms dataset values otherwise: no new scoring."""
        return self.exclude_empty_gt or self.per_image_max or bool(self.keys_as)


def combined(a: Hypothesis, b: Hypothesis, params: Params, interpolation: str) -> Hypothesis | None:
    """``a`` and ``b`` together (None when they cannot be: both change the parameters or
    the resize rule, both form the same key otherwise, or both take per-image maxima). The
    keys it changes are those both change (for the others it is one of them alone)."""
    if (a.params != params and b.params != params) or (
        a.interpolation != interpolation and b.interpolation != interpolation
    ):
        return None
    if set(a.keys_as) & set(b.keys_as) or (a.per_image_max and b.per_image_max):
        return None
    if (a.per_image_max and b.keys_as) or (b.per_image_max and a.keys_as):
        return None  # a key read as another and as per-image maxima: not one way
    if a.affects is None:
        affects = b.affects
    elif b.affects is None:
        affects = a.affects
    else:
        affects = a.affects & b.affects
    if affects is not None and not affects:
        return None
    return Hypothesis(
        f"{a.name} + {b.name}",
        f"{a.explanation}; and {b.explanation}",
        a.params if a.params != params else b.params,
        a.interpolation if a.interpolation != interpolation else b.interpolation,
        exclude_empty_gt=a.exclude_empty_gt or b.exclude_empty_gt,
        per_image_max=a.per_image_max or b.per_image_max,
        keys_as={**a.keys_as, **b.keys_as},
        affects=affects,
    )


_KNOB_CHOICES: dict[str, tuple[Any, ...]] = {
    "s_centroid": ("matlab", "co-sod"),
    "s_denominator": ("n-1",),
    "wfm_empty": ("nan",),
    "em_compare": (">",),
    "thresholds": ("matlab",),
    "gt_inclusive": (True,),
    "stretch": (False,),
}
_KNOB_WORDS = {
    "s_centroid": "the S-measure centroid rounded as {v} rounds it",
    "s_denominator": "S-measure variances divided by N − 1 without eps (pysodmetrics ≤ 1.6.0)",
    "wfm_empty": "an empty GT's weighted F left undefined (NaN) and out of the mean, as no "
    "value of the authors' MATLAB holds it (its original_WFb.m stops there)",
    "gt_inclusive": "the GT binarised with ≥ 128 instead of > 128",
    "em_compare": "the E-measure binarised with '>' as the authors' MATLAB toolbox does",
    "thresholds": "the curves' thresholds MATLAB's 1:-1/255:0, as its colon operator makes them",
    "stretch": "predictions not min–max stretched",
}


def _keys_of_param(name: str) -> frozenset[str] | None:
    """The measure keys a parameter changes (None: all, for the normalisation)."""
    fams = [f for f in FIELD_PARAMS if name in FIELD_PARAMS[f]]
    if not fams:
        return None
    return frozenset(k for k, m in MEASURES_BY_KEY.items() if m.field in fams)


def hypotheses(
    params: Params, interpolation: str, *, resized: bool, empty_gts: bool
) -> list[Hypothesis]:
    """The candidate ways of computing (see the module notes), baseline excluded."""
    out: list[Hypothesis] = []
    for knob in CONVENTION_KNOBS:
        for value in _KNOB_CHOICES.get(knob, ()):
            if getattr(params, knob) == value:
                continue
            words = _KNOB_WORDS[knob].format(v=value)
            out.append(
                Hypothesis(
                    f"{knob}={value}".replace("True", "true").replace("False", "false"),
                    words,
                    replace(params, **{knob: value}),
                    interpolation,
                    affects=_keys_of_param(knob),
                )
            )
    defaults = Params()
    for c in CONVENTIONS.values():
        # the convention's knobs on fminspect's, the rest (β², α …) as given
        p = replace(params, **{**{k: getattr(defaults, k) for k in CONVENTION_KNOBS}, **c.params})
        interp = c.interpolation if resized else interpolation
        if p == params and interp == interpolation:
            continue
        out.append(
            Hypothesis(f"convention {c.name}", c.describe(), p, interp, keys_as=c.keys_as or {})
        )
    if resized:
        for interp in INTERPOLATIONS:
            if interp != interpolation:
                out.append(
                    Hypothesis(
                        f"interpolation={interp}",
                        f"maps of another size resized with {interp} interpolation",
                        params,
                        interp,
                    )
                )
    if empty_gts:
        out.append(
            Hypothesis(
                "empty GTs left out",
                "the images whose GT is empty left out of the values",
                params,
                interpolation,
                exclude_empty_gt=True,
            )
        )
    as255 = {k: f"{k}255" for k in ("maxFm", "meanFm", "maxEm", "meanEm")}
    out.append(
        Hypothesis(
            "255 thresholds",
            "F and E curves over eval-co-sod's 255 thresholds linspace(0, 1 − 1e-10, 255) "
            "instead of floor(255·p) ≥ t for t = 0..255",
            params,
            interpolation,
            affects=frozenset(as255),
            keys_as=as255,
        )
    )
    out.append(
        Hypothesis(
            "max F of the mean P and R",
            "max F as the classic saliency benchmark forms it: F of the image-averaged "
            "precision and recall at each threshold, then the max (maxFm_meanPR)",
            params,
            interpolation,
            affects=frozenset({"maxFm"}),
            keys_as={"maxFm": "maxFm_meanPR"},
        )
    )
    out.append(
        Hypothesis(
            "mean F = adaptive F",
            "'mean F-measure' as the classic saliency benchmark prints it: the F of each "
            "image's adaptive (2·mean) threshold, averaged over the images (adpFm)",
            params,
            interpolation,
            affects=frozenset({"meanFm"}),
            keys_as={"meanFm": "adpFm"},
        )
    )
    max_keys = frozenset(k for k in MEASURES_BY_KEY if k.startswith("max"))
    out.append(
        Hypothesis(
            "mean of per-image maxima",
            "max values as the mean over images of each image's best threshold, not the "
            "max of the image-averaged curve",
            params,
            interpolation,
            per_image_max=True,
            affects=max_keys,
        )
    )
    return out


# ---------------------------------------------------------------------------------- findings
@dataclass(frozen=True, slots=True)
class Finding:
    dataset: str
    method: str
    key: str
    theirs: RefValue
    ours: float | None
    verdict: str  # agrees | explained | unexplained | not here
    explained_by: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    #: our value's bootstrap interval (with ``--ci``)
    interval: tuple[float, float] | None = None
    #: how ours agrees: "" rounded once, or "rounded twice: …" (:func:`agreement`)
    how: str = ""

    @property
    def difference(self) -> float | None:
        return None if self.ours is None else self.ours - self.theirs.value


@dataclass(slots=True)
class Comparison:
    reference: Reference
    baseline: str
    findings: list[Finding]
    tried: list[Hypothesis]
    #: hypotheses left out, and why
    skipped: list[str]
    #: with ``--ci``: {dataset: statistics.json's entry} of the baseline
    statistics: dict[str, Any] | None = None
    #: with ``--ci``: pairs of methods the reference orders on a measure whose order here is
    #: reversed or not significant (:func:`orders`)
    orders: list[dict[str, Any]] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.verdict] = out.get(f.verdict, 0) + 1
        return out


#: (dataset, method, key) → value, of one way of computing
Values = dict[tuple[str, str, str], float]
#: evaluates a hypothesis (or the baseline, None) for the keys and methods asked:
#: (values, {(dataset, method): notes about its images})
Evaluator = Callable[
    [Hypothesis | None, Sequence[str], Sequence[str]],
    tuple[Values, dict[tuple[str, str], list[str]]],
]


def _round(x: Decimal, digits: int, mode: str) -> Decimal:
    return x.quantize(Decimal(1).scaleb(-digits), rounding=mode)


def agreement(a: float, ref: RefValue) -> str | None:
    """How ``a`` gives the printed ``ref``: ``""`` rounded once (within half a unit of its
    last digit), ``"rounded twice: 0.79049 → 0.7905 → 0.791"`` when rounding it first to one
    to three more digits and then to the printed ones gives it (half up or half to even,
    both in use); None when neither does."""
    if not math.isfinite(a):
        return None
    if abs(a - ref.value) <= ref.tolerance:
        return ""
    if ref.decimals is None or abs(a - ref.value) > 2 * ref.tolerance:
        return None
    exact, printed = Decimal(repr(a)), Decimal(repr(ref.value))
    want = _round(printed, ref.decimals, ROUND_HALF_EVEN)
    for extra in (1, 2, 3):
        for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN):
            first = _round(exact, ref.decimals + extra, mode)
            if _round(first, ref.decimals, mode) == want:
                return f"rounded twice: {a:.10g} → {first} → {ref.text}"
    return None


def _close(a: float, ref: RefValue) -> bool:
    return agreement(a, ref) is not None


def compare(
    reference: Reference,
    evaluate: Evaluator,
    params: Params,
    interpolation: str,
    *,
    resized: bool,
    empty_gts: bool,
    baseline: str = "",
    statistics: Mapping[str, Any] | None = None,
) -> Comparison:
    """Every reference value against the baseline and the hypotheses (module notes);
    with ``statistics`` (the baseline's, ``{dataset: statistics.json's entry}``) each value
    also gets our interval, and the reference's orders of methods are tested
    (:func:`orders`)."""
    keys = sorted({k for _, _, k in reference.values})
    methods = sorted({m for _, m, _ in reference.values})
    base, image_notes = evaluate(None, keys, methods)
    # only what the baseline does not reproduce is evaluated again
    pending = [
        (ds, m, k)
        for (ds, m, k), ref in reference.values.items()
        if (ds, m, k) in base and not _close(base[(ds, m, k)], ref)
    ]
    tried: list[Hypothesis] = []
    skipped: list[str] = []
    results: dict[str, Values] = {}
    singles = hypotheses(params, interpolation, resized=resized, empty_gts=empty_gts)
    _try_singles(singles, pending, evaluate, tried, skipped, results)
    _try_pairs(reference, pending, params, interpolation, evaluate, tried, results)
    if not resized:
        skipped.append("other resize rules: every map here is at its GT's size")
    if not empty_gts:
        skipped.append("empty GTs left out: no GT here is empty")
    findings = [
        _finding(reference, key, base, image_notes, tried, results, statistics)
        for key in sorted(reference.values)
    ]
    statistics = dict(statistics) if statistics is not None else None
    return Comparison(
        reference,
        baseline,
        findings,
        tried,
        skipped,
        statistics,
        orders(reference, base, statistics) if statistics else [],
    )


_Cell = tuple[str, str, str]  # (dataset, method, key)


def _try_singles(
    singles: Sequence[Hypothesis],
    pending: Sequence[_Cell],
    evaluate: Evaluator,
    tried: list[Hypothesis],
    skipped: list[str],
    results: dict[str, Values],
) -> None:
    """Evaluate the values the baseline does not reproduce under each single hypothesis
    that can change one of their measures (appending to ``tried``/``skipped``/``results``)."""
    keys = sorted({k for _, _, k in pending})
    methods = sorted({m for _, m, _ in pending})
    for h in singles:
        if not pending:
            break
        wanted = [k for k in keys if h.affects is None or k in h.affects]
        if not wanted:
            skipped.append(f"{h.name}: changes none of the measures that differ")
            continue
        tried.append(h)
        results[h.name], _ = evaluate(h, wanted, methods)


def _try_pairs(
    reference: Reference,
    pending: Sequence[_Cell],
    params: Params,
    interpolation: str,
    evaluate: Evaluator,
    tried: list[Hypothesis],
    results: dict[str, Values],
) -> None:
    """Two switches together, for the values no single one reproduces (one of the two
    cheap to evaluate)."""
    left = [
        (ds, m, k)
        for ds, m, k in pending
        if not any(
            (v := results[h.name].get((ds, m, k))) is not None
            and _close(v, reference.values[(ds, m, k)])
            for h in tried
        )
    ]
    singles_tried = list(tried)
    for i, a in enumerate(singles_tried):
        for b in singles_tried[i + 1 :]:
            if not left or not (a.cheap or b.cheap):
                continue
            both = combined(a, b, params, interpolation)
            if both is None:
                continue
            wanted = sorted({k for _, _, k in left if both.affects is None or k in both.affects})
            who = sorted({m for _, m, k in left if k in wanted})
            if not wanted:
                continue
            tried.append(both)
            results[both.name], _ = evaluate(both, wanted, who)


def _finding(
    reference: Reference,
    cell: _Cell,
    base: Values,
    image_notes: Mapping[tuple[str, str], Sequence[str]],
    tried: Sequence[Hypothesis],
    results: Mapping[str, Values],
    statistics: Mapping[str, Any] | None,
) -> Finding:
    """What became of one reference value: not here, agrees, explained (by which
    hypotheses) or unexplained."""
    ds, m, k = cell
    ref = reference.values[cell]
    ours = base.get(cell)
    notes = tuple(image_notes.get((ds, m), ()))
    interval = _interval(statistics, ds, k, m)
    if ours is None:
        return Finding(ds, m, k, ref, None, "not here", images=notes)
    how = agreement(ours, ref)
    if how is not None:
        return Finding(ds, m, k, ref, ours, "agrees", images=notes, interval=interval, how=how)
    matching = tuple(
        h.name for h in tried if (v := results[h.name].get(cell)) is not None and _close(v, ref)
    )
    if len(matching) > 1:  # a pair is named only when no single one of it does it
        alone = set(matching)
        matching = tuple(n for n in matching if " + " not in n or not set(n.split(" + ")) & alone)
    status = "explained" if matching else "unexplained"
    return Finding(ds, m, k, ref, ours, status, matching, notes, interval)


def _interval(
    statistics: Mapping[str, Any] | None, dataset: str, key: str, method: str
) -> tuple[float, float] | None:
    st = (statistics or {}).get(dataset, {}).get("keys", {}).get(key, {})
    iv = st.get("intervals", {}).get(method)
    if iv is None or not all(math.isfinite(x) for x in iv):
        return None
    return float(iv[0]), float(iv[1])


def orders(
    reference: Reference, ours: Values, statistics: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The pairs of methods the reference puts in an order on a measure (their printed
    values differ) whose order here is the other way round, or whose difference is not
    significant here (the paired test of ``statistics``, Holm-corrected): one dict per
    pair with both differences, p and the verdict (``reversed``, ``not significant``)."""
    out = []
    for ds, entry in statistics.items():
        for key, st in entry.get("keys", {}).items():
            for pair in st.get("pairs", []):
                a, b = pair["a"], pair["b"]
                ra, rb = reference.values.get((ds, a, key)), reference.values.get((ds, b, key))
                if ra is None or rb is None or ra.text == rb.text:
                    continue
                theirs = ra.value - rb.value
                here = ours.get((ds, a, key), math.nan) - ours.get((ds, b, key), math.nan)
                if not math.isfinite(here):
                    continue
                tested = math.isfinite(pair["p_holm"])  # NaN: too few images, no spread
                weak = "not tested" if not tested else "not significant"
                if theirs * here < 0:
                    verdict = "reversed" + ("" if pair["significant"] else f", {weak}")
                elif not pair["significant"]:
                    verdict = weak
                else:
                    continue
                out.append(
                    {
                        "dataset": ds,
                        "measure": key,
                        "a": a,
                        "b": b,
                        "theirs": theirs,
                        "ours": here,
                        "p_holm": pair["p_holm"],
                        "verdict": verdict,
                    }
                )
    return out


# ----------------------------------------------------------------------------------- report
def _fmt(v: float | None, digits: int = 4) -> str:
    if v is None or not math.isfinite(v):
        return "—"
    text = f"{v:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _why(f: Finding) -> str:
    if f.verdict == "agrees":
        return f"agrees ({f.how})" if f.how else "agrees"
    if f.verdict == "not here":
        return "not evaluated here (" + ("; ".join(f.images) or "method or dataset absent") + ")"
    if f.verdict == "explained":
        return "explained by " + " or ".join(f.explained_by)
    text = "unexplained"
    if f.interval is not None:
        inside = f.interval[0] <= f.theirs.value <= f.interval[1]
        text += (
            f" (theirs {'inside' if inside else 'outside'} our interval "
            f"[{_fmt(f.interval[0])}, {_fmt(f.interval[1])}])"
        )
    if f.images:
        text += "; " + "; ".join(f.images)
    return text


def rows(comparison: Comparison) -> list[dict[str, str]]:
    """One row per reference value (what the text, Markdown and CSV reports show)."""
    return [
        {
            "dataset": f.dataset,
            "method": f.method,
            "measure": f.key,
            "theirs": f.theirs.text,
            "ours": _fmt(f.ours),
            "difference": _fmt(f.difference),
            "verdict": f.verdict,
            "why": _why(f),
        }
        for f in comparison.findings
    ]


def summary_lines(comparison: Comparison) -> list[str]:
    counts = comparison.counts()
    total = len(comparison.findings)
    lines = [
        f"{total} reference values from {comparison.reference.source}, against "
        f"{comparison.baseline or 'fminspect'}: "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in ("agrees", "explained", "unexplained"))
        + (f", {counts['not here']} not evaluated here" if counts.get("not here") else "")
    ]
    by: dict[str, int] = {}
    could: dict[str, int] = {}  # differing values each hypothesis could change
    for f in comparison.findings:
        for name in f.explained_by:
            by[name] = by.get(name, 0) + 1
        if f.verdict in ("explained", "unexplained"):
            for h in comparison.tried:
                if h.affects is None or f.key in h.affects:
                    could[h.name] = could.get(h.name, 0) + 1
    for name, n in sorted(by.items(), key=lambda kv: -kv[1]):
        h = next(h for h in comparison.tried if h.name == name)
        lines.append(
            f"  {name} reproduces {n} of the {could.get(name, n)} differing values it could "
            f"change: {h.explanation}"
        )
    if any(n < could.get(name, n) for name, n in by.items()):
        lines.append(
            "  (a way of computing that reproduces only some of the values it changes may "
            "match by chance)"
        )
    singles = [h.name for h in comparison.tried if " + " not in h.name]
    pairs = len(comparison.tried) - len(singles)
    lines.append(
        "Tried: "
        + ", ".join(singles)
        + (f"; and {pairs} pairs of them, for what none reproduced alone" if pairs else "")
        + (". Not tried: " + "; ".join(comparison.skipped) if comparison.skipped else "")
        + ". Never tried: "
        + "; ".join(NOT_TRIED)
        + "."
    )
    lines += _order_lines(comparison)
    lines += [f"note: {n}" for n in comparison.reference.notes]
    return lines


#: Pairs of methods listed by name in the summary (all are in the CSV and JSON reports).
ORDER_LINES = 8


def _order_lines(comparison: Comparison) -> list[str]:
    """With ``--ci``: how the method, n and B were, and the reference's orders of methods
    that do not hold here."""
    if not comparison.statistics:
        return []
    setup = next(iter(comparison.statistics.values()))["setup"]
    n = ", ".join(
        f"{e['setup'].get('units', e['setup']['images'])} ({ds})"
        for ds, e in comparison.statistics.items()
    )
    lines = [
        f"Intervals: {setup['interval']} (B = {setup['resamples']}; n = {n} "
        f"{setup.get('unit', 'images')}); tests: {setup['test']}, {setup['correction']}, "
        f"α = {setup['alpha']}."
    ]
    if not comparison.orders:
        lines.append(
            "No order of two methods the reference prints (of those evaluated here) is "
            "reversed or not significant here."
        )
        return lines
    count = {
        v: sum(o["verdict"].endswith(v) or o["verdict"] == v for o in comparison.orders)
        for v in ("reversed", "not significant", "not tested")
    }
    count["reversed"] = sum(o["verdict"].startswith("reversed") for o in comparison.orders)
    lines.append(
        "Of the reference's orders of two methods on a measure, "
        + ", ".join(f"{n} {'is' if n == 1 else 'are'} {v} here" for v, n in count.items() if n)
        + ":"
    )
    # the reversed ones first
    ranked = sorted(comparison.orders, key=lambda o: not o["verdict"].startswith("reversed"))
    for o in ranked[:ORDER_LINES]:
        lines.append(
            f"  {o['dataset']} {o['measure']}: {o['a']} − {o['b']} = {o['theirs']:+.4f} theirs, "
            f"{o['ours']:+.4f} here ({o['verdict']}; Holm-adjusted p = {o['p_holm']:.3g})"
        )
    if len(comparison.orders) > ORDER_LINES:
        lines.append(f"  … and {len(comparison.orders) - ORDER_LINES} more (the JSON report)")
    return lines


def text(comparison: Comparison) -> str:
    table = rows(comparison)
    cols = ["dataset", "method", "measure", "theirs", "ours", "difference", "why"]
    width = {c: max([len(c), *(len(r[c]) for r in table)]) for c in cols[:-1]}
    out = ["  ".join(c.ljust(width[c]) for c in cols[:-1]) + "  why"]
    for r in table:
        out.append("  ".join(r[c].ljust(width[c]) for c in cols[:-1]) + "  " + r["why"])
    return "\n".join([*out, "", *summary_lines(comparison)]) + "\n"


def markdown(comparison: Comparison) -> str:
    cols = ["dataset", "method", "measure", "theirs", "ours", "difference", "why"]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows(comparison):
        out.append("| " + " | ".join(r[c].replace("|", "\\|") for c in cols) + " |")
    return "\n".join([*out, "", *summary_lines(comparison)]) + "\n"


def csv_text(comparison: Comparison) -> str:
    import io

    buf = io.StringIO()
    table = rows(comparison)
    w = csv.DictWriter(buf, fieldnames=list(table[0]) if table else ["dataset"])
    w.writeheader()
    w.writerows(table)
    return buf.getvalue()


def as_json(comparison: Comparison) -> str:
    return (
        json.dumps(
            {
                "reference": comparison.reference.source,
                "baseline": comparison.baseline,
                "counts": comparison.counts(),
                "tried": [{"name": h.name, "explanation": h.explanation} for h in comparison.tried],
                "skipped": comparison.skipped,
                "never_tried": list(NOT_TRIED),
                "notes": list(comparison.reference.notes),
                "statistics": {ds: e["setup"] for ds, e in (comparison.statistics or {}).items()},
                "orders": comparison.orders,
                "findings": [
                    {
                        **r,
                        "explained_by": list(f.explained_by),
                        "images": list(f.images),
                        "theirs_tolerance": f.theirs.tolerance,
                        "ours_value": f.ours,
                        "ours_interval": list(f.interval) if f.interval else None,
                    }
                    for r, f in zip(rows(comparison), comparison.findings, strict=True)
                ],
            },
            indent=2,
        )
        + "\n"
    )


def render(comparison: Comparison, fmt: str) -> str:
    return {"text": text, "markdown": markdown, "csv": csv_text, "json": as_json}[fmt](comparison)


def image_notes(
    results: Iterable[Any], empty_gt: Mapping[str, list[str]]
) -> dict[tuple[str, str], list[str]]:
    """What is known about each (dataset, method)'s images that no convention explains."""
    out: dict[tuple[str, str], list[str]] = {}
    for r in results:
        notes = []
        c = r.coverage
        if c.missing:
            notes.append(f"{len(c.missing)} of its maps missing here")
        if c.failed:
            notes.append(f"{len(c.failed)} of its maps unreadable here")
        if r.resized:
            notes.append(f"{r.resized} map{'s' if r.resized != 1 else ''} resized to their GT")
        if empty_gt.get(r.dataset):
            notes.append(f"{len(empty_gt[r.dataset])} empty GTs in the dataset")
        out[(r.dataset, r.method)] = notes
    return out


# ------------------------------------------------------------------------------- running
def run_compare(
    datasets: Sequence[Any],
    reference: Reference,
    params: Params,
    interpolation: str,
    cache_path: Path | str,
    *,
    jobs: int = 1,
    pool: Any = None,
    progress: bool | None = False,
    on_message: Callable[[str], None] | None = None,
    significance: Any = None,
) -> Comparison:
    """Evaluate ``datasets`` as the baseline and under every hypothesis, into one result
    store, and compare with ``reference`` (see the module notes). With ``significance`` (a
    :class:`~fminspect.batch.significance.Setup`) the baseline gets bootstrap intervals and
    paired tests, and the reference's orders of methods are tested."""
    from fminspect.batch.runner import evaluate_datasets
    from fminspect.batch.subsets import Selection
    from fminspect.pipeline.config import EvalConfig
    from fminspect.pipeline.conventions import convention_of

    here = {m for d in datasets for m in d.methods}
    state: dict[str, Any] = {}

    def evaluate(
        h: Hypothesis | None, keys: Sequence[str], methods: Sequence[str]
    ) -> tuple[Values, dict[tuple[str, str], list[str]]]:
        wanted = [m for m in methods if m in here]
        if not wanted:
            return {}, {}
        if on_message is not None:
            on_message(f"evaluating {'the baseline' if h is None else h.name} ({', '.join(keys)})")
        asked = {k: (h.keys_as.get(k, k) if h is not None else k) for k in keys}
        report = evaluate_datasets(
            datasets,
            EvalConfig(
                params if h is None else h.params,
                tuple(dict.fromkeys(asked.values())),
                interpolation if h is None else h.interpolation,
            ),
            cache_path=cache_path,
            methods=wanted,
            jobs=jobs,
            pool=pool,
            progress=progress,
            selection=Selection(exclude_empty_gt=h is not None and h.exclude_empty_gt),
            significance=significance if h is None else None,
        )
        if h is None:
            state["statistics"] = report.statistics
        values: Values = {}
        for r in report.results:
            for k in keys:
                if asked[k] in r.values:
                    values[(r.dataset, r.method, k)] = float(r.values[asked[k]])
        if h is not None and h.per_image_max:
            sums: dict[tuple[str, str, str], list[float]] = {}
            for row in report.per_image:
                for k in keys:
                    v = row.get(k)
                    if v is not None and math.isfinite(v):
                        sums.setdefault((row["dataset"], row["method"], k), []).append(v)
            values = {key: sum(vs) / len(vs) for key, vs in sums.items()}
        if h is None:
            state["resized"] = any(r.resized for r in report.results)
            state["empty"] = any(report.empty_gt.values())
            return values, image_notes(report.results, report.empty_gt)
        return values, {}

    baseline_values = evaluate(
        None,
        sorted({k for _, _, k in reference.values}),
        sorted({m for _, m, _ in reference.values}),
    )

    def cached(
        h: Hypothesis | None, keys: Sequence[str], methods: Sequence[str]
    ) -> tuple[Values, dict[tuple[str, str], list[str]]]:
        return baseline_values if h is None else evaluate(h, keys, methods)

    name = convention_of(params, interpolation)
    return compare(
        reference,
        cached,
        params,
        interpolation,
        resized=bool(state.get("resized")),
        empty_gts=bool(state.get("empty")),
        baseline=f"fminspect ({name} convention)" if name != "custom" else "fminspect (custom)",
        statistics=state.get("statistics"),
    )
