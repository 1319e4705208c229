"""Alias files: PySODEvalToolkit's layouts, plain mappings, and clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fminspect.io.aliases import AliasError, read_aliases


def test_pysodevaltoolkit_alias_yaml_flow_style(tmp_path: Path) -> None:
    # the layout of PySODEvalToolkit's alias files: a dataset and a method section, written
    # in YAML flow style (single quotes, trailing commas)
    path = tmp_path / "aliases.yaml"
    path.write_text(
        'dataset: {\n  "NJUD": "NJUD",\n}\n\n'
        "method: {\n  '2020-ECCV-HDFNetR50': 'HDFNet$_{20}$',\n"
        "  '2022-AAAI-SSLSOD': 'SSLSOD',\n}\n",
        encoding="utf-8",
    )
    assert read_aliases(path) == {
        "2020-ECCV-HDFNetR50": "HDFNet$_{20}$",
        "2022-AAAI-SSLSOD": "SSLSOD",
    }


def test_plain_json_mapping_and_method_config(tmp_path: Path) -> None:
    plain = tmp_path / "a.json"
    plain.write_text(json.dumps({"SINet-V2": "SINet", "ZoomNet": " Zoom "}), encoding="utf-8")
    assert read_aliases(plain) == {"SINet-V2": "SINet", "ZoomNet": "Zoom"}
    # an eval.py method config names methods but gives no short name: each is its own alias
    config = tmp_path / "methods.json"
    config.write_text(
        json.dumps({"Method1": {"ECSSD": {"path": "p", "suffix": ".png"}}}), encoding="utf-8"
    )
    assert read_aliases(config) == {"Method1": "Method1"}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("dup.json", {"A": "X", "B": "X"}, "'A' and 'B' have the same alias 'X'"),
        ("list.json", {"A": [3]}, "entry 'A': the alias must be text"),
        ("empty.json", {"A": "  "}, "entry 'A': empty alias"),
        ("top.json", ["A"], "expected a mapping"),
    ],
)
@pytest.mark.faults
def test_bad_entries_are_refused_naming_file_and_entry(
    tmp_path: Path, name: str, content: object, message: str
) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(AliasError) as info:
        read_aliases(path)
    assert str(path) in str(info.value) and message in str(info.value)


@pytest.mark.faults
def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(AliasError, match="file not found"):
        read_aliases(tmp_path / "none.json")
    bad = tmp_path / "bad.yaml"
    bad.write_text("method: {a: [\n", encoding="utf-8")
    with pytest.raises(AliasError, match="not valid YAML"):
        read_aliases(bad)
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(AliasError, match="not UTF-8"):
        read_aliases(binary)


def test_numeric_names_bom_and_deep_nesting(tmp_path: Path) -> None:
    numeric = tmp_path / "n.yaml"
    numeric.write_text("method: {2020: HDF, SINet: 2022}\n", encoding="utf-8")
    assert read_aliases(numeric) == {"2020": "HDF", "SINet": "2022"}  # YAML's numbers are text
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps({"A": "a"}).encode())
    assert read_aliases(bom) == {"A": "a"}
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000, encoding="utf-8")
    with pytest.raises(AliasError, match=r"nested too deeply|not valid JSON"):
        read_aliases(deep)
