"""The variant generator: declared variants and matrices become the list of contestants.

The first variant is the baseline. With no declared variants the experiment's own
settings are the baseline. Tuning sessions generate variants one at a time
(see actors.tuning); this module covers declared A/B/n and matrix experiments.
"""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING, Any

from engine.actors.messages import WriteBatch
from engine.events import kinds as k
from engine.events.spec import ExperimentSpec, VariantSpec

if TYPE_CHECKING:  # only in annotations: `engine list` resolves plans without importing trio
    import trio

_VARIANT_FIELDS = set(VariantSpec.__struct_fields__) - {"params", "flags", "target"}


def expand_variants(spec: ExperimentSpec) -> list[VariantSpec]:
    declared = list(spec.variants)
    matrix = [_matrix_variant(entry) for entry in matrix_entries(spec.matrix)]
    variants = declared + matrix
    return variants or [VariantSpec(name="baseline")]


def matrix_entries(matrix: list[dict[str, Any]] | dict[str, list[Any]] | None) -> list[dict[str, Any]]:
    if matrix is None:
        return []
    if isinstance(matrix, list):
        return matrix
    keys = list(matrix)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(matrix[k] for k in keys))]


def _matrix_variant(entry: dict[str, Any]) -> VariantSpec:
    fields: dict[str, Any] = {}
    params: dict[str, Any] = {}
    flags: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "name":
            continue
        if key in _VARIANT_FIELDS:
            fields[key] = value
        elif key.startswith("flags."):
            flags[key.removeprefix("flags.")] = value
        else:
            params[key] = value
    name = entry.get("name") or ",".join(f"{key}={value}" for key, value in entry.items())
    return VariantSpec(name=str(name), params=params, flags=flags, **fields)


async def propose_variants(
    *,
    run_id: str,
    variants: list[VariantSpec],
    known: set[str],
    emit: trio.MemorySendChannel[WriteBatch],
    parameter: str | None = None,
    value: Any = None,
    parent: str | None = None,
) -> None:
    """Log a VariantProposed for every variant the run has not proposed yet."""
    first = len(known)
    events = [
        k.VariantProposed(
            run_id=run_id,
            ts=time.time(),
            variant=variant,
            index=first + i,
            parameter=parameter,
            value=value,
            parent=parent,
        )  # fmt: skip
        for i, variant in enumerate(v for v in variants if v.name not in known)
    ]
    if events:
        await emit.send(WriteBatch(list(events)))
