"""Which models are shown, under which names, in which colours (no Qt)."""

from __future__ import annotations

import pytest

from fminspect.inspector.preferences import MemoryPreferences
from fminspect.inspector.selection import DEFAULT_SHOWN, ModelSelection

MODELS = tuple(f"M{i:02d}" for i in range(14))


@pytest.mark.faults
def test_selection_defaults_reference_top_k_and_memory() -> None:
    preferences = MemoryPreferences()
    sel = ModelSelection(preferences)
    sel.set_models(MODELS, "/data/COD10K")
    assert sel.shown == list(MODELS[:DEFAULT_SHOWN])  # the first ones, in the dataset's order
    sel.set_reference("M13")
    assert sel.shown[0] == "M13" and len(sel.shown) == DEFAULT_SHOWN + 1
    values = {m: float(i) for i, m in enumerate(MODELS)}  # M13 best, then M12…
    best = sel.top_k(values, 3, higher_is_better=False)  # lower is better: M00, M01, M02
    assert best == ["M00", "M01", "M02"]
    assert sel.shown == ["M13", "M00", "M01", "M02"]  # the reference stays, first
    sel.set_alias("M01", "Short")
    assert sel.name("M01") == "Short" and sel.colour_index("M01") == 1
    # remembered per dataset folder, not for another one
    again = ModelSelection(preferences)
    again.set_models(MODELS, "/data/COD10K")
    assert (again.shown, again.reference, again.aliases) == (sel.shown, "M13", {"M01": "Short"})
    other = ModelSelection(preferences)
    other.set_models(MODELS, "/data/NC4K")
    assert other.reference is None and other.aliases == {}


def test_aliases_never_make_two_models_look_the_same() -> None:
    preferences = MemoryPreferences()
    sel = ModelSelection(preferences)
    sel.set_models(("A", "B", "C"), "/d")
    sel.set_alias("A", "Short")
    with pytest.raises(ValueError, match="'A' and 'B' would both be shown as 'Short'"):
        sel.set_alias("B", "Short")
    with pytest.raises(ValueError, match="both be shown as 'C'"):
        sel.merge_aliases({"B": "C"})  # another model's own name
    assert sel.aliases == {"A": "Short"}  # nothing half-taken
    # showing none is a choice too, and remembered
    sel.set_shown([])
    again = ModelSelection(preferences)
    again.set_models(("A", "B", "C"), "/d")
    assert again.shown == []
