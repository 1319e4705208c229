"""GUI subcommands on a Linux machine without a display explain themselves (Qt would abort)."""

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
    from fminspect.cli import _no_display

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
