"""Publication tables (fminspect table): every format from real eval results, the LaTeX
checked by a parser (and compiled when a TeX engine is installed), merging folders."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fminspect.batch import EvalConfig, evaluate_datasets
from fminspect.batch.outputs import write_all
from fminspect.batch.significance import Setup
from fminspect.batch.table_formats import (
    csv_text,
    grid_latex,
    grid_markdown,
    html,
    latex,
    latex_document,
    markdown,
    text,
    write_xlsx,
)
from fminspect.batch.tables import Results, TableError, TableSpec, build, load
from fminspect.cli import main
from fminspect.io.discovery import discover
from fminspect.metrics import Params
from tests.datasets import make_dataset
from tests.processes import PATIENCE_S

KEYS = ("MAE", "Sm", "wFm", "maxFm", "meanEm")


def _eval(root: Path, out: Path, *, params: Params | None = None, ci: bool = True) -> Path:
    datasets, _ = discover(root)
    config = EvalConfig(params or Params(), KEYS)
    report = evaluate_datasets(
        datasets,
        config,
        cache_path=out / "cache.sqlite",
        progress=False,
        significance=Setup(resamples=200) if ci else None,
    )
    write_all(report, out, plots=False)
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("tables")
    root = tmp / "data"
    make_dataset(
        root,
        n_images=8,
        methods=("A_net", "B", "C"),
        layout="multi",
        dataset="DS1",
        missing={"C": 2},
    )
    make_dataset(
        root, n_images=6, methods=("A_net", "B", "C"), layout="multi", dataset="DS2", seed=1
    )
    return _eval(root, tmp / "out")


def _values(folder: Path) -> dict[str, dict[str, dict[str, float]]]:
    return json.loads((folder / "summary.json").read_text())


# ------------------------------------------------------------------ LaTeX, checked by parsing
def _check_latex(source: str) -> None:
    """Environments nest and close, braces balance, and every row of every tabular has as
    many cells as its column specification (\\multicolumn counted by its span)."""
    depth = 0
    for i, ch in enumerate(source):
        if ch in "{}" and (i == 0 or source[i - 1] != "\\"):
            depth += 1 if ch == "{" else -1
            assert depth >= 0, source[max(0, i - 60) : i + 1]
    assert depth == 0
    stack = []
    for m in re.finditer(r"\\(begin|end)\{(\w+)\}", source):
        if m.group(1) == "begin":
            stack.append(m.group(2))
        else:
            assert stack and stack.pop() == m.group(2), m.group(0)
    assert not stack
    for spec, body in re.findall(
        r"\\begin\{tabular\}\{([^}]*)\}(.*?)\\end\{tabular\}", source, re.S
    ):
        columns = len(re.sub(r"[^lcr]", "", spec))
        for row in body.split(r"\\"):
            row = re.sub(
                r"\\(toprule|midrule|bottomrule)|\\cmidrule\(lr\)\{[^}]*\}", "", row
            ).strip()
            if not row or row.startswith("["):
                continue
            cells = _top_level_split(row)
            span = sum(
                int(m.group(1)) if (m := re.match(r"\s*\\multicolumn\{(\d+)\}", c)) else 1
                for c in cells
            )
            assert span == columns, (columns, row)


def _top_level_split(row: str) -> list[str]:
    cells, depth, current = [], 0, ""
    for i, ch in enumerate(row):
        escaped = i > 0 and row[i - 1] == "\\"
        if ch == "{" and not escaped:
            depth += 1
        elif ch == "}" and not escaped:
            depth -= 1
        if ch == "&" and depth == 0 and not escaped:
            cells.append(current)
            current = ""
        else:
            current += ch
    return [*cells, current]


@pytest.mark.parametrize("transpose", [False, True])
def test_latex_is_a_well_formed_booktabs_table(results: Path, transpose: bool) -> None:
    table = build(
        load([results]), TableSpec(ci=True, groups=True, transpose=transpose, highlight=("B",))
    )
    source = latex(table)
    _check_latex(source)
    assert r"\toprule" in source and r"\bottomrule" in source
    if not transpose:
        assert r"\multicolumn{5}{c}{DS1}" in source and r"\cmidrule(lr){2-6}" in source
    assert r"A\_net" in source and r"$S_\alpha$$\uparrow$" in source
    assert "percentile bootstrap" in source and "n = 8 (DS1), 6 (DS2) images" in source
    # C misses maps on DS1: its DS1 values are marked and never bold, its DS2 ones ranked
    assert r"$^\dagger$" in source
    assert all(ord(ch) < 128 for ch in source), "non-ASCII outside math: pdflatex stops"
    engine = shutil.which("pdflatex")
    if engine:  # compiled where a TeX engine exists
        tex = results.parent / f"doc{int(transpose)}.tex"
        tex.write_text(latex_document(table))
        done = subprocess.run(
            [engine, "-interaction=nonstopmode", "-halt-on-error", tex.name],
            cwd=tex.parent,
            capture_output=True,
            timeout=PATIENCE_S,
        )
        assert done.returncode == 0, done.stdout[-2000:]


def test_best_and_second_are_marked_among_complete_methods(results: Path) -> None:
    values = _values(results)
    table = build(load([results]), TableSpec(measures=("Sm", "MAE")))
    for ds in ("DS1", "DS2"):
        complete = ["A_net", "B"] + ([] if ds == "DS1" else ["C"])
        best_sm = max(complete, key=lambda m: values[ds][m]["Sm"])
        best_mae = min(complete, key=lambda m: values[ds][m]["MAE"])
        assert table.cells[(ds, best_sm, "Sm")].rank == 1
        assert table.cells[(ds, best_mae, "MAE")].rank == 1
    assert table.cells[("DS1", "C", "Sm")].rank is None
    md = markdown(table)
    best = max(["A_net", "B"], key=lambda m: values["DS1"][m]["Sm"])
    shown = best.replace("_", "\\_")  # Markdown shows A_net literally
    row = next(line for line in md.splitlines() if line.startswith(f"| {shown} "))
    assert f"**{values['DS1'][best]['Sm']:.3f}**" in row
    c_row = next(line for line in md.splitlines() if line.startswith("| C "))
    assert c_row.count("†") == 2  # Sm and MAE on DS1, not on DS2
    assert "DS1: Sα ↑" in md


def test_csv_keeps_full_precision_and_the_intervals(results: Path) -> None:
    values = _values(results)
    stats = json.loads((results / "statistics.json").read_text())["datasets"]
    rows = list(csv.DictReader(io.StringIO(csv_text(build(load([results]), TableSpec(ci=True))))))
    assert len(rows) == 2 * 3 * 5
    for r in rows:
        assert float(r["value"]) == values[r["dataset"]][r["method"]][r["measure"]]
        low, high = stats[r["dataset"]]["keys"][r["measure"]]["intervals"][r["method"]]
        assert (float(r["ci low"]), float(r["ci high"])) == (low, high)


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.urls: list[str] = []
        self._in = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self._in = True
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._in = False

    def handle_data(self, data: str) -> None:
        if self._in:
            self.rows[-1][-1] += data


def test_html_is_one_sortable_page(results: Path) -> None:
    page = html(
        build(
            load([results]), TableSpec(groups=True, aliases={"A_net": "Ours"}, highlight=("A_net",))
        )
    )
    parsed = _Cells()
    parsed.feed(page)
    assert not parsed.urls  # self-contained: nothing fetched
    assert "addEventListener('click'" in page and 'class="sort"' in page
    names = [r[0] for r in parsed.rows[2:]]
    assert names == ["Ours", "B", "C"]  # the alias shown
    assert sum("†" in cell for cell in parsed.rows[4]) == 5  # C's five DS1 values
    assert 'class="hl"' in page


def test_xlsx_holds_the_table_and_every_value(results: Path, tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    values = _values(results)
    table = build(load([results]), TableSpec())
    write_xlsx(table, tmp_path / "t.xlsx")
    wb = openpyxl.load_workbook(tmp_path / "t.xlsx")
    sheet = wb["table"]
    assert sheet.cell(1, 2).value == "DS1" and sheet.cell(2, 1).value == "method"
    found = {sheet.cell(r, 1).value: sheet.cell(r, 2).value for r in range(3, 6)}
    assert found["B"] == values["DS1"]["B"]["Sm"]
    bold = [sheet.cell(r, 2).font.b for r in range(3, 6)]
    assert sum(bool(b) for b in bold) == 1
    detail = list(wb["values"].iter_rows(values_only=True))
    assert len(detail) == 1 + 2 * 3 * 5


def test_text_fits_the_terminal_whatever_the_number_of_columns(results: Path) -> None:
    res = load([results])
    # 24 methods: copies of the three, so the table is wide and long
    many = Results(res.config, res.measures, {}, res.statistics, res.sources)
    for ds, methods in res.datasets.items():
        many.datasets[ds] = {f"{m}-{i}": r for i in range(8) for m, r in methods.items()}
    many.statistics = {}
    table = build(many, TableSpec(decimals=6, measures=KEYS))
    out = text(table, width=100)
    assert max(len(line) for line in out.splitlines()) <= 100
    assert sum(line.startswith("method") for line in out.splitlines()) >= 2  # wrapped blocks
    assert out.count("A_net-7") >= 2  # every block repeats the names


def test_folders_merge_and_refuse_what_cannot_be_compared(results: Path, tmp_path: Path) -> None:
    root = tmp_path / "new"
    make_dataset(root, n_images=8, methods=("D",), layout="multi", dataset="DS1")
    new = _eval(root, tmp_path / "out-new", ci=False)
    merged = build(load([results, new]), TableSpec(datasets=("DS1",)))
    assert merged.methods == ["A_net", "B", "C", "D"]  # appended without recomputing
    assert "D" in markdown(merged)
    with pytest.raises(TableError, match="no confidence interval for D on DS1"):
        build(load([results, new]), TableSpec(ci=True, datasets=("DS1",)))
    with pytest.raises(TableError, match="no groups for DS1"):
        build(load([results, new]), TableSpec(groups=True, datasets=("DS1",)))
    # the intervals of the methods tested before stay
    kept = build(load([results, new]), TableSpec(ci=True, datasets=("DS2",)))
    assert kept.cells[("DS2", "B", "Sm")].half_width
    other = _eval(root, tmp_path / "out-beta", params=Params(beta2=1.0), ci=False)
    with pytest.raises(TableError, match="params"):
        load([results, other])
    with pytest.raises(TableError, match=r"no results\.json"):
        load([tmp_path])
    with pytest.raises(TableError, match="no \\['HCE'\\]"):
        build(load([results]), TableSpec(measures=("HCE",)))


def test_names_are_escaped_checked_and_marks_follow_the_printed_digits(results: Path) -> None:
    res = load([results])
    odd = {"A_net": "Ours|*new* <b>&", "B": "B_50%"}
    table = build(res, TableSpec(aliases=odd, measures=("Sm",)))
    md = markdown(table)
    assert r"Ours\|\*new\* &lt;b&gt;&amp;" in md and md.splitlines()[0].count("|") == 4
    source = latex(table)
    _check_latex(source)
    assert r"Ours\textbar{}*new* \textless{}b\textgreater{}\&" in source and r"B\_50\%" in source
    with pytest.raises(TableError, match="shown as"):
        build(res, TableSpec(aliases={"A_net": "B"}))
    with pytest.raises(TableError, match="cannot highlight"):
        build(res, TableSpec(highlight=("Nobody",)))
    # with no decimals, every value printed as 1 is best
    coarse = build(res, TableSpec(decimals=0, measures=("Sm",)))
    ranks = {coarse.cells[("DS2", m, "Sm")].rank for m in ("A_net", "B", "C")}
    printed = {f"{coarse.cells[('DS2', m, 'Sm')].value:.0f}" for m in ("A_net", "B", "C")}
    assert len(ranks) == len(printed)


def test_statistics_of_other_setups_do_not_merge(results: Path, tmp_path: Path) -> None:
    root = tmp_path / "new"
    make_dataset(root, n_images=8, methods=("D",), layout="multi", dataset="DS3")
    datasets, _ = discover(root)
    report = evaluate_datasets(
        datasets,
        EvalConfig(Params(), KEYS),
        cache_path=tmp_path / "c.sqlite",
        progress=False,
        significance=Setup(resamples=200, level=0.9),
    )
    write_all(report, tmp_path / "out90", plots=False)
    with pytest.raises(TableError, match="made their intervals and tests differently"):
        load([results, tmp_path / "out90"])


def test_xlsx_notes_intervals_and_groups(results: Path, tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    write_xlsx(build(load([results]), TableSpec(ci=True, groups=True)), tmp_path / "s.xlsx")
    sheet = openpyxl.load_workbook(tmp_path / "s.xlsx")["table"]
    notes = [sheet.cell(r, c).comment for r in range(3, 6) for c in range(2, 12)]
    texts = [n.text for n in notes if n is not None]
    assert any("interval [" in t and "group " in t for t in texts)
    assert any("subset" in t for t in texts)


def test_cli_table(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    aliases = tmp_path / "alias.yaml"
    aliases.write_text("method:\n  A_net: Ours\n")
    assert (
        main(
            [
                "table",
                str(results),
                "--format",
                "latex",
                "--measures",
                "Sm",
                "MAE",
                "--aliases",
                str(aliases),
                "--decimals",
                "4",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    _check_latex(out)
    assert "Ours" in out and re.search(r"\d\.\d{4}", out)
    assert main(["table", str(results), "--format", "xlsx"]) == 2
    assert "needs --out" in capsys.readouterr().err
    assert main(["table", str(tmp_path)]) == 2
    assert "no results.json" in capsys.readouterr().err
    assert (
        main(["table", str(results), "--out", str(tmp_path / "t.md"), "--format", "markdown"]) == 0
    )
    assert (tmp_path / "t.md").read_text().startswith("| method |")


# ------------------------------------------------------- one writer: eval's summaries too
def test_eval_summaries_are_the_tables_of_the_one_writer(results: Path) -> None:
    loaded = load([results])
    md = (results / "summary.md").read_text()
    tex = (results / "summary.tex").read_text()
    _check_latex(tex)
    assert all(ord(ch) < 128 for ch in tex.split("\n", 1)[1]), "non-ASCII outside math"
    for ds in ("DS1", "DS2"):
        spec = TableSpec(
            measures=tuple(loaded.measures), datasets=(ds,), places=3, images=True, symbols=False
        )
        table = build(loaded, spec)
        # each dataset's section is the Markdown of that table, its caption said once above
        assert f"## {ds}\n\n" + markdown(table, caption=False) in md
        assert rf"\label{{tab:{ds.lower()}}}" in tex
    assert md.count("Normalisation GT>128") == 1
    # the images column, the unranked method, three places
    assert "| C | 6/8 ⚠ |" in md and "so not ranked: C on" not in md  # one dataset a table
    assert "*" in md.split("## DS2")[1] and "third *italic*" in md


def test_third_place_and_values_over_fewer_images(results: Path) -> None:
    loaded = load([results])
    # a measure averaged over fewer images for one method: ‡, and not ranked with the others
    loaded.datasets["DS2"]["B"]["counts"] = {"Sm": 5}
    table = build(loaded, TableSpec(measures=("Sm", "MAE"), datasets=("DS2",), places=3))
    sm = {m: table.cells[("DS2", m, "Sm")] for m in ("A_net", "B", "C")}
    assert sm["B"].partial == (5, 6) and sm["B"].rank is None
    assert sorted(c.rank for m, c in sm.items() if m != "B") == [1, 2]
    mae = sorted(table.cells[("DS2", m, "MAE")].rank for m in ("A_net", "B", "C"))
    assert mae == [1, 2, 3]
    md = markdown(table)
    assert "‡ averaged over fewer images than the method's other values: B Sm (5 of 6)." in md
    third = next(m for m in ("A_net", "B", "C") if table.cells[("DS2", m, "MAE")].rank == 3)
    row = next(
        r for r in md.splitlines() if r.startswith(f"| {third.replace('_', chr(92) + '_')} ")
    )
    assert f"*{table.cells[('DS2', third, 'MAE')].value:.3f}*" in row
    assert "²" in text(table) and "³" in text(table)
    assert 'class="third"' in html(table)


def test_every_format_is_written_by_the_cli_through_the_one_table(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fminspect.batch.table_formats import FORMATS

    for name, fmt in FORMATS.items():
        out = tmp_path / f"table{fmt.suffix}"
        assert main(["table", str(results), "--format", name, "--out", str(out)]) == 0, name
        assert out.stat().st_size > 0, name
        if fmt.render is not None:  # what is written is what standard output shows
            assert main(["table", str(results), "--format", name]) == 0
            assert capsys.readouterr().out == out.read_bytes().decode(), name


def test_the_plain_grids_keep_every_cell_whole_and_literal() -> None:
    """The meta-measures' and the studies' tables go through the same writer: a `|` in a cell
    does not split it, emphasis signs and HTML stay text, and the LaTeX grid escapes."""
    header = ["measure", "mean |Δ| (dilate)"]
    rows = [["a*b*_c_", "<b>1</b> [2]"], ["x|y", "3"]]
    md = grid_markdown(header, rows).splitlines()
    unescaped_pipes = [len(re.findall(r"(?<!\\)\|", line)) for line in md]
    assert unescaped_pipes == [3, 3, 3, 3]
    assert md[2] == r"| a\*b\*\_c\_ | &lt;b&gt;1&lt;/b&gt; [2] |"
    tex = grid_latex(header, rows, caption="100 % of x_y")
    assert r"mean \textbar{}$\Delta$\textbar{} (dilate)" in tex
    assert r"a*b*\_c\_ & \textless{}b\textgreater{}1\textless{}/b\textgreater{} [2] \\" in tex
    assert r"\caption{100 \% of x\_y}" in tex and tex.count(r"\\") == 3
