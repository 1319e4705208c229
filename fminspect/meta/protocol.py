"""The meta-measures' protocol: every parameter, and the work done for one image.

Meta-measures (names used in every output). How each one selects maps, how many cases it
draws and what it reports is set by a protocol preset (:mod:`fminspect.meta.protocols`, which
cites each paper's section for every step); the fields of :class:`MetaConfig` are those knobs.

``generic``
    SOTA vs generic maps (Margolin et al. §5.2): a centred circle and a centred Gaussian map;
    an error when the generic map scores better than the mean score of the (selected) models
    on that image.
``noise_map``
    SOTA vs random noise (E-measure paper §4.3): the same with a Gaussian random-noise map.
``gt_switch``
    Ground-truth switch (Margolin §5.3; E-measure §4.5; Context-measure §4.2): for the
    selected "good" maps, an error when the map scores better against another image's GT
    (resized to the map, nearest neighbour) than against its own; ``switches`` other GTs per
    image, or one complete derangement of the dataset when ``switches`` is 1.
``noise_injection``
    Noise sensitivity (Context-measure §4.3): N(0, σ²) noise with its negative values
    truncated, added to ``inject_fraction`` of the whole image's pixels (or of the suspect
    region's, ``inject_of='region'``), drawn where the map calls foreground
    (> ``inject_fg_threshold``; 0: its support) and the GT is background, capped at 1; an
    error when the noisy map scores better.
``annotation``
    Annotation errors / boundary stability (Margolin §5.4; S-measure §5.4; Context-measure
    §4.4): the GT dilated or eroded with a square kernel; the mean absolute score change
    (Context §4.4), the signed one (ours), and the change of the models' ranking on each image
    (1 − Spearman ρ, Margolin/S-measure), averaged over images.
``application``
    Application ranking (Margolin §5.1): θ = 1 − ρ between each image's model order by the
    measure and by a pluggable application's quality (:mod:`fminspect.meta.application`).
``human``
    Human ranking (E-measure §4.4, S-measure §6, Context-measure §4.1): θ = 1 − ρ (and, in
    ``ours``, the error rate) on human-ranked datasets
    (:func:`fminspect.ranking.agreement.measures_vs_humans`).

"Better" is strictly better, in the measure's direction (lower for MAE). Synthetic and
perturbed maps are float maps in [0, 1] scored as they are; the models' own maps are
normalised as in ``fminspect eval`` (their scores come from its cache).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fminspect.io.discovery import Sample
from fminspect.io.limits import MAX_PIXELS
from fminspect.io.loading import fit_to, load_map
from fminspect.io.validation import LoadError, Problem
from fminspect.meta import META_MEASURES, maps
from fminspect.meta.protocols import PROTOCOLS, Selection
from fminspect.metrics import MEASURES_BY_KEY, Params, compute_suite, measure_keys, prepare_gt
from fminspect.metrics import prepare as prepare_pair
from fminspect.pipeline.sample import load_sample, prepare

_DEFAULT = PROTOCOLS["default"].settings  # the knobs' defaults: the default preset's

#: The statistics the annotation meta-measure can report, per perturbation.
ANNOTATION_STATS = ("mean |Δ|", "mean Δ", "1 − ρ")


@dataclass(frozen=True, slots=True)
class MetaConfig:
    """Every parameter of a meta-measure run (all recorded in its outputs)."""

    params: Params = field(default_factory=Params)
    keys: tuple[str, ...] | None = None  # None: every measure (CCm when images exist)
    metas: tuple[str, ...] = ("generic", "noise_map", "gt_switch", "noise_injection", "annotation")
    protocol: str = "default"  # the preset the knobs below came from (see meta.protocols)
    seed: int = 0
    interpolation: str = "bilinear"
    max_pixels: int = MAX_PIXELS  # files declaring more pixels are refused before decoding
    generic_maps: tuple[str, ...] = _DEFAULT["generic_maps"]
    circle_radius: float = 0.25  # × min(height, width)
    gaussian_sigma: float = 0.25  # × min(height, width)
    generic_select: Selection | None = _DEFAULT["generic_select"]
    noise_mean: float = 0.5
    noise_std: float = 0.25
    noise_map_select: Selection | None = _DEFAULT["noise_map_select"]
    switch_select: Selection | None = _DEFAULT["switch_select"]
    switches: int = _DEFAULT["switches"]
    inject_select: Selection | None = _DEFAULT["inject_select"]
    inject_fraction: float = 0.01
    inject_of: str = _DEFAULT["inject_of"]
    inject_std: float = 0.2
    inject_fg_threshold: float = _DEFAULT["inject_fg_threshold"]  # region: map > this
    morph_size: int = 3
    morph_iterations: int = 1
    annotation_stats: tuple[str, ...] = _DEFAULT["annotation_stats"]
    human_stats: tuple[str, ...] = _DEFAULT["human_stats"]
    application: str | None = None  # 'grabcut' or 'package.module:function'

    def __post_init__(self) -> None:
        unknown = [m for m in self.metas if m not in META_MEASURES]
        if unknown:
            raise ValueError(
                f"unknown meta-measure(s) {unknown}; valid: {', '.join(META_MEASURES)}"
            )
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {self.protocol!r}; valid: {', '.join(PROTOCOLS)}")
        outside = [m for m in self.metas if m not in PROTOCOLS[self.protocol].metas]
        if outside:
            raise ValueError(
                f"the {self.protocol} protocol has no {', '.join(outside)} meta-measure "
                f"(it has {', '.join(PROTOCOLS[self.protocol].metas)}); "
                "--protocol default has them all"
            )
        measure_keys(self.keys)  # a wrong key fails here
        for sel in self.selections():
            if sel.by is not None and sel.by not in MEASURES_BY_KEY:
                raise ValueError(f"{sel.by!r} (a good-map criterion) is not a measure key")
        bad = {
            "generic_maps": set(self.generic_maps) - {"circle", "gaussian"},
            "annotation_stats": set(self.annotation_stats) - set(ANNOTATION_STATS),
            "human_stats": set(self.human_stats) - {"θ", "error rate"},
        }
        for name, wrong in bad.items():
            if wrong:
                raise ValueError(f"{name}: unknown {sorted(wrong)}")
        if self.switches < 1:
            raise ValueError(f"switches must be at least 1, not {self.switches}")
        if self.inject_of not in ("image", "region"):
            raise ValueError(f"inject_of is 'image' or 'region', not {self.inject_of!r}")
        if not 0 < self.inject_fraction <= 1:
            raise ValueError(f"inject_fraction must be in (0, 1], not {self.inject_fraction}")
        if "application" in self.metas and not self.application:
            raise ValueError("the application meta-measure needs an application (e.g. 'grabcut')")
        if self.application:
            from fminspect.meta.application import resolve

            resolve(self.application)  # a wrong name fails now, not in every worker

    def selections(self) -> list[Selection]:
        """The good-map selections of the meta-measures that run."""
        return [s for m in self.metas if (s := self.select_for(m)) is not None]

    def select_for(self, meta: str) -> Selection | None:
        """The good-map selection of one meta-measure (None: every map)."""
        return {
            "generic": self.generic_select,
            "noise_map": self.noise_map_select,
            "gt_switch": self.switch_select,
            "noise_injection": self.inject_select,
        }.get(meta)

    def keys_for(self, with_images: bool) -> tuple[str, ...]:
        """The measures evaluated (CCm only with images)."""
        return measure_keys(self.keys, with_images=with_images)

    def criteria(self) -> tuple[str, ...]:
        """The measures the selections read (scored too, though not reported)."""
        return tuple(dict.fromkeys(s.by for s in self.selections() if s.by is not None))

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON of the whole protocol, with the preset's steps and their citations."""
        d = asdict(self)
        d["params"] = self.params.as_dict()
        d["normalization"] = self.params.norm.label
        d["keys"] = list(self.keys) if self.keys is not None else None
        d["metas"] = list(self.metas)
        for name in ("generic", "noise_map", "switch", "inject"):
            sel = getattr(self, f"{name}_select")
            d[f"{name}_select"] = None if sel is None else {**asdict(sel), "reads": sel.describe()}
        preset = PROTOCOLS[self.protocol].as_dict()
        preset["steps"] = {m: v for m, v in preset["steps"].items() if m in self.metas}
        d["preset"] = preset
        d["differs_from_preset"] = sorted(
            k for k, v in PROTOCOLS[self.protocol].settings.items() if getattr(self, k) != v
        )
        return d


@dataclass(frozen=True, slots=True)
class MetaUnit:
    """One image: its files (with the models taking part), the GTs it is switched with, and
    the models whose maps enter the GT switch and the noise injection (None: every model;
    the driver knows them when a fixed measure selects them)."""

    sample: Sample
    wrong: tuple[tuple[str, Path], ...]
    keys: tuple[str, ...]
    config: MetaConfig
    switch_models: frozenset[str] | None = None
    inject_models: frozenset[str] | None = None
    # model → measure → its score against its own GT (when many GTs are switched, the unit
    # counts the errors itself, so that only counts travel back and are kept)
    own: dict[str, dict[str, float]] | None = None

    def files(self) -> list[Path]:
        """The files this unit reads: the GT, the image, the maps, the switched GTs."""
        s = self.sample
        image = [s.image] if s.image is not None else []
        return [s.gt, *image, *s.preds.values(), *(path for _, path in self.wrong)]


@dataclass(slots=True)
class MetaUnitResult:
    """Scores of the synthetic and perturbed cases of one image."""

    dataset: str
    sample: str
    # (meta, case, model, measure, value, detail)
    rows: list[tuple[str, str, str, str, float, str]] = field(default_factory=list)
    # GT switch with many GTs: (model, measure, errors, comparisons, best switched score)
    switch_counts: list[tuple[str, str, int, int, float]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _scores(
    pred: np.ndarray, gt: Any, params: Params, img: np.ndarray | None, keys: tuple[str, ...]
) -> dict[str, float]:
    wanted = tuple(k for k in keys if img is not None or not MEASURES_BY_KEY[k].needs_image)
    got = compute_suite(pred, gt, params, img=img, keys=wanted).scores()
    return {k: got.get(k, math.nan) for k in keys}


def meta_unit(unit: MetaUnit) -> MetaUnitResult:
    """Score every synthetic and perturbed case of one image (runs in a worker)."""
    from fminspect.batch.pool import configure_worker

    configure_worker()
    cfg, keys = unit.config, unit.keys
    params = cfg.params
    dataset, name = unit.sample.dataset, unit.sample.name
    out = MetaUnitResult(dataset, name)
    where = {"dataset": dataset, "name": name}

    def add(meta: str, case: str, model: str, scores: dict[str, float], detail: str = "") -> None:
        out.rows.extend((meta, case, model, k, float(v), detail) for k, v in scores.items())

    wants_image = any(MEASURES_BY_KEY[k].needs_image for k in keys) or "application" in cfg.metas
    loaded = load_sample(
        unit.sample,
        cfg.interpolation,
        image=bool(unit.sample.image) and wants_image,
        max_pixels=cfg.max_pixels,
    )
    # the models' conversions and resizes are reported by the evaluation of their own scores
    out.problems += [
        p for p in loaded.problems if p.severity == "error" or p.path == unit.sample.image
    ]
    gt, _ = prepare(loaded, params.norm)
    if gt is None:
        return out
    img = loaded.image
    shape = gt.shape

    def rng_for(*names: str) -> np.random.Generator:
        return np.random.default_rng(maps.case_seed(cfg.seed, dataset, name, *names))

    if "generic" in cfg.metas:
        generic = {
            "circle": lambda: maps.centred_circle(shape, cfg.circle_radius),
            "gaussian": lambda: maps.centred_gaussian(shape, cfg.gaussian_sigma),
        }
        for kind in cfg.generic_maps:
            add("generic", kind, "", _scores(generic[kind](), gt, params, img, keys))
    if "noise_map" in cfg.metas:
        noise = maps.gaussian_noise_map(shape, rng_for("noise_map"), cfg.noise_mean, cfg.noise_std)
        add("noise_map", "noise", "", _scores(noise, gt, params, img, keys))
    # the maps as the measures see them
    preds = {
        model: prepare_pair(array, gt, params.norm).pred for model, array in loaded.preds.items()
    }

    def taking_part(chosen: frozenset[str] | None) -> dict[str, np.ndarray]:
        return {m: p for m, p in preds.items() if chosen is None or m in chosen}

    switching = taking_part(unit.switch_models)
    counting = unit.own is not None
    tally: dict[tuple[str, str], list[float]] = {}  # (model, key) → [errors, n, best]
    if "gt_switch" in cfg.metas and switching:
        for wrong_name, wrong_path in unit.wrong:
            try:
                switched = load_map(wrong_path, max_pixels=cfg.max_pixels).array
            except LoadError as exc:
                out.problems.append(Problem(exc.path, exc.problem, "error", **where))
                continue
            wrong_arr, _ = fit_to(switched, shape, "nearest")
            wrong = prepare_gt(wrong_arr, params.norm)
            for model, pred in switching.items():
                scores = _scores(pred, wrong, params, img, keys)
                if not counting:
                    add("gt_switch", wrong_name, model, scores)
                    continue
                for key, value in scores.items():
                    ref = (unit.own or {}).get(model, {}).get(key, math.nan)
                    if math.isnan(ref) or math.isnan(value):
                        continue
                    t = tally.setdefault((model, key), [0, 0, value])
                    higher = MEASURES_BY_KEY[key].higher_is_better
                    t[0] += (value > ref) if higher else (value < ref)
                    t[1] += 1
                    t[2] = max(t[2], value) if higher else min(t[2], value)
    out.switch_counts = [(m, k, int(e), int(n), b) for (m, k), (e, n, b) in tally.items()]
    if "noise_injection" in cfg.metas:
        for model, pred in taking_part(unit.inject_models).items():
            noisy, changed = maps.inject_noise(
                pred,
                gt.mask,
                rng_for("noise_injection", model),
                fraction=cfg.inject_fraction,
                of=cfg.inject_of,
                std=cfg.inject_std,
                fg_threshold=cfg.inject_fg_threshold,
            )
            n = int(changed.sum())
            scores = _scores(noisy, gt, params, img, keys) if n else dict.fromkeys(keys, math.nan)
            add("noise_injection", "noise", model, scores, f"{n} pixels drawn")
    if "annotation" in cfg.metas:
        for op in ("dilate", "erode"):
            morphed = prepare_gt(
                maps.morph_gt(gt.mask, op, cfg.morph_size, cfg.morph_iterations), params.norm
            )
            for model, pred in preds.items():
                add("annotation", op, model, _scores(pred, morphed, params, img, keys))
    if "application" in cfg.metas and cfg.application:
        from fminspect.meta.application import resolve

        app = resolve(cfg.application)
        for model, pred in preds.items():
            try:
                quality = float(app(img, gt.mask, pred))
            except (ValueError, ArithmeticError) as exc:
                out.problems.append(
                    Problem(
                        unit.sample.gt,
                        f"application {cfg.application}: {exc}",
                        "warning",
                        method=model,
                        **where,
                    )
                )
                continue
            out.rows.append(("application", cfg.application, model, "quality", quality, ""))
    return out
