"""Everything a paper needs from one evaluation: tables in every format and the curve
figures (``fminspect eval … --paper``), written into ``OUT/paper/``.

* ``table.tex`` (booktabs, to ``\\input``), ``table-document.tex`` (compilable), ``table.md``,
  ``table.html`` (sortable), ``table.csv`` (full precision) and ``table.xlsx`` (when openpyxl
  is installed): the whole datasets as column groups, the default measures of
  :func:`fminspect.batch.tables.build`, with ± and significance groups when the evaluation
  made statistics (``--ci``); subsets, if any, in ``table-subsets.*`` the same way;
* ``figures/{pr,fm,em}.{pdf,png}``: one panel per dataset, one legend
  (:mod:`fminspect.batch.figures`).

Aliases, highlighted methods and a Matplotlib style are those of ``fminspect table`` and
``fminspect figure``; each file can be made again, differently, with those commands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fminspect.batch import figures, tables
from fminspect.batch.table_formats import FORMATS

#: The table's formats in OUT/paper (the terminal's text is not among them).
TABLE_FORMATS = ("latex", "tex-document", "markdown", "html", "csv", "xlsx")


def write_paper(
    results: Path | str,
    *,
    aliases: Mapping[str, str] | None = None,
    dataset_aliases: Mapping[str, str] | None = None,
    highlight: Sequence[str] = (),
    style: Mapping[str, Any] | None = None,
    subsets: Sequence[str] = (),
) -> tuple[list[Path], list[str]]:
    """Write the tables and figures of the results folder ``results`` into
    ``results/paper``; returns the files written and notes for the user (what was left out,
    and why)."""
    results = Path(results)
    out = results / "paper"
    out.mkdir(parents=True, exist_ok=True)
    loaded = tables.load([results])
    notes: list[str] = []
    whole = [d for d in loaded.datasets if d not in set(subsets)]
    stats = bool(loaded.statistics)
    written: list[Path] = []
    for stem, datasets in (("table", whole), ("table-subsets", list(subsets))):
        if not datasets:
            continue
        layout = tables.TableSpec(
            datasets=tuple(datasets),
            aliases=dict(aliases or {}),
            highlight=tuple(highlight),
            ci=stats,
            groups=stats,
        )
        table = tables.build(loaded, layout)
        for fmt in TABLE_FORMATS:
            try:
                written.append(FORMATS[fmt].write(table, out / f"{stem}{FORMATS[fmt].suffix}"))
            except tables.TableError as exc:  # xlsx: openpyxl is not installed
                if str(exc) not in notes:
                    notes.append(str(exc))
    if not stats:
        notes.append("no ± or significance groups in the tables: evaluate with --ci for them")
    look = figures.FigureSpec(
        # an alias file's dataset section chooses and orders the panels
        datasets=() if dataset_aliases else tuple(whole),
        aliases=dict(aliases or {}),
        dataset_aliases=dict(dataset_aliases or {}),
        highlight=tuple(highlight),
        style=dict(style or {}),
        formats=("pdf", "png"),
        strict=False,
    )
    try:
        planned = figures.plan(figures.load([results]), look)
    except figures.FigureError as exc:  # e.g. no curves were asked for
        notes.append(f"no figures: {exc}")
    else:
        written += figures.draw(planned, look, out / "figures")
        notes += list(planned.notes)
    return written, notes
