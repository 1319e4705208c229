"""Which explain view shows which measure key, and the window that holds a view."""

from __future__ import annotations

import numpy as np
from PySide6 import QtWidgets

from fminspect.gui.views.base import ExplainView
from fminspect.gui.views.context_view import CamouflageContextView, ContextView
from fminspect.gui.views.emeasure_view import EmeasureView
from fminspect.gui.views.fmeasure_view import FmeasureView
from fminspect.gui.views.other_views import BoundaryView, MAEView, MSIoUView
from fminspect.gui.views.smeasure_view import SmeasureView
from fminspect.gui.views.weighted_fmeasure_view import WeightedFmeasureView
from fminspect.metrics import MEASURES_BY_KEY, Params, SuiteResult

VIEW_BY_FIELD: dict[str, type[ExplainView]] = {
    "mae": MAEView,
    "fmeasure": FmeasureView,
    "overlap": FmeasureView,
    "weighted_fmeasure": WeightedFmeasureView,
    "smeasure": SmeasureView,
    "emeasure": EmeasureView,
    "relaxed_fmeasure": BoundaryView,
    "msiou": MSIoUView,
    "context": ContextView,
    "camouflage_context": CamouflageContextView,
}
FIELD_BY_KEY = {key: info.field for key, info in MEASURES_BY_KEY.items()}
FIELD_BY_KEY.update({"Fm": "fmeasure", "Em": "emeasure", "IoU": "overlap"})


def view_for(key: str) -> type[ExplainView]:
    """The view class explaining measure ``key`` (e.g. ``'maxEm'``, ``'Fm@t'``)."""
    return VIEW_BY_FIELD[FIELD_BY_KEY[key.split("@")[0]]]


def start_threshold(key: str, result: SuiteResult, current: int) -> int:
    """The curve point a view opens at: the maximum's for a max… key (so the view shows the
    number that was clicked), the inspector's threshold otherwise."""
    f, o, e = result.fmeasure, result.overlap, result.emeasure
    argmax = {
        "maxFm": f.fmeasure.argmax if f else None,
        "maxEm": e.argmax if e else None,
        "maxIoU": o.iou.argmax if o else None,
        "maxDice": o.dice.argmax if o else None,
    }.get(key)
    return current if argmax is None else argmax


class ExplainWindow(QtWidgets.QMainWindow):
    """A separate window holding one explain view (several can be open)."""

    def __init__(
        self,
        key: str,
        result: SuiteResult,
        model: str,
        sample: str,
        image: np.ndarray | None,
        threshold: int,
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.view = view_for(key)(
            result, model, sample, image, start_threshold(key, result, threshold)
        )
        if key.startswith("adp") and hasattr(self.view, "set_adaptive"):
            self.view.set_adaptive(True)  # the binarisation behind the clicked number
        self.setCentralWidget(self.view)
        self.title = f"{self.view.TITLE}: {model} on {sample}"
        self.setWindowTitle(self.title)
        self.resize(1300, 900)

    def mark_settings(self, params: Params) -> None:
        """Say in the title whether the inspector's parameters still are the view's (the
        view keeps the result it was opened with)."""
        stale = params != self.view.result.params
        self.setWindowTitle(
            f"{self.title} — out of date: the parameters changed since" if stale else self.title
        )
