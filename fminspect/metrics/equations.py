"""Which equation of which paper each measure implements: one table for every surface.

The registry's ``paper`` texts, the explain views' headers, ``fminspect measures`` and the
measure table of docs/measures.md all read :data:`EQUATIONS`, so an equation number is
written once.
Each entry carries a short fragment of the equation as the paper's text (in
``../shared/papers/``) writes it; ``tests/metrics/test_equations.py`` finds every number in
those texts and checks that the equation there contains the fragment.

Numbers are the papers' own. The Context-measure paper numbers its appendix again from
(1); those entries say ``appendix``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Paper:
    """A paper whose equations are cited.

    Attributes
    ----------
    key : str
        Short name used in :data:`EQUATIONS`.
    citation : str
        Authors, venue and year, as the views print it.
    text : str
        Its full text's file name in ``../shared/papers/``.
    """

    key: str
    citation: str
    text: str


@dataclass(frozen=True, slots=True)
class Equation:
    """One equation of a paper that a measure implements.

    Attributes
    ----------
    paper : str
        :attr:`Paper.key`.
    number : int
        The paper's equation number.
    quantity : str
        What it defines, as the views name it (``'S_r'``, ``'alignment ξ'``).
    fragment : str
        A piece of the equation exactly as the paper's text writes it (LaTeX).
    appendix : bool
        Whether it is numbered in the paper's appendix (the Context-measure paper restarts).
    """

    paper: str
    number: int
    quantity: str
    fragment: str
    appendix: bool = False

    @property
    def tag(self) -> str:
        """``'Eq. (8)'`` or ``'appendix Eq. (1)'``."""
        return f"{'appendix ' if self.appendix else ''}Eq. ({self.number})"


PAPERS = {
    p.key: p
    for p in (
        Paper("smeasure", "Cheng & Fan, IJCV 2021 (Fan et al., ICCV 2017)", "s-measure.md"),
        Paper("emeasure", "Fan et al., IJCAI 2018", "e-measure.md"),
        Paper("margolin", "Margolin, Zelnik-Manor & Tal, CVPR 2014", "weighted-fmeasure.md"),
        Paper("context", "Wang et al., arXiv:2512.07076, 2025", "context-measure.txt"),
    )
}

_S, _E, _M, _C = "smeasure", "emeasure", "margolin", "context"

#: Measure family → the equations it implements, in the order the measure is built.
EQUATIONS: dict[str, tuple[Equation, ...]] = {
    # the appendix writes M := Mean(Y′ − X′), without |·|: the mean *absolute* error is meant
    "mae": (Equation(_C, 1, "MAE", r"M:=Mean(Y^{\prime}-X^{\prime})", appendix=True),),
    "smeasure": (
        Equation(_S, 7, "ssim", r"ssim = \frac{2\bar{x}\bar{y} + C_1}"),
        Equation(_S, 8, "S_r", r"S_r = \sum_{k=1}^K w_k \times ssim(k)"),
        Equation(_S, 12, "S_FG", r"S_{FG} = \frac{2\bar{x}_{FG}}"),
        Equation(_S, 13, "S_BG", r"S_{BG} = \frac{2\bar{x}_{BG}}"),
        Equation(_S, 14, "S_o", r"S_o = \mu \times S_{FG} + (1 - \mu) \times S_{BG}"),
        Equation(_S, 15, "S", r"S = \alpha \times S_o + (1 - \alpha) \times S_r"),
    ),
    "weighted_fmeasure": (
        Equation(_M, 7, "error E", r"E = |G - D|"),
        Equation(_M, 9, "weighted error E^w", r"E^w = \min(E, E\mathbb{A}) \cdot \mathbb{B}"),
        Equation(_M, 10, "TP^w, FP^w, FN^w", r"TP^w &= (1 - E^w) \cdot G"),
        Equation(_M, 11, "dependency A", r"\mathbb{A}(i, j) = "),
        Equation(_M, 12, "importance B", r"\mathbb{B}(i) = "),
        Equation(_M, 13, "P^w, R^w", r"\text{Precision}^w = \frac{TP^w}{TP^w + FP^w}"),
        Equation(_M, 14, "F^w_β", r"F_\beta^w = (1 + \beta^2)"),
    ),
    "emeasure": (
        Equation(_E, 4, "bias φ", r"\varphi_I = I - \mu_I \cdot \mathbb{A}"),
        Equation(_E, 5, "alignment ξ", r"\xi_{FM} = \frac{2\varphi_{GT} \circ \varphi_{FM}}"),
        Equation(_E, 6, "enhanced alignment ϕ", r"\phi_{FM} = f(\xi_{FM})"),
        Equation(_E, 7, "E", r"Q_{FM} = \frac{1}{w \times h}"),
    ),
    "fmeasure": (
        Equation(_M, 1, "recall", r"\text{Hit-rate} = \text{Recall} = \frac{TP}{TP + FN}"),
        Equation(_M, 3, "precision", r"\text{Precision} = \frac{TP}{TP + FP}"),
        Equation(_M, 4, "F_β", r"F_\beta\text{-measure} &= (1 + \beta^2)"),
    ),
    "overlap": (
        Equation(_M, 5, "IoU (PASCAL)", r"\text{PASCAL} = \frac{TP}{TP + FN + FP}"),
        Equation(_E, 2, "IoU (JI)", r"JI = IOU = \frac{TP}{TP + FN + FP}"),
    ),
    "classification": (
        Equation(_M, 1, "hit rate (TPR)", r"\text{Hit-rate} = \text{Recall}"),
        Equation(_M, 2, "false alarm (FPR)", r"\text{False alarm} = \frac{FP}{TN + FP}"),
    ),
    "auc": (
        Equation(_M, 1, "hit rate", r"\text{Hit-rate} = \text{Recall}"),
        Equation(_M, 2, "false alarm", r"\text{False alarm} = \frac{FP}{TN + FP}"),
        Equation(_M, 3, "precision", r"\text{Precision} = \frac{TP}{TP + FP}"),
    ),
    "context": (
        Equation(_C, 1, "kernel P_Y", r"P_{Y}(m,n):="),
        Equation(_C, 2, "C_β", r"C_{\beta}:=\frac{(1+\beta^{2})\cdot F_{m}\cdot R_{m}}"),
        Equation(_C, 3, "forward inference F", r"F(Y|p^{i}):=X(p^{i})"),
        Equation(_C, 4, "reverse deduction R", r"R(X|q^{j}):=1-\prod"),
        Equation(_C, 5, "R ≈ 1 − exp(−Σ)", r"\approx 1-\exp{\Big(-\sum"),
        Equation(_C, 6, "R ≈ 1 − exp(−K ∗ X)", r"1-\exp{\Big(-\mathcal{K}_{j}\ast X\Big)}"),
        Equation(_C, 7, "R(X|Y)", r"R(X|Y)\approx\frac{e}{e-1}\cdot Y"),
    ),
    "camouflage_context": (
        Equation(_C, 8, "camouflage degree D", r"\mathcal{D}:=\frac{\exp{\Big(\gamma"),
        Equation(
            _C, 9, "weighted reverse R_w", r"R_{w}:=\frac{\|R(X|Y)\odot(Y+\mathcal{D})\|_{1}}"
        ),
        Equation(_C, 10, "C^ω_β", r"C_{\beta}^{\omega}=\frac{(1+\beta^{2})"),
    ),
}


def equation(family: str, quantity: str) -> Equation:
    """The entry of ``family`` defining ``quantity`` (KeyError naming both if none)."""
    for eq in EQUATIONS.get(family, ()):
        if eq.quantity == quantity:
            return eq
    raise KeyError(f"no equation for {quantity!r} of {family!r}")


def tag(family: str, quantity: str) -> str:
    """``'Eq. (8)'`` for ``quantity`` of ``family``."""
    return equation(family, quantity).tag


def cite(*families: str) -> str:
    """Every equation of the ``families`` by paper: ``'Cheng & Fan, IJCV 2021 (…): ssim
    Eq. (7), S_r Eq. (8), …'`` (empty when they cite none)."""
    parts: dict[str, list[str]] = {}
    for family in families:
        for eq in EQUATIONS.get(family, ()):
            parts.setdefault(eq.paper, []).append(f"{eq.quantity} {eq.tag}")
    return "; ".join(f"{PAPERS[p].citation}: {', '.join(items)}" for p, items in parts.items())
