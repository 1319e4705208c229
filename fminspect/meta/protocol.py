"""The meta-measures' protocol: every parameter, and the work done for one image.

Meta-measures (names used in every output):

``generic``
    SOTA vs generic (Margolin et al. 2014; E-measure and S-measure papers): a centred circle
    and a centred Gaussian map; an error when the generic map scores better than the mean
    score of the real models on that image.
``noise_map``
    SOTA vs random noise (E-measure paper): the same with a Gaussian random-noise map.
``gt_switch``
    Ground-truth switch (Margolin; E-measure; Context-measure): for "good" maps only
    (``good_key >= good_min``, by default F1 = Dice at the adaptive threshold ≥ 0.6), an
    error when the map scores better against the GT of another image (a complete
    derangement of the dataset's images, resized to the map's size, nearest neighbour) than
    against its own.
``noise_injection``
    Noise sensitivity (Context-measure paper): N(0, 0.2²) added to 1 % of the pixels the map
    calls foreground (≥ 0.5) where the GT is background; an error when the noisy map scores
    better.
``annotation``
    Annotation errors / structural sensitivity (Margolin; S-measure; Context-measure): the
    GT dilated or eroded with a 3×3 kernel; the mean score change and the change of the
    models' ranking on each image (1 − Spearman ρ), averaged over images.
``application``
    Application ranking (Margolin): θ = 1 − ρ between each image's model order by the
    measure and by a pluggable application's quality (:mod:`fminspect.meta.application`).
``human``
    Human ranking (E-measure, S-measure, Context-measure papers): θ = 1 − ρ and the error
    rate on human-ranked datasets (:func:`fminspect.ranking.agreement.measures_vs_humans`).

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
from fminspect.metrics import MEASURES_BY_KEY, Params, compute_suite, measure_keys, prepare_gt
from fminspect.metrics import prepare as prepare_pair
from fminspect.pipeline.sample import load_sample, prepare


@dataclass(frozen=True, slots=True)
class MetaConfig:
    """Every parameter of a meta-measure run (all recorded in its outputs)."""

    params: Params = field(default_factory=Params)
    keys: tuple[str, ...] | None = None  # None: every measure (CCm when images exist)
    metas: tuple[str, ...] = ("generic", "noise_map", "gt_switch", "noise_injection", "annotation")
    seed: int = 0
    interpolation: str = "bilinear"
    max_pixels: int = MAX_PIXELS  # files declaring more pixels are refused before decoding
    circle_radius: float = 0.25  # × min(height, width)
    gaussian_sigma: float = 0.25  # × min(height, width)
    noise_mean: float = 0.5
    noise_std: float = 0.25
    good_key: str = "adpDice"  # F1 of the map binarised at the adaptive threshold
    good_min: float = 0.6
    inject_fraction: float = 0.01
    inject_std: float = 0.2
    inject_fg_threshold: float = 0.5
    morph_size: int = 3
    morph_iterations: int = 1
    application: str | None = None  # 'grabcut' or 'package.module:function'

    def __post_init__(self) -> None:
        unknown = [m for m in self.metas if m not in META_MEASURES]
        if unknown:
            raise ValueError(
                f"unknown meta-measure(s) {unknown}; valid: {', '.join(META_MEASURES)}"
            )
        measure_keys(self.keys)  # a wrong key fails here
        if self.good_key not in MEASURES_BY_KEY:
            raise ValueError(f"good_key {self.good_key!r} is not a measure key")
        if "application" in self.metas and not self.application:
            raise ValueError("the application meta-measure needs an application (e.g. 'grabcut')")
        if self.application:
            from fminspect.meta.application import resolve

            resolve(self.application)  # a wrong name fails now, not in every worker

    def keys_for(self, with_images: bool) -> tuple[str, ...]:
        """The measures evaluated (CCm only with images); the good-map criterion is added."""
        return measure_keys(self.keys, with_images=with_images)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON of the whole protocol."""
        d = asdict(self)
        d["params"] = self.params.as_dict()
        d["normalization"] = self.params.norm.label
        d["keys"] = list(self.keys) if self.keys is not None else None
        d["metas"] = list(self.metas)
        return d


@dataclass(frozen=True, slots=True)
class MetaUnit:
    """One image: its files (with the models taking part) and the GT it is switched with."""

    sample: Sample
    wrong_sample: str | None
    wrong_gt: Path | None
    keys: tuple[str, ...]
    config: MetaConfig

    def files(self) -> list[Path]:
        """The files this unit reads: the GT, the image, the maps, the switched GT."""
        s = self.sample
        image = [s.image] if s.image is not None else []
        wrong = [self.wrong_gt] if self.wrong_gt is not None else []
        return [s.gt, *image, *s.preds.values(), *wrong]


@dataclass(slots=True)
class MetaUnitResult:
    """Scores of the synthetic and perturbed cases of one image."""

    dataset: str
    sample: str
    # (meta, case, model, measure, value, detail)
    rows: list[tuple[str, str, str, str, float, str]] = field(default_factory=list)
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
        add(
            "generic",
            "circle",
            "",
            _scores(maps.centred_circle(shape, cfg.circle_radius), gt, params, img, keys),
        )
        add(
            "generic",
            "gaussian",
            "",
            _scores(maps.centred_gaussian(shape, cfg.gaussian_sigma), gt, params, img, keys),
        )
    if "noise_map" in cfg.metas:
        noise = maps.gaussian_noise_map(shape, rng_for("noise_map"), cfg.noise_mean, cfg.noise_std)
        add("noise_map", "noise", "", _scores(noise, gt, params, img, keys))
    # the maps as the measures see them
    preds = {
        model: prepare_pair(array, gt, params.norm).pred for model, array in loaded.preds.items()
    }
    if "gt_switch" in cfg.metas and unit.wrong_gt:
        try:
            switched = load_map(unit.wrong_gt, max_pixels=cfg.max_pixels).array
            wrong_arr, _ = fit_to(switched, shape, "nearest")
            wrong = prepare_gt(wrong_arr, params.norm)
            for model, pred in preds.items():
                add(
                    "gt_switch",
                    unit.wrong_sample or "",
                    model,
                    _scores(pred, wrong, params, img, keys),
                )
        except LoadError as exc:
            out.problems.append(Problem(exc.path, exc.problem, "error", **where))
    if "noise_injection" in cfg.metas:
        for model, pred in preds.items():
            noisy, changed = maps.inject_noise(
                pred,
                gt.mask,
                rng_for("noise_injection", model),
                fraction=cfg.inject_fraction,
                std=cfg.inject_std,
                fg_threshold=cfg.inject_fg_threshold,
            )
            n = int(changed.sum())
            scores = _scores(noisy, gt, params, img, keys) if n else dict.fromkeys(keys, math.nan)
            add("noise_injection", "noise", model, scores, f"{n} pixels changed")
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
