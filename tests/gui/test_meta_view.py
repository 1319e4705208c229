"""The meta-measures window: a run off the GUI thread, the table, and opening a case."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gui.conftest import PATIENCE_MS, settle


@pytest.mark.slow
def test_meta_window_runs_and_opens_a_case_in_the_inspector(
    qtbot, window, dataset_root: Path, tmp_path: Path
) -> None:
    from fminspect.gui.meta_view import MetaWindow

    assert window.open_path(dataset_root)
    settle(qtbot, window)
    meta = MetaWindow(
        window.model.dataset,
        window.model.settings.params,
        inspector=window,
        cache=tmp_path / "cache.sqlite",
    )
    qtbot.addWidget(meta)
    meta.show()
    for name in ("generic", "noise_injection"):
        meta.boxes[name].setChecked(False)
    with qtbot.waitSignal(meta.finished_run, timeout=PATIENCE_MS):
        meta.run()
    assert meta.report is not None and meta.table.rowCount() == len(meta.report.labels)
    headers = [meta.table.horizontalHeaderItem(j).text() for j in range(meta.table.columnCount())]
    assert any(h.startswith("gt_switch") for h in headers) and any(
        "1 − ρ (dilate)" in h for h in headers
    )
    column = next(j for j, h in enumerate(headers) if h.startswith("noise_map"))
    meta._cell_clicked(0, column)
    assert meta.cases.rowCount() == len(window.model.sample_names)
    target = meta.cases.item(meta.cases.rowCount() - 1, 0).text()
    meta._open_case(meta.cases.rowCount() - 1, 0)
    assert window.model.wait(PATIENCE_MS)  # the sample is read on the thread pool
    assert window.model.sample.name == target
    # a paper's protocol: only its meta-measures can be ticked, and the run uses its settings
    meta.protocol.setCurrentText("context2025")
    assert not meta.boxes["generic"].isEnabled() and meta.boxes["gt_switch"].isChecked()
    config = meta.config()
    assert config.protocol == "context2025" and config.switches == 1
    assert config.metas == ("gt_switch", "noise_injection", "annotation")
