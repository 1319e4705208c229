"""The inspector model without Qt: a :class:`ManualRuntime` runs its jobs and timers when
the test says so, on the test's thread, whatever the machine's load."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fminspect.inspector.model import InspectorModel
from fminspect.inspector.preferences import MemoryPreferences
from fminspect.inspector.runtime import ManualRuntime
from fminspect.inspector.scoring import ScoringService
from tests.datasets import make_dataset

#: How long a test waits for the scoring service's thread, in ms (only a hung test reaches
#: it; on a busy machine the service takes many times its idle time).
PATIENCE_MS = 600_000


@pytest.fixture
def runtime() -> ManualRuntime:
    return ManualRuntime()


@pytest.fixture
def preferences() -> MemoryPreferences:
    return MemoryPreferences()


@pytest.fixture
def model(runtime: ManualRuntime, preferences: MemoryPreferences) -> Iterator[InspectorModel]:
    """An inspector model whose scoring service runs on a thread of the test's process."""
    m = InspectorModel(runtime, preferences, ScoringService(runtime, jobs=1, in_process=True))
    yield m
    m.close()


@pytest.fixture
def dataset_root(tmp_path: Path) -> Path:
    """A small flat dataset with images and three methods."""
    return make_dataset(tmp_path / "DS", n_images=5, methods=("A", "B", "C"), size=(60, 80))


def scored(model: InspectorModel) -> None:
    """Run everything the model and its scoring service have to do, to the end."""
    runtime = model.runtime
    assert isinstance(runtime, ManualRuntime)
    done = runtime.wait_until(
        lambda: not model.busy and not model.scores.running and not model.folder_reading,
        PATIENCE_MS,
    )
    assert done, "waited for the model's scoring and the service's"
    runtime.settle()
