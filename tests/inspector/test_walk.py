"""The walk without Qt: the browser's order is the order stepping follows, whatever sets it."""

from __future__ import annotations

from dataclasses import astuple
from pathlib import Path

import numpy as np

from fminspect.batch.filters import parse
from fminspect.batch.scores import ScoreMatrix
from fminspect.inspector.model import InspectorModel
from fminspect.inspector.runtime import ManualRuntime
from fminspect.inspector.samples import PREFETCH_DELAY_MS
from fminspect.inspector.walk import Walk

NAMES = ["img1", "img2", "img3", "img4", "img5"]


def _matrix(sm_a: list[float], sm_b: list[float]) -> ScoreMatrix:
    m = ScoreMatrix(NAMES, ["A", "B"], ("Sm", "MAE"))
    for i, (a, b) in enumerate(zip(sm_a, sm_b, strict=True)):
        m.values[i, 0, 0], m.values[i, 1, 0] = a, b
        m.values[i, 0, 1], m.values[i, 1, 1] = 1 - a, 1 - b
    return m


def test_each_order_of_the_browser_and_its_neighbours() -> None:
    walk = Walk()
    walk.set_matrix(_matrix([0.9, 0.2, 0.5, np.nan, 0.1], [0.5, 0.6, 0.4, 0.3, 0.2]), ["A", "B"])
    walk.set_view("Sm", ("A", "B"), ("maxFm", "Sm"))
    assert walk.ordered() == NAMES  # by name
    walk.sort(1, descending=False)  # A's Sm, worst first; its unknown value last
    assert walk.ordered() == ["img5", "img2", "img3", "img1", "img4"]
    assert walk.neighbour("img2", 1) == "img3" and walk.neighbour("img5", -1) == "img4"
    assert walk.neighbour("img4", 1) == "img5"  # wraps around
    walk.sort(3, descending=False)  # A − B, A worse first
    assert walk.ordered()[:2] == ["img2", "img5"]
    walk.set_view("MAE", ("A", "B"), ("maxFm", "Sm"))  # the column follows the measure
    assert walk.ordered()[0] == "img1"  # A − B of MAE: −0.4 … lowest first as asked
    walk.sort(0, descending=True)
    assert walk.ordered() == NAMES[::-1]
    assert walk.neighbour("missing", 1) is None and walk.row_of("img1") == 4


def test_a_sample_the_filter_just_dropped_steps_to_its_neighbours_in_the_order() -> None:
    """The workbench benchmark, walking with the filter `untagged` on: tagging the shown
    sample drops it from the list, and `D` then opened the list's first row instead of the
    sample after it (in the middle of a list, every case walked before came round again)."""
    from fminspect.batch.filters import parse

    walk = Walk()
    matrix = _matrix([0.9, 0.2, 0.5, 0.7, 0.1], [0.5] * 5)
    walk.set_matrix(matrix, ["A", "B"])
    walk.set_view("Sm", ("A", "B"), ("maxFm", "Sm"))
    walk.sort(1)  # A's Sm, worst first: img5, img2, img3, img4, img1
    middle = "Sm[A] > 0.15 and Sm[A] < 0.8"
    walk.set_filter(parse(middle, ("Sm", "MAE"), ["A", "B"], {}))
    assert walk.ordered() == ["img2", "img3", "img4"]
    # img3 dropped (as a tagged sample leaves "untagged"): its neighbours stay img2 and img4
    walk.set_filter(parse(f"{middle} and not name ~ img3", ("Sm", "MAE"), ["A", "B"], {}))
    assert walk.ordered() == ["img2", "img4"] and walk.row_of("img3") is None
    assert walk.neighbour("img3", 1) == "img4" and walk.neighbour("img3", -1) == "img2"
    assert walk.neighbour("img3", 2) == "img2" and walk.neighbour("img3", -2) == "img4"  # wrap
    # before the first listed or after the last: the list's first or last, wrapping as rows do
    assert walk.neighbour("img5", 1) == "img2" and walk.neighbour("img5", -1) == "img4"
    assert walk.neighbour("img1", 1) == "img2" and walk.neighbour("img1", -1) == "img4"


def test_models_a_and_b_come_first_and_a_sort_keeps_to_its_column_when_they_move() -> None:
    """A trial: ordered by model A's scores with A the 8th shown model, the browser showed
    only its first columns — the list looked unordered. A and B now come first."""
    m = ScoreMatrix(NAMES, ["A", "B", "C"], ("Sm", "MAE"))
    m.values[:, 0, 0] = [0.1, 0.2, 0.3, 0.4, 0.5]
    m.values[:, 1, 0] = [0.5, 0.4, 0.3, 0.2, 0.1]
    m.values[:, 2, 0] = [0.3, 0.1, 0.5, 0.2, 0.4]
    walk = Walk()
    walk.set_matrix(m, ["A", "B", "C"])
    walk.set_view("Sm", ("A", "B"), ("maxFm", "Sm"))
    assert walk.models == ["A", "B", "C"]
    walk.sort(3)  # C's column, lowest first
    by_c = ["img2", "img4", "img1", "img5", "img3"]
    assert walk.ordered() == by_c
    walk.set_view("Sm", ("C", "B"), ("maxFm", "Sm"))  # C is model A now: its column first
    assert walk.models == ["C", "B", "A"] and walk.sort_column == 1
    assert walk.ordered() == by_c  # still by C's scores
    walk.sort(4)  # the difference C − B
    walk.set_view("Sm", ("B", "C"), ("maxFm", "Sm"))
    assert walk.sort_column == 4  # still the difference column (now B − C)


def test_scores_that_arrive_remake_an_order_by_score_not_one_by_name() -> None:
    walk = Walk()
    matrix = _matrix([np.nan] * 5, [np.nan] * 5)
    walk.set_matrix(matrix, ["A"])
    assert not walk.scores_changed({0})  # by name: nothing to do
    walk.sort(1)
    matrix.values[3, 0, 0] = 0.0
    assert walk.scores_changed({3})
    assert walk.ordered()[0] == "img4"


def test_stepping_walks_the_browser_s_order_and_reads_ahead_in_it(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    model.open_path(dataset_root)
    runtime.run_jobs()
    assert model.sample is not None and model.sample.name == "img1"
    # the browser orders by A's Sm, worst first: img1, img5, img2, img3, img4 (say)
    model.walk.set_matrix(_matrix([0.1, 0.5, 0.6, 0.7, 0.3], [0.5] * 5), ["A", "B"])
    model.walk.sort(1)
    assert model.walk.ordered() == ["img1", "img5", "img2", "img3", "img4"]
    runtime.advance(PREFETCH_DELAY_MS)
    runtime.run_jobs()
    assert model.cached_models("DS/img5") == {"A", "B", "C"}  # read ahead: the next in order
    model.step(1)
    runtime.run_jobs()
    assert model.sample.name == "img5"
    model.step(1)
    runtime.run_jobs()
    assert model.sample.name == "img2"
    model.step(-2)
    runtime.run_jobs()
    assert model.sample.name == "img1"
    model.step(-1)  # wraps around to the last in the order
    runtime.run_jobs()
    assert model.sample.name == "img4"
    model.open_sample("img3", direction=-1)  # the list's row moved up
    runtime.run_jobs()
    runtime.advance(PREFETCH_DELAY_MS)
    runtime.run_jobs()
    assert model.sample.name == "img3" and model.cached_models("DS/img2") == {"A", "B", "C"}


def test_tags_of_the_shown_sample_and_the_next_untagged_in_the_walk(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path, tmp_path: Path
) -> None:
    from fminspect.pipeline.tags import TagStore, tags_path

    opened = []
    model.cases.opened.connect(opened.append)
    changed = []
    model.cases.changed.connect(lambda *a: changed.append(a))
    model.open_path(dataset_root)
    runtime.run_jobs()
    assert opened and str(dataset_root.resolve() / ".fminspect") in opened[0]
    model.walk.set_matrix(_matrix([0.1, 0.5, 0.6, 0.7, 0.3], [0.5] * 5), ["A", "B"])
    model.walk.sort(1)  # img1, img5, img2, img3, img4
    assert model.toggle_tag(1) is True and changed == [("DS", "img1")]
    model.step(1)
    runtime.run_jobs()
    assert model.toggle_tag(2) is True  # img5
    model.step(-1)
    runtime.run_jobs()
    assert model.sample.name == "img1"
    assert model.next_untagged() and model.requested.name == "img2"  # img5 is tagged
    runtime.run_jobs()
    assert model.toggle_tag(1) is True  # img2 had no tag
    assert model.cases.describe("DS", "img5") == "2 boundary"
    # on disk already: another store of the folder reads them
    with TagStore(tags_path(dataset_root)[0]) as other:
        assert other.tagged("DS") == {"img1", "img5", "img2"}
    # the export offers every case, or one tag's cases (the GT errors to leave out of eval)
    assert [astuple(c) for c in model.cases.export_choices()] == [
        ("every tagged or annotated sample (3)", None, "cases.csv", False),
        ("tagged “GT error” only (2)", 1, "gt_error.csv", False),
        ("tagged “boundary” only (1)", 2, "boundary.csv", False),
    ]
    # in the browser's order (by A's score: img1, img5, img2, …), not by name
    order = [("DS", s) for s in model.walk.every_in_order()]
    model.cases.export(tmp_path / "all.csv", order=order)
    assert _listed_in(tmp_path / "all.csv") == ["img1", "img5", "img2"]
    # a filter: the export keeps to what it lists, in its order, tagged or not (a trial:
    # with 1 of 5 tagged samples listed, the export wrote all 5, by name)
    model.walk.set_filter(parse("Sm[A] >= 0.3", ["Sm", "MAE"], ["A", "B"]))
    listed = [("DS", s) for s in model.walk.ordered()]
    assert [s for _, s in listed] == ["img5", "img2", "img3", "img4"]
    choices = model.cases.export_choices(listed)
    assert [astuple(c) for c in choices[:3]] == [
        ("every sample the filter lists (4), in the list's order", None, "listed.csv", True),
        ("listed and tagged “GT error” (1)", 1, "gt_error_listed.csv", True),
        ("listed and tagged “boundary” (1)", 2, "boundary_listed.csv", True),
    ]
    assert model.cases.export(tmp_path / "listed.csv", listed=listed) == 4
    assert _listed_in(tmp_path / "listed.csv") == ["img5", "img2", "img3", "img4"]
    assert model.cases.export(tmp_path / "gt.csv", slot=1, listed=listed) == 1
    assert _listed_in(tmp_path / "gt.csv") == ["img2"]


def _listed_in(path: Path) -> list[str]:
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        return [row["sample"] for row in csv.DictReader(fh)]


def test_a_damaged_tag_file_set_aside_is_said_in_the_status_bar(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    """A trial found it said only in the Cases tab, behind the list."""
    damaged = dataset_root / ".fminspect" / "tags.sqlite"
    damaged.parent.mkdir(exist_ok=True)
    damaged.write_bytes(b"not a database at all" * 100)
    said: list[str] = []
    model.message.connect(lambda text, *_: said.append(text))
    model.open_path(dataset_root)
    runtime.run_jobs()
    assert any("tags and notes" in t and "not a readable tag file" in t for t in said), said
    assert list(damaged.parent.glob("tags.sqlite.damaged-*"))
