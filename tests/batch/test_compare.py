"""fminspect compare: planted differences — the MATLAB S-measure centroid, another resize
rule, max values as the mean of per-image maxima — are each explained by the convention
that made them; a value no convention makes is said to be unexplained; the reference is
read from CSV, JSON, XLSX and another eval folder."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from fminspect.batch.compare import (
    MEASURE_NAMES,
    CompareError,
    Reference,
    _ref_value,
    agreement,
    compare,
    measure_key,
    read_reference,
    text,
)
from fminspect.cli import main
from tests.datasets import write_png


def _halves(root: Path, *, small: str = "") -> Path:
    """6 images of 32×40 whose GT rectangles have centroid means of exactly k + 0.5 (where
    pysodmetrics and MATLAB split the S-measure quadrants differently); methods A and B;
    with ``small``, that method's maps are saved at half size."""
    rng = np.random.default_rng(11)
    for i in range(6):
        gt = np.zeros((32, 40), np.uint8)
        r0, c0 = 4 + 2 * i, 2 + 2 * i
        gt[r0 : r0 + 6, c0 : c0 + 8] = 255  # means r0 + 2.5, c0 + 3.5
        write_png(root / "GT" / f"im{i}.png", gt)
        img = rng.integers(0, 256, (32, 40, 3), dtype=np.uint8)
        cv2.imwrite(str(root / "Imgs" / f"im{i}.jpg"), img) if (root / "Imgs").is_dir() else None
        for m, blur in (("A", 1.5), ("B", 4.0)):
            soft = cv2.GaussianBlur(gt.astype(np.float64), (0, 0), blur)
            pred = np.clip(soft + rng.normal(0, 25, gt.shape), 0, 255).astype(np.uint8)
            if m == small:
                pred = cv2.resize(pred, (20, 16), interpolation=cv2.INTER_AREA)
            write_png(root / "Pred" / m / f"im{i}.png", pred)
    return root


def _eval(root: Path, out: Path, *extra: str) -> dict:
    args = ["eval", str(root), "--out", str(out), "--measures", "Sm", "MAE", "maxFm"]
    assert main([*args, "--no-plots", "--quiet", *extra]) == 0
    return json.loads((out / "summary.json").read_text())


def _csv(path: Path, summary: dict, keys: dict[str, str], decimals: int = 3) -> Path:
    (ds,) = summary
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["Method", *keys])
        for m, v in summary[ds].items():
            w.writerow([m, *(f"{v[k]:.{decimals}f}" for k in keys.values())])
    return path


def _compare(root: Path, reference: Path, tmp: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    out = tmp / "report.json"
    code = main(
        [
            "compare",
            str(root),
            str(reference),
            "--format",
            "json",
            "--out",
            str(out),
            "--cache",
            str(tmp / "compare.sqlite"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    return json.loads(out.read_text())


def _by(report: dict) -> dict[tuple[str, str], dict]:
    return {(f["method"], f["measure"]): f for f in report["findings"]}


def test_a_matlab_s_measure_is_explained_by_the_centroid_rounding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _halves(tmp_path / "data")
    theirs = _eval(root, tmp_path / "matlab", "--convention", "matlab")
    ours = _eval(root, tmp_path / "ours")
    # the plant is visible at three decimals
    assert all(abs(theirs["data"][m]["Sm"] - ours["data"][m]["Sm"]) > 0.002 for m in "AB")
    ref = _csv(tmp_path / "paper.csv", theirs, {"S_α ↑": "Sm", "MAE ↓": "MAE"})
    report = _compare(root, ref, tmp_path, capsys)
    found = _by(report)
    for m in "AB":
        sm = found[(m, "Sm")]
        assert sm["verdict"] == "explained", sm
        assert "s_centroid=matlab" in sm["explained_by"]
        assert "convention matlab" in sm["explained_by"]
        assert "s_centroid=co-sod" not in sm["explained_by"]
        assert found[(m, "MAE")]["verdict"] == "agrees"
    assert report["counts"] == {"agrees": 2, "explained": 2}


def test_another_resize_rule_is_explained_and_the_resized_maps_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _halves(tmp_path / "data", small="B")
    theirs = _eval(root, tmp_path / "nearest", "--interpolation", "nearest")
    ref = tmp_path / "theirs.json"
    ref.write_text(json.dumps(theirs))  # {dataset: {method: {key: value}}}, full precision
    report = _compare(root, ref, tmp_path, capsys)
    found = _by(report)
    for key in ("Sm", "MAE", "maxFm"):
        assert found[("A", key)]["verdict"] == "agrees"  # A's maps are at the GT's size
        b = found[("B", key)]
        assert b["verdict"] == "explained", b
        # OpenCV's area rule enlarges by a whole factor as nearest does: both reproduce it
        assert "interpolation=nearest" in b["explained_by"]
        assert all(e.startswith("interpolation=") for e in b["explained_by"])
        assert "6 maps resized to their GT" in b["images"]
        assert not found[("A", key)]["images"]
    assert "interpolation=nearest" in {t["name"] for t in report["tried"]}


def test_max_as_the_mean_of_per_image_maxima_is_explained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _halves(tmp_path / "data")
    _eval(root, tmp_path / "ours")
    per_image: dict[str, list[float]] = {}
    with open(tmp_path / "ours" / "per_image.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            per_image.setdefault(row["method"], []).append(float(row["maxFm β²=0.3"]))
    ref = tmp_path / "long.csv"
    with open(ref, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "method", "measure", "value"])
        for m, vs in per_image.items():
            w.writerow(["data", m, "maxF", f"{sum(vs) / len(vs):.4f}"])
    found = _by(_compare(root, ref, tmp_path, capsys))
    for m in "AB":
        assert found[(m, "maxFm")]["explained_by"] == ["mean of per-image maxima"]


def test_a_difference_no_convention_makes_is_unexplained_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _halves(tmp_path / "data")
    ours = _eval(root, tmp_path / "ours")
    ours["data"]["A"]["Sm"] += 0.05
    ours["data"]["Ghost"] = {"Sm": 0.9}
    ref = tmp_path / "odd.json"
    ref.write_text(json.dumps(ours))
    report = _compare(root, ref, tmp_path, capsys)
    found = _by(report)
    a = found[("A", "Sm")]
    # no "closest" way of computing is named: one that does not reproduce it is no lead
    assert a["verdict"] == "unexplained" and a["why"] == "unexplained"
    assert found[("Ghost", "Sm")]["verdict"] == "not here"
    assert found[("B", "Sm")]["verdict"] == "agrees"
    assert "another image set" in " ".join(report["never_tried"])


def test_another_eval_folder_and_xlsx_are_references(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    root = _halves(tmp_path / "data")
    ours = _eval(root, tmp_path / "ours")
    report = _compare(root, tmp_path / "ours", tmp_path, capsys)
    assert report["counts"] == {"agrees": 6}
    # PySODEvalToolkit's layout: dataset names over their measures, then the measures
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["methods", "data", None])
    sheet.append([None, "sm", "mae"])
    for m in "AB":
        sheet.append([m, round(ours["data"][m]["Sm"], 3), round(ours["data"][m]["MAE"], 3)])
    book.save(tmp_path / "toolkit.xlsx")
    ref = read_reference(tmp_path / "toolkit.xlsx", ["data"])
    assert set(ref.values) == {("data", m, k) for m in "AB" for k in ("Sm", "MAE")}
    assert ref.values[("data", "A", "Sm")].tolerance == pytest.approx(0.0005)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("S-measure", "Sm"),
        ("$S_\\alpha$", "Sm"),
        ("maxF", "maxFm"),
        ("avgE", "meanEm"),
        ("F^w_β", "wFm"),
        ("M ↓", "MAE"),
        ("adpFm", "adpFm"),
        ("speed", None),
        # as papers and the toolboxes print them
        ("max F-measure", "maxFm"),
        ("mean F-measure", "meanFm"),
        ("Mean F-Measure", "meanFm"),
        ("F_β^max", "maxFm"),
        ("$F^{\\max}_\\beta$", "maxFm"),
        ("F^ω_β", "wFm"),
        ("$F_\\beta^\\omega$", "wFm"),
        ("E_ξ^mean", "meanEm"),
        ("$E_\\xi^{mean}$", "meanEm"),
        ("Eϕmax", "maxEm"),
        ("S_α", "Sm"),
        ("Ｓα", "Sm"),  # full-width
        ("M", "MAE"),
        ("$\\mathcal{M}$", "MAE"),
        ("IoU(@ max Fm)", "IoU_maxFm_meanPR"),
        ("AUC", None),
    ],
)
def test_column_names_of_other_tables_are_understood(name: str, key: str | None) -> None:
    assert measure_key(name) == key


def test_a_wrong_reference_is_one_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("model,Sm\nA,0.8\n")
    with pytest.raises(CompareError, match="no 'method' column"):
        read_reference(bad, ["data"])
    bad.write_text("method,speed\nA,12\n")
    with pytest.raises(CompareError, match="no value of a known measure"):
        read_reference(bad, ["data"])
    bad.write_text("method,Sm\nA,high\n")
    with pytest.raises(CompareError, match=r"line 2: 'high' is not a number"):
        read_reference(bad, ["data"])
    two = tmp_path / "two.csv"
    two.write_text("method,Sm\nA,0.8\n")
    with pytest.raises(CompareError, match="add a 'dataset' column"):
        read_reference(two, ["X", "Y"])
    root = _halves(tmp_path / "data")
    code = main(["compare", str(root), str(tmp_path / "missing.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.strip() == f"fminspect compare: {tmp_path / 'missing.csv'}: file not found"


def test_empty_cells_whole_numbers_percent_and_duplicates_in_a_reference(
    tmp_path: Path,
) -> None:
    ref = tmp_path / "t.csv"
    ref.write_text("method,Sm,maxEm,wFm\nA,—,1,NaN\nB,-,0.95,n/a\n")
    read = read_reference(ref, ["data"])
    assert set(read.values) == {("data", "A", "maxEm"), ("data", "B", "maxEm")}
    # a whole number is a value printed to 3 decimals, not one exact to ±0.5
    assert read.values[("data", "A", "maxEm")].tolerance == pytest.approx(0.0005)
    js = tmp_path / "t.json"
    js.write_text(json.dumps({"A": {"maxEm": 1, "Sm": 0.8731234567891}}))
    read = read_reference(js, ["data"])
    assert read.values[("data", "A", "maxEm")].tolerance == pytest.approx(0.0005)
    assert read.values[("data", "A", "Sm")].tolerance == pytest.approx(1e-9)
    pct = tmp_path / "pct.csv"
    pct.write_text("method,Sm,MAE\nA,84.7,0.041\nB,80.1,0.052\n")
    read = read_reference(pct, ["data"])
    assert read.values[("data", "A", "Sm")].value == pytest.approx(0.847)
    assert read.values[("data", "A", "Sm")].tolerance == pytest.approx(0.0005)
    assert any("Sm is in percent" in n for n in read.notes)
    dup = tmp_path / "dup.csv"
    dup.write_text("method,Sm\nA,0.8\nA,0.7\n")
    with pytest.raises(CompareError, match="A's Sm on data is given twice"):
        read_reference(dup, ["data"])


def test_no_value_left_for_the_methods_chosen_is_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _halves(tmp_path / "data")
    ref = tmp_path / "a.csv"
    ref.write_text("method,Sm\nA,0.8\n")
    code = main(["compare", str(root), str(ref), "--methods", "B"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "has no value for the methods and datasets chosen" in err


def test_curves_over_255_thresholds_are_explained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The means differ (the max often does not: on a map of 256 grey levels each of the
    255 binarisations is one of the 256)."""
    root = _halves(tmp_path / "data")
    args = ["eval", str(root), "--out", str(tmp_path / "t255"), "--measures", "meanFm255",
            "meanEm255", "--no-plots", "--quiet"]  # fmt: skip
    assert main(args) == 0
    theirs = json.loads((tmp_path / "t255" / "summary.json").read_text())
    ref = tmp_path / "cosod.json"
    ref.write_text(
        json.dumps(
            {
                "data": {
                    m: {"meanFm": v["meanFm255"], "meanEm": v["meanEm255"]}
                    for m, v in theirs["data"].items()
                }
            }
        )
    )
    report = _compare(root, ref, tmp_path, capsys)
    for f in report["findings"]:
        assert f["verdict"] == "explained", f
        assert f["explained_by"] == ["255 thresholds"]


def test_with_ci_the_tables_orders_of_methods_are_tested_and_intervals_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--ci: each value gets fminspect's bootstrap interval, and the reference's orders of two
    methods are checked by the paired tests: a planted reversal (B and C swapped) is found,
    and a pair that differs on one image of 12 only (A and A2) is not significant."""
    from tests.datasets import make_dataset

    root = make_dataset(tmp_path / "DS", n_images=12, methods=("A", "B", "C"), size=(40, 48))
    (root / "Pred" / "A2").mkdir()
    for f in (root / "Pred" / "A").iterdir():
        (root / "Pred" / "A2" / f.name).write_bytes(f.read_bytes())
    first = sorted((root / "Pred" / "A2").iterdir())[0]
    pred = cv2.imread(str(first), cv2.IMREAD_GRAYSCALE)
    cv2.imwrite(str(first), 255 - pred)  # A2 = A but for one image
    ours = _eval(root, tmp_path / "ours")["DS"]
    theirs = {m: dict(v) for m, v in ours.items()}
    theirs["B"]["Sm"], theirs["C"]["Sm"] = ours["C"]["Sm"], ours["B"]["Sm"]  # swapped
    ref = tmp_path / "paper.json"
    ref.write_text(json.dumps({"DS": theirs}))
    capsys.readouterr()
    out = tmp_path / "report.json"
    cache = ["--cache", str(tmp_path / "compare.sqlite")]
    args = ["compare", str(root), str(ref), "--format", "json", "--out", str(out), *cache]
    assert main([*args, "--ci", "--resamples", "400"]) == 0, capsys.readouterr().err
    report = json.loads(out.read_text())
    setup = report["statistics"]["DS"]
    assert (setup["resamples"], setup["images"]) == (400, 12)
    found = _by(report)
    b = found[("B", "Sm")]
    lo, hi = b["ours_interval"]
    assert lo <= b["ours_value"] <= hi
    assert "our interval" in b["why"]  # unexplained: is theirs inside our interval?
    by_pair = {(o["a"], o["b"], o["measure"]): o for o in report["orders"]}
    swapped = by_pair.get(("B", "C", "Sm")) or by_pair[("C", "B", "Sm")]
    assert swapped["verdict"].startswith("reversed")
    assert swapped["theirs"] * swapped["ours"] < 0
    close = by_pair.get(("A", "A2", "Sm")) or by_pair.get(("A2", "A", "Sm"))
    assert close is not None and close["verdict"] == "not significant"
    assert close["p_holm"] > 0.05
    # the text report says the method, n and B, and lists the pairs
    text = tmp_path / "report.txt"
    assert main([*args[:3], "--out", str(text), *cache, "--ci", "--resamples", "400"]) == 0
    body = text.read_text()
    assert "percentile bootstrap over images" in body and "n = 12 (DS) images" in body
    assert "reversed here" in body and "A2" in body


def test_with_ci_on_too_few_images_the_orders_are_not_tested(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _halves(tmp_path / "data")  # 6 images: fewer than the 10 a test needs
    ours = _eval(root, tmp_path / "ours")
    ref = tmp_path / "same.json"
    ref.write_text(json.dumps(ours))
    capsys.readouterr()
    out = tmp_path / "report.json"
    args = ["compare", str(root), str(ref), "--format", "json", "--out", str(out), "--ci"]
    assert main([*args, "--cache", str(tmp_path / "c.sqlite"), "--resamples", "200"]) == 0
    report = json.loads(out.read_text())
    assert report["orders"] and all(o["verdict"] == "not tested" for o in report["orders"])
    assert report["statistics"]["data"]["reliable"] is False


def test_a_classic_benchmark_table_with_the_names_papers_print(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a table as papers print the classic saliency benchmark's numbers: its max F is F of
    # the image-averaged P and R, its "mean F" the adaptive F
    root = _halves(tmp_path / "data")
    out = tmp_path / "classic"
    args = ["eval", str(root), "--out", str(out), "--convention", "classic-benchmark"]
    assert main([*args, "--no-plots", "--quiet"]) == 0
    theirs = json.loads((out / "summary.json").read_text())
    columns = {
        "max F-measure": "maxFm_meanPR",
        "mean F-measure": "adpFm",
        "S-measure": "Sm",
        "IoU(@ max Fm)": "IoU_maxFm_meanPR",
        "AUC": "Sm",  # a column fminspect does not compute: listed, not read
    }
    ref = _csv(tmp_path / "paper.csv", theirs, columns)
    report = _compare(root, ref, tmp_path, capsys)
    found = _by(report)
    ours = _eval(root, tmp_path / "ours")
    for m in "AB":
        assert "convention classic-benchmark" in found[(m, "meanFm")]["explained_by"]
        assert found[(m, "IoU_maxFm_meanPR")]["verdict"] in ("agrees", "explained")
    # B's max F of the image-averaged P and R is not its maxFm at three decimals (A's is)
    assert abs(ours["data"]["B"]["maxFm"] - theirs["data"]["B"]["maxFm_meanPR"]) > 0.005
    assert found[("B", "maxFm")]["explained_by"] == [
        "convention classic-benchmark",
        "max F of the mean P and R",
    ]
    assert "column 'AUC' is not a measure fminspect knows" in " ".join(report["notes"])


def test_a_convention_with_the_empty_gts_left_out_takes_two_switches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _halves(tmp_path / "data")
    empty = np.zeros((32, 40), np.uint8)
    write_png(root / "GT" / "none.png", empty)
    for m in "AB":
        write_png(root / "Pred" / m / "none.png", np.full_like(empty, 40))
    # the MATLAB toolbox's numbers: its conventions, on the images it can score
    theirs = _eval(root, tmp_path / "matlab", "--convention", "matlab")
    ref = _csv(tmp_path / "paper.csv", theirs, {"S_α": "Sm", "M": "MAE"})
    found = _by(_compare(root, ref, tmp_path, capsys))
    for m in "AB":
        by = found[(m, "Sm")]["explained_by"]
        assert "convention matlab + empty GTs left out" in by, by
        assert all(" + " in name for name in by)  # no one switch does it
        # MAE needs only the images: one switch, and the pair is not named beside it
        # (the classic benchmark leaves out the constant map of the empty GT: its MAE is 0/0)
        by = found[(m, "MAE")]["explained_by"]
        assert "empty GTs left out" in by and not any(" + " in name for name in by), by


@pytest.mark.parametrize(
    ("ours", "printed", "how"),
    [
        (0.7904, ".790", ""),  # rounded once
        (0.79049, ".791", "rounded twice: 0.79049 → 0.7905 → .791"),  # via four decimals
        (0.790449, "0.791", None),  # 0.79045 → 0.7905 → 0.791 is three roundings
        (0.7903, ".791", None),
        (0.79151, ".791", None),  # a unit off is not rounding
        (79.049 / 100, "79.1", "rounded twice: 0.79049 → 0.7905 → 79.1"),  # percent, 1 decimal
    ],
)
def test_a_value_rounded_once_or_twice_agrees_and_says_how(
    ours: float, printed: str, how: str | None
) -> None:
    ref = _ref_value(printed)
    assert ref is not None
    if printed == "79.1":  # as read from a table in percent
        reference = Reference("t")
        reference.values[("d", "m", "Sm")] = ref
        from fminspect.batch.compare import _percent

        _percent(reference)
        ref = reference.values[("d", "m", "Sm")]
    assert agreement(ours, ref) == how


def test_a_value_rounded_twice_is_reported_as_agreeing_and_how(tmp_path: Path) -> None:
    reference = Reference("paper.csv")
    for method, printed in (("A", ".791"), ("B", ".500")):
        ref = _ref_value(printed)
        assert ref is not None
        reference.values[("d", method, "Sm")] = ref

    def evaluate(h, keys, methods):  # type: ignore[no-untyped-def]
        if h is None:
            return {("d", "A", "Sm"): 0.79049, ("d", "B", "Sm"): 0.6}, {}
        return {}, {}

    from fminspect.metrics import Params

    comparison = compare(reference, evaluate, Params(), "bilinear", resized=False, empty_gts=False)
    report = text(comparison)
    assert "agrees (rounded twice: 0.79049 → 0.7905 → .791)" in report
    b = next(f for f in comparison.findings if f.method == "B")
    assert b.verdict == "unexplained"


def test_every_alias_is_in_the_documented_table() -> None:
    # docs/evaluation.md's table of the column names compare reads; every alias there
    doc = (Path(__file__).resolve().parents[2] / "docs" / "exactness.md").read_text()
    table = doc.split("<!-- aliases -->")[1]
    for alias, key in MEASURE_NAMES.items():
        if alias != key.lower():
            assert f"`{alias}`" in table, alias
