"""What a scoring computes: the parameters, the measures and the resize rule, and how each
measure family's stored result is keyed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from fminspect import MEASURE_DEFINITION_VERSION
from fminspect.io.limits import MAX_PIXELS
from fminspect.io.loading import INTERPOLATIONS
from fminspect.metrics import DEFAULT_PARAMS, Params, measure_keys
from fminspect.metrics.registry import REGISTRY
from fminspect.metrics.suite import FIELD_PARAMS, families_for


@dataclass(frozen=True, slots=True)
class EvalConfig:
    """What to compute: parameters, measures and the resize rule.

    ``keys=None`` means the default measures (:func:`~fminspect.metrics.default_keys`),
    with ``CCm`` only for datasets that have images; ``("all",)`` every registered one.
    ``max_pixels``: files whose header declares more pixels are refused before decoding (a
    limit on the input, not a parameter of the values: it is not part of the fingerprint).
    """

    params: Params = DEFAULT_PARAMS
    keys: tuple[str, ...] | None = None
    interpolation: str = "bilinear"
    max_pixels: int = MAX_PIXELS

    def __post_init__(self) -> None:
        if self.interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {sorted(INTERPOLATIONS)}")
        if self.max_pixels < 1:
            raise ValueError(f"max_pixels must be at least 1, got {self.max_pixels}")
        measure_keys(self.keys)  # a wrong key fails here

    def keys_for(self, with_images: bool) -> tuple[str, ...]:
        """The measure keys computed for a dataset with (or without) images."""
        return measure_keys(self.keys, with_images=with_images)

    def as_dict(self) -> dict[str, Any]:
        """Plain-JSON form (recorded in results.json)."""
        from fminspect.pipeline.conventions import CONVENTIONS, convention_of

        named = convention_of(self.params, self.interpolation)
        return {
            "params": self.params.as_dict(),
            "normalization": self.params.norm.label,
            "keys": list(self.keys) if self.keys is not None else None,
            "interpolation": self.interpolation,
            # the implementation these knobs are (fminspect.pipeline.conventions)
            "convention": named,
            # what that implementation does and these numbers do not
            "convention_unreproduced": list(
                CONVENTIONS[named].unreproduced if named in CONVENTIONS else ()
            ),
            "max_pixels": self.max_pixels,
            "measure_definition_version": MEASURE_DEFINITION_VERSION,
        }

    def fingerprint(self, family: str) -> str:
        """Everything a stored result of one measure family (a field of
        :class:`~fminspect.metrics.SuiteResult`) depends on besides the input files: the
        normalisation, the resize rule, the family's own parameters and the definitions'
        version — not the other families' parameters, nor which measures were asked for."""
        own = {name: getattr(self.params, name) for name in FIELD_PARAMS.get(family, ())}
        return json.dumps(
            {
                "family": family,
                "normalization": asdict(self.params.norm),
                "params": own,
                "interpolation": self.interpolation,
                "measure_definition_version": MEASURE_DEFINITION_VERSION,
            },
            sort_keys=True,
        )


def families(keys: Sequence[str]) -> tuple[str, ...]:
    """The measure families (SuiteResult fields, store families) behind ``keys``
    (:func:`~fminspect.metrics.suite.families_for`)."""
    return families_for(keys)


def family_keys(family: str) -> tuple[str, ...]:
    """The measure keys read from one family's record."""
    return tuple(m.key for m in REGISTRY.families[family].measures)
