"""The shareable gallery (fminspect gallery): the worst cases as eval scored them, filters,
tags and case lists, names escaped, pictures bounded, and the site loaded in a real
headless Chromium with no console error."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from fminspect.cli import main
from tests.chromium import Browser, needs_chromium
from tests.datasets import make_dataset

METHODS = ("A", "B", "C")
MEASURES = ["Sm", "MAE", "maxFm"]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A dataset of 8 images (one named with HTML's special characters, C's map of another
    missing), evaluated by eval into its own store: (root, results, store)."""
    tmp = tmp_path_factory.mktemp("gallery")
    root = make_dataset(tmp / "DS", n_images=8, methods=METHODS, size=(60, 80), seed=3)
    for folder, ext in (("GT", "png"), ("Imgs", "jpg"), *((f"Pred/{m}", "png") for m in METHODS)):
        (root / folder / f"img8.{ext}").rename(root / folder / f"x<b>&'q.{ext}")
    (root / "Pred" / "C" / "img2.png").unlink()
    store = tmp / "store.sqlite"
    code = main(
        [
            "eval",
            str(root),
            "--out",
            str(tmp / "res"),
            "--measures",
            *MEASURES,
            "--cache",
            str(store),
            "--quiet",
        ]
    )
    assert code == 0
    return root, tmp / "res", store


def _per_image(results: Path, method: str, key: str) -> dict[str, float]:
    """``key``'s per-image values of ``method`` in eval's per_image.csv (its columns name
    the variant: "Sm α=0.5")."""
    with open(results / "per_image.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    column = next(c for c in rows[0] if c == key or c.startswith(f"{key} "))
    return {
        r["image"]: float(r[column])
        for r in rows
        if r["method"] == method and r[column] not in ("", "nan")
    }


def _gallery(evaluated: tuple[Path, Path, Path], out: Path, *more: str) -> int:
    root, _, store = evaluated
    return main(
        [
            "gallery",
            str(root),
            "--out",
            str(out),
            "--measures",
            *MEASURES,
            "--cache",
            str(store),
            *more,
        ]
    )


def _cases(out: Path) -> list[dict]:
    return json.loads((out / "cases.json").read_text(encoding="utf-8"))["cases"]


def test_the_worst_cases_are_eval_s_worst_read_from_its_store(
    evaluated: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, results, store = evaluated
    assert _gallery(evaluated, tmp_path / "site", "--count", "3", "--method", "A") == 0
    err = capsys.readouterr().err
    assert "to score" not in err  # every score read from eval's store, which is said
    assert f"DS: every pair's scores read from {store}" in err
    assert "the 3 worst of 8 samples" in err
    sm = _per_image(results, "A", "Sm")
    expected = sorted(sm, key=sm.__getitem__)[:3]
    cases = _cases(tmp_path / "site")
    assert [c["sample"] for c in cases] == expected
    assert [c["value"] for c in cases] == pytest.approx([sm[n] for n in expected], abs=1e-12)
    # every shown method's scores are in cases.json too, for scripts
    assert cases[0]["scores"]["A"]["Sm"] == pytest.approx(sm[expected[0]], abs=1e-12)
    assert set(cases[0]["scores"]) == set(METHODS)
    # MAE: lower is better, so its worst are the highest; the mean over the methods
    assert _gallery(evaluated, tmp_path / "mae", "--count", "2", "--by", "MAE") == 0
    mae = {m: _per_image(results, m, "MAE") for m in METHODS}
    mean = {n: np.mean([mae[m][n] for m in METHODS if n in mae[m]]) for n in mae["A"]}
    assert [c["sample"] for c in _cases(tmp_path / "mae")] == sorted(mean, key=lambda n: -mean[n])[
        :2
    ]


def test_a_filter_tags_and_a_case_list_choose_the_cases(
    evaluated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    from fminspect.pipeline.tags import TagStore, tags_file

    root, results, _ = evaluated
    a, b = _per_image(results, "A", "Sm"), _per_image(results, "B", "Sm")
    assert _gallery(evaluated, tmp_path / "f", "--filter", "Sm[A] - Sm[B] < 0", "--count", "0") == 0
    assert {c["sample"] for c in _cases(tmp_path / "f")} == {n for n in a if a[n] - b[n] < 0}
    path, _ = tags_file(root)
    with TagStore(path) as tags:
        tags.rename(2, "boundary")
        tags.toggle("DS", "img3", 2)
        tags.set_note("DS", "img3", "the handle is lost")
    try:
        assert _gallery(evaluated, tmp_path / "t", "--filter", "tag boundary") == 0
        (case,) = _cases(tmp_path / "t")
        assert case["sample"] == "img3" and case["tags"] == ["boundary"]
        assert case["note"] == "the handle is lost"
        assert "the handle is lost" in (tmp_path / "t" / "index.html").read_text(encoding="utf-8")
    finally:
        shutil.rmtree(path.parent)
    listed = tmp_path / "cases.csv"
    listed.write_text("dataset,sample\nDS,img5\nDS,img1\nDS,img4\n", encoding="utf-8")
    assert _gallery(evaluated, tmp_path / "l", "--samples-from", str(listed)) == 0
    assert [c["sample"] for c in _cases(tmp_path / "l")] == ["img5", "img1", "img4"]
    # in the list's order, which the index says (a trial read "in its order; ordered by Sm")
    index = (tmp_path / "l" / "index.html").read_text(encoding="utf-8")
    assert "3 cases of a case list, in its order. The methods" in index
    assert "ordered by" not in index
    # fewer kept than listed (--count): said (a trial read "100 cases of a case list" of 250)
    assert _gallery(evaluated, tmp_path / "c", "--samples-from", str(listed), "--count", "2") == 0
    index = (tmp_path / "c" / "index.html").read_text(encoding="utf-8")
    assert "the first 2 of the 3 cases of a case list, in its order" in index


def test_what_cannot_be_done_is_said(
    evaluated: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _gallery(evaluated, tmp_path / "x", "--by", "wFm") == 2
    assert "wFm is not scored here (scored: " in capsys.readouterr().err
    assert _gallery(evaluated, tmp_path / "x", "--filter", "Sm[Z] < 1") == 2
    assert "Z" in capsys.readouterr().err
    assert _gallery(evaluated, tmp_path / "x", "--method", "Z") == 2
    assert "no method Z (there are: A, B, C)" in capsys.readouterr().err
    assert _gallery(evaluated, tmp_path / "x", "--filter", "Sm[A] > 2") == 2
    assert "no case to show: the filter keeps no sample" in capsys.readouterr().err
    unknown = tmp_path / "unknown.txt"  # only names of nothing: the list is named, no filter
    unknown.write_text("nope1\nnope2\n", encoding="utf-8")
    assert _gallery(evaluated, tmp_path / "x", "--samples-from", str(unknown)) == 2
    err = capsys.readouterr().err
    assert "2 names of the case list in no dataset (e.g. nope1, nope2)" in err
    assert "no case to show: the case list keeps no sample" in err


def test_pictures_are_thumbnails_named_by_rank_not_by_name(
    evaluated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    from fminspect.batch.gallery import PICTURE, THUMB

    assert _gallery(evaluated, tmp_path / "s", "--count", "0") == 0
    files = [p for p in (tmp_path / "s").rglob("*") if p.is_file()]
    assert not [p for p in files if "<" in p.name or ("img" in p.stem and p.suffix == ".jpg")]
    for p in (tmp_path / "s" / "img").rglob("*.jpg"):
        h, w = cv2.imread(str(p)).shape[:2]
        assert (h == THUMB) if p.name == "thumb.jpg" else max(h, w) <= PICTURE


@needs_chromium()
def test_the_site_works_in_headless_chromium_with_no_console_error(
    evaluated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    site = tmp_path / "site"
    assert _gallery(evaluated, site, "--count", "0", "--method", "A") == 0
    cases = _cases(site)
    with Browser() as browser:
        index = browser.open(site.joinpath("index.html").as_uri())
        assert index.evaluate("document.getElementById('count').textContent") == "8 of 8 cases"
        # a name with HTML's characters is shown as text, never as markup
        names = index.evaluate(
            "[...document.querySelectorAll('td.name a')].map(a => a.textContent)"
        )
        assert names == [c["sample"] for c in cases] and "x<b>&'q" in names
        assert index.evaluate("document.querySelectorAll('td.name b').length") == 0
        # a click on "sample" sorts by name; a click on A's column by A's score
        index.evaluate("document.querySelectorAll('th')[2].click()")
        by_name = index.evaluate(
            "[...document.querySelectorAll('td.name a')].map(a => a.textContent)"
        )
        assert by_name == sorted(names, key=str.lower)
        heads = index.evaluate("[...document.querySelectorAll('th')].map(h => h.textContent)")
        a = heads.index("A")
        index.evaluate(f"document.querySelectorAll('th')[{a}].click()")
        column = index.evaluate(
            f"[...document.querySelectorAll('tbody tr')].map(r => r.cells[{a}].dataset.v)"
        )
        assert [float(v) for v in column] == sorted(float(v) for v in column)
        index.evaluate(
            "const f = document.getElementById('filter'); f.value = 'IMG3';"
            "f.dispatchEvent(new Event('input'))"
        )
        assert index.evaluate("document.getElementById('count').textContent") == "1 of 8 cases"
        shown = index.evaluate(
            "[...document.querySelectorAll('tbody tr')].filter(r => !r.hidden).length"
        )
        assert shown == 1
        loaded = (  # every picture, the lazy ones too, decoded: their widths
            "Promise.all([...document.images].map(i => "
            "{ i.loading = 'eager'; return i.decode().then(() => i.naturalWidth) }))"
        )
        assert all(w > 0 for w in index.evaluate(loaded))
        assert index.errors == []
        for case in cases:
            page = browser.open(site.joinpath("cases", f"{case['rank']:04d}.html").as_uri())
            assert all(w > 0 for w in page.evaluate(loaded))
            titles = page.evaluate(
                "[...document.querySelectorAll('.card .title')].map(t => t.textContent)"
            )
            marks = [t for t in titles if t.endswith((" ▲ best", " ▼ worst"))]
            assert any(t.endswith(" ▲ best") for t in marks)  # by more than colour
            plain = [t.removesuffix(" ▲ best").removesuffix(" ▼ worst") for t in titles]
            assert plain == ["Image", "GT", *METHODS]
            missing = page.evaluate("document.querySelectorAll('.empty').length")
            assert missing == (1 if case["sample"] == "img2" else 0)  # C's map of img2
            assert page.errors == [], case["sample"]


def test_the_api_writes_what_the_command_writes(
    evaluated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    from fminspect import api

    root, _, store = evaluated
    assert _gallery(evaluated, tmp_path / "cli", "--count", "4") == 0
    written = api.gallery_site(
        root, out=tmp_path / "api", count=4, measures=MEASURES, cache=store, progress=False
    )
    assert written.cases == 4 and written.index == tmp_path / "api" / "index.html"
    for name in ("index.html", "cases.json", "cases/0002.html"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    # and the command's other options: a case list, aliases, a title
    (tmp_path / "cases.txt").write_text("img3\nimg1\n")
    (tmp_path / "aliases.yaml").write_text("A: Ours\n")
    listed = ["--samples-from", str(tmp_path / "cases.txt"), "--title", "Ours vs the rest"]
    assert (
        _gallery(evaluated, tmp_path / "cli2", *listed, "--aliases", str(tmp_path / "aliases.yaml"))
        == 0
    )
    api.gallery_site(
        root, out=tmp_path / "api2", measures=MEASURES, cache=store, progress=False,
        samples_from=tmp_path / "cases.txt", title="Ours vs the rest", aliases={"A": "Ours"},
    )  # fmt: skip
    for name in ("index.html", "cases.json", "cases/0001.html"):
        assert (tmp_path / "api2" / name).read_bytes() == (tmp_path / "cli2" / name).read_bytes()
    assert "Ours vs the rest" in (tmp_path / "api2" / "index.html").read_text()


def test_a_second_run_replaces_the_site_and_a_foreign_folder_is_refused(
    evaluated: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = evaluated[0]
    site = tmp_path / "site"
    assert _gallery(evaluated, site, "--count", "4") == 0
    assert _gallery(evaluated, site, "--count", "2") == 0
    assert sorted(p.name for p in (site / "cases").iterdir()) == ["0001.html", "0002.html"]
    assert sorted(p.name for p in (site / "img").iterdir()) == ["0001", "0002"]
    assert "2 cases, " in capsys.readouterr().err
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep me", encoding="utf-8")
    assert _gallery(evaluated, other) == 2
    assert "not empty and holds no gallery" in capsys.readouterr().err
    assert (other / "mine.txt").read_text(encoding="utf-8") == "keep me"
    assert not (root / ".fminspect").exists()  # reading the tags wrote nothing beside the data


def test_datasets_with_different_methods_in_one_gallery(tmp_path: Path) -> None:
    root = tmp_path / "two"
    make_dataset(root, n_images=3, methods=("A", "B"), layout="multi", dataset="D1")
    make_dataset(root, n_images=3, methods=("A",), layout="multi", dataset="D2", seed=2)
    store = tmp_path / "s.sqlite"
    args = ["--measures", "Sm", "--cache", str(store)]
    assert main(["gallery", str(root), "--out", str(tmp_path / "site"), *args]) == 0
    cases = _cases(tmp_path / "site")
    assert {c["dataset"] for c in cases} == {"D1", "D2"} and len(cases) == 6
    assert main(["gallery", str(root), "--out", str(tmp_path / "b"), "--method", "B", *args]) == 0
    assert [c["dataset"] for c in _cases(tmp_path / "b")][:3] == ["D1"] * 3  # D2 has no B


@needs_chromium()
def test_a_wide_table_keeps_each_case_s_name_and_picture_in_view(tmp_path: Path) -> None:
    """A trial: with 20 methods on a laptop's screen the index scrolled sideways in a box of
    its own, the names went out of view with the first columns and wrapped onto three lines,
    and the titles did not stay on top (the box, not the page, was what scrolled)."""
    methods = tuple(f"Method-{k:02d}-with-a-long-name" for k in range(20))
    root = make_dataset(tmp_path / "DS", n_images=30, methods=methods, size=(30, 40), seed=5)
    long = "COD10K-CAM-1-Aquatic-3-Crab-154"
    for folder, ext in (("GT", "png"), ("Imgs", "jpg"), *((f"Pred/{m}", "png") for m in methods)):
        (root / folder / f"img1.{ext}").rename(root / folder / f"{long}.{ext}")
    site = tmp_path / "site"
    args = ["--measures", "Sm", "--cache", str(tmp_path / "s.sqlite"), "--count", "0"]
    assert main(["gallery", str(root), "--out", str(site), *args]) == 0
    with Browser() as browser:
        index = browser.open(site.joinpath("index.html").as_uri())
        index.send(
            "Emulation.setDeviceMetricsOverride",
            width=1000,
            height=600,
            deviceScaleFactor=1,
            mobile=False,
        )
        where = (  # the places of the rank, the picture and the name of the long-named case
            "(() => { const r = [...document.querySelectorAll('tbody tr')]"
            f".find(r => r.cells[2].textContent === {long!r});"
            "const b = [0, 1, 2].map(i => r.cells[i].getBoundingClientRect());"
            "const h = document.querySelector('th').getBoundingClientRect();"
            "return {left: b.map(x => x.left), right: b.map(x => x.right), "
            "lines: r.cells[2].querySelector('a').getClientRects().length, "
            "wide: document.documentElement.scrollWidth, head: h.top}; })()"
        )
        before = index.evaluate(where)
        assert before["wide"] > 1000  # 20 methods do not fit: the page scrolls sideways
        assert before["lines"] == 1  # the name on one line
        index.evaluate("window.scrollTo(document.documentElement.scrollWidth, 400)")
        after = index.evaluate(where)
        # pinned at the left edge, side by side, not overlapping
        assert after["left"][0] == pytest.approx(0, abs=1)
        for k in (1, 2):
            assert after["left"][k] == pytest.approx(after["right"][k - 1], abs=1)
        assert after["head"] == pytest.approx(0, abs=1)  # the titles stay on top
        assert index.errors == []
