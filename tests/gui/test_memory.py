"""The window's result cache is bounded in bytes, not only in entries."""

from __future__ import annotations

import numpy as np
import pytest

from fminspect.gui import controller as controller_module
from fminspect.gui.controller import array_bytes
from tests.gui.conftest import settle


def test_array_bytes_counts_each_array_once() -> None:
    a = np.zeros((100, 10))  # 8000 bytes
    view = a[:50]
    assert array_bytes({"a": a, "again": (a, [view])}) == 8000
    assert array_bytes((view,)) == 8000  # a view keeps its whole base alive
    assert array_bytes(("text", 3, None)) == 0


@pytest.mark.slow
def test_result_cache_stays_under_its_byte_bound(qtbot, window, dataset_root, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from fminspect.io.discovery import discover
    from fminspect.pipeline.sample import load_sample, prepare, score_model

    # the size of one result of this dataset, made by the pipeline the window uses
    ds = discover(dataset_root)[0][0]
    loaded = load_sample(ds.samples[0])
    gt, _ = prepare(loaded, window.controller.settings.params.norm)
    one = array_bytes(score_model(loaded, "A", gt, window.controller.settings.params))
    bound = 4 * one
    monkeypatch.setattr(controller_module, "RESULT_CACHE_BYTES", bound)
    window.open_path(dataset_root)
    settle(qtbot, window)
    assert window.controller.cache_bytes <= bound
    for _ in range(4):  # every sample of the dataset, three models each
        window.controller.step(1)
        settle(qtbot, window)
        assert window.controller.cache_bytes <= bound
    assert len(window.controller._cache) <= 4
    # what is shown was scored under the bound, and the current sample's results are whole
    assert set(window.controller.results) == {"A", "B", "C"}
