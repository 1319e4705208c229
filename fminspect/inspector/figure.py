"""The window's qualitative figure (no Qt): which samples and which columns.

The samples are those tagged with one tag, those the browser lists (its order and its
filter), or the shown one, at most ``limit`` of them, in the browser's order; the columns
are the image, the GT and the shown models in their order, under their aliases, the
highlighted ones in bold. :func:`fminspect.batch.qualitative.make` draws it, as
``fminspect qualitative`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fminspect.batch.qualitative import QualitativeSpec

if TYPE_CHECKING:
    from fminspect.inspector.model import InspectorModel
    from fminspect.io.discovery import Sample

#: Where the rows come from: a tag, the browser's list, the shown sample.
SOURCES = ("tagged", "listed", "shown")
#: Rows a figure takes unless asked for more (a paper's figure shows 6 to 10).
DEFAULT_ROWS = 8


def figure_samples(
    model: InspectorModel, source: str, slot: int = 1, limit: int = DEFAULT_ROWS
) -> list[Sample]:
    """The samples of the figure, in the browser's order (see the module notes)."""
    ds = model.dataset
    if ds is None or not ds.samples:
        return []
    if source == "shown":
        return [model.requested] if model.requested is not None else []
    natural = [s.name for s in ds.samples]
    listed = model.walk.ordered() if len(model.walk.samples) == len(natural) else natural
    if source == "tagged":  # every sample with the tag, the filter's or not, listed ones first
        tagged = model.cases.store.tagged(ds.name, slot) if model.cases.store else set()
        rank = {n: i for i, n in enumerate(listed)}
        names = sorted((n for n in natural if n in tagged), key=lambda n: rank.get(n, len(rank)))
    elif source == "listed":
        names = listed
    else:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
    by_name = {s.name: s for s in ds.samples}
    return [by_name[n] for n in names[: max(0, limit)] if n in by_name]


def figure_spec(model: InspectorModel, **layout: Any) -> QualitativeSpec:
    """The shown models, in their order, under their aliases; ``layout``: the rest of
    :class:`~fminspect.batch.qualitative.QualitativeSpec` (width, transpose, …)."""
    sel = model.selection
    shown = list(sel.shown)
    return QualitativeSpec(
        methods=tuple(shown),
        labels={m: sel.name(m) for m in shown},
        highlight=tuple(m for m in shown if m in sel.highlighted),
        **layout,
    )
