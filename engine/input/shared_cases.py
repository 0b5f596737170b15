"""A plan's cases with their empty collections shared, for a process that owns the plan outright.

Each case carries a tags list, a criteria dict and a metadata dict, most of them empty: three fresh
objects per case, 184 bytes (~18 MiB at 100,000 cases; benchmarks/README.md, "One report state per
live run"). `engine run` owns the plan it loads (nobody else holds it: targets and graders are handed
private copies, actors.targets.python_target.private_copy), so it gives each of a plan's cases the
same three empties (a big plan's cases are decoded afresh with them: engine.input.compact_cases).
A library caller's plan (`load_plan`, `spec_from_dict`) keeps its own: the caller
may hold its cases and edit one in place. Fresh empties per plan, so that nothing reaches across
plans; they encode as the per-case ones do (a Struct omits an empty list or dict left at its default).
"""

from __future__ import annotations

from typing import Any

from engine.events.spec import ExperimentSpec
from engine.input import compact_cases


def share_empty_collections(spec: ExperimentSpec) -> dict[str, Any]:
    """Give every case of `spec` whose tags, criteria or metadata are empty one shared empty object
    each (in place: the cases are the caller's own); the shared objects, for a test to look at. A
    big plan's cases are decoded afresh with the shared empties (engine.input.compact_cases): set on
    the cases as they are, the per-case empties would leave their holes among the cases."""
    empties: dict[str, Any] = {"tags": [], "criteria": {}, "metadata": {}}
    big = len(spec.cases) >= compact_cases.COMPACT_FROM
    fresh = compact_cases.decoded_afresh(spec.cases, empties) if big else None
    if fresh is not None:
        spec.cases[:] = fresh
        return empties
    compact_cases.share_empties(spec.cases, empties)
    return empties
