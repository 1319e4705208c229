"""Which explain view shows which measure key, and the window that holds a view."""

from __future__ import annotations

import numpy as np
from PySide6 import QtGui, QtWidgets

from fminspect.gui.app import resize_for_screen
from fminspect.gui.views.auc_view import AUCView
from fminspect.gui.views.base import ExplainView
from fminspect.gui.views.boundary_band_views import BoundaryAccuracyView, BoundaryIoUView
from fminspect.gui.views.context_view import CamouflageContextView, ContextView
from fminspect.gui.views.emeasure_view import EmeasureView
from fminspect.gui.views.fmeasure_view import FmeasureView
from fminspect.gui.views.hce_view import HCEView
from fminspect.gui.views.other_views import BoundaryView, Curves255View, MAEView, MSIoUView
from fminspect.gui.views.size_invariance_view import SizeInvarianceView
from fminspect.gui.views.smeasure_view import SmeasureView
from fminspect.gui.views.weighted_fmeasure_view import WeightedFmeasureView
from fminspect.metrics import MEASURES_BY_KEY, REGISTRY, Family, Params, SuiteResult, update_suite
from fminspect.metrics.registry import CURVES, family_of

#: The explain views by the name a measure family gives in its registry entry
#: (:attr:`fminspect.metrics.registry.Family.view`).
VIEWS: dict[str, type[ExplainView]] = {
    "mae": MAEView,
    "fmeasure": FmeasureView,
    "weighted_fmeasure": WeightedFmeasureView,
    "smeasure": SmeasureView,
    "emeasure": EmeasureView,
    "relaxed_fmeasure": BoundaryView,
    "msiou": MSIoUView,
    "context": ContextView,
    "camouflage_context": CamouflageContextView,
    "auc": AUCView,
    "size_invariance": SizeInvarianceView,
    "hce": HCEView,
    "boundary_iou": BoundaryIoUView,
    "boundary_accuracy": BoundaryAccuracyView,
    "curves255": Curves255View,
}


def _family_of(key: str) -> Family:
    """The family of a measure key, or of a table's @t column (``Fm@t``: the family of the
    registered curve ``Fm``)."""
    base, at, _ = key.partition("@")
    return REGISTRY.families[CURVES[base].field] if at else family_of(base)


def view_for(key: str) -> type[ExplainView]:
    """The view class explaining measure ``key`` (e.g. ``'maxEm'``, ``'Fm@t'``): the one
    its family's registry entry names."""
    return VIEWS[_family_of(key).view]


def start_threshold(key: str, result: SuiteResult, current: int) -> int:
    """The curve point a view opens at: the best one's for a max…/min… key of a curve (so
    the view shows the number that was clicked), the inspector's threshold otherwise."""
    info = MEASURES_BY_KEY.get(key)
    if info is None or info.kind not in ("max", "min") or not result.has(info.field):
        return current
    if info.scores is None:
        return current
    curve = info.scores(result).curve
    return int(curve.argmax() if info.kind == "max" else curve.argmin())


def with_families(
    result: SuiteResult, families: tuple[str, ...], image: np.ndarray | None
) -> SuiteResult:
    """``result`` with ``families`` too (computed by the measures' own code if the window
    did not compute them: a view of the confusion counts opened on a TNR cell needs the
    F-measure family's precision and recall)."""
    missing = [f for f in families if f not in result.results]
    if not missing:
        return result
    return update_suite(result, result.params, img=image, families=[*result.results, *missing])


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
        cls = view_for(key)
        result = with_families(result, cls.NEEDS, image)
        family = _family_of(key)
        self.view = cls(
            result,
            model,
            sample,
            image,
            start_threshold(key, result, threshold),
            teaching=(family.teaching, family.paper, family.reference),
        )
        if key.startswith("adp") and hasattr(self.view, "set_adaptive"):
            self.view.set_adaptive(True)  # the binarisation behind the clicked number
        self.setCentralWidget(self.view)
        self.title = f"{self.view.TITLE}: {model} on {sample}"
        self.setWindowTitle(self.title)
        resize_for_screen(self, 1300, 900)
        for keys in ("Esc", "Ctrl+W"):  # closed from the keyboard, as a dialog is
            QtGui.QShortcut(QtGui.QKeySequence(keys), self).activated.connect(self.close)

    def mark_settings(self, params: Params) -> None:
        """Say in the title whether the inspector's parameters still are the view's (the
        view keeps the result it was opened with)."""
        stale = params != self.view.result.params
        self.setWindowTitle(
            f"{self.title} — out of date: the parameters changed since" if stale else self.title
        )
