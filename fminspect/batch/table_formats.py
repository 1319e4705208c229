"""The one writer of results tables: every format of a :class:`~fminspect.batch.tables.Table`.

:data:`FORMATS` is the one ``{name: TableFormat}`` table behind ``fminspect table
--format``, the files of ``eval --paper`` and ``eval``'s own ``summary.md`` and
``summary.tex`` (:func:`write_summaries`, one table per dataset read back from the
``results.json`` just written).

Formats: ``latex`` (booktabs, ``\\multicolumn`` dataset headers), ``tex-document`` (the same,
compilable), ``markdown``, ``csv`` (full precision, long format with intervals), ``html``
(one self-contained page, sortable by clicking a header), ``xlsx`` (openpyxl: the table with
its formatting, and a sheet of the values at full precision) and ``text`` (for a terminal:
blocks of columns that fit the width, default 100).

Marks, as the table's spec asks: the best value, the second and (``places=3``) the third
among the methods evaluated on every image — **bold**, underlined, *italic* (``¹ ² ³`` in
text); † after the values of a method not evaluated on every image (not ranked); ‡ after a
value that averages fewer images than the method's others (C^ω_β where some GTs have no
image). The notes under a table say each of these where it occurs, and what became of the
images whose GT is empty.
"""

from __future__ import annotations

import csv
import html as html_lib
import io
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fminspect.batch.tables import PLAIN, SYMBOLS, Cell, Table, TableError, TableSpec, build, load
from fminspect.io.atomic import atomic_open, write_text

_TEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "_": r"\_",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "$": r"\$",
    "^": r"\^{}",
    "~": r"\textasciitilde{}",
    ">": r"\textgreater{}",
    "<": r"\textless{}",
    "β²": r"$\beta^2$",
    "α": r"$\alpha$",
    "γ": r"$\gamma$",
    "λ": r"$\lambda$",
    "ρ": r"$\rho$",
    "θ": r"$\theta$",
    "Δ": r"$\Delta$",
    "σ": r"$\sigma$",
    "·": r"$\cdot$",
    "≥": r"$\geq$",
    "×": r"$\times$",
    "²": r"$^2$",
    "−": "-",
    "⚠": r"$\dagger$",
    "β": r"$\beta$",
    "ω": r"$\omega$",
    "φ": r"$\phi$",
    "ϕ": r"$\phi$",
    "ε": r"$\epsilon$",
    "μ": r"$\mu$",
    "ξ": r"$\xi$",
    "Φ": r"$\Phi$",
    "±": r"$\pm$",
    "√": r"$\surd$",
    "≤": r"$\leq$",
    "→": r"$\rightarrow$",
    "–": "--",
    "—": "---",
    "|": r"\textbar{}",
    "†": r"$\dagger$",
    "‡": r"$\ddagger$",
    "’": "'",
}
_TEX_PATTERN = re.compile("|".join(re.escape(k) for k in sorted(_TEX, key=len, reverse=True)))


def tex_escape(text: str) -> str:
    """Text for a LaTeX table: special characters escaped (in one pass, so no replacement is
    escaped again), the Greek and mathematical signs used in variant labels and captions
    (β², α, ρ, θ, Δ, ≥, ×, σ, ·, †) in math mode; ``<``/``>`` as text symbols, which the
    default OT1 font encoding would otherwise print as ¡ and ¿."""
    return _TEX_PATTERN.sub(lambda m: _TEX[m.group(0)], text)


# ------------------------------------------------------------------ what every format shares
#: How each markup marks the best, second and third value.
_RANK_MARKS = {
    "markdown": ("**{}**", "<u>{}</u>", "*{}*"),
    "latex": (r"\textbf{{{}}}", r"\underline{{{}}}", r"\textit{{{}}}"),
    "text": ("{} ¹", "{} ²", "{} ³"),
    "html": ("{}", "{}", "{}"),  # classes of the cell (best, second, third)
}
#: … and how its notes say so.
_MARKS_NOTE = {
    "markdown": ("Best **bold**", "second <u>underlined</u>", "third *italic*"),
    "latex": (r"Best in \textbf{bold}", r"second \underline{underlined}", r"third \textit{italic}"),
    "text": ("¹ best", "² second", "³ third"),
    "html": ("Best in bold", "second underlined", "third in italics"),
}
_RANK_CLASSES = ("best", "second", "third")


def _rank(table: Table, cell: Cell | None) -> int:
    """The place marked in ``cell`` (0: none)."""
    if cell is None or not table.spec.marks or cell.rank is None:
        return 0
    return cell.rank if cell.rank <= table.spec.places else 0


def _marked(table: Table, cell: Cell | None, text: str, markup: str) -> str:
    place = _rank(table, cell)
    return _RANK_MARKS[markup][place - 1].format(text) if place else text


def _marks_note(table: Table, markup: str) -> str:
    return (
        ", ".join(_MARKS_NOTE[markup][: table.spec.places])
        + " (among the methods evaluated on every image)."
    )


def _footnotes(table: Table) -> list[str]:
    """Plain-text notes on what is marked † and ‡ here, and on the empty GTs."""
    several = len(table.datasets) > 1

    def where(d: str) -> str:
        return f" on {d}" if several else ""

    notes = []
    unranked = [
        f"{table.spec.name(m)}{where(d)}"
        for d in table.datasets
        for m in table.methods
        if (d, m) in table.incomplete
    ]
    if unranked:
        notes.append(
            "† not evaluated on every image of the dataset (a prediction or GT map missing or "
            f"unreadable: see problems.csv), so not ranked: {', '.join(unranked)}."
        )
    partial = [
        f"{table.spec.name(m)} {k}{where(d)} ({cell.partial[0]} of {cell.partial[1]})"
        for d in table.datasets
        for m in table.methods
        for k in table.measures
        if (cell := table.cells.get((d, m, k))) is not None and cell.partial is not None
    ]
    if partial:
        notes.append(
            f"‡ averaged over fewer images than the method's other values: {', '.join(partial)}."
        )
    return notes + [table.empty_gt[d] for d in table.datasets if d in table.empty_gt]


def _head(table: Table, key: str, *, tex: bool = False) -> str:
    """A measure's header: its symbol (or key), with ↑/↓."""
    sym = SYMBOLS if tex else PLAIN
    text = sym.get(key, key) if table.spec.symbols else key
    if tex and not (table.spec.symbols and key in SYMBOLS):
        text = tex_escape(text)
    if table.spec.arrows:
        up = table.higher[key]
        text += (r"$\uparrow$" if up else r"$\downarrow$") if tex else (" ↑" if up else " ↓")
    return text


#: A column (or, transposed, a row) of a table: (dataset, measure key), or (dataset, None)
#: for the images each method was evaluated on.
Slot = tuple[str, str | None]


def _slots(table: Table) -> list[Slot]:
    images: list[str | None] = [None] if table.spec.images else []
    return [(d, k) for d in table.datasets for k in [*images, *table.measures]]


def _block(table: Table) -> int:
    """Slots per dataset."""
    return len(table.measures) + bool(table.spec.images)


def _slot_head(table: Table, slot: Slot, *, tex: bool = False) -> str:
    return "images" if slot[1] is None else _head(table, slot[1], tex=tex)


# ------------------------------------------------------------------------------------ LaTeX
def _tex_value(table: Table, cell: Cell | None) -> str:
    text = table.fmt(cell)
    if cell is None:
        return text
    text = _marked(table, cell, text, "latex")
    if table.spec.ci and cell.interval is not None:
        from fminspect.batch.significance import spread  # numpy: not when the CLI starts

        kind, *parts = spread(cell.value, cell.interval, table.spec.decimals)
        if kind == "±":
            text += rf"{{\scriptsize$\pm${parts[0]}}}"
        elif kind == "+-":
            text += rf"$^{{+{parts[0]}}}_{{-{parts[1]}}}$"
        else:
            text += rf"{{\scriptsize[{parts[0]}, {parts[1]}]}}"
    if table.spec.groups and cell.group:
        text += rf"$^{{\mathrm{{{cell.group}}}}}$"
    if cell.incomplete:
        text += r"$^\dagger$"
    if cell.partial is not None:
        text += r"$^\ddagger$"
    return text


def _tex_slot(table: Table, slot: Slot, method: str) -> str:
    d, k = slot
    if k is None:  # '3/4 ⚠' as '3/4' and the † of the method's values
        images = table.coverage.get((d, method), "")
        return tex_escape(images.removesuffix(" ⚠")) + r"$^\dagger$" * images.endswith("⚠")
    return _tex_value(table, table.cells.get((d, method, k)))


def _tex_name(table: Table, method: str) -> str:
    name = tex_escape(table.spec.name(method))
    if method in table.spec.highlight:
        name = rf"\textbf{{{name}}}"
    return name


def latex(table: Table, *, label: str = "tab:results") -> str:
    """A booktabs ``table`` environment (needs ``\\usepackage{booktabs}``)."""
    slots, methods = _slots(table), table.methods
    marks = " " + _marks_note(table, "latex") if table.spec.marks else ""
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{tex_escape(table.caption)}{marks}}}",
        rf"\label{{{label}}}",
    ]
    if not table.spec.transpose:
        lines += [r"\begin{tabular}{l" + "c" * len(slots) + "}", r"\toprule"]
        if len(table.datasets) > 1:
            n = _block(table)
            heads = [rf"\multicolumn{{{n}}}{{c}}{{{tex_escape(d)}}}" for d in table.datasets]
            lines.append(" & " + " & ".join(heads) + r" \\")
            lines.append(
                " ".join(
                    rf"\cmidrule(lr){{{2 + i * n}-{1 + (i + 1) * n}}}"
                    for i in range(len(table.datasets))
                )
            )
        lines += [
            "Method & " + " & ".join(_slot_head(table, s, tex=True) for s in slots) + r" \\",
            r"\midrule",
        ]
        for m in methods:
            values = [_tex_slot(table, s, m) for s in slots]
            lines.append(f"{_tex_name(table, m)} & " + " & ".join(values) + r" \\")
    else:  # methods as columns; a block of measure rows per dataset
        lines += [r"\begin{tabular}{l" + "c" * len(methods) + "}", r"\toprule"]
        lines.append("Measure & " + " & ".join(_tex_name(table, m) for m in methods) + r" \\")
        for d in table.datasets:
            lines.append(r"\midrule")
            if len(table.datasets) > 1:
                span = 1 + len(methods)
                lines.append(rf"\multicolumn{{{span}}}{{l}}{{\textit{{{tex_escape(d)}}}}} \\")
            for s in (s for s in slots if s[0] == d):
                values = [_tex_slot(table, s, m) for m in methods]
                lines.append(f"{_slot_head(table, s, tex=True)} & " + " & ".join(values) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines += [r"\\[2pt]{\footnotesize " + tex_escape(n) + "}" for n in _footnotes(table)]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def latex_document(table: Table) -> str:
    """A compilable document holding :func:`latex` (for a quick look: ``pdflatex``)."""
    return (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[margin=1cm,"
        "landscape]{geometry}\n\\begin{document}\n" + latex(table) + "\\end{document}\n"
    )


# ------------------------------------------------------------- Markdown, text, HTML, XLSX
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]|"})


_MD_CELL = str.maketrans({c: "\\" + c for c in "\\`*_|"})


def md_cell(text: str) -> str:
    """A grid's cell shown literally: what would end the cell, make emphasis or code, or be
    read as HTML escaped; brackets kept (no link without a URL beside them)."""
    return html_lib.escape(text, quote=False).translate(_MD_CELL)


def _md_escape(text: str) -> str:
    """Text shown literally by Markdown (and as text, not markup, by its HTML)."""
    return html_lib.escape(text, quote=False).translate(_MD_SPECIAL)


def _plain_value(table: Table, cell: Cell | None, *, markup: str) -> str:
    text = table.fmt(cell)
    if cell is None:
        return text
    if table.spec.ci and cell.interval is not None:
        from fminspect.batch.significance import spread_text  # numpy: not when the CLI starts

        text += " " + spread_text(cell.value, cell.interval, table.spec.decimals)
    if table.spec.groups and cell.group:
        text += f" [{cell.group}]" if markup == "text" else f"<sup>{cell.group}</sup>"
    if cell.incomplete:
        text += " †"
    text = _marked(table, cell, text, markup)
    return text + (" ‡" if cell.partial is not None else "")


def _plain_slot(table: Table, slot: Slot, method: str, markup: str) -> str:
    d, k = slot
    if k is None:
        return table.coverage.get((d, method), "")
    return _plain_value(table, table.cells.get((d, method, k)), markup=markup)


def _plain_name(table: Table, method: str, markup: str) -> str:
    name = table.spec.name(method)
    if markup == "markdown":
        name = _md_escape(name)
    if method in table.spec.highlight and markup != "html":  # HTML: the row is shaded
        name = f"**{name}**" if markup == "markdown" else f"{name} *"
    return name


def _row_label(table: Table, slot: Slot) -> str:
    """A transposed table's row label."""
    head = _slot_head(table, slot)
    return f"{slot[0]}: {head}" if len(table.datasets) > 1 else head


def _grid(table: Table, markup: str) -> tuple[list[str], list[str], list[list[str]]]:
    """(group row, header row, body rows) of the plain renderers."""
    slots = _slots(table)
    if not table.spec.transpose:
        groups = [""] + [d for d, _ in slots]
        heads = ["method"] + [_slot_head(table, s) for s in slots]
        body = [
            [_plain_name(table, m, markup)] + [_plain_slot(table, s, m, markup) for s in slots]
            for m in table.methods
        ]
    else:
        groups = []
        heads = ["measure"] + [_plain_name(table, m, markup) for m in table.methods]
        body = [
            [_row_label(table, s)] + [_plain_slot(table, s, m, markup) for m in table.methods]
            for s in slots
        ]
    return groups, heads, body


def _notes(table: Table, markup: str, *, caption: bool = True) -> list[str]:
    notes = [table.caption] if caption else []
    if table.spec.marks:
        notes.append(_marks_note(table, markup))
    notes += _footnotes(table)
    if table.spec.highlight and markup == "text":
        notes.append("* highlighted methods.")
    return notes


def markdown(table: Table, *, caption: bool = True) -> str:
    """A pipe table (GitHub Markdown) and its notes (with the caption unless ``caption`` is
    false); datasets prefix the headers when there are several."""
    groups, heads, body = _grid(table, "markdown")
    if groups and len(table.datasets) > 1:
        heads = [h if not g else f"{g}: {h}" for g, h in zip(groups, heads, strict=True)]
    lines = ["| " + " | ".join(heads) + " |", "|---|" + "---:|" * (len(heads) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    notes = _notes(table, "markdown", caption=caption)
    return "\n".join(lines) + "\n\n" + "\n\n".join(notes) + "\n"


def text(table: Table, width: int = 100) -> str:
    """For a terminal: columns in blocks that fit ``width`` (the name column repeated)."""
    groups, heads, body = _grid(table, "text")
    cols = len(heads)
    widths = [
        max(len(heads[c]), *(len(r[c]) for r in body), len(groups[c]) if groups else 0)
        for c in range(cols)
    ]
    blocks: list[list[int]] = []
    current: list[int] = []
    used = widths[0]
    for c in range(1, cols):
        if current and used + 2 + widths[c] > width:
            blocks.append(current)
            current, used = [], widths[0]
        current.append(c)
        used += 2 + widths[c]
    if current:
        blocks.append(current)
    out: list[str] = []
    for block in blocks:
        shown = [0, *block]

        def row(cells: Sequence[str], shown: list[int] = shown) -> str:
            return "  ".join(
                cells[c].ljust(widths[c]) if c == 0 else cells[c].rjust(widths[c]) for c in shown
            ).rstrip()

        if groups and len(table.datasets) > 1:
            out.append(row(groups))
        out.append(row(heads))
        out.append("-" * min(width, len(row(heads))))
        out += [row(r) for r in body]
        out.append("")
    out += [textwrap.fill(n, width) for n in _notes(table, "text")]
    return "\n".join(out) + "\n"


def csv_text(table: Table) -> str:
    """Long format at full precision: dataset, method, key, label, value, rank, interval,
    group."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        [
            "dataset",
            "method",
            "display name",
            "measure",
            "variant",
            "value",
            "rank",
            "ci low",
            "ci high",
            "group",
            "evaluated on every image",
        ]
    )
    for d in table.datasets:
        for m in table.methods:
            for k in table.measures:
                cell = table.cells.get((d, m, k))
                if cell is None:
                    continue
                low, high = cell.interval or ("", "")
                w.writerow(
                    [
                        d,
                        m,
                        table.spec.name(m),
                        k,
                        table.labels[k],
                        repr(cell.value),
                        cell.rank or "",
                        repr(low) if low != "" else "",
                        repr(high) if high != "" else "",
                        cell.group,
                        "no" if (d, m) in table.incomplete else "yes",
                    ]
                )
    return buf.getvalue()


_SORT_SCRIPT = """
document.querySelectorAll('th.sort').forEach(function (th) {
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0];
    var col = Number(th.dataset.col), down = th.dataset.dir !== 'desc';
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
      var p = parseFloat(x), q = parseFloat(y);
      if (!isNaN(p) && !isNaN(q)) { return down ? q - p : p - q; }
      return down ? String(y).localeCompare(x) : String(x).localeCompare(y);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    th.dataset.dir = down ? 'desc' : 'asc';
  });
});
"""


def html(table: Table, *, title: str = "fminspect results") -> str:
    """One self-contained page (no network): the table, sortable by clicking a header."""
    esc = html_lib.escape
    groups, heads, _ = _grid(table, "html")
    notes = _notes(table, "html")
    if table.spec.marks:
        notes.insert(2, "Click a header to sort.")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
        "th,td{padding:.25em .6em;text-align:right;border-bottom:1px solid #ddd}"
        "th:first-child,td:first-child{text-align:left}th.sort{cursor:pointer}"
        "th.sort:hover{background:#eef}.best{font-weight:bold}.second{text-decoration:"
        "underline}.third{font-style:italic}.hl{background:#fff6d5}caption{caption-side:"
        "bottom;text-align:left;color:#555;max-width:60em;padding-top:.6em}</style></head>"
        "<body>",
        f"<h1>{esc(title)}</h1>",
        "<table>",
        f"<caption>{esc(' '.join(notes))}</caption>",
        "<thead>",
    ]
    if groups and len(table.datasets) > 1:
        out.append(
            "<tr><th></th>"
            + "".join(
                f'<th colspan="{_block(table)}" style="text-align:center">{esc(d)}</th>'
                for d in table.datasets
            )
            + "</tr>"
        )
    out.append(
        "<tr>"
        + "".join(
            f'<th class="sort" data-col="{c}" title="click to sort">{esc(h)}</th>'
            for c, h in enumerate(heads)
        )
        + "</tr>"
    )
    out.append("</thead><tbody>")
    slots = _slots(table)
    if not table.spec.transpose:
        for m in table.methods:
            cls = ' class="hl"' if m in table.spec.highlight else ""
            name = esc(table.spec.name(m))
            cells = [f'<td data-v="{name}">{esc(_plain_name(table, m, "html"))}</td>']
            cells += [_html_slot(table, s, m) for s in slots]
            out.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    else:
        for s in slots:
            label = esc(_row_label(table, s))
            cells = [f'<td data-v="{label}">{label}</td>']
            cells += [_html_slot(table, s, m) for m in table.methods]
            out.append("<tr>" + "".join(cells) + "</tr>")
    out += ["</tbody></table>", f"<script>{_SORT_SCRIPT}</script>", "</body></html>"]
    return "\n".join(out) + "\n"


def _html_slot(table: Table, slot: Slot, method: str) -> str:
    esc = html_lib.escape
    d, key = slot
    if key is None:
        images = esc(table.coverage.get((d, method), ""))
        return f'<td data-v="{images}">{images}</td>'
    cell = table.cells.get((d, method, key))
    if cell is None:
        return '<td data-v="">–</td>'
    place = _rank(table, cell)
    tip = table.labels[key]
    if cell.interval is not None:
        tip += f"; interval [{cell.interval[0]:.6f}, {cell.interval[1]:.6f}]"
    if cell.group:
        tip += f"; group {cell.group}"
    # sorting puts the best first whatever the direction: lower-is-better values negated
    sort_value = cell.value if table.higher[key] else -cell.value
    cls = f' class="{_RANK_CLASSES[place - 1]}"' if place else ""
    shown = _plain_value(table, cell, markup="html")
    shown = esc(shown.replace("<sup>", "\x00").replace("</sup>", "\x01"))
    shown = shown.replace("\x00", "<sup>").replace("\x01", "</sup>")
    return f'<td{cls} data-v="{sort_value!r}" title="{esc(tip)}">{shown}</td>'


def write_xlsx(table: Table, path: Path | str) -> None:
    """The table (marked places, number formats) on a first sheet and every value at full
    precision, with intervals and groups, on a second (needs openpyxl)."""
    try:
        from openpyxl import Workbook
        from openpyxl.comments import Comment
        from openpyxl.styles import Alignment, Font
    except ImportError:
        raise TableError(
            "XLSX needs openpyxl: pip install openpyxl (or pip install 'fminspect[xlsx]')"
        ) from None

    wb = Workbook()
    ws = wb.active
    ws.title = "table"
    number = "0." + "0" * table.spec.decimals if table.spec.decimals else "0"
    fonts = (Font(bold=True), Font(underline="single"), Font(italic=True))
    groups, heads, _ = _grid(table, "text")
    row = 1
    if groups and len(table.datasets) > 1:
        n = _block(table)
        for i, d in enumerate(table.datasets):
            first = 2 + i * n
            ws.cell(row, first, d).alignment = Alignment(horizontal="center")
            ws.merge_cells(start_row=row, start_column=first, end_row=row, end_column=first + n - 1)
        row += 1
    for c, h in enumerate(heads, start=1):
        ws.cell(row, c, h).font = Font(bold=True)
    row += 1

    def put(r: int, c: int, slot: Slot, method: str) -> None:
        d, k = slot
        if k is None:
            ws.cell(r, c, table.coverage.get((d, method), ""))
            return
        cell = table.cells.get((d, method, k))
        if cell is None or cell.value != cell.value:  # none, or NaN
            ws.cell(r, c, "–")
            return
        target = ws.cell(r, c, cell.value)
        target.number_format = number
        extra = []
        if table.spec.ci and cell.interval is not None:
            extra.append(f"interval [{cell.interval[0]:.6f}, {cell.interval[1]:.6f}]")
        if table.spec.groups and cell.group:
            extra.append(f"group {cell.group}")
        if cell.incomplete:
            extra.append("evaluated on a subset of the images: not ranked")
        if cell.partial is not None:
            extra.append(f"averages {cell.partial[0]} of {cell.partial[1]} images")
        if extra:
            target.comment = Comment("; ".join(extra), "fminspect")
        place = _rank(table, cell)
        if place:
            target.font = fonts[place - 1]

    slots = _slots(table)
    if not table.spec.transpose:
        for m in table.methods:
            ws.cell(row, 1, _plain_name(table, m, "text"))
            for c, s in enumerate(slots, start=2):
                put(row, c, s, m)
            row += 1
    else:
        for s in slots:
            ws.cell(row, 1, _row_label(table, s))
            for c, m in enumerate(table.methods, start=2):
                put(row, c, s, m)
            row += 1
    for i, note in enumerate(_notes(table, "text"), start=row + 1):
        ws.cell(i, 1, note)
    details = wb.create_sheet("values")
    for r, line in enumerate(csv.reader(io.StringIO(csv_text(table))), start=1):
        for c, value in enumerate(line, start=1):
            try:
                details.cell(r, c, float(value) if r > 1 and c in (6, 8, 9) and value else value)
            except ValueError:
                details.cell(r, c, value)
    with atomic_open(Path(path), "wb") as fh:
        wb.save(fh)


# ---------------------------------------------------- plain grids (meta-measures, studies)
def grid_markdown(
    header: Sequence[str], rows: Sequence[Sequence[str]], *, escape: bool = True
) -> str:
    """A plain Markdown pipe table of text cells: the tables that are not results tables (the
    meta-measures' summary, a ranking study's report). Every cell is shown literally unless
    ``escape`` is false, for cells already made Markdown with :func:`md_cell`."""
    esc = md_cell if escape else str

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(esc(c) for c in cells) + " |"

    return "\n".join(
        [line(header), "|" + "|".join("---" for _ in header) + "|"] + [line(r) for r in rows]
    )


def grid_latex(header: Sequence[str], rows: Sequence[Sequence[str]], *, caption: str = "") -> str:
    """The same grid as a booktabs ``table``: the first column left-aligned, the others
    right-aligned, every cell escaped by :func:`tex_escape`."""
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        r"\toprule",
        " & ".join(tex_escape(h) for h in header) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(tex_escape(v) for v in r) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(r"\caption{" + tex_escape(caption) + "}")
    lines += [r"\end{table}", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------- the one table
@dataclass(frozen=True, slots=True)
class TableFormat:
    """One output format: how a file of it is named and written."""

    name: str
    #: what ends a file's name: ``table`` + suffix
    suffix: str
    help: str
    #: the table as text (``width`` for the terminal's), or None for a binary format
    render: Callable[[Table, int], str] | None = None
    #: a binary format's writer
    write_file: Callable[[Table, Path], None] | None = None

    def write(self, table: Table, path: Path | str, *, width: int = 100) -> Path:
        """Write ``table`` to ``path`` atomically."""
        path = Path(path)
        if self.render is not None:
            write_text(path, self.render(table, width), encoding="utf-8")
        else:
            assert self.write_file is not None
            self.write_file(table, path)
        return path


FORMATS: dict[str, TableFormat] = {
    f.name: f
    for f in (
        TableFormat("text", ".txt", "for the terminal", lambda t, w: text(t, w)),
        TableFormat("latex", ".tex", "a booktabs table", lambda t, w: latex(t)),
        TableFormat(
            "tex-document",
            "-document.tex",
            "the same in a compilable document",
            lambda t, w: latex_document(t),
        ),
        TableFormat("markdown", ".md", "a pipe table", lambda t, w: markdown(t)),
        TableFormat("csv", ".csv", "long, full precision", lambda t, w: csv_text(t)),
        TableFormat("html", ".html", "one sortable page", lambda t, w: html(t)),
        TableFormat("xlsx", ".xlsx", "needs --out and openpyxl", write_file=write_xlsx),
    )
}


def render(table: Table, fmt: str, *, width: int = 100) -> str:
    """The table as text in ``fmt`` (every format but xlsx)."""
    chosen = FORMATS.get(fmt)
    if chosen is None or chosen.render is None:
        textual = ", ".join(n for n, f in FORMATS.items() if f.render is not None)
        raise TableError(f"{fmt!r} is not a text format; one of {textual}")
    return chosen.render(table, width)


# ------------------------------------------------------------------ eval's summary files
SUMMARY_FILES = ("summary.md", "summary.tex")


def _summary_tables(folder: Path) -> list[Table]:
    """One table per dataset of a results folder (subsets included): every measure it has,
    keys as headers, the images column, three places marked."""
    results = load([folder])
    out = []
    for ds, methods in results.datasets.items():
        have = {k for r in methods.values() for k in r["values"]}
        keys = tuple(k for k in results.measures if k in have)
        spec = TableSpec(measures=keys, datasets=(ds,), places=3, images=True, symbols=False)
        out.append(build(results, spec))
    return out


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower() or "dataset"


def write_summaries(folder: Path | str) -> list[Path]:
    """``summary.md`` and ``summary.tex`` of the results folder ``folder`` (its
    ``results.json`` written): one table per dataset, as ``fminspect table`` makes them."""
    folder = Path(folder)
    tables = _summary_tables(folder)
    shared = len({t.caption for t in tables}) == 1  # said once, above the tables
    md = ["# fminspect evaluation\n"]
    if shared:
        md.append(tables[0].caption + " ↑ higher is better, ↓ lower.\n")
    for t in tables:
        md += [f"## {t.datasets[0]}\n", markdown(t, caption=not shared)]
    tex = ["% fminspect evaluation — needs \\usepackage{booktabs}"]
    for t in tables:
        ds = t.datasets[0]
        titled = replace(t, caption=f"{ds}: {t.caption}")
        tex.append(latex(titled, label=f"tab:{_slug(ds)}"))
    write_text(folder / "summary.md", "\n".join(md), encoding="utf-8")
    write_text(folder / "summary.tex", "\n".join(tex), encoding="utf-8")
    return [folder / name for name in SUMMARY_FILES]
