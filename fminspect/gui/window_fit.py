"""How the inspector window shares its room: the sample view's splitter (the metrics table's
rows, the map grid, the curves), the dataset list's width, and the part of the image the map
grid is zoomed on (offered as a figure's inset). Functions of the window, kept apart so that
its class stays one job."""

from __future__ import annotations

from typing import Any

from PySide6 import QtCore, QtWidgets

from fminspect.batch.qualitative import QualitativeError, Region

#: (the inspector window: not imported, which would make a cycle of the two modules)
InspectorWindow = Any

#: Models the metrics table shows without scrolling when the window is tall enough.
TABLE_ROWS = 12
#: The share of the window's width the dataset list takes, within its own width and
#: :data:`LIST_MOST` px: its size at 1366 px, ~420 px at 1920 (a trial found it 305 px at
#: both: the names and two models' columns).
LIST_SHARE, LIST_MOST = 0.22, 520


def narrow_combos(*combos: QtWidgets.QComboBox, letters: int = 8, grow: bool = True) -> None:
    """Lists that ask for the width of ``letters`` characters, not of their longest choice,
    and take the room their row has (``grow``); the popup shows every choice whole. A list
    sized to a method's long name (``SINet-V2_CVPR2022``) widened its dock and the window past
    a 1366-px screen once a theme's style had measured it again (a trial)."""
    for combo in combos:
        combo.setSizeAdjustPolicy(
            QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        combo.setMinimumContentsLength(letters)
        if grow:
            policy = combo.sizePolicy()
            policy.setHorizontalPolicy(QtWidgets.QSizePolicy.Policy.Expanding)
            combo.setSizePolicy(policy)


def fit_sample_view(window: InspectorWindow) -> None:
    """Give the metrics table the height of :data:`TABLE_ROWS` models (or of the shown ones,
    if fewer; at most 40 % of the view), the grid and the curves the rest 3 : 2 — unless the
    user has dragged the splitter. Below a full-HD screen (a view under 950 px: 1366 × 768,
    1440 × 900, 1600 × 900) the maps come first: the table at most 30 %, the grid two thirds
    of the rest (its maps were ~45–60 px high there)."""
    if window._sized_by_user:
        return
    table, splitter = window.table, window.sample_view
    view = table.view
    rows = max(1, min(TABLE_ROWS, len(window.selection.shown) or TABLE_ROWS))
    # what is not rows: the panel's other widgets (measured once laid out), the header, the
    # horizontal scroll bar (there once the measures' columns are in) and the frame; the
    # caption at the table's present width (a narrower table wraps it onto another line
    # before the layout has measured it again)
    caption = table.caption
    lines = caption.heightForWidth(table.width()) if caption.wordWrap() else -1
    measured = table.height() - view.height() if view.height() > 0 else 20
    around = measured - caption.height() + lines if lines > 0 and caption.height() else measured
    header = max(view.horizontalHeader().height(), view.horizontalHeader().minimumHeight())
    chrome = around + header + view.horizontalScrollBar().sizeHint().height()
    chrome += 2 * view.frameWidth() + 8  # (and the header's second line, once titled)
    need = chrome + rows * view.verticalHeader().defaultSectionSize()
    total = sum(splitter.sizes()) or splitter.height()
    short = total < 950
    height = min(need, int(total * (0.3 if short else 0.4)))
    rest = max(0, total - height)
    grid = rest * 2 // 3 if short else rest * 3 // 5
    splitter.setSizes([grid, height, rest - grid])


def fit_list(window: InspectorWindow) -> None:
    """Widen the dataset list on a wide window (again when the window's width changes; a
    width dragged by hand lasts until then)."""
    dock = window.browser_dock
    if dock.isFloating() or not dock.isVisible():
        return
    own = dock.minimumSizeHint().width()
    want = max(own, min(LIST_MOST, int(LIST_SHARE * window.width())))
    if want != dock.width():
        window.resizeDocks([dock], [want], QtCore.Qt.Orientation.Horizontal)


def grid_zoom(window: InspectorWindow) -> Region | None:
    """The part of the shown sample's image the map grid is zoomed on (None: it shows the
    whole image)."""
    sample, views = window.model.sample, window.grid.views
    shape = sample.shape if sample is not None else None
    if shape is None or not views:
        return None
    h, w = shape
    (x0, x1), (y0, y1) = views[0].viewRange()
    x0, y0 = max(0.0, x0), max(0.0, y0)
    x1, y1 = min(float(w), x1), min(float(h), y1)
    if x1 - x0 >= 0.98 * w and y1 - y0 >= 0.98 * h:
        return None  # the whole image
    try:
        return Region.checked(round(x0), round(y0), round(x1 - x0), round(y1 - y0))
    except QualitativeError:
        return None  # (zoomed off the image)
