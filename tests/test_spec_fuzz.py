"""A fuzz of experiment files: `validate` either accepts a file or names what is wrong (exit 2), and a
file it accepts runs without crashing. Never a traceback, whatever the file holds.

The default suite tries a few hundred mutations in-process; the slow mark runs thousands.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
import trio
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine.api import open_engine
from engine.errors import UserError
from engine.input.loader import load_plan
from engine.input.preflight import check_environment
from engine.input.run_size import check_size, planned_trials
from engine.store.memory import MemoryStore

BASE: dict[str, Any] = {
    "name": "fuzz",
    "seed": 3,
    "target": {"kind": "local", "timeout_s": 5, "max_retries": 1},
    "params": {"temperature": 0.5, "max_tokens": 16},
    "variants": [{"name": "a"}, {"name": "b", "params": {"temperature": 0.1}, "target": {"timeout_s": 3}}],
    "repeat": {"count": 2},
    "execution": {"concurrency": 2, "trial_timeout_s": 5},
    "graders": [{"kind": "contains"}, {"kind": "judge", "judge": {"kind": "local"}}],
    "cases": [{"id": "c1", "prompt": "What is the capital of France?", "expected": "Paris"},
              {"id": "c2", "prompt": "2+2?", "expected": "4", "tags": ["math"]}],
    "budget": {"max_trials": 50},
    "tune": {"parameters": [{"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.5, "default": 0.5}],
             "max_experiments": 2},
}  # fmt: skip

ODD_VALUES = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, -1, -3, 0, 2**63, 2**64, 10**7, 10**9, 1e308, -0.0]),
    st.sampled_from(["", "\0", "a\0b", "$(touch x)", "{case_id}", "x" * 600, "judge", "banana", "nan"]),
    st.sampled_from([None, True, [], {}, [1, "a"], {"kind": "banana"}, {"env": "SURELY_UNSET_VAR_X"}]),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in the file a value can be replaced or a key added."""
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found += paths(child, (*prefix, i))
    return found


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    if draw(st.booleans()):
        data["kind"] = "tune"
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        where = draw(st.sampled_from(paths(data)))
        value = copy.deepcopy(draw(ODD_VALUES))  # a shared [] or {} would make cycles
        if not where:
            continue
        parent = data
        for step in where[:-1]:
            parent = parent[step]
        if draw(st.integers(0, 4)) == 0 and isinstance(parent, dict):
            parent[draw(st.sampled_from(["kind", "nope", "command", "cron", "judge", "step"]))] = value
        else:
            parent[where[-1]] = value
    return data


def check_file(tmp_path: Path, data: dict[str, Any]) -> None:
    file = tmp_path / "exp.yaml"
    file.write_text(yaml.safe_dump(data, allow_unicode=True))
    try:
        plan = load_plan(file)
        check_size(plan, allow_large=False)
        check_environment(plan)
    except UserError as exc:
        assert str(exc).startswith(str(file)), exc  # names the file, then the field
        event("refused")
        return
    if planned_trials(plan) > 200:
        event("accepted, too large to run here")
        return  # accepted; too long to run here (its size was checked above)
    event("accepted and run")
    spec = plan.spec

    async def run() -> None:
        async with open_engine(MemoryStore()) as eng:
            with trio.fail_after(120):  # a hang guard
                await eng.run(spec, source=str(file))

    trio.run(run)


FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings(FUZZ, max_examples=300)
@given(mutated())
def test_a_mutated_file_is_refused_clearly_or_runs(tmp_path: Path, data: dict[str, Any]) -> None:
    check_file(tmp_path, data)


@pytest.mark.slow
@settings(FUZZ, max_examples=3000)
@given(mutated())
def test_many_mutated_files_are_refused_clearly_or_run(tmp_path: Path, data: dict[str, Any]) -> None:
    check_file(tmp_path, data)
