"""The grid of image panels: image, GT and one panel per model, linked and hoverable."""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.gui.colours import CONFUSION_RGB, CONTOUR_RGB, confusion_colour, hex_colour
from fminspect.gui.panels.image_layer import ImageLayer
from fminspect.gui.panels.plain_items import line_item
from fminspect.metrics import SuiteResult, unit_map
from fminspect.metrics.boundary_fmeasure import boundary
from fminspect.pipeline.notes import Note
from fminspect.pipeline.sample import LoadedSample

#: RGBA of the TP/FP/FN overlay (TN transparent) and of the GT contour
#: (fminspect.gui.colours: colour-blind safe; the map beneath is drawn in grey).
CONFUSION_RGBA = np.zeros((4, 4), np.uint8)
CONFUSION_RGBA[1:, :3] = CONFUSION_RGB[1:]
CONFUSION_RGBA[1:, 3] = 210
CONTOUR_RGBA = np.array([*CONTOUR_RGB, 255], np.uint8)
#: Model maps per page of the grid (the user can change it).
DEFAULT_PAGE_SIZE = 12
#: Image sizes whose last zoom is remembered (the most recently shown; a dataset of images
#: of many sizes would otherwise add one for every size met in a long browse)
RANGES_KEPT = 64
#: With more panels than this, they are made and filled over several event-loop turns
#: (:data:`FILL_BUDGET_MS` each), not in the turn that shows the sample.
STAGED_AFTER = 6
#: The margin around a whole image in its panel, as a share of its width and height.
FIT_PADDING = 0.02
#: Milliseconds of panel filling an event-loop turn takes at most (past the first panel,
#: which every turn fills; 0: one panel per turn):
#: panels made anew cost 5–10 ms each, panels kept 3–4 ms; one per turn made stepping to
#: the next sample take 12 turns and their repaints.
FILL_BUDGET_MS = 10.0
COLORMAPS = ("viridis", "inferno", "cividis", "gray")
#: diverging map for signed matrices (symmetric levels)
DIVERGING = "CET-D1"
#: the size policy of pyqtgraph's ViewBox (a placeholder of a panel not made yet has it too)
_EXPANDING = QtWidgets.QSizePolicy(
    QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Expanding
)


@functools.cache
def colormap(name: str) -> pg.ColorMap:
    """A pyqtgraph colour map by name ('gray' is built here; pyqtgraph ships none). Made
    once per name: reading one from pyqtgraph's files took 3 ms of a dataset's opening."""
    if name == "gray":
        return pg.ColorMap(pos=[0.0, 1.0], color=[(0, 0, 0), (255, 255, 255)], name="gray")
    return pg.colormap.get(name)


def display_bytes(values: np.ndarray) -> np.ndarray:
    """A map in [0, 1] as the 0–255 bytes a panel draws: 256 grey levels are all a screen
    shows, and bytes index the lookup table directly (a float map would be rescaled element
    by element). The panel keeps the float values for the read-outs (:attr:`MapCell.values`)."""
    if values.dtype == np.uint8:
        return values
    return np.rint(np.clip(values, 0.0, 1.0) * 255.0).astype(np.uint8)


@functools.cache
def lookup_table(name: str) -> np.ndarray:
    """The 256-entry lookup table of a colour map, made once per name: a layer given the
    same table again keeps its rendered picture (a new table each time re-rendered every
    panel's map: 30 ms of the GUI thread for a dozen)."""
    lut = colormap(name).getLookupTable(nPts=256)
    lut.setflags(write=False)
    return lut


class TitleItem(QtWidgets.QGraphicsWidget):
    """A panel's title: one line of plain text, centred, elided to its panel's width.

    pyqtgraph's ``LabelItem`` lays its text out as HTML and makes the text's width its
    column's minimum: a new title (another model, an alias, a ⚠) re-laid out the whole grid
    (every panel moved, every linked view updated: 25–40 ms), and making the 14 titles of a
    new layout took 20 of its 28–30 ms. This one asks for the text's height and no width,
    and Qt paints its text (no Python per repaint). :attr:`text` is the whole title, also
    its tooltip; ``setText`` takes ``LabelItem``'s arguments."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.setFlag(self.GraphicsItemFlag.ItemClipsChildrenToShape)
        self._shown = QtWidgets.QGraphicsSimpleTextItem(self)
        self.text = ""
        self._size = ""
        self.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Fixed
        )
        self.setText(text, size="9pt", color=pg.getConfigOption("foreground"))

    def setText(self, text: str, size: str | None = None, color: object = None) -> None:
        """As pyqtgraph's ``LabelItem``: ``size`` such as ``"9pt"``, ``color`` any colour
        pyqtgraph reads."""
        self.text = text
        self.setToolTip(text)
        if size is not None and size != self._size:
            self._size = size
            font = self.font()
            font.setPointSizeF(float(size.removesuffix("pt")))
            self.setFont(font)
            self._shown.setFont(font)
            height = QtGui.QFontMetricsF(font).height()
            self.setMinimumSize(0.0, height)
            self.setPreferredSize(0.0, height)
            self.setMaximumHeight(height)
        if color is not None:
            self._shown.setBrush(pg.mkBrush(color))
        self._place()

    @property
    def shown(self) -> str:
        """The text as drawn (elided to the width)."""
        return self._shown.text()

    def resizeEvent(self, event: QtWidgets.QGraphicsSceneResizeEvent) -> None:
        self._place()

    def _place(self) -> None:
        """The text elided to the width, centred."""
        width = self.size().width()
        metrics = QtGui.QFontMetricsF(self.font())
        shown = metrics.elidedText(self.text, QtCore.Qt.TextElideMode.ElideRight, max(width, 0.0))
        if shown != self._shown.text():
            self._shown.setText(shown)
        box = self._shown.boundingRect()
        self._shown.setPos(max(0.0, (width - box.width()) / 2), 0.0)


#: Height of a panel's title row, and the colour bar's width beside the grid (pixels).
TITLE_HEIGHT, COLORBAR_WIDTH = 18, 70
#: After a resize, how long the size must stay before the panels may be laid out again.
RELAYOUT_AFTER_MS = 150


def grid_columns(
    n: int, width: float, height: float, aspect: float, current: int | None = None
) -> int:
    """The number of columns that shows ``n`` panels of an image ``aspect`` (width / height)
    largest in an area of ``width`` × ``height`` pixels (the titles and the colour bar
    taken out); the fewer columns of two equal choices. The ``current`` number is kept while
    it shows them at least 90 % as large (walking through images of slightly different
    shapes does not lay the panels out anew at every step). Without an area yet (0 × 0):
    about 1.7 columns per row, as a wide window has them."""
    if n <= 1:
        return 1
    if width <= COLORBAR_WIDTH or height <= 0:
        return max(1, min(n, math.ceil(math.sqrt(n * 1.7))))

    def shown(cols: int) -> float:  # the height a map is drawn at
        rows = math.ceil(n / cols)
        cell_w = (width - COLORBAR_WIDTH) / cols
        cell_h = height / rows - TITLE_HEIGHT
        return max(0.0, min(cell_h, cell_w / aspect))

    best = max(range(1, n + 1), key=lambda c: (round(shown(c), 1), -c))
    if current is not None and 1 <= current <= n and shown(current) >= 0.9 * shown(best):
        return current
    return best


def _add_title(layout: pg.GraphicsLayout, text: str, row: int, col: int) -> TitleItem:
    title = TitleItem(text)
    layout.addItem(title, row=row, col=col)
    return title


class MapCell:
    """One panel: a title, a base image, the map, an overlay and a crosshair."""

    def __init__(
        self,
        layout: pg.GraphicsLayout,
        title: str,
        row: int,
        col: int,
        label: TitleItem | None = None,
    ) -> None:
        self.title = title
        self.label = label or _add_title(layout, title, 2 * row, col)
        self.view = layout.addViewBox(
            row=2 * row + 1, col=col, lockAspect=True, invertY=True, enableMenu=False
        )
        # layers Qt paints by itself (see fminspect.gui.panels.image_layer)
        self.base = ImageLayer()
        self.map = ImageLayer()
        self.overlay = ImageLayer()
        for z, layer in enumerate((self.base, self.map, self.overlay)):
            layer.item.setZValue(z)
            self.view.addItem(layer.item)
        # the crosshair, across the image (lines Qt paints by itself: see plain_items)
        pen = pg.mkPen((255, 255, 255, 160), width=1, style=QtCore.Qt.PenStyle.DashLine)
        self.vline, self.hline = line_item(pen, z=10), line_item(pen, z=10)
        for line in (self.vline, self.hline):
            line.hide()
            self.view.addItem(line, ignoreBounds=True)
        self.values: np.ndarray | None = None  # what the hover read-out reports

    def set_title(self, text: str, colour: object = None) -> None:
        self.label.setText(text, size="9pt", color=colour)


class Pager(QtWidgets.QWidget):
    """The grid's pages of models: previous, "page k of n", next, and how many a page shows.

    Signals
    -------
    turned(int)
        −1 or +1: a page back or on.
    size_chosen(int)
        The models a page is to show.
    """

    turned = QtCore.Signal(int)
    size_chosen = QtCore.Signal(int)

    def __init__(self, size: int, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        back, on = QtWidgets.QToolButton(), QtWidgets.QToolButton()
        back.setText("◀")
        on.setText("▶")
        back.setToolTip("previous page of models (Ctrl+Page Up)")
        on.setToolTip("next page of models (Ctrl+Page Down)")
        back.clicked.connect(lambda: self.turned.emit(-1))
        on.clicked.connect(lambda: self.turned.emit(1))
        self.label = QtWidgets.QLabel("")
        self.label.setObjectName("mapGridPage")
        self.spin = QtWidgets.QSpinBox()
        self.spin.setRange(1, 40)
        self.spin.setValue(size)
        self.spin.setPrefix("per page: ")
        self.spin.setToolTip("how many model maps a page of the grid shows")
        self.spin.valueChanged.connect(self.size_chosen)
        row = QtWidgets.QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for w in (back, self.label, on, self.spin):
            row.addWidget(w)


class LeaderLinks:
    """Zoom and pan linked across the views ``views()`` gives: the first leads, the others
    show its range; a pan or a zoom by hand in another is passed to the first, which passes
    it on. Not pyqtgraph's links: they are two-way and line views up by their place on the
    screen, and with the aspect locked, views of different sizes for a moment (while the
    window is resized) widened each other's ranges in turn, each resize more (to ±40,000 px
    on a 400-px image)."""

    def __init__(self, views: Callable[[], list[pg.ViewBox]]) -> None:
        self.views = views

    def link(self, view: pg.ViewBox) -> None:
        """Link ``view``, one of ``views()`` (the first, or one taking the first's range)."""
        first = self.views()[0]
        if view is first:
            first.sigRangeChanged.connect(self._follow_first)
            return
        x, y = first.viewRange()
        view.setRange(xRange=x, yRange=y, padding=0)
        view.sigRangeChangedManually.connect(functools.partial(self._lead, view))

    def _follow_first(self, view: pg.ViewBox, *_: object) -> None:
        """The first view's range changed (a zoom, a pan, a resize): every other view shows
        it (each keeps its own aspect)."""
        views = self.views()
        if not views or view is not views[0]:
            return  # a first view of an older layout
        x, y = view.viewRange()
        for other in views[1:]:
            other.setRange(xRange=x, yRange=y, padding=0)

    def _lead(self, view: pg.ViewBox, *_: object) -> None:
        views = self.views()
        if views and view is not views[0] and view in views:
            x, y = view.viewRange()
            views[0].setRange(xRange=x, yRange=y, padding=0)


class ColumnFit:
    """The grid's number of columns: the one that shows its panels largest in its area
    (:func:`grid_columns`; a 5 × 3 grid in a wide, low area drew 90-px maps where 7 × 2
    draws them 1.5× larger), chosen when the panels are laid out and again once a resize has
    settled — not at every sample: walking through images of other shapes keeps each model
    where it was (on the demo, choosing per sample laid the grid out anew at 12 of 30
    steps)."""

    def __init__(self, grid: MapGridPanel) -> None:
        self.grid = grid
        self.timer = QtCore.QTimer(grid)
        self.timer.setSingleShot(True)
        self.timer.setInterval(RELAYOUT_AFTER_MS)
        self.timer.timeout.connect(self._relayout_if_better)

    def best(self, n: int) -> int:
        """The columns for ``n`` panels in the grid's area now (the current number while it
        is nearly as good, for as many panels)."""
        sample = self.grid.sample
        shape = sample.shape if sample is not None else None
        aspect = shape[1] / shape[0] if shape and shape[0] else 4 / 3
        area = self.grid.graphics.viewport().size()
        current = self.grid._cols if len(self.grid._layout_names) == n else None
        return grid_columns(n, area.width(), area.height(), aspect, current)

    def schedule(self) -> None:
        """After a resize: check once the size has stayed for a moment."""
        self.timer.start()

    @property
    def pending(self) -> bool:
        """A check is due (a resize has not settled yet)."""
        return self.timer.isActive()

    def _relayout_if_better(self) -> None:
        names = self.grid._layout_names
        if self.grid.sample is not None and names and self.best(len(names)) != self.grid._cols:
            self.grid._layout_names = []  # laid out anew, not renamed
            self.grid._rebuild()


class MapGridPanel(QtWidgets.QWidget):
    """Image, GT and model maps in linked views, with overlays and a mirrored crosshair.

    Signals
    -------
    hovered(object)
        ``(row, col, {panel: value text})`` under the mouse, or ``None`` when outside.
    filled()
        The last of the sample's panels filled over several turns (:meth:`_fill_cells`) is.
    """

    hovered = QtCore.Signal(object)
    filled = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mapGrid")
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.ci.setSpacing(4)
        # many models are shown a page at a time, each map at a readable size
        self.models: list[str] | None = None  # the models to show, in order (None: all)
        self.pinned: str | None = None  # the reference model, on every page
        self.names: dict[str, str] = {}  # display names
        self.page = 0
        self.page_size = DEFAULT_PAGE_SIZE
        self.pager = Pager(self.page_size)
        self.pager.turned.connect(self.turn_page)
        self.pager.size_chosen.connect(self.set_page_size)
        # the header: the overlays' colour legend (in view whatever the docks), and the pager
        # when the models need more than one page; always there, so that neither changes
        # the grid's size
        self.legend = QtWidgets.QLabel("")
        self.legend.setObjectName("mapGridLegend")
        self.legend.setToolTip(
            "colour-blind-safe colours (Okabe–Ito); the map is drawn in grey under the "
            "TP/FP/FN overlay"
        )
        self.header = QtWidgets.QWidget()
        bar = QtWidgets.QHBoxLayout(self.header)
        bar.setContentsMargins(4, 0, 4, 0)
        bar.addWidget(self.legend)
        bar.addStretch(1)
        bar.addWidget(self.pager)
        self.header.setFixedHeight(max(self.pager.spin.sizeHint().height(), 22))
        self.pager.hide()
        box = QtWidgets.QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addWidget(self.header)
        box.addWidget(self.graphics)
        self.cells: dict[str, MapCell] = {}
        self._links = LeaderLinks(lambda: self.views)  # zoom and pan, the first panel leading
        self.sample: LoadedSample | None = None
        self.gt_notes: tuple[Note, ...] = ()
        # the last view range per image size, most recent last (RANGES_KEPT of them)
        self._ranges: OrderedDict[tuple[int, int] | None, list[list[float]]] = OrderedDict()
        self.results: dict[str, SuiteResult] = {}
        self.threshold = 128
        self.show_contour = True
        self.show_confusion = False
        self.over_image = False
        self.opacity = 0.6
        self.colormap = "viridis"
        self.foreground: object = None
        # made now, with the window, and kept across layouts: making it took 10–17 ms of
        # the GUI thread when the first sample of a dataset was laid out
        self.colorbar = pg.ColorBarItem(
            values=(0, 1),
            colorMap=colormap(self.colormap),
            interactive=False,
            label="map value (0–1)",
            width=12,
        )
        self._contour: np.ndarray | None = None
        self._contour_rgba: np.ndarray | None = None
        #: the range the first panel (and every linked one) shows: (x, y, padding)
        self._view_target: tuple[Any, Any, float] | None = None
        self._pending_fill: list[str] = []
        #: panels of the layout not made yet: their title and the empty item holding the place
        self._placeholders: dict[str, tuple[TitleItem, pg.GraphicsWidget]] = {}
        self._layout_names: list[str] = []  # every panel of the layout, made or to be made
        self._cols = 1
        self.columns = ColumnFit(self)
        self._fill_timer = QtCore.QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(0)
        self._fill_timer.timeout.connect(self._fill_next)
        self.graphics.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self._show_legend()

    def _show_legend(self) -> None:
        """The colours of the overlays shown: TP, FP, FN at t and the GT contour."""
        swatch = "<span style='color:{}'>■</span> {}"
        entries: list[tuple[Any, str]] = []
        if self.show_confusion:
            entries += [(confusion_colour(n), n) for n in ("TP", "FP", "FN")]
        if self.show_contour:
            entries.append((CONTOUR_RGB, "GT contour"))
        self.legend.setText(" &nbsp; ".join(swatch.format(hex_colour(c), t) for c, t in entries))

    # ------------------------------------------------------------------ building
    def _layout(self, names: list[str]) -> None:
        """Lay out panels for ``names``: up to :data:`STAGED_AFTER` are made now; more are
        made over several event-loop turns as they are filled (:meth:`_fill_next`), the
        image's and the GT's too, so that opening a dataset of many models never holds the GUI thread for
        long (laying out 14 panels and making two of them took 20–25 ms, in the turn that
        then painted them)."""
        ci = self.graphics.ci
        ci.clear()
        self.cells = {}
        self._layout_names = list(names)
        n = len(names)
        self._cols = cols = self.columns.best(n)
        rows = math.ceil(n / cols)
        self._placeholders = {}
        with self._one_activation():
            now = 0 if len(names) > STAGED_AFTER else len(names)
            made = [self._add_cell(name) for name in names[:now]]
            # the panels made later take the place of a placeholder of the same size policy,
            # so that the grid's geometry is set now: a panel added to a growing grid resized
            # every panel made before it, and every view linked to them (an O(n²) cascade of
            # 10–35 ms per panel on 14 panels)
            for i, name in enumerate(names[now:], start=now):
                r, c = divmod(i, cols)
                label = _add_title(ci, name, 2 * r, c)
                hold = pg.GraphicsWidget()
                hold.setSizePolicy(_EXPANDING)
                ci.addItem(hold, row=2 * r + 1, col=c)
                self._placeholders[name] = (label, hold)
            for r in range(rows):  # title rows: just the text height
                ci.layout.setRowMaximumHeight(2 * r, TITLE_HEIGHT)
            ci.addItem(self.colorbar, row=0, col=cols, rowspan=2 * rows)
        for cell in made:
            self._link(cell)
        self._colour_colorbar()

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        self.columns.schedule()  # laid out again if other columns now fit better

    @contextlib.contextmanager
    def _one_activation(self) -> Iterator[None]:
        """Add items to the layout with one activation at the end: pyqtgraph activates it
        after every item it adds, which resizes every view made before (and every view
        linked to them) — for 14 panels that was 30 layout passes and 1,100 linked-range
        updates, 50–100 ms."""
        grid = self.graphics.ci.layout
        grid.activate = lambda: None  # an instance attribute: pyqtgraph's call finds it
        try:
            yield
        finally:
            del grid.activate
        grid.activate()

    def _add_cell(self, name: str) -> MapCell:
        """Make the panel of ``name`` at its place in the layout (linked by :meth:`_link`
        once the layout has given it its size)."""
        i = self._layout_names.index(name)
        label, hold = self._placeholders.pop(name, (None, None))
        if hold is not None:
            self.graphics.ci.removeItem(hold)
        cell = MapCell(self.graphics.ci, name, i // self._cols, i % self._cols, label)
        self.cells[name] = cell
        cell.view.sigRangeChanged.connect(lambda *_: None)
        if self.foreground is not None:
            cell.set_title(name, self.foreground)
        return cell

    def _make_cell(self, name: str) -> MapCell:
        """Make one more panel of the current layout and link it to the first; the first's
        range is kept (a view linked while it had no size yet once dragged every panel's
        range out to ±7,000 px)."""
        with self._one_activation():
            cell = self._add_cell(name)
        self._link(cell)
        if len(self.cells) == 1:  # the first panel of a staged layout: the range chosen
            self._apply_view()
        return cell

    def _link(self, cell: MapCell) -> None:
        self._links.link(cell.view)

    def _apply_view(self) -> None:
        """Show the range chosen for this sample (kept, or the whole image)."""
        target = self._view_target
        if target is None or not self.cells:
            return
        x, y, padding = target
        self.views[0].setRange(xRange=x, yRange=y, padding=padding)

    def set_foreground(self, colour: object) -> None:
        """Text and axis colour (follows the theme)."""
        self.foreground = colour
        for cell in self.cells.values():
            cell.label.setText(cell.label.text, size="9pt", color=colour)
        self._colour_colorbar()

    def _colour_colorbar(self) -> None:
        """The colour bar's ticks and its label (on another axis) in the theme's colour."""
        if self.foreground is None:
            return
        for name in ("left", "right", "top", "bottom"):
            axis = self.colorbar.getAxis(name)
            if axis is not None:
                axis.setPen(self.foreground)
                axis.setTextPen(self.foreground)

    @property
    def views(self) -> list[pg.ViewBox]:
        return [c.view for c in self.cells.values()]

    def set_sample(
        self, sample: LoadedSample, keep_view: bool = True, gt_notes: tuple[Note, ...] = ()
    ) -> None:
        """Show a newly loaded sample, keeping the zoom: the current one when the size is
        unchanged, or the last one used for samples of that size. ``gt_notes``: the notes
        on the GT under the current GT rule (its panel is marked ⚠)."""
        self.gt_notes = gt_notes
        if self.sample is not None and self.cells:
            self._ranges[self.sample.shape] = self._kept_range()
            self._ranges.move_to_end(self.sample.shape)
            while len(self._ranges) > RANGES_KEPT:
                self._ranges.popitem(last=False)
        self.sample = sample
        self.results = {}
        self._build()
        # the contour of the GT as binarised by default (GT > 128 of 255, whatever the depth)
        self._contour = boundary(unit_map(sample.gt) > 128 / 255) if sample.gt is not None else None
        self._contour_rgba = None
        self._fill_cells(staged=True)
        kept = self._ranges.get(sample.shape) if keep_view else None
        if kept is not None:
            self._view_target = (kept[0], kept[1], 0.0)
        elif sample.shape is not None:
            h, w = sample.shape
            self._view_target = ((0, w), (0, h), FIT_PADDING)
        self._apply_view()

    # ------------------------------------------------------------------ pages
    def sample_models(self) -> list[str]:
        """The models of the current sample the grid shows, over all pages, in order
        (unreadable maps, and shown models with no map for this image, last, as empty
        panels saying so)."""
        s = self.sample
        if s is None:
            return []
        if self.models is None:
            return [*s.preds, *s.unreadable]
        readable = [m for m in self.models if m in s.preds]
        return readable + [m for m in self.models if m in s.unreadable or _no_map(s, m)]

    def _paged(self) -> tuple[list[str], list[str]]:
        """(the pinned model on every page, if the sample has it; the models paged)."""
        every = self.sample_models()
        pinned = [self.pinned] if self.pinned in every and len(every) > self.page_size else []
        return pinned, [m for m in every if m not in pinned]

    def page_count(self) -> int:
        pinned, rest = self._paged()
        per_page = max(1, self.page_size - len(pinned))
        return max(1, math.ceil(len(rest) / per_page))

    def page_models(self) -> list[str]:
        """The models on the current page (the pinned reference first, on every page)."""
        pinned, rest = self._paged()
        per_page = max(1, self.page_size - len(pinned))
        start = self.page * per_page
        return pinned + rest[start : start + per_page]

    def set_models(
        self,
        models: list[str] | None,
        names: dict[str, str] | None = None,
        pinned: str | None = None,
    ) -> None:
        """Show these models (in this order, a page at a time; None: every model of the
        sample) under these display names; ``pinned`` (the reference) on every page."""
        self.models = None if models is None else list(models)
        self.names = dict(names or {})
        self.pinned = pinned
        if self.sample is not None:
            self.page = min(self.page, self.page_count() - 1)
            self._rebuild()

    def set_page_size(self, size: int) -> None:
        """Models per page."""
        first = self.page * self.page_size
        self.page_size = max(1, int(size))
        self.page = first // self.page_size
        if self.pager.spin.value() != self.page_size:
            self.pager.spin.setValue(self.page_size)
        if self.sample is not None:
            self._rebuild()

    def turn_page(self, delta: int) -> None:
        """Next (+1) or previous (−1) page of models (wraps around)."""
        if self.sample is None:
            return
        self.page = (self.page + delta) % self.page_count()
        self._rebuild()

    def _fill_cells(self, staged: bool) -> None:
        """Show the sample in every cell. Painting a dozen maps of 400×550 (each through its
        lookup table) in one event-loop turn blocked the GUI thread for 40–70 ms, and making
        the panels of a new layout for longer: with more than :data:`STAGED_AFTER` panels the
        image and the GT are shown at once (if their panels are made) and the others over
        the next turns, :data:`FILL_BUDGET_MS` each, each made first if it is not yet (a
        result that arrives meanwhile is drawn with its panel, once)."""
        self._pending_fill = []
        names = list(self._layout_names)
        # staged: the image and the GT at once if their panels are made (the same layout)
        now = (
            names
            if not staged or len(names) <= STAGED_AFTER
            else [n for n in names[:2] if n in self.cells]
        )
        for name in now:
            cell = self.cells.get(name) or self._make_cell(name)
            self._fill(name, cell)
        self._pending_fill = [n for n in names if n not in now]
        if self._pending_fill:
            self._fill_timer.start()
        else:
            self._refresh_colorbar()

    def _fill_next(self) -> None:
        """Fill the next pending panels, as many as :data:`FILL_BUDGET_MS` allows."""
        if not self._pending_fill or self.sample is None:
            return
        start = time.perf_counter()
        while True:  # one panel at least, then as many as the budget allows
            name = self._pending_fill.pop(0)
            cell = self.cells.get(name) or self._make_cell(name)
            result = self.results.get(name)  # if it came first: the map the measures used
            self._fill(name, cell, result.pair.pred if result is not None else None)
            if not self._pending_fill or (time.perf_counter() - start) * 1e3 >= FILL_BUDGET_MS:
                break
        if self._pending_fill:
            self._fill_timer.start()
        else:
            self._refresh_colorbar()
            self._apply_view()
            self.filled.emit()

    @property
    def filling(self) -> bool:
        """Panels of the sample are still being filled (see :meth:`_fill_cells`)."""
        return bool(self._pending_fill)

    def fills_later(self, model: str) -> bool:
        """``model``'s panel is still to be filled: a result given now (:meth:`set_result`)
        is drawn with it, once."""
        return model in self._pending_fill

    def _build(self) -> bool:
        """(Re)make the cells for the current page if its panels changed; True if made."""
        assert self.sample is not None
        self.page = min(self.page, self.page_count() - 1)
        names = ["image", "GT", *self.page_models()]
        rebuilt = self._layout_names != names
        if rebuilt and len(names) == len(self._layout_names) == len(self.cells):
            # as many panels as before (another page, other models, another dataset): the
            # panels are kept and renamed — making them anew took 50–100 ms
            self.cells = dict(zip(names, self.cells.values(), strict=True))
            self._layout_names = list(names)
            for name, cell in self.cells.items():
                cell.title = name
        elif rebuilt:
            self._layout(names)
        n, pages = len(self.sample_models()), self.page_count()
        self.pager.setVisible(pages > 1 or n > DEFAULT_PAGE_SIZE)
        pinned, rest = self._paged()
        per_page = max(1, self.page_size - len(pinned))
        start = self.page * per_page
        shown = len(names) - 2 - len(pinned)
        ref = f" (+ the reference {self.names.get(pinned[0], pinned[0])})" if pinned else ""
        self.pager.label.setText(
            f"models {start + 1}–{start + shown} of {len(rest)}{ref} · page {self.page + 1}/{pages}"
            if shown or pinned
            else f"no model maps ({n})"
        )
        return rebuilt

    def _rebuild(self) -> None:
        """Show another page (or other models) of the same sample."""
        if self.sample is None:
            return
        view = self._kept_range() if self.cells else None
        rebuilt = self._build()
        self._fill_cells(staged=rebuilt)
        for name in set(self.results) & set(self.cells) - set(self._pending_fill):
            self._show_map(name, self.cells[name], self.results[name].pair.pred)
        if view is not None:
            self._view_target = (view[0], view[1], 0.0)
            self._apply_view()

    def _kept_range(self) -> list[list[float]]:
        """The range shown, cut to the image (with the margin a whole image is shown with):
        a panel widens the range beyond the image to keep the image's aspect, and that
        widening, kept in panels of another shape (a fuller page), drew every map at about
        half its size. A zoom into the image is kept as it is."""
        (x0, x1), (y0, y1) = self.views[0].viewRange()
        shape = self.sample.shape if self.sample is not None else None
        if shape is None:
            return [[x0, x1], [y0, y1]]
        h, w = shape
        whole = [
            [-FIT_PADDING * w, (1 + FIT_PADDING) * w],
            [-FIT_PADDING * h, (1 + FIT_PADDING) * h],
        ]
        x = [max(x0, whole[0][0]), min(x1, whole[0][1])]
        y = [max(y0, whole[1][0]), min(y1, whole[1][1])]
        return [x, y] if x[0] < x[1] and y[0] < y[1] else whole  # panned off it: the whole

    def _fill(self, name: str, cell: MapCell, values: np.ndarray | None = None) -> None:
        """Fill a panel for the current sample: a model's with ``values`` (the map its
        measures used) or else its map as read."""
        s = self.sample
        assert s is not None
        cell.map.clear()
        cell.base.clear()
        cell.overlay.clear()
        notes = self.gt_notes if name == "GT" else s.notes.get(name, ())
        title = self.names.get(name, name)
        cell.set_title(title + (" ⚠" if notes else ""), self.foreground)
        if name == "image":
            if s.image is not None:
                # RGB bytes are drawn as they are (no levels): with levels pyqtgraph rescales
                # them element by element, and takes its slow general path for RGBA overlays
                cell.base.set_image(s.image)
                cell.values = s.image
            else:
                cell.values = None
                cell.set_title("image (none)", self.foreground)
            return
        if name == "GT":
            if s.gt is not None:
                gt = unit_map(s.gt)
                cell.map.set_image(display_bytes(gt), (0, 255), lookup_table("gray"))
                cell.values = gt
            else:  # the image and the maps are shown; no score without it
                cell.values = None
                cell.set_title("GT ✖ unreadable", self.foreground)  # why: the status bar
            return
        if name in s.unreadable:  # an empty panel saying so, rather than no panel
            cell.values = None
            cell.set_title(f"{title} ✖ unreadable", self.foreground)  # why: the Problems tab
            return
        if _no_map(s, name):  # its folder has no file of this name (the Problems tab too)
            cell.values = None
            cell.set_title(f"{title} ✖ no map", self.foreground)
            return
        self._show_map(name, cell, unit_map(s.preds[name]) if values is None else values)

    def _show_map(self, name: str, cell: MapCell, values: np.ndarray) -> None:
        s = self.sample
        assert s is not None
        cell.values = values
        if self.over_image and s.image is not None:
            cell.base.set_image(s.image)
            cell.map.set_opacity(self.opacity)
        else:
            cell.base.clear()
            cell.map.set_opacity(1.0)
        cell.map.set_image(display_bytes(values), (0, 255), self._map_lut())
        self._update_overlay(name, cell)

    def _map_lut(self) -> np.ndarray:
        """The models' maps' lookup table: grey under the TP/FP/FN overlay (a colour map
        would blend with the classes; the colour bar, which shows it, says so)."""
        return lookup_table("gray" if self.show_confusion else self.colormap)

    def _refresh_colorbar(self) -> None:
        """The colour bar shows the maps' colour map; every map uses it (a map given its
        table already keeps its rendered picture)."""
        self.colorbar.setColorMap(colormap("gray" if self.show_confusion else self.colormap))
        lut = self._map_lut()
        for name, cell in self.cells.items():
            if name not in ("image", "GT"):
                cell.map.set_lut(lut)

    # ------------------------------------------------------------------ results & overlays
    def set_result(self, model: str, result: SuiteResult) -> None:
        """Show the normalised map the measures used, and its overlays."""
        previous = self.results.get(model)
        self.results[model] = result
        cell = self.cells.get(model)
        if cell is None or model in self._pending_fill:
            return  # not on this page, or its panel is filled (with this result) soon
        if previous is not None and previous.pair is result.pair:
            return  # only a measure parameter changed: the map and its overlays are the same
        self._show_map(model, cell, result.pair.pred)

    def _update_overlay(self, name: str, cell: MapCell) -> None:
        s = self.sample
        if s is None or s.gt is None or name in s.unreadable or _no_map(s, name):
            return
        result = self.results.get(name)
        if not (self.show_confusion and result is not None):
            # the contour alone is the same for every model: one image for all of them
            if self.show_contour and self._contour is not None:
                cell.overlay.set_image(self._contour_image())
            else:
                cell.overlay.clear()
            return
        assert result is not None
        rgba = CONFUSION_RGBA[result.pair.confusion_codes(self.threshold)]
        if self.show_contour and self._contour is not None:
            rgba[self._contour] = CONTOUR_RGBA
        cell.overlay.set_image(rgba)

    def _contour_image(self) -> np.ndarray:
        """The GT contour as an RGBA image (made once per sample)."""
        if self._contour_rgba is None:
            assert self._contour is not None
            rgba = np.zeros((*self._contour.shape, 4), np.uint8)
            rgba[self._contour] = CONTOUR_RGBA
            self._contour_rgba = rgba
        return self._contour_rgba

    def refresh_overlays(self) -> None:
        """Redraw every model's overlay (threshold or overlay options changed)."""
        for name, cell in self.cells.items():
            if name not in ("image", "GT"):
                self._update_overlay(name, cell)
            elif name == "GT" and self.show_contour and self._contour is not None:
                cell.overlay.clear()

    def set_threshold(self, index: int) -> None:
        """Move the TP/FP/FN overlay to curve point ``index``."""
        self.threshold = index
        if self.show_confusion:
            self.refresh_overlays()

    def set_options(
        self, *, contour: bool, confusion: bool, over_image: bool, opacity: float, colormap: str
    ) -> None:
        """Overlay and display options."""
        changed_cmap = colormap != self.colormap or confusion != self.show_confusion
        self.show_contour, self.show_confusion = contour, confusion
        self.over_image, self.opacity, self.colormap = over_image, opacity, colormap
        self._show_legend()
        if self.sample is None:
            return
        for name, cell in self.cells.items():
            if name in ("image", "GT"):
                continue
            values = self.results[name].pair.pred if name in self.results else cell.values
            if values is not None:
                self._show_map(name, cell, values)
        if changed_cmap:
            self._refresh_colorbar()

    # ------------------------------------------------------------------ navigation
    def reset_view(self) -> None:
        """Fit the whole image in every panel."""
        if self.cells and self.sample is not None and self.sample.shape is not None:
            h, w = self.sample.shape
            self._view_target = ((0, w), (0, h), FIT_PADDING)
            self._apply_view()

    def mouseDoubleClickEvent(self, event) -> None:
        self.reset_view()
        super().mouseDoubleClickEvent(event)

    def _on_mouse_moved(self, pos: QtCore.QPointF) -> None:
        if self.sample is None or self.sample.shape is None:
            return
        for cell in self.cells.values():
            if cell.view.sceneBoundingRect().contains(pos):
                p = cell.view.mapSceneToView(pos)
                row, col = math.floor(p.y()), math.floor(p.x())
                self.show_cursor(row, col)
                return
        self.show_cursor(None, None)

    def show_cursor(self, row: int | None, col: int | None) -> None:
        """Mirror the crosshair at (row, col) in every panel and report the values there."""
        h, w = self.sample.shape if self.sample and self.sample.shape else (0, 0)
        inside = row is not None and col is not None and 0 <= row < h and 0 <= col < w
        for cell in self.cells.values():
            cell.vline.setVisible(inside)
            cell.hline.setVisible(inside)
            if inside and row is not None and col is not None:
                cell.vline.setLine(col + 0.5, 0, col + 0.5, h)
                cell.hline.setLine(0, row + 0.5, w, row + 0.5)
        if not inside or row is None or col is None:
            self.hovered.emit(None)
            return
        values = {}
        for name, cell in self.cells.items():
            v = cell.values
            if v is None:
                continue
            px = v[row, col]
            values[name] = (
                "RGB " + ",".join(str(int(c)) for c in px) if np.ndim(px) else f"{float(px):.3f}"
            )
        self.hovered.emit((row, col, values))


def _no_map(sample: LoadedSample, model: str) -> bool:
    """Whether ``model`` has no map for ``sample`` at all: none read, and no file found for
    it (not one still being read)."""
    return model not in sample.preds and model not in sample.sample.preds
