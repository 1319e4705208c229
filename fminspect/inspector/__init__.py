"""The inspector's state and logic, without Qt: what the window shows and why.

:class:`InspectorModel` holds the datasets, the shown sample and its data, the settings and
the threshold, the shown models (:class:`ModelSelection`), every model's result with their
cache, the dataset-wide scores of the background evaluation and the dataset view's jobs
(intervals and tests, ``compare``). Commands change it (``open_datasets``, ``select_sample``,
``step``, ``set_settings``, ``set_threshold``, …); plain :class:`Event` s tell the panels.
Work runs where a :class:`Runtime` says: Qt's thread pool in the window, the caller's thread
in tests and scripts (:class:`ManualRuntime`). Nothing here imports Qt (an import-linter
contract).
"""

from __future__ import annotations

from fminspect.inspector.events import Event
from fminspect.inspector.model import InspectorModel
from fminspect.inspector.runtime import ManualRuntime, Runtime, Timer
from fminspect.inspector.selection import ModelSelection
from fminspect.inspector.settings import PANEL_KEYS, Settings

__all__ = [
    "PANEL_KEYS",
    "Event",
    "InspectorModel",
    "ManualRuntime",
    "ModelSelection",
    "Runtime",
    "Settings",
    "Timer",
]
