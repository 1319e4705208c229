"""The one parity tester: every registered measure family against the reference its registry
entry names (tests/reference/families.py says how each is run), per image, on seeded random
and edge-case maps (or, for the Context-measures, scenes with photographs' textures).

A new family, or a new key of a family, fails here until its reference is named: run by the
oracle, or the tests that check it where its reference cannot run. Values agree to 1e-10
unless the entry says why not; a case the comparison leaves out names the documented
difference and the test that checks it. 1-pixel maps are left to test_parity_classic.py
(the E-measure's deliberate difference there).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from fminspect.metrics import evaluate
from fminspect.metrics.registry import REGISTRY
from tests.reference.cases import edge_cases, random_cases
from tests.reference.context_cases import context_cases
from tests.reference.families import REFERENCES, Elsewhere, Oracle

REPO = Path(__file__).resolve().parents[2]
FAMILIES = {f.field: f for f in REGISTRY.families.values() if f.measures}
RUN = sorted(f for f, ref in REFERENCES.items() if isinstance(ref, Oracle))


def _cases(kind: str) -> list[dict]:
    if kind == "scenes":  # about a fifth of them with an empty GT
        return context_cases(32, seed=2026)
    edges = [c for c in edge_cases() if np.asarray(c["pred"]).size > 1]
    return random_cases(48, seed=2026, min_size=4) + edges


def _test_exists(test_id: str) -> bool:
    path, _, name = test_id.partition("::")
    source = REPO / path
    return source.exists() and f"def {name}(" in source.read_text()


def test_every_family_names_its_reference_for_every_key() -> None:
    missing = sorted(set(FAMILIES) - set(REFERENCES))
    assert not missing, f"no reference in tests/reference/families.py for {missing}"
    assert not set(REFERENCES) - set(FAMILIES), "a reference for no registered family"
    for field, ref in REFERENCES.items():
        family = FAMILIES[field]
        assert ref.names in family.reference, (field, family.reference)
        keys = {m.key for m in family.measures}
        if isinstance(ref, Oracle):
            covered = set(ref.keys) | set(ref.elsewhere)
            assert covered == keys, (field, sorted(covered ^ keys))
            assert not set(ref.keys) & set(ref.elsewhere), field
            tests = list(ref.elsewhere.values())
            assert ref.atol == 1e-10 or ref.why, f"{field}: say why the tolerance is wider"
        else:
            assert isinstance(ref, Elsewhere) and ref.tests and ref.why, field
            tests = list(ref.tests)
        for test_id in tests:
            assert _test_exists(test_id), f"{field}: no test {test_id}"


@pytest.mark.slow
@pytest.mark.reference
@pytest.mark.parametrize("field", RUN)
def test_family_equals_its_reference(field: str, pysod) -> None:  # type: ignore[no-untyped-def]
    ref = REFERENCES[field]
    assert isinstance(ref, Oracle)
    family = FAMILIES[field]
    cases = _cases(ref.cases)[:: ref.every]
    kept = [c for c in cases if not ref.differs(c)]
    assert len(kept) >= 0.75 * len(cases), "the documented differences leave too few cases"
    meta = [
        {"groups": list(ref.groups), "normalize": c["normalize"], **ref.meta(i)}
        for i, c in enumerate(kept)
    ]
    results = pysod(kept, meta)["results"]
    keys = list(ref.keys)
    worst = dict.fromkeys(keys, 0.0)
    compared = dict.fromkeys(keys, 0)
    failures, finite_where_nan = [], 0
    for case, theirs in zip(kept, results, strict=True):
        assert not any(k.endswith("_error") for k in theirs), (case["id"], theirs)
        img = case.get("img") if family.needs_image else None
        ours = evaluate(case["pred"], case["gt"], img=img, keys=keys, **dict(ref.params))
        for key, extract in ref.keys.items():
            value = extract(theirs)
            if value is None:
                continue  # the oracle did not compute it for this case
            mine, want = ours[key], float(value)
            compared[key] += 1
            if math.isnan(mine) and math.isnan(want):
                continue  # both undefined (no ROC of an empty GT, …)
            if math.isnan(want) and ref.finite_where_nan and math.isfinite(mine):
                finite_where_nan += 1  # the documented difference
                continue
            gap = abs(mine - want)
            worst[key] = max(worst[key], gap if not math.isnan(gap) else math.inf)
            if not gap <= ref.atol:
                failures.append(f"{case['id']}: {key} = {mine!r}, reference {want!r}")
    assert not failures, "\n".join(failures[:30])
    assert all(w <= ref.atol for w in worst.values()), worst
    assert min(compared.values()) >= 12, compared
    # the documented difference is where it is said to be, and not the rule
    assert finite_where_nan <= 0.25 * len(kept), finite_where_nan
    assert (finite_where_nan > 0) == bool(ref.finite_where_nan), "exercised where declared"
