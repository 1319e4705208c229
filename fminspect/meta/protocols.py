"""The papers' meta-measure protocols, as presets of :class:`~fminspect.meta.protocol.MetaConfig`.

Each preset sets every knob of the meta-measures it runs to what that paper describes, and
cites the section of the paper (the texts are kept in ``../shared/papers/``) for every step.
Where a paper is silent or ambiguous, the step says which reading fminspect takes ("reading:"),
and where a step cannot be reproduced offline it says so ("not reproduced:"); both are
written to ``protocol.json`` and shown by ``fminspect meta --help``.

``default``
    Each meta-measure as the paper that introduced it runs it: SOTA vs generic maps and the
    GT switch from Margolin et al. 2014, SOTA vs random noise from the E-measure paper,
    noise injection and boundary stability from the Context-measure paper, annotation errors
    (ranking change) from the S-measure paper, θ = 1 − ρ for application and human ranking.
``margolin2014``, ``smeasure2021``, ``emeasure2018``, ``context2025``
    Every meta-measure of one paper, as that paper runs it.
``ours``
    fminspect's variant before the presets (one derangement and F1 ≥ 0.6 for the GT switch,
    1 % of the suspect region for noise injection, the signed mean score change, the human
    error rate): kept because it is cheap and reasonable, named as ours.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["PROTOCOLS", "Protocol", "Selection", "Step"]

MARGOLIN = "Margolin et al., CVPR 2014"
SMEASURE = "Cheng & Fan, IJCV 2021 (S-measure)"
EMEASURE = "Fan et al., IJCAI 2018 (E-measure)"
CONTEXT = "Wang et al., 2025 (Context-measure)"


@dataclass(frozen=True, slots=True)
class Selection:
    """Which maps take part in a meta-measure.

    ``by`` is a measure key, or None for the measure under test itself (each measure then
    selects its own maps). ``rule`` 'min': the map's value is at least ``value`` (at most,
    for measures where lower is better); 'top': the map is among the best ``value`` share of
    all the dataset's maps by that value (ties at the cut all enter).
    """

    by: str | None
    rule: str
    value: float

    def __post_init__(self) -> None:
        if self.rule not in ("min", "top"):
            raise ValueError(f"a selection rule is 'min' or 'top', not {self.rule!r}")
        if self.rule == "top" and not 0 < self.value <= 1:
            raise ValueError(f"a 'top' selection keeps a share in (0, 1], not {self.value}")

    def describe(self) -> str:
        """E.g. 'adpDice ≥ 0.6' or 'the best 41.8 % of the maps by the measure itself'."""
        who = self.by or "the measure itself"
        if self.rule == "min":
            if self.by is None:
                return f"the measure itself ≥ {self.value:g} (≤ where lower is better)"
            from fminspect.metrics import MEASURES_BY_KEY

            sign = "≥" if MEASURES_BY_KEY[self.by].higher_is_better else "≤"
            return f"{self.by} {sign} {self.value:g}"
        return f"the best {100 * self.value:g} % of the dataset's maps by {who}"


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a meta-measure as a paper describes it, with where it says so."""

    text: str
    cite: str


@dataclass(frozen=True, slots=True)
class Protocol:
    """A named preset: what it sets, the meta-measures it has, and every step cited."""

    name: str
    title: str
    settings: dict[str, Any]
    steps: dict[str, tuple[Step, ...]]
    notes: tuple[str, ...] = field(default=())

    @property
    def metas(self) -> tuple[str, ...]:
        """The meta-measures this protocol defines, in the order of every output."""
        from fminspect.meta import META_MEASURES

        return tuple(m for m in META_MEASURES if m in self.steps)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON: the steps with their citations (for protocol.json)."""
        return {
            "name": self.name,
            "title": self.title,
            "steps": {
                m: [{"step": s.text, "cite": s.cite} for s in steps]
                for m, steps in self.steps.items()
            },
            "notes": list(self.notes),
        }


_APPLICATION_STEPS = (
    Step(
        "θ = 1 − ρ (Spearman) between each image's model order by the measure and by the "
        "application's output quality",
        f"{MARGOLIN} §5.1; {EMEASURE} §4.1; {SMEASURE} §5.1",
    ),
    Step(
        "not reproduced: the papers' applications are LIRE image retrieval (Margolin App. A; "
        "E-measure §4.1, Eq. 8) and SalCut (S-measure §5.1); fminspect runs the application "
        "you give (--application: 'grabcut' or your own function)",
        "—",
    ),
)
_HUMAN_STEPS = (
    Step(
        "θ = 1 − ρ (Spearman) between the measure's order and the people's order, averaged "
        "over the ranked groups",
        f"{EMEASURE} §4.4; {SMEASURE} §6; {CONTEXT} §4.1",
    ),
)
_MARGOLIN_GENERIC = (
    Step(
        "generic maps: a centred Gaussian and a centred circle (size not stated; reading: "
        "σ = r = 0.25·min(h, w))",
        f"{MARGOLIN} §5.2",
    ),
    Step(
        "error: the generic map scores better than the mean score of all the models on the image",
        f"{MARGOLIN} §5.2",
    ),
)
_MARGOLIN_SWITCH = (
    Step(
        "good maps: score ≥ 0.5 out of 1 against their own GT (reading: by the measure under test)",
        f"{MARGOLIN} §5.3",
    ),
    Step(
        "100 random GT switches per image (reading: 100 other images' GTs drawn without "
        "replacement, fewer when the dataset is smaller; resized to the map, nearest)",
        f"{MARGOLIN} §5.3",
    ),
    Step(
        "error: the map scores better against the switched GT than against its own",
        f"{MARGOLIN} §5.3",
    ),
)
_CONTEXT_SWITCH = (
    Step("good maps: F1 ≥ 0.6 (F1 = Dice at the adaptive threshold, adpDice)", f"{CONTEXT} §4.2"),
    Step(
        "one complete derangement of the dataset's GTs (no map keeps its own); each pseudo-GT "
        "resized to the map (nearest)",
        f"{CONTEXT} §4.2 (a), (b)",
    ),
    Step("error: the pseudo-GT scores better than the correct GT", f"{CONTEXT} §4.2 (c)"),
)
_CONTEXT_NOISE = (
    Step("maps with F1 ≥ 0.6 (adpDice)", f"{CONTEXT} §4.3 (a)"),
    Step(
        "1 % of the whole image's pixel count, drawn inside the predicted FM ∩ GT background; "
        "all of that region when it is smaller (reading: the FM's support, map > 0 — the paper "
        "names no binarisation; map > 0.5 is --inject-threshold 0.5)",
        f"{CONTEXT} §4.3 (b)",
    ),
    Step(
        "noise ε ~ N(0, 0.2²) with negative values truncated (ε⁺ = max(ε, 0), so the noise only "
        "adds false foreground), added and capped at 1, the map's range",
        f"{CONTEXT} §4.3 (b)",
    ),
    Step("error: the noisy map scores better than the original", f"{CONTEXT} §4.3 (c)"),
)
_CONTEXT_BOUNDARY = (
    Step("the GT dilated and eroded with a 3×3 kernel", f"{CONTEXT} §4.4 (a)"),
    Step(
        "mean |Δ|: the mean absolute change of the score (reading: Table 2 reports the "
        "average variation, ~0.01)",
        f"{CONTEXT} §4.4 (b)",
    ),
)
_SMEASURE_ANNOTATION = (
    Step(
        "the GT changed by morphological operations (kernel not stated; reading: dilation "
        "and erosion with a 3×3 kernel)",
        f"{SMEASURE} §5.4; {MARGOLIN} §5.4",
    ),
    Step(
        "1 − ρ between the models' order on each image before and after, averaged over "
        "images; the S-measure paper then leaves it out of its comparison as unreliable",
        f"{SMEASURE} §5.4; {MARGOLIN} §5.4",
    ),
)
_EMEASURE_SOTA = (
    Step(
        "good maps: 'about 80 %' of the maps, those scoring above a threshold (reading: the "
        "best 80 % of the dataset's maps by the measure under test)",
        f"{EMEASURE} §4.2",
    ),
    Step(
        "error: the synthetic map scores better than the mean score of the image's good maps",
        f"{EMEASURE} §4.2",
    ),
    Step(
        "not reproduced: the paper scores binary maps (adaptive threshold of Achanta et al.); "
        "fminspect scores the maps as they are",
        f"{EMEASURE} §4",
    ),
)
_EMEASURE_GENERIC = (
    Step("generic map: a centred circle (reading: r = 0.25·min(h, w))", f"{EMEASURE} §4.2"),
    *_EMEASURE_SOTA,
)
_EMEASURE_NOISE = (
    Step(
        "a Gaussian random-noise map (parameters not stated; reading: N(0.5, 0.25²) per "
        "pixel, clipped to [0, 1])",
        f"{EMEASURE} §4.3",
    ),
    *_EMEASURE_SOTA,
)

_OURS_SETTINGS: dict[str, Any] = {
    "generic_maps": ("circle", "gaussian"),
    "generic_select": None,
    "noise_map_select": None,
    "switch_select": Selection("adpDice", "min", 0.6),
    "switches": 1,
    "inject_select": None,
    "inject_of": "region",
    "inject_fg_threshold": 0.5,
    "annotation_stats": ("mean Δ", "1 − ρ"),
    "human_stats": ("θ", "error rate"),
}

PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol(
            "default",
            "each meta-measure as the paper that introduced it runs it",
            {
                "generic_maps": ("circle", "gaussian"),
                "generic_select": None,
                "noise_map_select": Selection(None, "top", 0.8),
                "switch_select": Selection(None, "min", 0.5),
                "switches": 100,
                "inject_select": Selection("adpDice", "min", 0.6),
                "inject_of": "image",
                "inject_fg_threshold": 0.0,
                "annotation_stats": ("mean |Δ|", "1 − ρ"),
                "human_stats": ("θ",),
            },
            {
                "generic": _MARGOLIN_GENERIC,
                "noise_map": _EMEASURE_NOISE,
                "gt_switch": _MARGOLIN_SWITCH,
                "noise_injection": _CONTEXT_NOISE,
                "annotation": _CONTEXT_BOUNDARY + _SMEASURE_ANNOTATION,
                "application": _APPLICATION_STEPS,
                "human": _HUMAN_STEPS,
            },
        ),
        Protocol(
            "margolin2014",
            f"{MARGOLIN} §5",
            {
                "generic_maps": ("circle", "gaussian"),
                "generic_select": None,
                "switch_select": Selection(None, "min", 0.5),
                "switches": 100,
                "annotation_stats": ("1 − ρ",),
            },
            {
                "generic": _MARGOLIN_GENERIC,
                "gt_switch": _MARGOLIN_SWITCH,
                "annotation": (
                    Step(
                        "the GT changed by morphological operations (kernel not stated; "
                        "reading: 3×3 dilation and erosion)",
                        f"{MARGOLIN} §5.4",
                    ),
                    Step("1 − ρ between the models' order before and after", f"{MARGOLIN} §5.4"),
                ),
                "application": _APPLICATION_STEPS,
            },
        ),
        Protocol(
            "smeasure2021",
            f"{SMEASURE} §5–6",
            {
                "generic_maps": ("circle", "gaussian"),
                "generic_select": None,
                "switch_select": Selection(None, "top", 0.418),
                "switches": 100,
                "annotation_stats": ("1 − ρ",),
                "human_stats": ("θ",),
            },
            {
                "generic": (
                    Step(
                        "generic maps: a centred circle (non-binary maps) and a centred Gaussian "
                        "(binary maps) (reading: both, on the maps as they are)",
                        f"{SMEASURE} §5.2, Fig. 10",
                    ),
                    Step(
                        "error: the generic map scores better than the mean score of the "
                        "models on the image",
                        f"{SMEASURE} §5.2",
                    ),
                ),
                "gt_switch": (
                    Step(
                        "good maps: the same share as Margolin's threshold 0.5 gave, the top "
                        "41.8 % of all maps (reading: by the measure under test)",
                        f"{SMEASURE} §5.3",
                    ),
                    Step(
                        "100 random GT switches per image (resized to the map, nearest)",
                        f"{SMEASURE} §5.3",
                    ),
                    Step("error: the map scores better against a switched GT", f"{SMEASURE} §5.3"),
                ),
                "annotation": _SMEASURE_ANNOTATION,
                "application": _APPLICATION_STEPS,
                "human": (
                    Step("θ = 1 − ρ against the human order on FMDatabase", f"{SMEASURE} §6"),
                    Step(
                        "not reproduced: §5.6's own study (viewers choosing between the maps "
                        "two measures prefer); `fminspect rank` runs such pairwise studies",
                        f"{SMEASURE} §5.6",
                    ),
                ),
            },
        ),
        Protocol(
            "emeasure2018",
            f"{EMEASURE} §4",
            {
                "generic_maps": ("circle",),
                "generic_select": Selection(None, "top", 0.8),
                "noise_map_select": Selection(None, "top", 0.8),
                "switch_select": Selection("adpDice", "min", 0.8),
                "switches": 100,
                "human_stats": ("θ",),
            },
            {
                "generic": _EMEASURE_GENERIC,
                "noise_map": _EMEASURE_NOISE,
                "gt_switch": (
                    Step("good maps: F1 ≥ 0.8 (adpDice)", f"{EMEASURE} §4.5"),
                    Step(
                        "as Margolin et al.: 100 random GT switches per image", f"{EMEASURE} §4.5"
                    ),
                    Step("error: the map scores better against a switched GT", f"{EMEASURE} §4.5"),
                ),
                "application": _APPLICATION_STEPS,
                "human": _HUMAN_STEPS,
            },
        ),
        Protocol(
            "context2025",
            f"{CONTEXT} §4",
            {
                "switch_select": Selection("adpDice", "min", 0.6),
                "switches": 1,
                "inject_select": Selection("adpDice", "min", 0.6),
                "inject_of": "image",
                "inject_fg_threshold": 0.0,
                "annotation_stats": ("mean |Δ|",),
                "human_stats": ("θ",),
            },
            {
                "gt_switch": _CONTEXT_SWITCH,
                "noise_injection": _CONTEXT_NOISE,
                "annotation": _CONTEXT_BOUNDARY,
                "human": _HUMAN_STEPS,
            },
            (
                "measures (§4 Experimental Setup): the paper runs C_β with α = 6, β = 1.0 and "
                "C_β^ω with k = 20, N = 7 (overlap 3), α = 6, β = 1.2, γ = 8, λ = 20; "
                "fminspect's defaults are pysodmetrics', which uses 1.2 as β² — give "
                "--param ccm_beta2=1.44 for the paper's β",
            ),
        ),
        Protocol(
            "ours",
            "fminspect's variant (before the paper presets)",
            _OURS_SETTINGS,
            {
                "generic": (Step("as Margolin et al. §5.2, every model's map", "ours"),),
                "noise_map": (Step("as the E-measure paper §4.3, no preselection", "ours"),),
                "gt_switch": (
                    Step(
                        "maps with adpDice ≥ 0.6; one derangement (as the Context-measure "
                        "paper §4.2)",
                        "ours",
                    ),
                ),
                "noise_injection": (
                    Step(
                        "N(0, 0.2²) noise, negatives truncated, on 1 % of the pixels with "
                        "map > 0.5 on GT background, every map",
                        "ours",
                    ),
                ),
                "annotation": (
                    Step("3×3 dilation/erosion; signed mean score change and 1 − ρ", "ours"),
                ),
                "application": _APPLICATION_STEPS,
                "human": (
                    *_HUMAN_STEPS,
                    Step("and the share of groups ordered differently (error rate)", "ours"),
                ),
            },
        ),
    )
}
