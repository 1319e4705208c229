"""The scatter view's points and selection, and what filters know beyond the scores (the
objects' shares, the selection, the problems), on the inspector model without Qt."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fminspect.batch import stream
from fminspect.batch.filters import parse
from fminspect.batch.scores import ScoreMatrix
from fminspect.batch.shares import gt_shares
from fminspect.batch.subsets import subsets_rule
from fminspect.cli import main
from fminspect.inspector.model import InspectorModel
from fminspect.inspector.scatter import JITTER, inside, nearest, scatter_data
from fminspect.io.discovery import discover
from fminspect.io.loading import load_map
from tests.datasets import write_png
from tests.inspector.conftest import scored

NAMES = [
    "COD10K-CAM-1-Aquatic-3-Crab-1",
    "COD10K-CAM-1-Aquatic-5-Fish-2",
    "COD10K-CAM-2-Terrestrial-23-Cat-3",
    "img4",
]


def _matrix() -> ScoreMatrix:
    m = ScoreMatrix(NAMES, ["A", "B"], ["Sm"])
    m.values[:, 0, 0] = [0.9, 0.2, 0.5, np.nan]
    m.values[:, 1, 0] = [0.5, 0.6, 0.45, 0.3]
    return m


def test_a_against_b_on_one_measure_and_the_points_listed() -> None:
    d = scatter_data(_matrix(), "Sm", "A", b="B", labels={"A": "Ours"})
    assert d.rows.tolist() == [0, 1, 2]  # img4 has no score of A: not drawn
    assert d.x.tolist() == [0.5, 0.6, 0.45] and d.y.tolist() == [0.9, 0.2, 0.5]
    assert (d.xlabel, d.ylabel, d.diagonal) == ("Sm of B", "Sm of Ours", True)
    listed = scatter_data(_matrix(), "Sm", "A", b="B", listed=np.array([2, 0]))
    assert listed.rows.tolist() == [2, 0]
    # a rectangle's points, each sample once; the nearest point to a click
    assert inside(d, 0.4, 0.55, 0.4, 1.0).tolist() == [0, 2]
    assert inside(d, 0.55, 0.4, 1.0, 0.4).tolist() == [0, 2]  # drawn either way
    assert nearest(d, 0.61, 0.21, 0.01, 0.01) == 1


def test_against_the_object_s_share_and_grouped_by_an_attribute(tmp_path: Path) -> None:
    shares = {NAMES[0]: 0.01, NAMES[1]: 0.2, "img4": 0.0}  # NAMES[2]: not read yet
    d = scatter_data(_matrix(), "Sm", "B", against="share", shares=shares)
    assert d.rows.tolist() == [0, 1, 3] and d.x.tolist() == [0.01, 0.2, 0.0]
    assert d.xlabel == "object's share of the image" and not d.diagonal
    g = scatter_data(_matrix(), "Sm", "B", against="attribute", groups=subsets_rule("cod10k"))
    assert g.categories == ["Aquatic", "Terrestrial"] and g.rows.tolist() == [0, 1, 2]
    assert np.all(np.abs(g.x - np.round(g.x)) <= JITTER)
    assert np.round(g.x).tolist() == [0, 0, 1]
    again = scatter_data(_matrix(), "Sm", "B", against="attribute", groups=subsets_rule("cod10k"))
    assert again.x.tolist() == g.x.tolist()  # the same place at every drawing
    table = tmp_path / "attrs.csv"
    table.write_text(f"image,occlusion,size\n{NAMES[0]},1,small\nimg4,0,large\n", encoding="utf-8")
    t = scatter_data(_matrix(), "Sm", "B", against="attribute", groups=subsets_rule(str(table)))
    assert t.categories == ["occlusion", "size=large", "size=small"]
    assert t.rows.tolist() == [0, 0, 3]  # a sample in two columns is drawn in each


def test_shares_are_the_measures_foreground_and_empty_gts_are_zero(tmp_path: Path) -> None:
    root = tmp_path / "DS"
    gts = {
        "half": np.r_[np.zeros((5, 10)), np.full((5, 10), 255)].astype(np.uint8),
        "empty": np.zeros((10, 10), np.uint8),
        "faint": np.full((10, 10), 100, np.uint8),  # not above 128: empty to the measures
    }
    for name, gt in gts.items():
        write_png(root / "GT" / f"{name}.png", gt)
        write_png(root / "Pred" / "A" / f"{name}.png", gt)
    (root / "GT" / "broken.png").write_bytes(b"not a png")
    write_png(root / "Pred" / "A" / "broken.png", gts["empty"])
    (ds,), _ = discover(root)
    shares = gt_shares(ds.samples, threads=2)
    assert shares["half"] == 0.5 and shares["empty"] == 0 == shares["faint"]
    assert np.isnan(shares["broken"])
    assert load_map(root / "GT" / "half.png").array.mean() == 127.5


def test_the_model_reads_shares_once_and_the_filter_follows_the_selection(
    model: InspectorModel, dataset_root: Path
) -> None:
    model.open_path(dataset_root)
    scored(model)
    walk, told = model.walk, []
    matrix = model.scores.matrix_of("DS")
    assert matrix is not None
    walk.set_matrix(matrix, model.selection.shown)  # as the browser lists it
    model.facts_changed.connect(lambda: told.append(True))
    assert walk.shares is None and model.request_shares() is False
    assert model.request_shares() is False  # asked again while reading: not read twice
    scored(model)
    assert walk.shares is not None and set(walk.shares) == set(walk.samples) and told
    assert all(0 < v < 1 for v in walk.shares.values())
    assert model.request_shares() is True
    flt = parse("share < 2 and selected", walk.matrix.keys, walk.matrix.methods)
    walk.set_filter(flt)
    assert walk.ordered() == []
    model.select_samples({"img2", "img4"})
    walk.tags_changed()
    assert walk.ordered() == ["img2", "img4"]
    # another dataset forgets what was known of this one's samples
    other = ScoreMatrix(["x1"], walk.matrix.methods, walk.matrix.keys)
    walk.set_matrix(other, walk.shown)
    assert walk.shares is None and walk.chosen == frozenset()


def test_samples_with_problems_are_known_to_the_filter(
    model: InspectorModel, dataset_root: Path
) -> None:
    (dataset_root / "Pred" / "B" / "img3.png").write_bytes(b"\x89PNG broken")
    model.open_path(dataset_root)
    scored(model)
    matrix = model.scores.matrix_of("DS")
    assert matrix is not None
    model.walk.set_matrix(matrix, model.selection.shown)
    assert "img3" in model.walk.problems
    flt = parse("problems", model.walk.matrix.keys, model.walk.matrix.methods)
    model.walk.set_filter(flt)
    assert model.walk.ordered() == ["img3"]


@pytest.mark.parametrize("against", ["method", "share", "attribute"])
def test_no_point_without_the_values(against: str) -> None:
    d = scatter_data(_matrix(), "Sm", "A", against=against)  # no B, no shares, no groups
    assert len(d) == 0


def test_a_map_an_earlier_eval_resized_is_among_the_problems(
    model: InspectorModel, dataset_root: Path, tmp_path: Path
) -> None:
    """A trial: the filter ``problems`` listed nothing after ``eval`` had resized a map, since
    the window read the stored scores instead of computing them."""
    small = dataset_root / "Pred" / "B" / "img3.png"
    write_png(small, load_map(small).array[::2, ::2])
    out = tmp_path / "results"
    assert main(["eval", str(dataset_root), "--out", str(out), "--quiet", "--no-plots"]) == 0
    news: list[object] = []
    model.service.news.connect(news.append)
    model.open_path(dataset_root)
    scored(model)
    planned = next(e for e in news if isinstance(e, stream.Planned))
    assert planned.units == 0  # every score read from eval's store, none computed
    matrix = model.scores.matrix_of("DS")
    assert matrix is not None
    model.walk.set_matrix(matrix, model.selection.shown)
    assert model.walk.problems == frozenset({"img3"})
    model.walk.set_filter(parse("problems", matrix.keys, matrix.methods))
    assert model.walk.ordered() == ["img3"]
