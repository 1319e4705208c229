"""The command line's own messages: GUI commands without a display, `score` on an empty GT,
`worker`'s checks."""

from __future__ import annotations

import sys

import pytest

from fminspect.cli import main


@pytest.mark.parametrize(
    ("argv", "prefix"),
    [([], "fminspect: "), (["rank", "vote", "x.zip"], "fminspect rank vote: ")],
)
def test_gui_commands_without_a_display_say_what_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv, prefix
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(prefix + "no display found") and "xvfb-run" in err


def test_a_chosen_qt_platform_or_a_display_is_left_to_qt(monkeypatch: pytest.MonkeyPatch) -> None:
    from fminspect.cli._common import no_display as _no_display

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert not _no_display("")
    monkeypatch.delenv("QT_QPA_PLATFORM")
    monkeypatch.setenv("DISPLAY", ":0")
    assert not _no_display("")
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.delenv("DISPLAY")
    assert not _no_display("")


def test_score_of_an_empty_gt_says_so_and_json_labels_what_it_scored(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    import json

    import cv2
    import numpy as np

    cv2.imwrite(str(tmp_path / "gt.png"), np.zeros((30, 40), np.uint8))
    cv2.imwrite(str(tmp_path / "p.png"), np.full((30, 40), 200, np.uint8))
    assert main(["score", str(tmp_path / "p.png"), str(tmp_path / "gt.png"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["notes"][0] == "GT: no foreground pixel (all zero; GT>128)"
    assert any(n.startswith("msiou: empty GT") for n in out["notes"])
    assert set(out["labels"]) == set(out["scores"]) and "CCm" not in out["labels"]
    assert out["params"]["interpolation"] == "bilinear"


def test_worker_checks_the_data_first_and_starts_dask_with_this_python(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "no-such-data"
    assert main(["worker", "tcp://127.0.0.1:8786", "--data", str(missing)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (
        f"fminspect worker: cannot read {missing} (No such file or directory): the data must "
        "be at the same path here as on the machine running `fminspect eval`"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["worker", "tcp://127.0.0.1:8786", "--data", str(empty)]) == 1
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .startswith(
            f"fminspect worker: {empty} is an empty folder: the data must be at the same path"
        )
    )
    (tmp_path / "GT").mkdir()
    argv = ["worker", "tcp://127.0.0.1:8786", "--nworkers", "3", "--data", str(tmp_path)]
    assert main([*argv, "--dask", "--memory-limit 4GB", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == [
        sys.executable, "-P", "-m", "distributed.cli.dask_worker", "tcp://127.0.0.1:8786",
        "--nthreads", "1", "--nworkers", "3", "--no-dashboard", "--memory-limit", "4GB",
    ]  # fmt: skip
    assert f"data checked: {tmp_path.resolve()}" in err and "measure definitions" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["evl", "data"], "fminspect: 'evl' is not a command: did you mean `fminspect eval`?"),
        (["rnak", "create"], "fminspect: 'rnak' is not a command: did you mean `fminspect rank`?"),
        (["/no/such/folder"], "fminspect: /no/such/folder: no such dataset folder"),
        (["--gt", "nope.png", "--pred", "x.png"], "fminspect: --gt nope.png: no such file"),
    ],
)
def test_typos_and_wrong_paths_are_said_before_any_window(
    capsys: pytest.CaptureFixture[str], argv, message
) -> None:  # type: ignore[no-untyped-def]
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(message)


def test_an_unusable_out_is_said_before_any_work(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    a_file = tmp_path / "results"
    a_file.write_text("")
    for cmd in ("eval", "meta"):
        assert main([cmd, str(tmp_path / "no-data"), "--out", str(a_file)]) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"fminspect {cmd}: --out {a_file} is a file, not a folder: give a folder (made if "
            "needed)"
        ]
    assert main(["eval", str(tmp_path), "--out", str(a_file / "sub")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"fminspect eval: --out {a_file / 'sub'}: cannot write there (Not a directory)"
    ]


def test_screenshots_into_a_folder_that_cannot_be_made_fail_before_qt(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    a_file = tmp_path / "shots"
    a_file.write_text("")
    assert main(["screenshots", str(a_file / "sub"), "--only", "sample"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"fminspect screenshots: OUTDIR {a_file / 'sub'}: cannot write there (Not a directory)"
    ]


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (
            ["qualitative", "ROOT", "--out", "f.pdf", "--inset-corner", "middle"],
            "fminspect qualitative: error: argument --inset-corner: invalid choice: 'middle'",
        ),
        (["eval", "ROOT", "--jobs", "x"], "fminspect eval: error: argument --jobs: invalid int"),
        (["rank", "create"], "fminspect rank create: error: the following arguments are required"),
        (["--nonsense"], "fminspect: error: unrecognized arguments: --nonsense"),
    ],
)
def test_a_wrong_option_is_one_line_naming_it_and_where_the_options_are(
    capsys: pytest.CaptureFixture[str], argv: list[str], problem: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(problem), err
    command = problem.split(": error")[0]
    assert err.endswith(f"; {command} --help lists the options\n"), err


def test_counts_are_said_in_the_singular_for_one() -> None:
    """A trial saw "1 groups, 1 pairs, 1 trials" and "1 cases"."""
    from fminspect.cli._common import count

    assert [count(1, "group"), count(0, "case"), count(3, "trial")] == [
        "1 group",
        "0 cases",
        "3 trials",
    ]
