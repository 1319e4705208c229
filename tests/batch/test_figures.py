"""Curve figures for a paper (fminspect figure): from real eval results, the layout, the
aliases and style files of PySODEvalToolkit, the line looks for 40 methods, the files."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np
import pytest

from fminspect.batch import EvalConfig, evaluate_datasets
from fminspect.batch.figures import FigureError, FigureSpec, draw, load, plan, read_style
from fminspect.batch.outputs import write_all
from fminspect.batch.plots import COLOURS, HIGHLIGHT_COLOURS, line_style
from fminspect.cli import main
from fminspect.io.discovery import discover
from fminspect.metrics import Params
from tests.datasets import make_dataset

KEYS = ("MAE", "Sm", "maxFm", "maxEm", "maxIoU")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("figures")
    root = tmp / "data"
    methods = ("A_net", "B", "C")
    make_dataset(root, n_images=6, methods=methods, layout="multi", dataset="DS1", missing={"C": 2})
    make_dataset(root, n_images=5, methods=methods, layout="multi", dataset="DS2", seed=1)
    make_dataset(root, n_images=5, methods=methods, layout="multi", dataset="DS3", seed=2)
    datasets, _ = discover(root)
    report = evaluate_datasets(
        datasets, EvalConfig(Params(), KEYS), cache_path=tmp / "cache.sqlite", progress=False
    )
    write_all(report, tmp / "out", plots=False)
    return tmp / "out"


def _curve(folder: Path, ds: str, method: str, curve: str) -> np.ndarray:
    with open(folder / "curves.csv", newline="", encoding="utf-8") as fh:
        rows = [
            r
            for r in csv.DictReader(fh)
            if (r["dataset"], r["method"], r["curve"]) == (ds, method, curve)
        ]
    rows.sort(key=lambda r: int(r["threshold"]))
    return np.array([float(r["value"]) for r in rows])


# ------------------------------------------------------------------------ the line looks
def test_forty_methods_differ_by_colour_and_style_and_in_greyscale_by_style_and_marker() -> None:
    looks = [line_style(i) for i in range(40)]
    assert len({(s.color, s.linestyle) for s in looks}) == 40
    # greyscale keeps the line style and the marker, not the hue
    assert len({(s.linestyle, s.marker) for s in looks}) == 40
    # neighbours (in the legend) differ in colour and marker, so no two adjacent look alike
    assert all(a.color != b.color and a.marker != b.marker for a, b in itertools.pairwise(looks))
    ours = [line_style(0, highlighted=k) for k in range(3)]
    assert {s.color for s in ours} == set(HIGHLIGHT_COLOURS)
    assert not {s.color for s in ours} & set(COLOURS)
    assert all(s.linewidth > 1.5 * looks[0].linewidth and s.zorder > 2 for s in ours)


# ------------------------------------------------------------------------- what is drawn
def test_the_curves_are_the_eval_mean_curves_one_panel_per_dataset(results: Path) -> None:
    data = load([results])
    figures = plan(data, FigureSpec(curves=("pr", "fm", "roc")))
    assert [p.plot.tag for p in figures.plans] == ["pr", "fm", "roc"]
    pr = figures.plans[0]
    assert [p.dataset for p in pr.panels] == ["DS1", "DS2", "DS3"]
    assert (pr.rows, pr.columns) == (1, 3)
    lines = {m: (x, y) for m, x, y in pr.panels[1].lines}
    np.testing.assert_array_equal(lines["B"][0], _curve(results, "DS2", "B", "Recall"))
    np.testing.assert_array_equal(lines["B"][1], _curve(results, "DS2", "B", "Precision"))
    fm = {m: (x, y) for m, x, y in figures.plans[1].panels[0].lines}
    np.testing.assert_array_equal(fm["A_net"][0], np.arange(256) / 255)
    np.testing.assert_array_equal(fm["A_net"][1], _curve(results, "DS1", "A_net", "Fm"))
    # C lacks 2 of DS1's maps: marked in the legend and said in a note
    assert pr.labels["C"] == "C †" and pr.labels["B"] == "B"
    assert any(n.startswith("† C was not evaluated on every image of DS1") for n in figures.notes)


def test_pysodevaltoolkit_alias_file_names_and_orders_the_panels(
    results: Path, tmp_path: Path
) -> None:
    from fminspect.io.aliases import read_aliases

    aliases = tmp_path / "aliases.yaml"
    aliases.write_text(
        'dataset: {"DS3": "Third", "DS1": "First"}\nmethod: {"A_net": "ANet$_{24}$"}\n'
    )
    spec = FigureSpec(
        curves=("em",),
        aliases=read_aliases(aliases),
        dataset_aliases=read_aliases(aliases, section="dataset"),
        highlight=("B",),
        columns=1,
    )
    (em,) = plan(load([results]), spec).plans
    assert [(p.dataset, p.title) for p in em.panels] == [("DS3", "Third"), ("DS1", "First")]
    assert (em.rows, em.columns) == (2, 1)
    # highlighted first, then the natural order; aliases in the legend
    assert em.methods == ("B", "A_net", "C")
    assert [em.labels[m] for m in em.methods] == ["B", "ANet$_{24}$", "C †"]


def test_shared_y_and_given_ranges(results: Path) -> None:
    data = load([results])
    own = plan(data, FigureSpec(curves=("fm",))).plans[0].ylims
    assert len(set(own)) == 3
    shared = plan(data, FigureSpec(curves=("fm",), sharey=True)).plans[0].ylims
    assert len(set(shared)) == 1
    assert shared[0][0] <= min(lo for lo, _ in own) and shared[0][1] >= max(hi for _, hi in own)
    given = plan(data, FigureSpec(curves=("pr",), xlim=(0.5, 1), ylim=(0.6, 1))).plans[0]
    assert given.xlim == (0.5, 1) and set(given.ylims) == {(0.6, 1)}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (FigureSpec(datasets=("DS9",)), "no curves for dataset DS9 in these results"),
        (FigureSpec(methods=("B", "Z")), "no curves for method Z in these results"),
        (FigureSpec(methods=("B",), highlight=("C",)), "highlighted method C is not among"),
        (FigureSpec(curves=("xx",)), "unknown curve xx"),
    ],
)
def test_wrong_names_are_one_clear_message(results: Path, spec: FigureSpec, message: str) -> None:
    with pytest.raises(FigureError, match=message):
        plan(load([results]), spec)


# ------------------------------------------------------------------------------ the files
@pytest.mark.slow
def test_every_format_is_written_the_same_each_time(results: Path, tmp_path: Path) -> None:
    spec = FigureSpec(curves=("pr", "dice"), formats=("pdf", "svg", "png"), dpi=60)
    figures = plan(load([results]), spec)
    first = draw(figures, spec, tmp_path / "a", stem="cod_")
    second = draw(figures, spec, tmp_path / "b", stem="cod_")
    assert [p.name for p in first] == [
        f"cod_{t}.{f}" for t in ("pr", "dice") for f in ("pdf", "svg", "png")
    ]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert first[0].read_bytes().startswith(b"%PDF")
    assert b"<svg" in first[1].read_bytes()[:2000]
    assert first[2].read_bytes().startswith(b"\x89PNG")
    assert not list((tmp_path / "a").glob("*.tmp*"))


def test_a_separate_legend_is_its_own_file(results: Path, tmp_path: Path) -> None:
    spec = FigureSpec(curves=("fm",), formats=("png",), legend="separate", dpi=60)
    written = draw(plan(load([results]), spec), spec, tmp_path)
    assert [p.name for p in written] == ["fm.png", "fm_legend.png"]


@pytest.mark.slow
def test_a_pysodevaltoolkit_style_file_is_used(results: Path, tmp_path: Path) -> None:
    style = tmp_path / "two_row_style.yml"
    style.write_text(
        "# a style of PySODEvalToolkit's kind\nlines.linewidth: 2\nfont.size: 12.0\n"
        "font.sans-serif: DejaVu Sans, Arial, sans-serif\naxes.spines.top: False\n"
        "figure.figsize: 8,3\nfigure.dpi: 50\nsavefig.format: pdf\n"
    )
    rc = read_style(style)
    assert rc["figure.figsize"] == "8,3" and rc["savefig.format"] == "pdf"
    spec = FigureSpec(curves=("em",), style=rc)
    written = draw(plan(load([results]), spec), spec, tmp_path / "out")
    assert [p.name for p in written] == ["em.pdf"]  # the style's savefig.format


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("lines.linewidth: 2\nno.such.key: 1\n", "'no.such.key' is not a Matplotlib rcParam"),
        ("lines.linewidth: thick\n", "lines.linewidth: "),
        ("- a list\n", "expected a mapping of Matplotlib rcParams"),
        ("a: [1,\n", "not valid YAML"),
    ],
)
def test_a_wrong_style_file_is_named_with_its_problem(
    tmp_path: Path, text: str, message: str
) -> None:
    style = tmp_path / "style.yml"
    style.write_text(text)
    with pytest.raises(FigureError, match=message) as err:
        read_style(style)
    assert str(style) in str(err.value)


def test_missing_curves_are_one_clear_message(results: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(results, copy)
    (copy / "curves.csv").unlink()
    with pytest.raises(FigureError, match=r"curves.csv: not found"):
        load([copy])


# ----------------------------------------------------------------------------- the command
@pytest.mark.slow
def test_the_command_writes_the_figures_and_says_what_to_know(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "figure",
            str(results),
            "--out",
            str(tmp_path / "figs"),
            "--curves",
            "pr",
            "iou",
            "--format",
            "png",
            "--dpi",
            "50",
            "--highlight",
            "B",
            "--legend",
            "right",
        ]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["iou.png", "pr.png"]
    assert "note: † C was not evaluated on every image of DS1" in err
    assert "2 files written to" in err


def test_the_command_refuses_wrong_options_in_one_line(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["figure", str(results), "--out", str(tmp_path), "--ylim", "1", "0.5"])
    assert code == 2
    assert capsys.readouterr().err.strip() == "fminspect figure: --ylim needs LO < HI, got 1 0.5"
    code = main(["figure", str(tmp_path / "nothing"), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("fminspect figure: ") and "Traceback" not in err
    assert "no results.json here" in err


def test_the_command_offers_every_curve_plot() -> None:
    from fminspect.batch.plots import CURVE_PLOTS
    from fminspect.cli.figure import CURVE_TAGS

    assert tuple(p.tag for p in CURVE_PLOTS) == CURVE_TAGS


@pytest.mark.slow
def test_eval_paper_writes_the_tables_and_figures_in_one_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "data"
    make_dataset(root, n_images=12, methods=("A_net", "B", "C"), layout="multi", dataset="DS1")
    make_dataset(root, n_images=10, methods=("A_net", "B", "C"), layout="multi", dataset="DS2")
    aliases = tmp_path / "aliases.yaml"
    aliases.write_text('method: {"A_net": "ANet"}\n')
    out = tmp_path / "out"
    code = main(
        ["eval", str(root), "--out", str(out), "--measures", *KEYS, "--ci", "--resamples",
         "100", "--paper", "--highlight", "B", "--aliases", str(aliases), "--quiet"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    paper = out / "paper"
    names = sorted(p.name for p in paper.iterdir())
    assert names == [
        "figures", "table-document.tex", "table.csv", "table.html", "table.md", "table.tex",
        "table.xlsx",
    ]  # fmt: skip
    assert sorted(p.name for p in (paper / "figures").iterdir()) == [
        f"{c}.{f}" for c in ("em", "fm", "pr") for f in ("pdf", "png")
    ]
    tex = (paper / "table.tex").read_text()
    assert "ANet" in tex and "\\multicolumn" in tex and "$\\pm$" in tex
    assert "files for the paper in" in err
    # a wrong style file is said before any image is scored
    bad = tmp_path / "style.yml"
    bad.write_text("no.such.key: 1\n")
    code = main(["eval", str(root), "--out", str(tmp_path / "o2"), "--paper", "--style", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "'no.such.key' is not a Matplotlib rcParam" in err
    assert not (tmp_path / "o2" / "results.json").exists()


def test_default_curves_the_results_lack_are_left_out_with_what_to_measure(
    tmp_path: Path,
) -> None:
    root = tmp_path / "data"
    make_dataset(root, n_images=4, methods=("A", "B"), layout="multi", dataset="DS1")
    datasets, _ = discover(root)
    report = evaluate_datasets(
        datasets, EvalConfig(Params(), ("Sm", "maxFm")), cache_path=tmp_path / "c.sqlite",
        progress=False,
    )  # fmt: skip
    write_all(report, tmp_path / "out", plots=False)
    data = load([tmp_path / "out"])
    lenient = plan(data, FigureSpec(strict=False))
    assert [p.plot.tag for p in lenient.plans] == ["pr", "fm"]
    assert any("no em curves" in n and "maxEm" in n for n in lenient.notes)
    with pytest.raises(FigureError, match=r"no em curves .* an E-measure key \(maxEm"):
        plan(data, FigureSpec(curves=("em",)))


def test_repeated_names_are_drawn_once_and_80_methods_still_differ(results: Path) -> None:
    spec = FigureSpec(curves=("fm",), methods=("B", "B", "A_net"), highlight=("B", "B"))
    (fm,) = plan(load([results]), spec).plans
    assert fm.methods == ("B", "A_net")
    looks = [line_style(i) for i in range(80)]
    assert len({(s.linestyle, s.marker, s.filled) for s in looks}) == 80
    assert len({(s.color, s.linestyle, s.filled) for s in looks}) == 80


def test_a_style_matplotlib_cannot_draw_is_one_clear_message(results: Path, tmp_path: Path) -> None:
    import shutil

    if shutil.which("latex"):
        pytest.skip("LaTeX is installed here: usetex works")
    spec = FigureSpec(curves=("fm",), formats=("png",), style={"text.usetex": True}, dpi=40)
    with pytest.raises(FigureError, match=r"fm\.png could not be drawn"):
        draw(plan(load([results]), spec), spec, tmp_path)
    spec = FigureSpec(curves=("fm",), style={"savefig.format": "PNG"}, dpi=40)
    assert [p.name for p in draw(plan(load([results]), spec), spec, tmp_path)] == ["fm.png"]
