"""Dataset discovery: layouts, name matching, coverage, toolkit configs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fminspect.io.discovery import (
    ToolkitConfigs,
    discover,
    from_toolkit_configs,
    natural_key,
    read_source,
    sample_name,
)
from tests.datasets import make_dataset, write_png


def test_natural_order() -> None:
    names = ["img10", "img2", "IMG1", "img1b"]
    assert sorted(names, key=natural_key) == ["IMG1", "img1b", "img2", "img10"]


def test_a_sample_may_be_named_by_its_file() -> None:
    assert sample_name("COD10K-CAM-1-Aquatic-3-Crab-10.png") == "COD10K-CAM-1-Aquatic-3-Crab-10"
    assert sample_name(" img1.JPG ") == "img1"
    assert sample_name("group/img1.png") == "group/img1"  # a dataset of groups
    assert sample_name("img.001") == "img.001"  # a dot that is not an image's extension
    assert sample_name("img1") == "img1"


def test_flat_layout(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ECSSD", n_images=12, methods=("B", "A"))
    datasets, problems = discover(tmp_path / "ECSSD")
    assert [d.name for d in datasets] == ["ECSSD"] and not problems
    ds = datasets[0]
    assert ds.layout == "flat" and ds.method_names == ["A", "B"]
    assert [s.name for s in ds.samples][:3] == ["img1", "img2", "img3"]  # natural order
    assert ds.samples[-1].name == "img12"
    assert all(s.image is not None and set(s.preds) == {"A", "B"} for s in ds.samples)


def test_nested_and_multi_dataset_layouts(tmp_path: Path) -> None:
    for name in ("CAMO", "COD10K"):
        make_dataset(tmp_path / "nested", dataset=name, layout="nested", methods=("M1", "M2"))
        make_dataset(tmp_path / "multi", dataset=name, layout="multi", methods=("M1",))
    nested, _ = discover(tmp_path / "nested")
    assert [d.name for d in nested] == ["CAMO", "COD10K"]
    assert all(d.layout == "nested" and d.method_names == ["M1", "M2"] for d in nested)
    assert all(len(d.samples) == 6 and d.samples[0].image for d in nested)
    multi, _ = discover(tmp_path / "multi")
    assert [d.name for d in multi] == ["CAMO", "COD10K"] and multi[0].method_names == ["M1"]


@pytest.mark.faults
def test_coverage_reports_missing_and_extra(tmp_path: Path) -> None:
    root = make_dataset(
        tmp_path / "D", n_images=5, methods=("Full", "Partial"), missing={"Partial": 2}
    )
    write_png(root / "Pred" / "Full" / "stray.png", np.zeros((4, 4), np.uint8))
    (ds,), problems = discover(root)
    full, partial = ds.coverage["Full"], ds.coverage["Partial"]
    assert full.complete and full.extra == ["stray"] and full.label == "5/5"
    assert partial.missing == ["img4", "img5"] and partial.label == "3/5 ⚠"
    assert any("2 of 5 GT images have no prediction" in p.message for p in problems)
    assert any("no GT" in p.message for p in problems)


def test_an_empty_method_folder_is_a_warning_not_silence(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "D", n_images=2, methods=("A",))
    (root / "Pred" / "Empty").mkdir()
    (ds,), problems = discover(root)
    assert ds.method_names == ["A"]
    (p,) = [p for p in problems if p.method == "Empty"]
    assert p.severity == "warning" and p.path == root / "Pred" / "Empty"
    assert "no maps" in p.message and "not evaluated" in p.message
    # the nested layout too: Pred/<method>/<dataset>/ without maps
    make_dataset(tmp_path / "nested", dataset="CAMO", layout="nested", methods=("M1",))
    (tmp_path / "nested" / "Pred" / "M2" / "CAMO").mkdir(parents=True)
    (ds,), problems = discover(tmp_path / "nested")
    assert ds.method_names == ["M1"]
    assert [(p.method, p.severity) for p in problems if "no maps" in p.message] == [
        ("M2", "warning")
    ]
    # maps one level too deep: the warning names the subfolder that holds them
    deep = root / "Pred" / "Deep" / "D"
    for f in (root / "Pred" / "A").iterdir():
        write_png(deep / f.name, np.zeros((4, 4), np.uint8))
    _, problems = discover(root)
    (p,) = [p for p in problems if p.method == "Deep"]
    assert "its subfolder D holds maps" in p.message


def test_case_insensitive_extensions_and_duplicates(tmp_path: Path) -> None:
    root = tmp_path / "D"
    write_png(root / "GT" / "a.png", np.zeros((4, 4), np.uint8))
    write_png(root / "Pred" / "M" / "a.PNG", np.zeros((4, 4), np.uint8))
    write_png(root / "Pred" / "M" / "a.jpg", np.zeros((4, 4), np.uint8))
    (ds,), problems = discover(root)
    assert ds.samples[0].preds["M"].name == "a.PNG"
    assert any("a.PNG is used" in p.message for p in problems)


def test_nothing_found_is_a_clear_problem(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    datasets, problems = discover(tmp_path / "empty")
    assert not datasets and "no dataset found" in problems[0].message
    assert discover(tmp_path / "missing")[1][0].message == "not a folder"


def test_pysodevaltoolkit_configs_with_prefix_and_suffix(tmp_path: Path) -> None:
    for i in range(3):
        write_png(
            tmp_path / "data" / "masks" / f"{i}.png", np.full((4, 4), 255 * (i % 2), np.uint8)
        )
        write_png(tmp_path / "data" / "imgs" / f"{i}.jpg", np.zeros((4, 4, 3), np.uint8))
        write_png(tmp_path / "res" / "Net" / f"pre_{i}_sal.png", np.zeros((4, 4), np.uint8))
    dcfg = {
        "DUTS": {
            "image": {"path": "data/imgs", "suffix": ".jpg"},
            "mask": {"path": "data/masks", "suffix": ".png"},
        }
    }
    mcfg = {"Net": {"DUTS": {"path": "res/Net", "prefix": "pre_", "suffix": "_sal.png"}}}
    (tmp_path / "d.json").write_text(json.dumps(dcfg))
    (tmp_path / "m.json").write_text(json.dumps(mcfg))
    (ds,), problems = from_toolkit_configs(tmp_path / "d.json", tmp_path / "m.json")
    assert not problems
    assert ds.name == "DUTS" and ds.coverage["Net"].label == "3/3"
    assert ds.samples[1].preds["Net"].name == "pre_1_sal.png"


def test_a_folder_with_gts_and_no_model_says_so_and_configs_are_a_source(tmp_path: Path) -> None:
    # PySODEvalToolkit's layout: masks and images, the maps elsewhere (named by the configs)
    for i in range(2):
        write_png(tmp_path / "data" / "GT" / f"{i}.png", np.full((4, 4), 255, np.uint8))
        write_png(tmp_path / "res" / "Net" / f"{i}.png", np.zeros((4, 4), np.uint8))
    datasets, problems = read_source(tmp_path / "data")
    assert datasets and not any(ds.methods for ds in datasets)
    assert "no model's maps" in problems[-1].message
    assert "--dataset-config" in problems[-1].message
    (tmp_path / "d.json").write_text(json.dumps({"X": {"mask": {"path": "data/GT"}}}))
    (tmp_path / "m.json").write_text(json.dumps({"Net": {"X": {"path": "res/Net"}}}))
    source = ToolkitConfigs(tmp_path / "d.json", tmp_path / "m.json")
    (ds,), problems = read_source(source)
    assert not problems and ds.method_names == ["Net"] and len(ds.samples) == 2
    assert str(source) == f"{tmp_path / 'd.json'} + {tmp_path / 'm.json'}"
    (tmp_path / "m.json").write_text(json.dumps({"Net": {"Y": {"path": "res/Net"}}}))
    (ds,), problems = read_source(source)
    assert not ds.methods and "check the method config" in problems[-1].message
