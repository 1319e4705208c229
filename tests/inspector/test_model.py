"""The inspector model without Qt: what the window shows and when, checked step by step.

Each test drives :class:`~fminspect.inspector.model.InspectorModel` with a
:class:`~fminspect.inspector.runtime.ManualRuntime`: jobs run when the test runs them, timers
fire when the test moves the clock, so the order of events is the test's, never the
machine's.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from fminspect.inspector import samples as samples_module
from fminspect.inspector.model import RESCORE_AFTER_MS, InspectorModel
from fminspect.inspector.preferences import MemoryPreferences
from fminspect.inspector.runtime import ManualRuntime
from fminspect.inspector.samples import DEBOUNCE_MS, PREFETCH_DELAY_MS
from fminspect.inspector.scoring import ScoringService
from fminspect.inspector.settings import Settings
from fminspect.metrics import DEFAULT_PARAMS, Params, compute_suite, prepare_gt
from tests.datasets import make_dataset, write_png
from tests.inspector.conftest import scored


def _expected(
    model: InspectorModel, name: str, params: Params = DEFAULT_PARAMS
) -> dict[str, float]:
    s = model.sample
    assert s is not None
    return compute_suite(s.preds[name], prepare_gt(s.gt, params.norm), params, img=s.image).scores()


def _recorded(model: InspectorModel, *names: str) -> list[tuple[str, tuple[object, ...]]]:
    """The events of ``names`` the model emits from now on, with their arguments."""
    seen: list[tuple[str, tuple[object, ...]]] = []
    for name in names:
        getattr(model, name).connect(lambda *args, name=name: seen.append((name, args)))
    return seen


def test_an_opened_dataset_shows_its_first_sample_with_exactly_the_measures_numbers(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    events = _recorded(model, "sample_loaded", "result_ready", "results_complete")
    assert model.open_path(dataset_root)
    assert model.loading and model.sample is None  # read on the pool, not here
    runtime.run_jobs(limit=1)  # the reading
    assert model.sample is not None and model.sample.name == "img1"
    assert [e for e, _ in events] == ["sample_loaded"]
    assert model.busy_changed_text() == "scoring 3 models…"
    runtime.run_jobs()  # one job per model
    assert sorted(a[0] for e, a in events if e == "result_ready") == ["A", "B", "C"]
    assert events[-1][0] == "results_complete"
    for name in ("A", "B", "C"):
        assert model.results[name].scores() == _expected(model, name)
    assert "CCm" in model.results["A"].scores()  # the dataset has images


def test_quick_changes_drop_the_older_requests_queued_work_and_show_only_the_last(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    model.open_path(dataset_root)
    runtime.run_jobs()
    shown: list[float] = []
    model.result_ready.connect(lambda m: shown.append(model.results[m].params.beta2))
    for beta2 in (1.0, 0.5, 2.0):  # typed digit by digit: debounced
        model.set_settings(dataclasses.replace(model.settings, params=Params(beta2=beta2)))
        assert model.busy and runtime.pending_jobs == 0
    runtime.advance(DEBOUNCE_MS)  # the last change, once
    assert runtime.pending_jobs == 3
    runtime.run_jobs()
    assert shown == [2.0, 2.0, 2.0]
    for name in ("A", "B", "C"):
        assert model.results[name].scores() == _expected(model, name, Params(beta2=2.0))
    # a normalisation change starts at once; a newer one takes the older's queued jobs back
    before = len(runtime.ran)
    model.set_settings(dataclasses.replace(model.settings, params=Params(beta2=2.0, stretch=False)))
    runtime.run_jobs(limit=1)  # one of its models had started…
    model.set_settings(dataclasses.replace(model.settings, params=Params(beta2=2.0, stretch=True)))
    runtime.run_jobs()  # …the other two never ran; the new request re-used the cache
    assert len(runtime.ran) - before == 1
    assert all(r.params.stretch for r in model.results.values())


def test_a_result_of_an_older_request_is_cached_but_not_shown(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    model.open_path(dataset_root)
    runtime.run_jobs()
    stretched = model.settings
    flat = dataclasses.replace(
        stretched, params=dataclasses.replace(stretched.params, stretch=False)
    )
    model.set_settings(flat)
    job = runtime.queued[0]
    runtime.begin(job)  # model A's job started…
    model.set_settings(stretched)  # …when the user went back: every result from the cache
    assert not model.busy and model.results["A"].params.stretch
    runtime.finish(job)
    assert model.results["A"].params.stretch  # not shown…
    assert model.cached_models("DS/img1") == {"A", "B", "C"}
    model.set_settings(flat)
    assert "A" in model.results and not model.results["A"].params.stretch  # …but cached


def test_the_sample_read_ahead_is_scored_with_the_chosen_measures_only(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    """The workbench benchmark saw the scoring threads compute the relaxed F-measure and the
    Context-measures while walking with four measures chosen: the read-ahead scored the
    default measures (cached under the chosen ones' key: a chosen measure outside the
    defaults would then have been missing from the sample stepped to)."""
    model.set_measures(["Sm", "MAE"])
    model.open_path(dataset_root)
    runtime.run_jobs()
    wanted = set(model.settings.families())
    assert set(model.results["A"].results) == wanted
    runtime.advance(PREFETCH_DELAY_MS)
    runtime.run_jobs()  # the next sample read and scored ahead
    assert model.cached_models("DS/img2") == {"A", "B", "C"}
    model.step(1)
    assert not model.busy and runtime.pending_jobs == 0  # from the read-ahead
    for name in ("A", "B", "C"):
        assert set(model.results[name].results) == wanted, name
    assert "relaxed_fmeasure" not in wanted and "context" not in wanted


def test_stepping_shows_the_sample_read_ahead_at_once(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    model.open_path(dataset_root)
    runtime.run_jobs()
    assert runtime.pending_jobs == 0
    runtime.advance(PREFETCH_DELAY_MS)  # a short pause, then the next one is read…
    runtime.run_jobs(limit=1)
    runtime.run_jobs()  # …and scored, at a lower priority
    assert model.cached_models("DS/img2") == {"A", "B", "C"} and not model.prefetching
    complete = _recorded(model, "results_complete")
    model.step(1)  # at once, with every result: nothing to read or compute
    assert model.sample is not None and model.sample.name == "img2"
    assert not model.busy and complete and runtime.pending_jobs == 0
    # two quick presses before anything is read: the last one wins
    model.step(1)
    model.step(1)
    assert model.loading and model.sample.name == "img2"
    runtime.run_jobs()
    assert model.sample.name == "img4" and set(model.results) == {"A", "B", "C"}
    model.step(-1)  # backwards: the one before is read ahead next
    runtime.run_jobs()
    runtime.advance(PREFETCH_DELAY_MS)
    runtime.run_jobs()
    assert model.cached_models("DS/img2") == {"A", "B", "C"}
    model.select_sample(-1)  # wraps around
    runtime.run_jobs()
    assert model.sample.name == "img5"


def test_a_step_onto_work_under_way_ahead_waits_for_it_instead_of_doing_it_again(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    """A trial: D held down (each press as soon as a sample was drawn) read and scored each
    sample twice, the read-ahead's running work and the step's own."""
    model.open_path(dataset_root)
    runtime.run_jobs()
    runtime.advance(PREFETCH_DELAY_MS)
    (read,) = runtime.queued  # img2 read ahead…
    runtime.begin(read)  # …by a pool thread, now
    model.step(1)
    assert model.loading and runtime.pending_jobs == 0  # not read a second time
    runtime.finish(read)
    assert model.sample is not None and model.sample.name == "img2" and model.busy
    runtime.run_jobs()  # its models, at the user's priority
    assert set(model.results) == {"A", "B", "C"} and not model.busy
    runtime.advance(PREFETCH_DELAY_MS)
    runtime.run_jobs(limit=1)  # img3 read ahead; its three models queued to be scored
    first, *rest = runtime.queued
    assert len(rest) == 2
    runtime.begin(first)  # one of them being scored when D is pressed
    runs = len(runtime.ran)
    model.step(1)
    assert model.sample.name == "img3" and model.busy and len(model.results) == 0
    assert len(runtime.queued) == 2  # the other two, not the one under way
    runtime.finish(first)
    assert len(model.results) == 1
    runtime.run_jobs()
    assert set(model.results) == {"A", "B", "C"} and not model.busy
    assert len(runtime.ran) - runs == 3  # each model of img3 scored once


def test_the_next_sample_is_read_ahead_as_soon_as_the_window_has_drawn_the_shown_one(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    """A trial: stepping on 150 ms after a sample was drawn took 128 ms a step at 2,000 × 40
    (the read-ahead waited a fixed 250 ms); 51 ms once it starts when the window has drawn."""
    model.open_path(dataset_root)
    runtime.run_jobs()
    assert runtime.pending_jobs == 0 and not model.prefetching  # waiting for the drawing
    model.results_drawn()
    assert model.prefetching and runtime.pending_jobs == 1  # img2's read, on the clock's 0
    runtime.run_jobs()
    assert model.cached_models("DS/img2") == {"A", "B", "C"}
    model.results_drawn()  # said again (another panel drawn): nothing more to do
    assert runtime.pending_jobs == 0
    runtime.advance(PREFETCH_DELAY_MS)  # nor when the timer would have fired
    assert runtime.pending_jobs == 0


def test_a_read_ahead_that_fails_once_a_step_waits_for_it_is_said(
    model: InspectorModel,
    runtime: ManualRuntime,
    dataset_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model.open_path(dataset_root)
    runtime.run_jobs()
    runtime.advance(PREFETCH_DELAY_MS)
    (read,) = runtime.queued
    runtime.begin(read)
    model.step(1)

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("the disk went away")

    monkeypatch.setattr(samples_module, "load_sample", broken)
    problems = _recorded(model, "problems")
    runtime.finish(read)
    assert not model.loading
    said = [str(p) for _, (ps,) in problems for p in ps]  # type: ignore[attr-defined]
    assert any("could not be read: OSError: the disk went away" in s for s in said), said


def test_a_sample_asked_for_while_another_is_scored_drops_the_older_results(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path, tmp_path: Path
) -> None:
    model.open_path(dataset_root)
    runtime.run_jobs()
    model.set_settings(dataclasses.replace(model.settings, params=Params(stretch=False)))
    assert model.busy
    model.select_sample(3)  # img4 asked for while img1 is being scored
    assert model.loading and not model.results and runtime.pending_jobs == 1  # the reading
    runtime.run_jobs()
    assert model.sample is not None and model.sample.name == "img4"
    assert set(model.results) == {"A", "B", "C"}
    # another folder holding a dataset of the same name: nothing read or scored before is used
    other = make_dataset(tmp_path / "other" / "DS", n_images=2, methods=("A", "D"), seed=3)
    assert model.open_path(other)
    runtime.run_jobs()
    assert set(model.sample.preds) == {"A", "D"} and set(model.results) == {"A", "D"}
    assert model.results["A"].scores() == _expected(model, "A", model.settings.params)


def test_a_result_of_datasets_closed_meanwhile_is_not_cached(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path, tmp_path: Path
) -> None:
    model.open_path(dataset_root)
    runtime.run_jobs()
    model.set_settings(dataclasses.replace(model.settings, params=Params(stretch=False)))
    old = runtime.queued
    for job in old:
        runtime.begin(job)  # the old folder's jobs had started…
    other = make_dataset(tmp_path / "other" / "DS", n_images=2, methods=("A", "B"), seed=4)
    assert model.open_path(other)  # …when another folder with a dataset "DS" was opened
    runtime.run_jobs()
    for job in old:
        runtime.finish(job)  # their results come back after the new folder's
    key = (model.sample.key, "A", model.settings.key())  # type: ignore[union-attr]
    assert model._cache[key].mae.score == _expected(model, "A", model.settings.params)["MAE"]
    assert model.results["A"] is model._cache[key]


def test_a_beta2_change_is_debounced_and_a_normalisation_change_is_not(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    model.open_path(dataset_root)
    runtime.run_jobs()
    model.set_settings(dataclasses.replace(model.settings, params=Params(beta2=1.5)))
    assert model.busy and runtime.pending_jobs == 0  # nothing started yet
    runtime.advance(DEBOUNCE_MS - 1)
    assert runtime.pending_jobs == 0
    runtime.advance(1)
    assert runtime.pending_jobs == 3
    runtime.run_jobs()
    # only the F-measure family changed: the rest of each result was kept, not recomputed
    assert model.results["A"].scores()["Sm"] == _expected(model, "A")["Sm"]
    assert model.results["A"].scores()["maxFm"] == _expected(model, "A", Params(beta2=1.5))["maxFm"]
    model.set_settings(dataclasses.replace(model.settings, params=Params(beta2=1.5, stretch=False)))
    assert runtime.pending_jobs == 3  # at once


def test_maps_that_could_not_be_read_again_are_not_scored_and_it_says_so(
    model: InspectorModel,
    runtime: ManualRuntime,
    dataset_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model.open_path(dataset_root)
    runtime.run_jobs()
    problems = _recorded(model, "problems")

    def unreadable(*args: object, **kwargs: object) -> object:
        raise OSError("the disk went away")

    monkeypatch.setattr(samples_module, "load_sample", unreadable)
    model.set_settings(dataclasses.replace(model.settings, interpolation="nearest"))
    runtime.run_jobs()  # reading with the new rule fails
    assert any("could not be read" in str(p) for _, (ps,) in problems for p in ps)
    model.recompute()
    assert not model.results  # the maps it has were resized by the other rule: not scored
    assert any(
        "not scored: its maps were read with resize 'bilinear'" in str(p)
        for _, (ps,) in problems
        for p in ps
    )


def test_only_the_shown_models_are_read_and_scored(runtime: ManualRuntime, tmp_path: Path) -> None:
    methods = tuple(f"M{i:02d}" for i in range(15))
    root = make_dataset(tmp_path / "Many", n_images=2, methods=methods, size=(20, 30))
    model = InspectorModel(
        runtime, MemoryPreferences(), ScoringService(runtime, jobs=1, in_process=True)
    )
    try:
        model.open_path(root)
        runtime.run_jobs()
        assert model.selection.shown == list(methods[:12])  # the first 12 by default
        assert set(model.sample.preds) == set(methods[:12]) == set(model.results)  # type: ignore[union-attr]
        model.selection.set_reference("M14")  # pinned: shown, and first
        assert model.selection.shown[0] == "M14" and model.loading  # read again: it lacks M14
        runtime.run_jobs()
        assert set(model.results) == {*methods[:12], "M14"}
        model.selection.set_shown(["M00"])  # fewer: nothing read again, scores from the cache
        assert not model.loading and runtime.pending_jobs == 0
        assert set(model.results) == {"M00", "M14"}
    finally:
        model.close()


def test_the_choice_of_models_and_measures_is_remembered_per_folder(
    runtime: ManualRuntime, tmp_path: Path
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=2, methods=("A", "B", "C"), size=(20, 30))
    preferences = MemoryPreferences()

    def opened() -> InspectorModel:
        model = InspectorModel(
            runtime, preferences, ScoringService(runtime, jobs=1, in_process=True)
        )
        model.open_path(root)
        runtime.run_jobs()
        return model

    first = opened()
    first.selection.set_shown(["B"])
    first.selection.set_alias("C", "Cee")
    first.set_measures(["MAE", "Sm"])
    assert first.settings.keys == ("MAE", "Sm")
    first.close()
    again = opened()
    assert again.selection.shown == ["B"] and again.selection.name("C") == "Cee"
    assert again.settings.keys == ("MAE", "Sm") and set(again.results) == {"B"}
    preferences.set_value("measures", ["MAE", "NoSuchMeasure"])  # a measure no longer there
    assert opened().measure_choice == ("MAE",)


def test_go_to_takes_a_sample_s_name_or_its_file_s_name(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    messages = _recorded(model, "message")
    model.open_path(dataset_root)
    runtime.run_jobs()
    assert model.go_to("img3.png")
    runtime.run_jobs()
    assert model.sample is not None and model.sample.name == "img3"
    assert not model.go_to("nope")
    assert messages == [("message", ("no sample 'nope' in this dataset", 8000))]


def test_a_folder_opened_later_replaces_one_still_being_read(
    model: InspectorModel, runtime: ManualRuntime, tmp_path: Path
) -> None:
    first = make_dataset(tmp_path / "First", n_images=3, methods=("A",), size=(20, 30))
    second = make_dataset(tmp_path / "Second", n_images=4, methods=("A", "B"), size=(20, 30))
    opened = _recorded(model, "folder_read")
    model.open_folder(first, lambda: model.go_to("img2"))
    assert model.folder_reading
    model.open_folder(second)
    reading_first, reading_second = runtime.queued
    runtime.finish(reading_second)  # the second folder is read first…
    assert model.dataset is not None and model.dataset.name == "Second"
    runtime.finish(reading_first)  # …and the first one later: dropped
    assert not model.folder_reading
    runtime.fire_due()  # the next turn: the first sample is read
    runtime.run_jobs()
    assert [args[0] for _, args in opened] == [second]
    assert model.dataset.name == "Second" and model.sample.name == "img1"  # type: ignore[union-attr]


def test_a_folder_without_a_dataset_or_unreadable_is_said(
    model: InspectorModel, runtime: ManualRuntime, tmp_path: Path
) -> None:
    events = _recorded(model, "folder_read", "folder_failed")
    (tmp_path / "empty").mkdir()
    model.open_folder(tmp_path / "empty")
    runtime.run_jobs()
    ((name, (_, datasets, problems, background)),) = events
    assert name == "folder_read" and datasets == [] and problems and background
    assert model.dataset is None
    assert not model.open_path(tmp_path / "no-such-folder")


def _eval_values(root: Path, params: Params, cache: Path) -> dict[str, dict[str, float]]:
    """What ``fminspect eval`` gives each method of ``root``'s dataset."""
    from fminspect.batch import EvalConfig, evaluate_datasets
    from fminspect.io.discovery import discover

    datasets, _ = discover(root)
    report = evaluate_datasets(datasets, EvalConfig(params), cache_path=cache, progress=False)
    return {r.method: r.values for r in report.results}


def test_the_dataset_scores_are_eval_s_and_new_parameters_score_them_again(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path, tmp_path: Path
) -> None:
    model.open_path(dataset_root)
    scored(model)
    matrix = model.scores.matrix_of("DS")
    assert matrix is not None and matrix.filled.all()
    expected = _eval_values(dataset_root, DEFAULT_PARAMS, tmp_path / "eval.sqlite")
    assert {r.method: r.values for r in model.scores.results["DS"]} == expected
    assert model.scores.values("Sm") == {m: v["Sm"] for m, v in expected.items()}
    # new parameters: the browser's scores are made again once they are still
    model.set_settings(dataclasses.replace(model.settings, params=Params(beta2=1.0)))
    assert model.scores.results  # not yet
    runtime.advance(RESCORE_AFTER_MS)
    assert not model.scores.results and model.scores.running
    scored(model)
    expected = _eval_values(dataset_root, Params(beta2=1.0), tmp_path / "eval.sqlite")
    assert {r.method: r.values for r in model.scores.results["DS"]} == expected


def test_every_dataset_of_a_folder_is_scored_one_after_the_other(
    model: InspectorModel, runtime: ManualRuntime, tmp_path: Path
) -> None:
    for name, seed in (("COD10K", 1), ("NC4K", 2)):
        make_dataset(
            tmp_path / "root",
            n_images=3,
            methods=("A", "B"),
            size=(20, 30),
            layout="multi",
            dataset=name,
            seed=seed,
        )
    changed = _recorded_scores(model)
    model.open_path(tmp_path / "root")
    scored(model)
    assert set(model.scores.results) == {"COD10K", "NC4K"}
    last = [args for name, args in changed if name == "results_changed"][-1]
    assert list(last[0]) == ["COD10K", "NC4K"] and last[1] == ""
    chosen = _recorded(model, "dataset_chosen")
    model.choose_dataset("NC4K")  # scored already: shown at once, not scored again
    assert not model.scores.running and model.dataset is not None and model.dataset.name == "NC4K"
    assert chosen == [("dataset_chosen", ("NC4K",))]  # the browser's list follows


def _recorded_scores(model: InspectorModel) -> list[tuple[str, tuple[object, ...]]]:
    seen: list[tuple[str, tuple[object, ...]]] = []
    for name in ("results_changed", "matrix_started", "status"):
        getattr(model.scores, name).connect(lambda *a, name=name: seen.append((name, a)))
    return seen


def test_a_dataset_whose_scoring_fails_is_not_started_again_by_itself(
    model: InspectorModel,
    runtime: ManualRuntime,
    dataset_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("FMINSPECT_CACHE_DIR", str(blocker / "cache"))  # cannot be made
    statuses = _recorded_scores(model)
    model.open_path(dataset_root)
    scored(model)
    starts = [a for name, a in statuses if name == "matrix_started"]
    assert len(starts) == 1 and "DS" in model.scores.gave_up
    assert any(name == "status" and str(a[0]).startswith("scoring failed") for name, a in statuses)


def test_the_result_cache_stays_within_its_bytes(
    model: InspectorModel, runtime: ManualRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_dataset(tmp_path / "DS", n_images=6, methods=("A", "B"), size=(60, 80))
    model.open_path(root)
    runtime.run_jobs()
    one = model.cache_bytes / 2
    monkeypatch.setattr(model._cache, "max_bytes", int(3.5 * one))
    for _ in range(4):
        model.step(1)
        runtime.run_jobs()
        assert model.cache_bytes <= 3.5 * one
    assert len(model.cached_models(model.sample.key)) == 2  # type: ignore[union-attr]


def test_an_unreadable_map_is_said_and_the_others_are_scored(
    model: InspectorModel, runtime: ManualRuntime, dataset_root: Path
) -> None:
    (dataset_root / "Pred" / "B" / "img1.png").write_bytes(b"\x89PNG not really")
    write_png(dataset_root / "Pred" / "C" / "img1.png", np.zeros((30, 40), np.uint8))  # half size
    problems = _recorded(model, "problems")
    model.open_path(dataset_root)
    runtime.run_jobs()
    said = [str(p) for _, (ps,) in problems for p in ps]
    assert any("img1.png" in p and "B" in p for p in said)
    assert any("resized" in p for p in said)
    assert set(model.results) == {"A", "C"} and "B" in model.sample.unreadable  # type: ignore[union-attr]


def test_settings_key_tells_results_of_other_parameters_apart() -> None:
    a, b = Settings(), Settings(params=Params(beta2=1.0))
    assert a.key() != b.key() and a.key() == Settings().key()
    assert Settings(keys=("MAE",)).families() != a.families()
