"""Tags and notes: kept per dataset folder, on disk before they are shown (SIGKILL-tested),
moved aside when damaged, kept elsewhere when the folder cannot be written, exported as a
case list that eval and rank create take."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fminspect.pipeline.tags import DEFAULT_NAMES, TagError, TagStore, tags_path


def test_tags_and_notes_are_kept_and_read_back(tmp_path: Path) -> None:
    path, beside = tags_path(tmp_path)
    assert beside and path == tmp_path.resolve() / ".fminspect" / "tags.sqlite"
    with TagStore(path) as store:
        assert store.toggle("DS", "img1", 1) is True
        assert store.toggle("DS", "img2", 1) and store.toggle("DS", "img2", 3)
        assert store.toggle("DS", "img1", 1) is False  # toggled off again
        store.rename(3, "  small   object ")
        store.set_note("DS", "img2", "GT misses the tail")
        store.set_note("DS", "img2", "blurred edge", model="A")
        with pytest.raises(ValueError, match="1–9"):
            store.toggle("DS", "img1", 10)
    with TagStore(path) as store:  # another session
        assert store.tags("DS", "img1") == frozenset()
        assert store.tags("DS", "img2") == {1, 3}
        assert store.names[3] == "small object" and store.names[1] == DEFAULT_NAMES[1]
        assert store.note("DS", "img2") == "GT misses the tail"
        assert store.note("DS", "img2", "A") == "blurred edge"
        assert store.tagged("DS") == {"img2"} and store.tagged("DS", 3) == {"img2"}
        assert store.counts("DS")[1] == 1
        store.set_note("DS", "img2", "")  # an empty note removes it
        assert store.note("DS", "img2") == ""


def test_export_is_a_case_list_and_import_reads_it_back(tmp_path: Path) -> None:
    with TagStore(tmp_path / "a.sqlite") as store:
        store.rename(1, "GT error")
        store.toggle("DS", "img3", 1)
        store.toggle("DS", "img5", 1)
        store.toggle("DS", "img5", 2)
        store.set_note("DS", "img5", 'a "quoted", note')
        assert store.export(tmp_path / "cases.csv") == 2
        assert store.export(tmp_path / "gt.csv", slot=2) == 1
        assert store.export(tmp_path / "cases.json") == 2
    lines = (tmp_path / "cases.csv").read_text().splitlines()
    assert lines[0] == "dataset,sample,tags,note"
    assert lines[1] == "DS,img3,GT error,"
    assert lines[2].startswith("DS,img5,GT error;boundary,")
    for name in ("cases.csv", "cases.json"):
        with TagStore(tmp_path / f"b-{name}.sqlite") as other:
            other.rename(1, "GT error")
            other.rename(4, "mine")  # a name of its own: not overwritten
            assert other.import_(tmp_path / name).applied == 2
            slot_of = {name: slot for slot, name in other.names.items()}
            assert other.tags("DS", "img5") == {1, slot_of["boundary"]}
            assert other.note("DS", "img5") == 'a "quoted", note'
            assert other.names[4] == "mine"
    (tmp_path / "bad.csv").write_text("what,ever\n1,2\n")
    with TagStore(tmp_path / "c.sqlite") as other, pytest.raises(TagError, match=r"bad\.csv"):
        other.import_(tmp_path / "bad.csv")


def test_cases_of_a_folder_named_otherwise_go_to_the_samples_of_their_names(
    tmp_path: Path,
) -> None:
    """A trial: a colleague's case list (dataset "bench") imported into a folder whose
    dataset is "bgt" said "3 cases read" and applied nothing (they were kept under "bench")."""
    (tmp_path / "cases.json").write_text(
        json.dumps(
            {
                "cases": [
                    {"dataset": "bench", "sample": "img3", "tags": ["GT error"], "note": "n3"},
                    {"dataset": "bench", "sample": "img5", "tags": [], "note": "",
                     "model_notes": {"A": "halo"}},
                    {"dataset": "bench", "sample": "gone", "tags": ["GT error"]},
                    {"dataset": "bench", "sample": "both", "tags": ["GT error"]},
                    {"dataset": "other", "sample": "img1", "tags": ["GT error"]},
                ]
            }
        )
    )  # fmt: skip
    here = {"bgt": {"img1", "img3", "img5", "both"}, "other": {"img1", "both"}}
    with TagStore(tmp_path / "a.sqlite") as store:
        report = store.import_(tmp_path / "cases.json", here)
        assert (report.read, report.applied) == (5, 3)
        assert report.moved == {"bench": "bgt"}
        assert report.unmatched == ["bench/gone", "bench/both"]  # none here; in two datasets
        assert store.tags("bgt", "img3") == {1} and store.note("bgt", "img3") == "n3"
        assert store.note("bgt", "img5", "A") == "halo"
        assert store.tags("other", "img1") == {1}  # its own dataset has it: kept there
        assert store.cases("bench") == []
        said = report.message()
        assert "5 cases read" in said and "3 applied" in said and "'bench' to 'bgt'" in said
        assert "2 not imported" in said and "bench/gone" in said


def test_new_tag_names_take_free_slots_and_too_many_change_nothing(tmp_path: Path) -> None:
    """A trial: a case list with the tag "my new tag" was refused ("more than nine tags")
    by a store whose slots 4–9 had their default names and tagged nothing."""
    (tmp_path / "new.csv").write_text(
        "dataset,sample,tags,note\nDS,img1,boundary;my new tag,\nDS,img2,other,\n"
    )
    with TagStore(tmp_path / "a.sqlite") as store:
        store.toggle("DS", "img9", 3)  # slot 3 tags a sample: not free
        assert store.import_(tmp_path / "new.csv").applied == 2
        slot_of = {name: slot for slot, name in store.names.items()}
        # the unnamed slots first ("tag 7"…), then named defaults from the last
        assert slot_of["my new tag"] == 9 and slot_of["other"] == 8
        assert store.tags("DS", "img1") == {2, 9} and store.tags("DS", "img2") == {8}
    many = ";".join(f"new {k}" for k in range(9))
    (tmp_path / "many.csv").write_text(f"dataset,sample,tags,note\nDS,img1,{many},\n")
    with TagStore(tmp_path / "b.sqlite") as store:
        store.toggle("DS", "img1", 1)
        before = dict(store.names)
        with pytest.raises(TagError, match=r"9 tag\(s\) not known here .* 8 free slot") as caught:
            store.import_(tmp_path / "many.csv")
        assert "many.csv" in str(caught.value) and store.names == before
        assert store.tags("DS", "img1") == {1}


def test_a_damaged_file_is_moved_aside_and_a_folder_that_cannot_be_written_is_not_used(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tags.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    with TagStore(path) as store:
        assert store.recovered and "not a readable tag file" in store.recovered
        assert store.toggle("DS", "x", 1)
    assert list(tmp_path.glob("tags.sqlite.damaged-*"))
    folder = tmp_path / "readonly"
    folder.mkdir()
    (folder / ".fminspect").write_text("a file where the folder would be")
    where, beside = tags_path(folder)
    assert not beside and where.parent == Path(os.environ["FMINSPECT_DATA_DIR"]) / "tags"
    assert where.name.startswith("readonly-")


# The tagger acknowledges a change (prints it) only after the store's call returned, exactly
# as the window shows a tag only after the call returns.
TAGGER = """
import sys, random
from fminspect.pipeline.tags import TagStore
store = TagStore(sys.argv[1])
rng = random.Random(int(sys.argv[2]))
print("ready", flush=True)
for i in range(10_000):
    sample, slot = f"img{rng.randrange(40)}", rng.randrange(1, 10)
    if rng.random() < 0.3:
        text = f"note {sys.argv[2]}-{i}"
        store.set_note("DS", sample, text)
        print("note", sample, text.replace(" ", "_"), flush=True)
    else:
        now = store.toggle("DS", sample, slot)
        print("tag", sample, slot, int(now), flush=True)
"""


@pytest.mark.faults
@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_sigkill_at_random_moments_loses_no_tag_or_note_that_was_shown(tmp_path: Path) -> None:
    path = tmp_path / "tags.sqlite"
    script = tmp_path / "tagger.py"
    script.write_text(TAGGER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    rng = np.random.default_rng(1)
    tags: dict[tuple[str, int], bool] = {}
    notes: dict[str, str] = {}
    kills = unacked = 0
    for round_ in range(25):
        proc = subprocess.Popen(
            [sys.executable, str(script), str(path), str(round_)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        seen = [proc.stdout.readline() for _ in range(int(rng.integers(1, 30)))]
        time.sleep(float(rng.uniform(0.0, 0.003)))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        kills += proc.returncode == -signal.SIGKILL
        for line in ("".join(seen) + out).split("\n")[:-1]:  # whole lines only
            kind, sample, *rest = line.split()
            if kind == "tag":
                tags[(sample, int(rest[0]))] = rest[1] == "1"
            else:
                notes[sample] = rest[0].replace("_", " ")
        with TagStore(path) as store:
            wrong_tags = [
                (sample, slot)
                for (sample, slot), on in tags.items()
                if (slot in store.tags("DS", sample)) != on
            ]
            wrong_notes = [s for s, text in notes.items() if store.note("DS", s) != text]
            # every acknowledged change is there, but for at most the one change committed
            # after it and killed before its line was printed (not a loss: a newer state)
            assert len(wrong_tags) + len(wrong_notes) <= 1, (wrong_tags, wrong_notes)
            unacked += len(wrong_tags) + len(wrong_notes)
            for key in wrong_tags:  # the store holds the newer state: it is the truth now
                tags[key] = not tags[key]
            for sample in wrong_notes:
                notes[sample] = store.note("DS", sample)
    assert kills >= 20, "the process was never killed mid-work; the test proved nothing"
    assert len(tags) > 50 and len(notes) > 10, (len(tags), len(notes))


def test_the_case_list_feeds_eval_and_rank_create(tmp_path: Path) -> None:
    from fminspect.cli import main
    from tests.datasets import make_dataset

    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B"), size=(20, 24))
    with TagStore(tags_path(root)[0]) as store:
        store.toggle("DS", "img2", 1)
        store.toggle("DS", "img5", 1)
        store.export(tmp_path / "gt_errors.csv", slot=1)
    out = tmp_path / "without"
    args = ["eval", str(root), "--measures", "MAE", "--no-plots", "--quiet", "--out", str(out)]
    assert main([*args, "--exclude-images", str(tmp_path / "gt_errors.csv")]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["datasets"]["DS"]["A"]["images"] == 4
    assert results["selection"]["excluded_images"]["left_out"]["DS"] == {"images": 2, "of": 6}
    only = tmp_path / "only"
    args[-1] = str(only)
    assert main([*args, "--images", str(tmp_path / "gt_errors.csv")]) == 0
    assert json.loads((only / "results.json").read_text())["datasets"]["DS"]["A"]["images"] == 2
    study = tmp_path / "study.sqlite"
    created = main(
        ["rank", "create", str(study), str(root), "--samples-from", str(tmp_path / "gt_errors.csv")]
    )
    assert created == 0
    from fminspect.ranking.store import StudyStore

    with StudyStore(study) as s:
        assert {g.sample for g in s.design.groups} == {"img2", "img5"}


def test_eval_says_what_a_case_list_holds_and_which_names_match_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trial: an export of every case, given to --exclude-images, left out samples tagged
    otherwise and one with a note only, silently; a list of typos left out nothing, silently.
    Both are now said (and the unmatched names counted in results.json)."""
    from fminspect.cli import main
    from tests.datasets import make_dataset

    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A",), size=(20, 24))
    with TagStore(tags_path(root)[0]) as store:
        store.rename(1, "GT error")
        store.rename(2, "boundary")
        store.toggle("DS", "img2", 1)
        store.toggle("DS", "img3", 2)
        store.toggle("DS", "img4", 2)
        store.set_note("DS", "img5", "look again")
        store.export(tmp_path / "cases.csv")
    (tmp_path / "typos.txt").write_text("img22\nimg1\nimgX\n")
    args = ["eval", str(root), "--measures", "MAE", "--no-plots", "--quiet"]
    assert (
        main([*args, "--out", str(tmp_path / "a"), "--exclude-images", str(tmp_path / "cases.csv")])
        == 0
    )
    err = capsys.readouterr().err
    assert (
        f"{tmp_path / 'cases.csv'}: 4 cases: 1 tagged 'GT error', 2 tagged 'boundary', "
        "1 with no tag"
    ) in err
    assert "leaves out 4 of the 6 images of DS" in err and "every row counts" in err
    store = TagStore(tags_path(root)[0])
    store.export(tmp_path / "gt_error.csv", slot=1)
    store.close()
    assert (
        main(
            [
                *args,
                "--out",
                str(tmp_path / "c"),
                "--exclude-images",
                str(tmp_path / "gt_error.csv"),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err  # one tag's cases: said, without the advice
    assert f"{tmp_path / 'gt_error.csv'}: 1 case: 1 tagged 'GT error'\n" in err
    assert (
        main([*args, "--out", str(tmp_path / "b"), "--exclude-images", str(tmp_path / "typos.txt")])
        == 0
    )
    err = capsys.readouterr().err
    assert "leaves out 1 of the 6 images of DS" in err
    assert f"2 names of {tmp_path / 'typos.txt'} are in no dataset: img22, imgX" in err
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    assert results["selection"]["excluded_images"]["unmatched"] == 2
