"""Evaluating on part of a dataset (eval --images, --subsets, --exclude-empty-gt): each way
gives the values of evaluating exactly those images, and says what it did."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from fminspect.batch.subsets import (
    COD10K_NAME,
    GROUP_PREFIX,
    SubsetError,
    apply_image_list,
    read_image_list,
    subsets_rule,
)
from fminspect.cli import main
from fminspect.io.discovery import discover
from tests.datasets import make_dataset, write_png

#: (super-class, sub-class) of the 12 images, in COD10K's naming
CLASSES = [("Aquatic", "Crab")] * 4 + [("Flying", "Bird")] * 5 + [("Terrestrial", "Cat")] * 3
KEYS = ["MAE", "Sm", "maxFm", "meanEm"]


def _cod10k_name(i: int) -> str:
    sup, sub = CLASSES[i]
    ids = {"Aquatic": 1, "Flying": 3, "Terrestrial": 4}
    return f"COD10K-CAM-{ids[sup]}-{sup}-{10 + ids[sup]}-{sub}-{100 + i}"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 images named as COD10K names them, two methods; the GT of image 5 is empty."""
    root = tmp_path_factory.mktemp("subsets") / "COD10K"
    make_dataset(root, n_images=12, methods=("SINet", "ZoomNet"), seed=3)
    for folder in [root / "GT", root / "Imgs", *(root / "Pred").iterdir()]:
        for path in folder.iterdir():
            i = int(path.stem[3:]) - 1
            path.rename(path.with_name(_cod10k_name(i) + path.suffix))
    gt = root / "GT" / f"{_cod10k_name(5)}.png"
    write_png(gt, np.zeros((48, 64), np.uint8))
    return root


def _eval(root: Path, out: Path, *extra: str) -> dict:
    code = main(
        [
            "eval",
            str(root),
            "--out",
            str(out),
            "--measures",
            *KEYS,
            "--no-plots",
            "--quiet",
            *extra,
        ]
    )
    assert code == 0
    return json.loads((out / "results.json").read_text())


def _values(doc: dict, ds: str) -> dict[str, dict[str, float]]:
    return {m: r["values"] for m, r in doc["datasets"][ds].items()}


def _close(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for m in a:
        for k in KEYS:
            assert a[m][k] == pytest.approx(b[m][k], abs=1e-12), (m, k)


def test_cod10k_names_give_super_and_sub_classes() -> None:
    m = COD10K_NAME.fullmatch("COD10K-CAM-1-Aquatic-3-Crab-12")
    assert m is not None and (m["super"], m["sub"]) == ("Aquatic", "Crab")
    assert COD10K_NAME.fullmatch("camourflage_00012") is None


def test_a_subset_has_the_values_of_evaluating_its_images_alone(root: Path, tmp_path: Path) -> None:
    doc = _eval(root, tmp_path / "all", "--subsets", "cod10k")
    assert doc["subsets"] == {
        "COD10K[Aquatic]": "COD10K",
        "COD10K[Flying]": "COD10K",
        "COD10K[Terrestrial]": "COD10K",
    }
    assert doc["selection"]["subsets"] == {"rule": "cod10k", "source": "cod10k"}
    flying = tmp_path / "flying.txt"
    flying.write_text("\n".join(_cod10k_name(i) + ".png" for i in range(4, 9)) + "\n")
    alone = _eval(root, tmp_path / "alone", "--images", str(flying))
    _close(_values(doc, "COD10K[Flying]"), _values(alone, "COD10K"))
    assert {r["images"] for r in doc["datasets"]["COD10K[Flying]"].values()} == {5}
    # the whole dataset is still there, and its per-image rows are not repeated per subset
    assert {r["images"] for r in doc["datasets"]["COD10K"].values()} == {12}
    rows = (tmp_path / "all" / "per_image.csv").read_text().splitlines()
    assert len(rows) == 1 + 12 * 2
    sub = _eval(root, tmp_path / "sub", "--subsets", "cod10k-sub")
    assert sorted(sub["subsets"]) == ["COD10K[Bird]", "COD10K[Cat]", "COD10K[Crab]"]


def test_empty_gts_are_counted_always_and_left_out_on_request(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = _eval(root, tmp_path / "kept")
    err = capsys.readouterr().err
    assert kept["empty_gt"] == {"COD10K": {"images": 1, "names": [_cod10k_name(5)]}}
    assert "COD10K: 1 image with an empty GT, kept in the values" in err
    out = _eval(root, tmp_path / "out", "--exclude-empty-gt", "--subsets", "cod10k")
    err = capsys.readouterr().err
    assert "COD10K: 1 image with an empty GT left out." in err
    assert out["selection"]["exclude_empty_gt"] is True
    others = tmp_path / "others.txt"
    others.write_text("\n".join(_cod10k_name(i) for i in range(12) if i != 5))
    alone = _eval(root, tmp_path / "alone", "--images", str(others))
    _close(_values(out, "COD10K"), _values(alone, "COD10K"))
    # image 5 is a Flying one: its subset leaves it out too
    assert {r["images"] for r in out["datasets"]["COD10K[Flying]"].values()} == {4}
    # still scored and listed per image
    rows = (tmp_path / "out" / "per_image.csv").read_text().splitlines()
    assert len(rows) == 1 + 12 * 2 and any(_cod10k_name(5) in r for r in rows)
    assert all(r["coverage"]["complete"] for r in out["datasets"]["COD10K"].values())


def test_an_attribute_table_gives_a_subset_per_true_flag_and_per_value(
    root: Path, tmp_path: Path
) -> None:
    table = tmp_path / "attributes.csv"
    lines = ["image,occlusion,size"]
    for i in range(12):
        flag = "yes" if i % 3 == 0 else "no"
        size = "" if i == 11 else ("small" if i < 6 else "big")
        lines.append(f"{_cod10k_name(i)}.jpg,{flag},{size}")
    table.write_text("\n".join(lines) + "\n")
    doc = _eval(root, tmp_path / "out", "--subsets", str(table))
    assert sorted(doc["subsets"]) == [
        "COD10K[occlusion]",
        "COD10K[size=big]",
        "COD10K[size=small]",
    ]
    images = {ds: {r["images"] for r in ms.values()} for ds, ms in doc["datasets"].items()}
    assert images["COD10K[occlusion]"] == {4}  # 0, 3, 6, 9
    assert images["COD10K[size=small]"] == {6} and images["COD10K[size=big]"] == {5}
    small = tmp_path / "small.txt"
    small.write_text("\n".join(_cod10k_name(i) for i in range(6)))
    alone = _eval(root, tmp_path / "alone", "--images", str(small))
    _close(_values(doc, "COD10K[size=small]"), _values(alone, "COD10K"))


def test_statistics_and_tables_take_the_subsets_as_datasets(root: Path, tmp_path: Path) -> None:
    _eval(root, tmp_path / "out", "--subsets", "cod10k", "--ci", "--resamples", "100")
    stats = json.loads((tmp_path / "out" / "statistics.json").read_text())["datasets"]
    assert set(stats) == {"COD10K", "COD10K[Aquatic]", "COD10K[Flying]", "COD10K[Terrestrial]"}
    assert stats["COD10K[Flying]"]["setup"]["images"] == 5
    table = tmp_path / "t.md"
    code = main(["table", str(tmp_path / "out"), "--format", "markdown", "--out", str(table),
                 "--datasets", "COD10K[Aquatic]", "COD10K[Flying]"])  # fmt: skip
    assert code == 0
    text = table.read_text()
    assert "COD10K[Aquatic]" in text and "COD10K[Terrestrial]" not in text


def test_an_image_list_is_read_with_comments_extensions_and_dataset_prefixes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "list.txt"
    path.write_text("# test split\nimg1.png\n\nDS2/img2  # only in DS2\nC:\\\\data\\\\img3.jpg\n")
    images = read_image_list(path, ["DS1", "DS2"])
    assert images.wanted("DS1") == {"img1", "img3"}
    assert images.wanted("DS2") == {"img1", "img2", "img3"}
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    with pytest.raises(SubsetError, match="names no image"):
        read_image_list(empty)
    # a case list a spreadsheet saved with ";" (a trial read its lines as names)
    semicolons = tmp_path / "cases.csv"
    semicolons.write_text("dataset;sample;tags;note\nDS1;img4;GT error;\nDS2;img5;;seen\n")
    cases = read_image_list(semicolons, ["DS1", "DS2"])
    assert cases.order == (("DS1", "img4"), ("DS2", "img5"))
    assert dict(cases.tags) == {"GT error": 1, "": 1}


def test_the_window_s_json_case_list_reads_as_its_csv(tmp_path: Path) -> None:
    """A trial: eval --images took nothing from the window's JSON export, --exclude-images
    left nothing out (reading its lines as names) and exited 0."""
    from fminspect.pipeline.tags import TagStore

    with TagStore(tmp_path / "tags.sqlite") as store:
        store.toggle("DS1", "img4", 1)
        store.set_note("DS2", "img5", 'a "quoted"\nnote')
        store.toggle("DS1", "img2", 2)
        order = [("DS2", "img5"), ("DS1", "img4"), ("DS1", "img2")]
        store.export(tmp_path / "cases.csv", order=order)
        store.export(tmp_path / "cases.json", order=order)
    from_csv = read_image_list(tmp_path / "cases.csv", ["DS1", "DS2"])
    from_json = read_image_list(tmp_path / "cases.json", ["DS1", "DS2"])
    assert from_json == dataclasses.replace(from_csv, source=str(tmp_path / "cases.json"))
    assert from_json.order == tuple(order)
    names = tmp_path / "names.json"
    names.write_text('["img1.png", "img3"]')
    assert read_image_list(names).wanted("DS1") == {"img1", "img3"}
    for text, said in [
        ('{"cases": [{"dataset": "DS1"}]}', "case 1 has no sample name"),
        ('{"cases": ', "not a JSON case list"),
        ('{"tag_names": {}}', 'holds a list "cases"'),
    ]:
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        with pytest.raises(SubsetError, match=said) as caught:
            read_image_list(bad)
        assert str(bad) in str(caught.value)


def test_an_image_list_that_misses_a_dataset_names_the_file_and_dataset(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "list.txt"
    path.write_text("nothing-like-it\n")
    datasets, _ = discover(root)
    with pytest.raises(SubsetError) as err:
        apply_image_list(datasets, read_image_list(path))
    assert str(err.value).startswith(f"{path}: names none of the 12 images of COD10K")
    code = main(["eval", str(root), "--out", str(tmp_path / "o"), "--images", str(path)])
    text = capsys.readouterr().err
    assert code == 2 and "Traceback" not in text
    assert text.strip().endswith(f"{path}: names none of the 12 images of COD10K (e.g. "
                                 f"{_cod10k_name(0)})")  # fmt: skip
    some = tmp_path / "some.txt"
    some.write_text(f"{_cod10k_name(0)}\nghost-1\nghost-2\n")
    _eval(root, tmp_path / "some", "--images", str(some))
    text = capsys.readouterr().err
    assert f"COD10K: 1 of 12 images (image list {some})" in text
    assert f"2 names of {some} are in no dataset: ghost-1, ghost-2" in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("image\n", "expected a header (image, attribute, …)"),
        ("image,a,a\nx,1,0\n", "every attribute column needs a name of its own"),
        ("image,a\nx,1,2\n", "line 2: 3 cells, the header has 2"),
    ],
)
def test_a_wrong_attribute_table_is_one_clear_message(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "attrs.csv"
    path.write_text(text)
    with pytest.raises(SubsetError, match=re.escape(message)) as err:
        subsets_rule(str(path))
    assert str(path) in str(err.value)
    with pytest.raises(SubsetError, match="not cod10k or cod10k-sub, and no such CSV file"):
        subsets_rule("cod10")


def test_tables_refuse_to_merge_folders_that_treat_empty_gts_differently(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _eval(root, tmp_path / "kept", "--methods", "SINet")
    _eval(root, tmp_path / "left", "--methods", "ZoomNet", "--exclude-empty-gt")
    capsys.readouterr()
    code = main(["table", str(tmp_path / "kept"), str(tmp_path / "left")])
    err = capsys.readouterr().err
    assert code == 2 and "with another exclude_empty_gt" in err
    assert main(["table", str(tmp_path / "left"), "--format", "markdown"]) == 0
    assert "Images whose GT is empty are left out." in capsys.readouterr().out


def test_a_dataset_prefixed_name_stays_with_its_dataset_even_when_not_evaluated(
    tmp_path: Path,
) -> None:
    path = tmp_path / "list.txt"
    path.write_text("COD10K/only-there\nboth\n")
    images = read_image_list(path, ["DS1"])  # COD10K is not among those evaluated
    assert images.wanted("DS1") == {"both"}
    assert images.wanted("COD10K") == {"both", "only-there"}


def test_subsets_that_match_nothing_or_repeat_an_image_are_refused(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    datasets, _ = discover(root)
    table = tmp_path / "a.csv"
    table.write_text("image,occlusion\nnot-here,1\nalso-not,0\n")
    with pytest.raises(SubsetError, match="no image it names is in the datasets"):
        subsets_rule(str(table)).check(datasets)
    table.write_text(f"image,occlusion\n{_cod10k_name(0)},1\nghost,1\n")
    assert subsets_rule(str(table)).check(datasets) == [
        f"1 images of {table} are in no dataset: ghost"
    ]
    table.write_text(f"image,occlusion\n{_cod10k_name(0)},1\n{_cod10k_name(0)},0\n")
    with pytest.raises(SubsetError, match="is on lines 2 and 3: give it once"):
        subsets_rule(str(table))
    plain = tmp_path / "plain"
    make_dataset(plain, n_images=3, methods=("M",))
    plain_sets, _ = discover(plain)
    with pytest.raises(SubsetError, match="no image name is a COD10K name"):
        subsets_rule("cod10k").check(plain_sets)


def test_tables_refuse_folders_of_different_image_lists_and_captions_name_the_list(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    few = tmp_path / "few.txt"
    few.write_text("\n".join(_cod10k_name(i) for i in range(3)))
    _eval(root, tmp_path / "few", "--methods", "SINet", "--images", str(few))
    _eval(root, tmp_path / "all", "--methods", "ZoomNet")
    capsys.readouterr()
    assert main(["table", str(tmp_path / "few"), str(tmp_path / "all")]) == 2
    assert "with another image_list" in capsys.readouterr().err
    assert (
        "Only the images of few.txt (3 of 12 in COD10K)."
        in (tmp_path / "few" / "summary.md").read_text()
    )


# ------------------------------------------------------------------------------ groups
VIDEO = ["bear_001", "bear_002", "bear_003", "bear_004", "cat-01", "cat-02", "dog 1", "dog 2",
         "dog 3"]  # fmt: skip


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """9 frames of three sequences (4, 2 and 3 frames), two methods."""
    root = tmp_path_factory.mktemp("video") / "VID"
    make_dataset(root, n_images=9, methods=("A", "B"), seed=8)
    for folder in [root / "GT", root / "Imgs", *(root / "Pred").iterdir()]:
        for path in folder.iterdir():
            path.rename(path.with_name(VIDEO[int(path.stem[3:]) - 1] + path.suffix))
    return root


def _curves(folder: Path, method: str, curve: str) -> np.ndarray:
    import csv

    with open(folder / "curves.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if (r["method"], r["curve"]) == (method, curve)]
    return np.array([float(r["value"]) for r in sorted(rows, key=lambda r: int(r["threshold"]))])


def test_grouped_values_are_the_mean_over_groups_of_each_groups_values(
    video: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PySODEvalToolkit's GroupedMetricRecorder: each group's values, their plain mean; the
    max of a curve taken on the mean of the groups' mean curves — checked against three
    evaluations of one group each."""
    keys = ["MAE", "Sm", "adpFm", "maxFm", "meanEm", "maxEm"]
    args = ["--measures", *keys, "--no-plots", "--quiet"]
    assert (
        main(["eval", str(video), "--out", str(tmp_path / "g"), "--groups", "prefix", *args]) == 0
    )
    err = capsys.readouterr().err
    assert "VID: 9 images in 3 groups" in err
    grouped = json.loads((tmp_path / "g" / "results.json").read_text())
    assert grouped["groups"] == {"VID": 3}
    assert grouped["selection"]["groups"] == {"rule": "prefix", "source": "prefix"}
    per_group = []
    for g, names in (("bear", VIDEO[:4]), ("cat", VIDEO[4:6]), ("dog", VIDEO[6:])):
        lst = tmp_path / f"{g}.txt"
        lst.write_text("\n".join(names))
        out = tmp_path / g
        assert main(["eval", str(video), "--out", str(out), "--images", str(lst), *args]) == 0
        per_group.append(out)
    for m in ("A", "B"):
        values = grouped["datasets"]["VID"][m]["values"]
        groups = [json.loads((o / "results.json").read_text())["datasets"]["VID"][m]["values"]
                  for o in per_group]  # fmt: skip
        for k in ("MAE", "Sm", "adpFm"):
            assert values[k] == pytest.approx(np.mean([v[k] for v in groups]), abs=1e-12), k
        for k, curve in (("maxFm", "Fm"), ("maxEm", "Em"), ("meanEm", "Em")):
            mean_curve = np.mean([_curves(o, m, curve) for o in per_group], axis=0)
            want = mean_curve.max() if k.startswith("max") else mean_curve.mean()
            assert values[k] == pytest.approx(want, abs=1e-12), k
            # not the plain mean over the 9 images (bear's 4 frames would weigh more)
        np.testing.assert_allclose(
            _curves(tmp_path / "g", m, "Fm"),
            np.mean([_curves(o, m, "Fm") for o in per_group], axis=0),
            rtol=0,
            atol=1e-12,
        )
    plain = json.loads((per_group[0] / "results.json").read_text())  # a sanity check
    assert plain["selection"].get("groups") is None
    assert (
        "Grouped: every value is the mean over the groups"
        in (tmp_path / "g" / "summary.md").read_text()
    )


def test_group_tables_and_wrong_group_options_are_one_clear_message(
    video: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fminspect.batch.subsets import groups_rule

    table = tmp_path / "g.csv"
    table.write_text("image,group\n" + "\n".join(f"{n},{n[:3]}" for n in VIDEO[:-1]) + "\n")
    datasets, _ = discover(video)
    with pytest.raises(SubsetError, match="1 images of VID have no group: dog 3"):
        groups_rule(str(table)).check(datasets)
    table.write_text("\n".join(f"{n},seq" for n in VIDEO))
    with pytest.raises(SubsetError, match="every image of VID is in one group"):
        groups_rule(str(table)).check(datasets)


def test_grouped_statistics_resample_whole_groups_and_count_groups(
    video: Path, tmp_path: Path
) -> None:
    out = tmp_path / "g"
    args = ["--measures", "MAE", "Sm", "maxFm", "--no-plots", "--quiet"]
    assert main(["eval", str(video), "--out", str(out), "--groups", "prefix", "--ci", *args]) == 0
    stats = json.loads((out / "statistics.json").read_text())["datasets"]["VID"]
    setup = stats["setup"]
    assert (setup["unit"], setup["units"], setup["images"]) == ("groups", 3, 9)
    assert "whole groups resampled" in setup["interval"]
    assert not setup["reliable"]  # 3 groups: intervals flagged, no test
    assert all(math.isnan(p["p"]) for p in stats["keys"]["Sm"]["pairs"])
    values = json.loads((out / "results.json").read_text())["datasets"]["VID"]
    for m in ("A", "B"):  # each interval is about the grouped value
        lo, hi = stats["keys"]["Sm"]["intervals"][m]
        assert lo <= values[m]["values"]["Sm"] <= hi
    from fminspect.batch.table_formats import markdown
    from fminspect.batch.tables import TableSpec, build, load

    caption = markdown(build(load([out]), TableSpec(ci=True, groups=True)))
    assert "n = 3 groups" in caption and "Too few groups in VID" in caption


@pytest.mark.slow
def test_the_group_bootstrap_covers_where_the_image_bootstrap_does_not() -> None:
    """Frames of one sequence are alike: the grouped value (the mean of the groups' means)
    varies with the draw of groups. Simulated: 40 groups of 2–8 frames, group effects
    N(0, 1), frame noise N(0, 0.2²); the true value is 0. The 95 % percentile interval from
    resampling whole groups covers it as the percentile bootstrap of a mean of 40 values
    does — about 93.5 % (its intervals are narrow by the factor √((n − 1)/n) and the
    t-quantile; Efron & Tibshirani 1993 §13.3) — checked within three binomial standard
    errors (n = 1000 simulations, B = 400); resampling frames as if independent covers it
    far less often."""
    from fminspect.batch.significance import percentile_interval, resampling_weights
    from fminspect.metrics.dataset import DatasetAccumulator

    rng = np.random.default_rng(3)
    hits = {"groups": 0, "images": 0}
    sims, b = 1000, 400
    for sim in range(sims):
        sizes = rng.integers(2, 9, size=40)
        effects = rng.normal(0, 1, size=40)
        labels = [f"g{g}" for g, k in enumerate(sizes) for _ in range(k)]
        scores = np.repeat(effects, sizes) + rng.normal(0, 0.2, size=len(labels))
        acc = DatasetAccumulator(keep_rows=True)
        for i, v in enumerate(scores):
            acc.add(f"f{i}", {"MAE": float(v)}, {})
        names = list(dict.fromkeys(labels))
        ones = acc.grouped_replicates(labels, names, np.ones((1, 40)), ["MAE"])["MAE"][0]
        assert ones == pytest.approx(acc.grouped_results(labels)["MAE"], abs=1e-12)
        by_group = acc.grouped_replicates(labels, names, resampling_weights(40, b, sim), ["MAE"])[
            "MAE"
        ]
        lo, hi = percentile_interval(by_group, 0.95)
        hits["groups"] += lo <= 0 <= hi
        from fminspect.metrics.dataset import group_weights

        w = resampling_weights(len(labels), b, sim) * group_weights(labels)[None, :]
        lo, hi = percentile_interval(acc.replicates(w, ["MAE"])["MAE"], 0.95)
        hits["images"] += lo <= 0 <= hi
    assert abs(hits["groups"] / sims - 0.935) <= 3 * math.sqrt(0.935 * 0.065 / sims)
    assert hits["images"] / sims < 0.8  # (0.66 here): intervals far too narrow


def _into_groups(flat: Path, root: Path, nested: str = "") -> Path:
    """The flat ``video`` dataset laid out as co-SOD sets are: one sub-folder per group in GT,
    Imgs and every method's folder (``nested``: eval-co-sod's gt/<dataset>/<group>/)."""
    for folder in [flat / "GT", flat / "Imgs", *(flat / "Pred").iterdir()]:
        rel = folder.relative_to(flat)
        for path in folder.iterdir():
            group = GROUP_PREFIX.fullmatch(path.stem)["group"]  # type: ignore[index]
            if nested:
                top, *rest = rel.parts
                target = root / top / Path(*rest) / nested / group / path.name
            else:
                target = root / rel / group / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    return root


@pytest.mark.parametrize("nested", ["", "VID"])
def test_groups_from_sub_folders_as_co_sod_sets_lay_them_out(
    video: Path, tmp_path: Path, nested: str
) -> None:
    """GT/<group>/x.png with Pred/<method>/<group>/x.png (CoCA, CoSal2015), or eval-co-sod's
    gt/<dataset>/<group>/: discovered as one dataset whose samples are <group>/<name>, and
    `--groups folders` gives exactly the values `--groups prefix` gives on the flat copy."""
    root = _into_groups(video, tmp_path / "coSOD", nested)
    (ds,), _ = discover(root, grouped=True)
    assert ds.name == (nested or "coSOD") and len(ds.samples) == 9
    assert [s.name for s in ds.samples][:2] == ["bear/bear_001", "bear/bear_002"]
    assert set(ds.method_names) == {"A", "B"} and all(len(s.preds) == 2 for s in ds.samples)
    args = ["--measures", "MAE", "Sm", "maxFm", "--no-plots", "--quiet"]
    out = tmp_path / "folders"
    assert main(["eval", str(root), "--out", str(out), "--groups", "folders", *args]) == 0
    assert (
        main(["eval", str(video), "--out", str(tmp_path / "p"), "--groups", "prefix", *args]) == 0
    )
    by_folders = json.loads((out / "summary.json").read_text())[ds.name]
    by_prefix = json.loads((tmp_path / "p" / "summary.json").read_text())["VID"]
    assert by_folders == by_prefix
    assert json.loads((out / "results.json").read_text())["groups"] == {ds.name: 3}
    # without the flag the group folders are not taken for a dataset's maps
    found, _ = discover(root)
    assert not any(len(d.samples) == 9 for d in found)


def test_groups_folders_on_a_flat_dataset_is_one_clear_message(
    video: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["eval", str(video), "--out", str(tmp_path / "o"), "--groups", "folders"])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert "no dataset found" in err or "group's sub-folder" in err


def test_grouped_replicates_of_pooled_keys_weigh_each_groups_own_value() -> None:
    """A key formed from pooled counts takes each group's own pooled value; under a resample
    that draws group g c_g times, the value is Σ c_g·v_g / Σ c_g — checked by hand against
    each group evaluated alone, for random counts, beside a mean key and a curve's max."""
    from fminspect.metrics import compute_suite
    from fminspect.metrics.dataset import DatasetAccumulator

    rng = np.random.default_rng(2)
    keys = ["pooledIoU", "MAE", "maxFm"]
    labels = ["a", "a", "a", "b", "b", "c", "c", "c", "c"]
    suites = []
    for _ in labels:
        gt = np.zeros((24, 30), np.uint8)
        y, x = rng.integers(2, 12), rng.integers(2, 16)
        gt[y : y + 9, x : x + 11] = 255
        pred = np.clip(gt * 0.7 + rng.normal(60, 40, gt.shape), 0, 255).astype(np.uint8)
        suites.append(compute_suite(pred, gt, keys=keys))
    acc = DatasetAccumulator(keep_rows=True)
    per_group: dict[str, DatasetAccumulator] = {}
    for i, (g, s) in enumerate(zip(labels, suites, strict=True)):
        acc.add(f"i{i}", s.scores(), s.curves())
        per_group.setdefault(g, DatasetAccumulator(keep_rows=True)).add(
            f"i{i}", s.scores(), s.curves()
        )
    names = ["a", "b", "c"]
    counts = rng.integers(0, 4, size=(6, 3)).astype(float)
    counts[counts.sum(axis=1) == 0, 0] = 1  # every resample draws some group
    got = acc.grouped_replicates(labels, names, counts, keys)
    alone = {g: per_group[g].results() for g in names}
    for b, c in enumerate(counts):
        for k in ("pooledIoU", "MAE"):
            want = sum(c[j] * alone[g][k] for j, g in enumerate(names)) / c.sum()
            assert got[k][b] == pytest.approx(want, abs=1e-12), (k, b)
        curves = [per_group[g].mean_curves()["Fm"] for g in names]
        want_curve = sum(c[j] * curves[j] for j in range(3)) / c.sum()
        assert got["maxFm"][b] == pytest.approx(want_curve.max(), abs=1e-12), b


# ---------------------------------------------------------------- counted by image, not bytes
def test_identical_files_under_other_names_are_counted_once_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Four images whose GT is empty and whose maps are the same bytes (one content key):
    four empty GTs, four left out, n = what is left — never one per content."""
    root = make_dataset(tmp_path / "DS", n_images=9, methods=("A", "B"))
    twins = ["img2", "img4", "img5", "img8"]
    blank = np.zeros((48, 64), np.uint8)
    for name in twins:
        write_png(root / "GT" / f"{name}.png", blank)
        for method in ("A", "B"):
            write_png(root / "Pred" / method / f"{name}.png", blank + 7)
    assert len({(root / "GT" / f"{n}.png").read_bytes() for n in twins}) == 1
    common = ["eval", str(root), "--measures", "MAE", "Sm", "--ci", "--resamples", "200"]
    assert main([*common, "--out", str(tmp_path / "kept")]) in (0, 1)
    assert main([*common, "--out", str(tmp_path / "left"), "--exclude-empty-gt"]) in (0, 1)
    err = capsys.readouterr().err
    assert "DS: 4 images with an empty GT, kept in the values" in err
    assert "DS: 4 images with an empty GT left out." in err
    kept = json.loads((tmp_path / "kept" / "results.json").read_text())
    left = json.loads((tmp_path / "left" / "results.json").read_text())
    assert kept["empty_gt"]["DS"] == {"images": 4, "names": twins}
    assert left["empty_gt"]["DS"]["images"] == 4
    for method in ("A", "B"):
        assert kept["datasets"]["DS"][method]["images"] == 9
        assert left["datasets"]["DS"][method]["images"] == 5
    stats = json.loads((tmp_path / "left" / "statistics.json").read_text())["datasets"]["DS"]
    assert stats["setup"]["images"] == 5
    rows = (tmp_path / "kept" / "per_image.csv").read_text().splitlines()[1:]
    assert len(rows) == 2 * 9 and sum(f",{n}," in r for r in rows for n in twins) == 2 * 4
    assert "4 images with an empty GT" in (tmp_path / "kept" / "summary.md").read_text()
