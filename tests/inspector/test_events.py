"""The model's plain events: order, blocking, and a failing callback that stops no other."""

from __future__ import annotations

import logging

import pytest

from fminspect.inspector.events import Event


def test_callbacks_run_in_order_and_none_while_blocked() -> None:
    event = Event("changed")
    seen: list[tuple[str, int]] = []
    event.connect(lambda n: seen.append(("first", n)))
    second = event.connect(lambda n: seen.append(("second", n)))
    event.emit(1)
    with event.blocked():
        event.emit(2)
    event.disconnect(second)
    event.emit(3)
    assert seen == [("first", 1), ("second", 1), ("first", 3)]


def test_a_failing_callback_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    event = Event("result_ready")
    seen: list[int] = []

    def broken(n: int) -> None:
        raise RuntimeError(f"broken panel {n}")

    event.connect(broken)
    event.connect(seen.append)
    with caplog.at_level(logging.ERROR, logger="fminspect.inspector.events"):
        event.emit(7)
    assert seen == [7]
    (record,) = [r for r in caplog.records if r.name == "fminspect.inspector.events"]
    assert "result_ready" in record.getMessage() and "broken panel 7" in (record.exc_text or "")
    caplog.clear()  # expected here; anywhere else such a log fails the test (tests/conftest.py)
