"""Which variants and cases two compared runs share, and what differs between their specs: the
warnings a comparison carries, and the variant pairs it compares.
"""

from __future__ import annotations

import msgspec

from engine.errors import InputError
from engine.store.projections.run_state import RunState


def spec_warnings(base: RunState, cand: RunState) -> list[str]:
    """Runs of different specs are compared all the same; say which fields differ (cases: above)."""
    if base.spec_hash == cand.spec_hash:
        return []
    b, c = msgspec.structs.asdict(base.spec), msgspec.structs.asdict(cand.spec)  # type: ignore[arg-type]
    fields = [name for name in b if name not in ("cases", "suite", "suites") and b[name] != c.get(name)]
    return [f"the runs' specs differ in: {', '.join(fields)}"] if fields else []


def case_set_warnings(base: RunState, cand: RunState) -> list[str]:
    assert base.spec is not None and cand.spec is not None
    b, c = {x.id for x in base.spec.cases}, {x.id for x in cand.spec.cases}
    if b == c:
        return []
    only = f"{len(b - c)} only in baseline, {len(c - b)} only in candidate"
    return [f"case sets differ: {only}; compared the {len(b & c)} shared cases"]


def matched_variants(base: RunState, cand: RunState) -> list[tuple[str, str]]:
    shared = [name for name in cand.variants if name in base.variants]
    if shared:
        return [(name, name) for name in shared]
    if len(base.variants) == 1 and len(cand.variants) == 1:
        return [(next(iter(base.variants)), next(iter(cand.variants)))]
    return []


def chosen_variants(base: RunState, cand: RunState, names: tuple[str, str]) -> list[tuple[str, str]]:
    for state, name, field in ((base, names[0], "--base-variant"), (cand, names[1], "--variant")):
        if name not in state.variants:
            known = ", ".join(state.variants)
            raise InputError(state.run_id, field, f"expected one of its variants ({known}), got {name!r}")
    return [names]
