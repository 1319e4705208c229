"""The qualitative figure (fminspect qualitative): rows and columns in the order asked, the
exact width, byte-stable files, missing maps marked, insets, the LaTeX snippet, the command."""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from fminspect.batch.figures import FigureError
from fminspect.batch.qualitative import (
    GAP,
    Layout,
    QualitativeError,
    QualitativeSpec,
    Region,
    find_methods,
    find_samples,
    latex_snippet,
    make,
    plan,
)
from fminspect.cli import main
from fminspect.cli.qualitative import INSET_CORNERS, WIDTH_NAMES
from fminspect.io.discovery import discover
from tests.datasets import make_dataset

METHODS = ("M_a", "M_b", "M_c", "M_d")
#: each method's map is one grey level, so a cell tells which map it shows
LEVEL = {"M_a": 40, "M_b": 100, "M_c": 160, "M_d": 220}
SAMPLES = ("s1", "s2", "s3")


def _write(path: Path, array: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), array)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Images 60×80 (s3 90×60, upright); a GT of level 255 in the middle; M_d has no map of
    s2 and M_c's map of s3 is not a PNG."""
    root = tmp_path_factory.mktemp("qual") / "DS"
    for name in SAMPLES:
        h, w = (90, 60) if name == "s3" else (60, 80)
        image = np.zeros((h, w, 3), np.uint8)
        image[..., 2] = 200  # red (BGR on disk)
        _write(root / "Imgs" / f"{name}.jpg", image)
        gt = np.zeros((h, w), np.uint8)
        gt[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4] = 255
        _write(root / "GT" / f"{name}.png", gt)
        for m in METHODS:
            if (m, name) == ("M_d", "s2"):
                continue
            path = root / "Pred" / m / f"{name}.png"
            if (m, name) == ("M_c", "s3"):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(b"not a png at all")
                continue
            _write(path, np.full((h, w), LEVEL[m], np.uint8))
    return root


def _samples(root: Path, names: tuple[str, ...] = SAMPLES) -> list:
    datasets, _ = discover(root)
    return find_samples(datasets, list(names))


def _cell_values(png: Path, lay: Layout, dpi: int, at: float = 0.3) -> np.ndarray:
    """The grey level of each cell of a figure written at ``dpi`` with the layout ``lay``,
    ``at`` of the way into it (0.3: inside the GT's square; beside an empty cell's mark)."""
    picture = cv2.imread(str(png), cv2.IMREAD_GRAYSCALE)
    lefts = lay.left + np.concatenate([[0.0], np.cumsum(np.add(lay.widths, GAP))])
    tops = lay.top + np.concatenate([[0.0], np.cumsum(np.add(lay.heights, GAP))])
    out = np.zeros((len(lay.heights), len(lay.widths)), int)
    for i, h in enumerate(lay.heights):
        for j, w in enumerate(lay.widths):
            out[i, j] = picture[int((tops[i] + at * h) * dpi), int((lefts[j] + at * w) * dpi)]
    return out


def test_columns_are_image_gt_and_the_methods_in_the_order_given(
    root: Path, tmp_path: Path
) -> None:
    spec = QualitativeSpec(methods=("M_b", "M_a"), width=3.5, dpi=100)
    made = make(_samples(root, ("s1",)), spec, tmp_path / "fig.png")
    png = tmp_path / "fig.png"
    picture = cv2.imread(str(png))
    assert picture.shape[1] == 350  # exactly the width asked: 3.5 in at 100 dpi
    from fminspect.batch.qualitative import layout

    lay = layout(spec, [0.75] * 1)
    values = _cell_values(png, lay, 100)
    # image (red → its grey), GT (a white square in the middle), M_b, then M_a
    assert values[0, 1] == 255 and values[0, 2] == 100 and values[0, 3] == 40
    assert (made.samples, made.pictures, made.transposed, made.notes) == (1, 4, False, [])
    assert spec.columns == ["Image", "GT", "M_b", "M_a"]


def test_transposed_one_column_per_sample(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = QualitativeSpec(methods=("M_a", "M_b"), show_image=False, transpose=True, dpi=60)
    made = make(_samples(root, ("s2", "s1")), spec, tmp_path / "t.png")
    assert (made.samples, made.pictures, made.transposed) == (2, 3, True)
    args = ["qualitative", str(root), "--samples", "s2", "s1", "--methods", "M_a", "M_b"]
    assert main([*args, "--no-image", "--transpose", "--out", str(tmp_path / "c.png")]) == 0
    assert "2 samples × 3 pictures, a column per sample: " in capsys.readouterr().err
    from fminspect.batch.qualitative import layout

    lay = layout(spec, [0.75] * 2)
    values = _cell_values(tmp_path / "t.png", lay, 60)
    assert values[:, 0].tolist() == [255, 40, 100] == values[:, 1].tolist()


def test_a_missing_or_unreadable_map_is_a_marked_empty_cell_and_a_warning(
    root: Path, tmp_path: Path
) -> None:
    spec = QualitativeSpec(methods=METHODS, width=7.0, dpi=80)
    made = make(_samples(root), spec, tmp_path / "fig.png")
    assert any("s2: no map of M_d" in n for n in made.notes)
    assert any("s3: M_c's map unreadable" in n for n in made.notes)
    lay = plan(_samples(root), spec).layout
    values = _cell_values(tmp_path / "fig.png", lay, 80)
    assert values[0, 2:].tolist() == [40, 100, 160, 220]
    grey = 0xEC  # the empty cell's colour
    assert abs(values[1, 5] - grey) <= 2 and abs(values[2, 4] - grey) <= 2


@pytest.mark.parametrize("transpose", [False, True], ids=["rows", "transposed"])
def test_each_sample_s_cells_take_its_shape_with_no_empty_margin(
    root: Path, tmp_path: Path, transpose: bool
) -> None:
    """s1 is 60×80 (landscape), s3 90×60 (upright): a row (a column, transposed) per sample
    as high (as wide) as its shape asks, and every picture filling its cell to the edges."""
    spec = QualitativeSpec(methods=("M_a", "M_b"), transpose=transpose, width=3.5, dpi=100)
    samples = _samples(root, ("s1", "s3"))
    made = make(samples, spec, tmp_path / "f.png")
    lay = plan(samples, spec).layout
    if transpose:
        assert len(set(lay.heights)) == 1
        assert lay.widths[0] / lay.widths[1] == pytest.approx(1.5 / 0.75)
        assert lay.left + sum(lay.widths) + GAP * (len(lay.widths) - 1) == pytest.approx(3.5)
    else:
        assert len(set(lay.widths)) == 1
        assert lay.heights[1] / lay.heights[0] == pytest.approx(1.5 / 0.75)
    for at in (0.04, 0.96):  # near both edges of every cell: the picture, never the page
        values = _cell_values(made.written[0], lay, 100, at)
        maps = values[2:, :] if transpose else values[:, 2:]
        assert (maps == [[40, 100]] * 2 if not transpose else maps == [[40, 40], [100, 100]]).all()
        image = values[0, :] if transpose else values[:, 0]
        assert all(abs(v - 60) <= 12 for v in image), image  # the red image's grey, not white


@pytest.mark.parametrize("fmt", ["pdf", "svg", "png"])
def test_the_same_inputs_give_the_same_bytes(root: Path, tmp_path: Path, fmt: str) -> None:
    spec = QualitativeSpec(
        methods=METHODS,
        labels={"M_a": "Ours"},
        highlight=("M_a",),
        insets={"s1": Region(10, 10, 30, 20)},
        sample_labels=True,
        dpi=120,
    )
    first = make(_samples(root), spec, tmp_path / "a" / f"fig.{fmt}", latex=False)
    second = make(_samples(root), spec, tmp_path / "b" / f"fig.{fmt}", latex=False)
    a, b = first.written[0].read_bytes(), second.written[0].read_bytes()
    assert a == b and len(a) > 1000
    if fmt == "pdf":
        assert b"/FontFile2" in a and b"/Type3" not in a  # TrueType text, as publishers ask
        assert b"CreationDate" not in a
    if fmt == "svg":  # text as text, to be edited (a trial found outlines)
        assert b">Ours</text>" in a


def test_pdf_text_is_vector_and_the_pictures_are_printed_size(root: Path, tmp_path: Path) -> None:
    """A page-wide PDF of 3 samples × 6 columns embeds each picture at the dpi asked (a
    large photograph is not carried at full size)."""
    spec = QualitativeSpec(methods=METHODS, dpi=150)
    made = make(_samples(root), spec, tmp_path / "fig.pdf", latex=False)
    data = made.written[0].read_bytes()
    widths = [int(w) for w in __import__("re").findall(rb"/Width (\d+)", data)]
    cell_px = (7.0 - 5 * 0.02) / 6 * 150
    assert widths and max(widths) <= cell_px + 1


def test_an_inset_outlines_its_region_and_enlarges_it(root: Path, tmp_path: Path) -> None:
    spec = QualitativeSpec(methods=("M_a",), insets={"s1": Region(20, 15, 40, 30)}, dpi=100)
    make(_samples(root, ("s1",)), spec, tmp_path / "inset.png")
    picture = cv2.imread(str(tmp_path / "inset.png"))
    red = (picture[..., 2] > 180) & (picture[..., 1] < 80) & (picture[..., 0] < 80)
    assert red.sum() > 100  # the outline and the inset's frame
    with pytest.raises(QualitativeError, match=r"s1: the inset's region .* outside the 80×60"):
        make(
            _samples(root, ("s1",)),
            QualitativeSpec(methods=("M_a",), insets={"s1": Region(80, 0, 20, 20)}),
            tmp_path / "bad.png",
        )


def test_long_sample_names_keep_their_end_and_fit_their_cell() -> None:
    from fminspect.batch.qualitative import _text_width, elide

    name = "COD10K-CAM-1-Aquatic-3-Crab-154"
    short = elide(name, 5.0, 0.5)
    assert short.startswith("…") and name.endswith(short[1:]) and _text_width(short, 5.0) <= 0.5
    assert elide("s1", 5.0, 0.5) == "s1"


def test_unknown_names_are_errors_naming_what_there_is(root: Path, tmp_path: Path) -> None:
    datasets, _ = discover(root)
    with pytest.raises(QualitativeError, match=r"no sample 's11' in DS \(did you mean s1"):
        find_samples(datasets, ["s11"])
    # a part of a long name is answered with the names holding it (a trial typed "Crab-28")
    root2 = make_dataset(tmp_path / "COD", n_images=2, methods=("M",), size=(20, 20))
    for p in (root2 / "GT").iterdir():  # img1 → COD10K-CAM-1-Aquatic-3-Crab-281 …
        long = f"COD10K-CAM-1-Aquatic-3-Crab-28{p.stem[-1]}"
        for folder in ("GT", "Imgs", "Pred/M"):
            for f in (root2 / folder).glob(f"{p.stem}.*"):
                f.rename(f.with_name(long + f.suffix))
    with pytest.raises(QualitativeError, match=r"did you mean COD10K-CAM-1-Aquatic-3-Crab-281"):
        find_samples(discover(root2)[0], ["Crab-28"])
    # every unknown sample at once, not the first only
    with pytest.raises(QualitativeError, match=r"2 samples cannot be shown") as raised:
        find_samples(datasets, ["s1", "s11", "zzz"])
    assert "'s11'" in str(raised.value) and "'zzz'" in str(raised.value)
    # the words every command says of an unknown method (`eval --methods` among them)
    with pytest.raises(
        QualitativeError, match=r"^no method named M_z \(found: M_a, M_b, M_c, M_d\)$"
    ):
        find_methods(datasets, ["M_z"])
    assert find_methods(datasets, []) == METHODS
    assert [s.name for s in find_samples(datasets, ["s3.png", "DS/s1"])] == ["s3", "s1"]


def test_the_latex_snippet_names_the_columns_at_the_width_made_for(tmp_path: Path) -> None:
    page = latex_snippet(tmp_path / "f.pdf", QualitativeSpec(methods=("A_1", "B&C")), 3, ["COD10K"])
    assert "\\begin{figure*}" in page and "width=\\textwidth]{f.pdf}" in page
    assert "image, ground truth, A\\_1, B\\&C." in page and "on COD10K" in page
    column = latex_snippet(tmp_path / "f.png", QualitativeSpec(methods=("A",), width=3.5), 1, [])
    assert "\\begin{figure}[t]" in column and "width=\\linewidth]{f.png}" in column


def test_the_command_takes_a_case_list_in_its_order(root: Path, tmp_path: Path) -> None:
    cases = tmp_path / "cases.csv"
    cases.write_text("dataset,sample,tags,note\nDS,s3,1,\nDS,s1,1,\n", encoding="utf-8")
    out = tmp_path / "fig.pdf"
    code = main(
        [
            "qualitative",
            str(root),
            "--samples-from",
            str(cases),
            "--methods",
            "M_a",
            "M_b",
            "--out",
            str(out),
            "--format",
            "pdf",
            "png",
            "--width",
            "column",
            "--dpi",
            "80",
        ]
    )
    assert code == 0 and out.exists() and out.with_suffix(".png").exists()
    tex = out.with_suffix(".tex").read_text(encoding="utf-8")
    assert "\\begin{figure}[t]" in tex and "{fig.pdf}" in tex
    picture = cv2.imread(str(out.with_suffix(".png")))
    assert picture.shape[1] == 280
    assert picture.shape[0] > picture.shape[1] * 0.6  # s3 (upright) and s1, in rows


def test_the_command_says_what_is_wrong(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["qualitative", str(root), "--samples", "s1", "--out", str(tmp_path / "f.jpg")]) == 2
    )
    assert "needs the suffix .pdf, .svg or .png" in capsys.readouterr().err
    assert (
        main(["qualitative", str(root), "--samples", "nope", "--out", str(tmp_path / "f.pdf")]) == 2
    )
    assert "no sample 'nope'" in capsys.readouterr().err
    code = main(
        [
            "qualitative",
            str(root),
            "--samples",
            "s1",
            "--inset",
            "s2=1,1,5,5",
            "--out",
            str(tmp_path / "f.pdf"),
        ]
    )
    assert code == 2 and "not one of the samples shown" in capsys.readouterr().err
    code = main(
        [
            "qualitative",
            str(root),
            "--samples",
            "s2",
            "--methods",
            "M_d",
            "--out",
            str(tmp_path / "g.svg"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 0 and "warning: DS/s2: no map of M_d" not in err and "s2: no map of M_d" in err
    assert "LaTeX cannot include SVG" in err


def test_named_widths_are_the_library_s() -> None:
    from fminspect.batch.qualitative import WIDTHS

    assert WIDTH_NAMES == WIDTHS


def test_the_api_writes_what_the_command_writes(root: Path, tmp_path: Path) -> None:
    from fminspect import api

    args = ["--samples", "s1", "s2", "--methods", "M_b", "M_a", "--dpi", "90"]
    assert main(["qualitative", str(root), *args, "--out", str(tmp_path / "cli.pdf")]) == 0
    made = api.qualitative_figure(
        root, samples=["s1", "s2"], methods=["M_b", "M_a"], dpi=90, out=tmp_path / "api.pdf"
    )
    assert made.written == [tmp_path / "api.pdf", tmp_path / "api.tex"]
    assert (tmp_path / "api.pdf").read_bytes() == (tmp_path / "cli.pdf").read_bytes()
    more = ["--no-gt", "--sample-names", "--inset", "s2=5,5,20,10", "--inset-corner"]
    more += ["upper-left", "--inset-size", "0.3"]
    assert main(["qualitative", str(root), *args, *more, "--out", str(tmp_path / "c2.pdf")]) == 0
    api.qualitative_figure(
        root,
        samples=["s1", "s2"],
        methods=["M_b", "M_a"],
        dpi=90,
        show_gt=False,
        sample_names=True,
        insets={"s2": (5, 5, 20, 10)},
        inset_corner="upper left",
        inset_size=0.3,
        out=tmp_path / "a2.pdf",
    )
    assert (tmp_path / "a2.pdf").read_bytes() == (tmp_path / "c2.pdf").read_bytes()
    assert (tmp_path / "a2.pdf").read_bytes() != (tmp_path / "api.pdf").read_bytes()
    with pytest.raises(QualitativeError, match="needs X, Y ≥ 0 and W, H > 0"):
        api.qualitative_figure(
            root, samples=["s1"], insets={"s1": (0, 0, -1, 4)}, out=tmp_path / "x.pdf"
        )
    # a style: the command's file, or the mapping itself, each checked by Matplotlib
    style = tmp_path / "style.yml"
    style.write_text("font.size: 5\nfont.family: serif\n")
    assert (
        main(
            [
                "qualitative",
                str(root),
                *args,
                "--style",
                str(style),
                "--out",
                str(tmp_path / "c3.pdf"),
            ]
        )
        == 0
    )
    for given, name in ((style, "a3.pdf"), ({"font.size": 5, "font.family": "serif"}, "a4.pdf")):
        api.qualitative_figure(
            root,
            samples=["s1", "s2"],
            methods=["M_b", "M_a"],
            dpi=90,
            style=given,
            out=tmp_path / name,
        )
        assert (tmp_path / name).read_bytes() == (tmp_path / "c3.pdf").read_bytes()
    assert (tmp_path / "c3.pdf").read_bytes() != (tmp_path / "cli.pdf").read_bytes()
    with pytest.raises(FigureError, match=r"style: 'font\.nothing' is not a Matplotlib rcParam"):
        api.qualitative_figure(
            root, samples=["s1"], style={"font.nothing": 1}, out=tmp_path / "x.pdf"
        )


def test_an_inset_named_as_a_sample_is_and_a_region_must_be_finite(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "f.png"
    args = ["qualitative", str(root), "--samples", "DS/s1", "--methods", "M_a", "--dpi", "80"]
    assert main([*args, "--inset", "s1.png=10,10,30,20", "--out", str(out)]) == 0
    picture = cv2.imread(str(out))
    red = (picture[..., 2] > 180) & (picture[..., 1] < 80) & (picture[..., 0] < 80)
    assert red.sum() > 50  # the inset is drawn whatever the sample's name was written as
    assert main([*args, "--inset", "s1=nan,0,10,10", "--out", str(out)]) == 2
    assert "needs X, Y ≥ 0 and W, H > 0" in capsys.readouterr().err


def test_cells_too_small_to_read_in_print_are_said(root: Path, tmp_path: Path) -> None:
    """A trial's wish: 18 columns in a 3.5 in column make cells of 0.17 in — said, with what
    to do; a page-wide figure of the same columns is not."""
    many = ("M_a", "M_b") * 8
    narrow = make(
        _samples(root, ("s1",)),
        QualitativeSpec(methods=many, width=3.5, dpi=50),
        tmp_path / "a.png",
    )
    (note,) = narrow.notes
    assert note.startswith("18 pictures across 3.5 in make each 0.1") and "--width page" in note
    wide = make(
        _samples(root, ("s1",)),
        QualitativeSpec(methods=many, width=7.0, dpi=50),
        tmp_path / "b.png",
    )
    assert wide.notes == []
    crowded = make(
        _samples(root, ("s1",)),
        QualitativeSpec(methods=many * 3, width=7.0, dpi=50),
        tmp_path / "c.png",
    )
    (note,) = crowded.notes  # already a page wide: "wider" is not offered
    assert "--width page" not in note and "transpose it, or show fewer" in note


def test_a_figure_too_large_to_draw_is_refused_before_drawing(root: Path, tmp_path: Path) -> None:
    """A trial: --width 200 (inches) grew to 21 GB until the system killed the process. The
    canvas is bounded (MAX_FIGURE_PIXELS) and checked before Matplotlib allocates it."""
    from fminspect.api import qualitative_figure

    spec = QualitativeSpec(methods=("M_a",), width=200.0, dpi=300)
    with pytest.raises(QualitativeError, match=r"million pixels, more than 100 million"):
        make(_samples(root, ("s1", "s2")), spec, tmp_path / "huge.png")
    assert not (tmp_path / "huge.png").exists()
    # the API takes the command's width names too, and says what a wrong one is
    made = qualitative_figure(root, samples=["s1"], methods=["M_a"], out=tmp_path / "c.png",
                              width="column", dpi=50)  # fmt: skip
    assert made.written[0] == tmp_path / "c.png"
    with pytest.raises(QualitativeError, match=r"width 'wide' is not column or page"):
        qualitative_figure(root, samples=["s1"], out=tmp_path / "d.png", width="wide")
    # and a case list, as --samples-from (after the samples named), and the datasets
    (tmp_path / "cases.csv").write_text("dataset,sample,tags,note\nDS,s3,GT error,\n")
    listed = qualitative_figure(root, samples=["s2"], samples_from=tmp_path / "cases.csv",
                                datasets=["DS"], methods=["M_a"], out=tmp_path / "e.png",
                                dpi=50, latex=False)  # fmt: skip
    assert listed.samples == 2  # s2, then the list's s3
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(QualitativeError, match=r"names no image"):
        qualitative_figure(root, samples_from=tmp_path / "empty.txt", out=tmp_path / "f.png")


def test_the_inset_goes_in_the_corner_and_at_the_size_asked(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The enlarged region can be kept off the object: in any corner of the cell, at a share
    of its width from 0.2 to 0.8."""
    from fminspect.batch.qualitative import INSET_CORNERS as LIBRARY_CORNERS

    assert [c.replace(" ", "-") for c in LIBRARY_CORNERS] == list(INSET_CORNERS)
    args = ["qualitative", str(root), "--samples", "s1", "--methods", "M_a", "--no-image"]
    args += ["--no-gt", "--dpi", "300", "--width", "2", "--inset", "s1=30,27,20,5"]

    def red_box(*extra: str) -> tuple[int, int, int, int]:
        out = tmp_path / f"inset{'_'.join(extra)}.png"
        assert main([*args, *extra, "--out", str(out)]) == 0
        picture = cv2.imread(str(out))
        red = (picture[..., 2] > 180) & (picture[..., 1] < 80) & (picture[..., 0] < 80)
        ys, xs = np.nonzero(red)
        # the frame stays on the picture (the map, dark, on the white page): it reached
        # a pixel past it where it met the picture's edge
        py, px = np.nonzero(picture.max(axis=2) < 100)
        assert px.min() <= xs.min() and xs.max() <= px.max(), extra
        assert py.min() <= ys.min() and ys.max() <= py.max(), extra
        return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())

    box = {c: red_box("--inset-corner", c) for c in INSET_CORNERS}
    assert box["lower-right"] == red_box()  # the default
    # the outline of the region sits in the middle; the enlarged region reaches the corner
    assert (
        box["upper-left"][0] < box["upper-right"][0] and box["upper-left"][1] < box["lower-left"][1]
    )
    assert (
        box["lower-right"][2] > box["lower-left"][2]
        and box["lower-right"][3] > box["upper-right"][3]
    )
    small, large = red_box("--inset-size", "0.25"), red_box("--inset-size", "0.75")
    assert large[0] < small[0]  # reaching further left from the lower right
    assert main([*args, "--inset-size", "0.9", "--out", str(tmp_path / "x.png")]) == 2
    assert "share of its cell, 0.9, is not between 0.2 and 0.8" in capsys.readouterr().err


@pytest.mark.parametrize("dpi", [100, 200, 300, 450])
def test_the_inset_frame_ends_exactly_at_the_picture_edge_at_any_dpi(
    root: Path, tmp_path: Path, dpi: int
) -> None:
    """A trial: at 200 and 300 dpi a strip of the picture one pixel wide showed beyond the
    inset's frame (lines drawn a pixel short of the picture's edge)."""
    args = ["qualitative", str(root), "--samples", "s1", "--methods", "M_a", "--no-image"]
    args += ["--no-gt", "--dpi", str(dpi), "--width", "1.7", "--inset", "s1=30,27,20,5"]
    for corner in INSET_CORNERS:
        out = tmp_path / f"{corner}.png"
        assert main([*args, "--inset-corner", corner, "--no-latex", "--out", str(out)]) == 0
        picture = cv2.imread(str(out))
        red = (picture[..., 2] > 180) & (picture[..., 1] < 80) & (picture[..., 0] < 80)
        ys, xs = np.nonzero(red)
        # the map: the largest dark part of the white page (the names above are dark too)
        dark = (picture.max(axis=2) < 100).astype(np.uint8)
        _, parts, stats, _ = cv2.connectedComponentsWithStats(dark)
        py, px = np.nonzero(parts == 1 + np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        if "right" in corner:
            assert xs.max() == px.max(), (corner, dpi)
        else:
            assert xs.min() == px.min(), (corner, dpi)
        if "lower" in corner:
            assert ys.max() == py.max(), (corner, dpi)
        else:
            assert ys.min() == py.min(), (corner, dpi)


def test_a_region_past_the_image_is_cut_and_said_and_each_sample_has_one_inset(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From a new-user trial: a region reaching past the image was enlarged cut but outlined
    whole (a box open at the edge), with no word; a second --inset for a sample silently
    replaced the first; the API refused the command's corner words; fig.tex included the PNG
    when it was listed first, though a PDF was written beside it."""
    spec = QualitativeSpec(methods=("M_a",), insets={"s1": Region(60, 50, 40, 30)})
    planned = plan(_samples(root, ("s1",)), spec)
    assert planned.rows[0].region == Region(60, 50, 20, 10)  # the 80×60 image's corner
    assert planned.notes == [
        "s1: the inset's region 60,50,40,30 reaches past the 80×60 image; 60,50,20,10 is "
        "outlined and enlarged"
    ]
    args = ["qualitative", str(root), "--samples", "s1", "--methods", "M_a", "--out"]
    twice = ["--inset", "s1=1,1,5,5", "--inset", "s1=2,2,5,5"]
    assert main([*args, str(tmp_path / "f.pdf"), *twice]) == 2
    assert "--inset names s1 twice" in capsys.readouterr().err
    worded = QualitativeSpec(
        methods=("M_a",), insets={"s1": Region(1, 1, 9, 9)}, inset_corner="upper-right"
    )
    assert plan(_samples(root, ("s1",)), worded).rows[0].region == Region(1, 1, 9, 9)
    assert main([*args, str(tmp_path / "g.png"), "--format", "png", "pdf"]) == 0
    assert "{g.pdf}" in (tmp_path / "g.tex").read_text()


def test_an_inset_smaller_than_its_region_and_a_broken_style_are_said(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From a new-user trial: a region large for its cell came out smaller in the inset than
    its outline, with no word; a style file that is not YAML printed PyYAML's lines."""
    args = ["qualitative", str(root), "--samples", "s1", "--methods", "M_a", "--dpi", "60"]
    assert main([*args, "--inset", "s1=0,0,70,50", "--out", str(tmp_path / "big.png")]) == 0
    err = capsys.readouterr().err
    # 45 % of the cell's width for 70 of the image's 80 columns: about half as large
    assert re.search(r"s1: the inset shows its region at 0\.5\d?× — smaller than the region", err)
    assert main([*args, "--inset", "s1=10,10,20,15", "--out", str(tmp_path / "ok.png")]) == 0
    assert "smaller than the region" not in capsys.readouterr().err
    style = tmp_path / "bad.yml"
    style.write_text("font.size: [unclosed\n")
    assert main([*args, "--style", str(style), "--out", str(tmp_path / "s.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{style}: not valid YAML (" in err and "line 2" in err, err


def test_sample_names_shortened_to_fit_are_said() -> None:
    """A trial: 22 columns in a 3.5 in column printed the names as "…" and "…8", silently."""
    from fminspect.batch.qualitative import _shortened_names, layout

    name = "COD10K-CAM-1-Aquatic-3-Crab-154"
    tight = layout(QualitativeSpec(methods=("M_a",) * 20, width=3.5, sample_labels=True), [0.75])
    (note,) = _shortened_names([name], tight)
    assert note.startswith(f"1 of 1 sample names are shortened to fit beside their cells ({name!r}")
    roomy = layout(QualitativeSpec(methods=("M_a",), width=7.0, sample_labels=True), [0.75])
    assert _shortened_names(["s1"], roomy) == []
