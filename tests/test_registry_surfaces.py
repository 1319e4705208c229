"""One registry entry reaches every surface: a measure family registered here, in one call,
is computed and written by ``eval`` (summary, per-image rows, results.json), listed by
``fminspect measures``, run through ``meta`` and compared with human rankings by ``rank``
— none of them is told about it. Worker processes (``--jobs 2``) find it through
``FMINSPECT_MEASURE_MODULES``, as they would a plug-in's entry point. (The window's
surfaces: tests/gui/test_registry_surfaces.py.)
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from fminspect import api
from fminspect.cli import main
from tests.datasets import make_dataset, write_png


def _mean_grey(path: Path) -> float:
    from fminspect.io.loading import load_image

    return float(load_image(path).astype(np.float64).mean() / 255)


@pytest.mark.slow
def test_a_measure_that_needs_the_image_is_given_it_and_keyed_by_it(  # type: ignore[no-untyped-def]
    toy_image, tmp_path: Path
) -> None:
    """``Family.needs_image`` alone makes eval read the image, key the stored result by the
    image's content and say which measures an image-less sample lacks."""
    assert toy_image.measures[0].needs_image  # given by the family
    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A",))
    images = sorted((root / "Imgs").iterdir())
    cache = tmp_path / "cache.sqlite"

    def evaluated(out: str) -> float:
        api.evaluate_dataset(
            root, out=tmp_path / out, measures=["ToyImg"], plots=False, jobs=2, cache=cache
        )
        return float(json.loads((tmp_path / out / "summary.json").read_text())["DS"]["A"]["ToyImg"])

    first = evaluated("first")
    assert first == pytest.approx(np.mean([_mean_grey(p) for p in images]), abs=1e-12)
    write_png(images[0], np.full((48, 64, 3), 255, np.uint8))  # another image, same GT and map
    again = evaluated("again")  # not the stored value of the old image: keyed by its content
    assert again != first
    assert again == pytest.approx(np.mean([_mean_grey(p) for p in images]), abs=1e-12)
    images[1].unlink()  # a sample without its image: the note names the measures it lacks
    api.evaluate_dataset(root, out=tmp_path / "third", measures=["ToyImg"], plots=False)
    problems = (tmp_path / "third" / "problems.csv").read_text()
    assert "no image for this GT, so CCm, ToyImg cannot be computed" in problems


def test_meta_gives_the_image_to_a_measure_that_needs_it(toy_image, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"))
    report = api.run_meta(root, measures=["ToyImg", "MAE"], metas=["generic"], plots=False)
    assert "ToyImg" in {row.measure for row in report.summary}


@pytest.mark.slow
def test_eval_computes_and_writes_a_registered_measure(toy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=3, methods=("A", "B"))
    out = tmp_path / "out"
    report = api.evaluate_dataset(root, out=out, measures=["MAE", "Toy"], plots=False, jobs=2)
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["DS"]["A"]) == {"MAE", "Toy"}
    assert 0 <= summary["DS"]["A"]["Toy"] <= 1
    with (out / "per_image.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6 and all(r["Toy thr=0.5"] for r in rows)  # headed by its variant
    results = json.loads((out / "results.json").read_text())
    assert "toy" in json.dumps(results)
    assert report.evaluated == 6


def test_the_measures_command_lists_it(toy, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["measures"]) == 0
    assert any(line.startswith("Toy ") for line in capsys.readouterr().out.splitlines())
    assert main(["measures", "--format", "markdown"]) == 0
    assert "| toy measure (`toy`) | Toy |" in capsys.readouterr().out


def test_meta_and_rank_use_it(toy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_dataset(tmp_path / "DS", n_images=4, methods=("A", "B"))
    report = api.run_meta(root, measures=["Toy", "MAE"], metas=["generic"], plots=False)
    assert "Toy" in {row.measure for row in report.summary}
    gt = np.zeros((40, 40), np.uint8)
    gt[10:30, 10:30] = 255
    for g in ("g1", "g2"):
        write_png(tmp_path / "ranked" / g / "gt.png", gt)
        write_png(tmp_path / "ranked" / g / "1.png", gt)
        write_png(tmp_path / "ranked" / g / "2.png", np.roll(gt, 6, axis=1))
        write_png(tmp_path / "ranked" / g / "3.png", np.full_like(gt, 255))
    agreement = api.human_agreement(ranked=tmp_path / "ranked", measures=["Toy"])
    assert agreement.row("Toy").groups == 2


def test_the_command_line_sets_any_registered_parameter(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from tests.datasets import write_png

    gt = np.zeros((40, 50), np.uint8)
    gt[10:30, 10:35] = 255
    pred = np.roll(gt, 3, axis=1)
    write_png(tmp_path / "gt.png", gt)
    write_png(tmp_path / "pred.png", pred)
    args = ["score", str(tmp_path / "pred.png"), str(tmp_path / "gt.png"), "--json"]
    assert main([*args, "--measures", "AP", "--param", "ap_interpolation=11pt"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["scores"]) == ["AP"] and out["labels"]["AP"] == "AP interp=11pt"
    assert out["params"]["ap_interpolation"] == "11pt"
    assert main([*args, "--param", "nothing=1"]) == 2
    assert "NAME one of" in capsys.readouterr().err
    assert main([*args, "--param", "biou_ratio=2"]) == 2  # outside its range
    assert "biou_ratio" in capsys.readouterr().err
