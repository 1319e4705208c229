"""The one per-sample pipeline: every bad input handled once, the same way for every caller."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fminspect.io.discovery import Sample
from fminspect.io.validation import LoadError
from fminspect.metrics import DEFAULT_PARAMS, Normalization, compute_suite
from fminspect.pipeline import Note, load_sample, prepare, score_sample
from fminspect.pipeline.config import families
from fminspect.pipeline.sample import sample_from_arrays, score_files
from tests.datasets import write_png


def _gt() -> np.ndarray:
    gt = np.zeros((20, 30), np.uint8)
    gt[5:15, 8:20] = 255
    return gt


def test_a_0_1_gt_is_scored_with_a_note_that_names_the_rule_and_the_likely_mistake(
    tmp_path: Path,
) -> None:
    gt = np.zeros((8, 8), np.uint8)
    gt[2:5, 2:5] = 1  # a 0/1 mask saved as 8-bit
    write_png(tmp_path / "gt.png", gt)
    write_png(tmp_path / "a.png", gt * 255)
    loaded = load_sample(Sample("d", "s", tmp_path / "gt.png", None, {"A": tmp_path / "a.png"}))
    assert not loaded.problems and "A" in loaded.preds  # reading it is fine
    prepared, notes = prepare(loaded, DEFAULT_PARAMS.norm)
    (note,) = notes
    assert prepared is not None and prepared.is_empty
    assert (note.about, note.kind) == ("GT", "empty-gt")
    assert "GT>128" in note.message and "0/1 mask" in note.message
    # under another GT rule the same file has a foreground: no note
    assert prepare(loaded, Normalization(gt_threshold=0.5))[1] == ()


@pytest.mark.faults
def test_bad_files_each_get_one_outcome_and_the_rest_is_scored(tmp_path: Path) -> None:
    gt = _gt()
    write_png(tmp_path / "gt.png", gt)
    write_png(tmp_path / "small.png", gt[::2, ::2])  # another size: resized, with a note
    (tmp_path / "corrupt.png").write_bytes(b"not a png")  # unreadable: an error, skipped
    write_png(tmp_path / "img.png", np.zeros((10, 10, 3), np.uint8))  # wrong size image
    sample = Sample(
        "d",
        "s",
        tmp_path / "gt.png",
        tmp_path / "img.png",
        {"small": tmp_path / "small.png", "bad": tmp_path / "corrupt.png"},
    )
    loaded = load_sample(sample)
    assert list(loaded.preds) == ["small"] and loaded.preds["small"].shape == gt.shape
    assert "bad" in loaded.unreadable and loaded.image is None
    kinds = {(n.about, n.kind) for notes in loaded.notes.values() for n in notes}
    assert kinds == {("prediction", "resize"), ("image", "image-size")}
    errors = [p for p in loaded.problems if p.severity == "error"]
    assert [(p.path.name, p.method) for p in errors] == [("corrupt.png", "bad")]
    # scoring: CCm is asked for but the image cannot be used, so it is NaN and says why
    fams = families(["Sm", "CCm"])
    recs = score_sample(loaded, DEFAULT_PARAMS, {"small": fams, "bad": fams})
    assert list(recs) == ["small"]
    ccm = recs["small"]["camouflage_context"]
    assert np.isnan(ccm.scores["CCm"]) and any(n.kind == "image-size" for n in ccm.notes)
    sm = recs["small"]["smeasure"]
    assert not any(n.about == "image" for n in sm.notes)  # the image concerns CCm only
    assert [n.kind for n in sm.notes if n.about == "prediction"] == ["resize"]


@pytest.mark.faults
def test_an_unreadable_gt_skips_the_sample_with_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "gt.png").write_bytes(b"")
    write_png(tmp_path / "a.png", _gt())
    loaded = load_sample(Sample("d", "s", tmp_path / "gt.png", None, {"A": tmp_path / "a.png"}))
    (p,) = loaded.problems
    assert p.severity == "error" and p.path.name == "gt.png" and loaded.gt is None
    assert score_sample(loaded, DEFAULT_PARAMS, {"A": ("mae",)}) == {}


def test_arrays_in_memory_follow_the_same_rules_as_files() -> None:
    gt = _gt()
    loaded = sample_from_arrays("g", gt, {"a": gt[::2, ::2], "b": gt}, image=np.zeros((3, 3, 3)))
    assert loaded.preds["a"].shape == gt.shape and loaded.image is None
    assert [n.kind for n in loaded.notes["a"]] == ["resize"] and "b" not in loaded.notes
    assert loaded.notes["image"][0].kind == "image-size"


def test_score_files_matches_the_measures_and_names_unusable_inputs(tmp_path: Path) -> None:
    gt = _gt()
    pred = (np.arange(600).reshape(20, 30) % 256).astype(np.uint8)
    write_png(tmp_path / "gt.png", gt)
    write_png(tmp_path / "p.png", pred)
    scored = score_files(tmp_path / "p.png", tmp_path / "gt.png")
    assert scored.scores() == compute_suite(pred, gt).scores()
    write_png(tmp_path / "img.png", np.zeros((5, 5, 3), np.uint8))
    with pytest.raises(LoadError, match=r"img\.png: image is 5×5 but the GT is 30×20"):
        score_files(tmp_path / "p.png", tmp_path / "gt.png", image=tmp_path / "img.png")
    with pytest.raises(LoadError, match=r"missing\.png"):
        score_files(tmp_path / "missing.png", tmp_path / "gt.png")


def test_a_note_reads_as_before_and_survives_json() -> None:
    note = Note("camouflage_context", "measure", "empty GT: D = 0")
    assert str(note) == "context measure: empty GT: D = 0" and note.measure == "camouflage_context"
    assert Note.from_list(note.as_list()) == note
    assert Note("GT", "conversion", "16-bit").measure == ""


def test_a_suite_s_notes_are_typed_and_name_their_measure() -> None:
    from fminspect.pipeline.sample import suite_notes

    gt = np.zeros((8, 8), np.uint8)
    gt[2:5, -1] = 255
    notes = suite_notes(compute_suite(np.full((8, 8), 7, np.uint8), gt))
    assert ("input", "normalisation") in {(n.about, n.kind) for n in notes}
    assert any(n.measure == "smeasure" and str(n).startswith("smeasure: ") for n in notes)


def test_a_pair_s_notes_are_every_computed_family_s_warnings_as_eval_stores_them() -> None:
    """The window's and ``score``'s notes (suite_notes) and eval's records (records) say the
    same warnings of every family the registry lists (the AUC's were said by eval only)."""
    from fminspect.pipeline.sample import records, suite_notes

    empty = np.zeros((8, 8), np.uint8)  # no object: the ROC is not defined
    pred, img = np.full((8, 8), 7, np.uint8), np.zeros((8, 8, 3), np.uint8)
    suite = compute_suite(pred, empty, img=img, keys=["all"])
    notes = suite_notes(suite)
    stored = {n for r in records(suite, suite.results).values() for n in r.notes}
    measured = {n for n in notes if n.kind == "measure"}
    assert any(
        n.measure == "auc" and "AUCROC, AUCPR and AP not defined" in n.message for n in measured
    )
    assert measured <= stored
    # both Context-measure forms warn about the same GT: said once, under one name
    context = [n for n in measured if str(n).startswith("context measure: ")]
    assert context and {n.measure for n in context} == {"camouflage_context"}


def test_large_maps_scored_family_by_family_give_the_same_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import fminspect.pipeline.sample as pipeline
    from fminspect.metrics import measure_keys

    rng = np.random.default_rng(5)
    gt = (rng.random((60, 80)) > 0.7).astype(np.uint8) * 255
    maps = {m: (rng.random((60, 80)) * 255).astype(np.uint8) for m in ("A", "B")}
    image = (rng.random((60, 80, 3)) * 255).astype(np.uint8)
    loaded = sample_from_arrays("s", gt, maps, image=image)
    fams = families(measure_keys(None, with_images=True))
    together = score_sample(loaded, DEFAULT_PARAMS, dict.fromkeys(maps, fams))
    monkeypatch.setattr(pipeline, "LARGE_MAP", 0)  # every map counts as large
    apart = score_sample(loaded, DEFAULT_PARAMS, dict.fromkeys(maps, fams))
    assert together.keys() == apart.keys() == set(maps)
    for m in maps:
        assert together[m].keys() == apart[m].keys() == set(fams)
        for fam in fams:
            a, b = together[m][fam], apart[m][fam]
            assert a.scores.keys() == b.scores.keys() and a.curves.keys() == b.curves.keys()
            assert a.notes == b.notes
            np.testing.assert_array_equal(list(a.scores.values()), list(b.scores.values()))
            for name in a.curves:
                np.testing.assert_array_equal(a.curves[name], b.curves[name])
