"""What a run needs from its environment, checked before the first event is written.

`engine validate` and `engine run` both call it, so a missing API key variable or a
Python target that cannot be imported is one clear line and exit 2, never a crashed
run left "interrupted" in the store.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from engine.actors.targets.python_target import import_callable
from engine.errors import InputError, warn_input
from engine.events.graders import GRADERS
from engine.events.spec import EnvRef, ExperimentSpec, HttpTarget, TargetSpec
from engine.events.targets import TARGETS, CommandTargetSpec
from engine.input.experiment_plan import ExperimentPlan
from engine.input.preflight_command import check_commands
from engine.input.ray_check import check_ray_experiment
from engine.input.sandbox_check import check_sandboxes
from engine.store.projections.outcome import unscorable_graders


def check_environment(
    plan: ExperimentPlan, callables: Mapping[str, Callable[..., Any]] | None = None
) -> None:
    """Raise InputError (file, field, what was expected) for the first target the run could not use."""
    spec, file, base_dir = plan.spec, plan.file, plan.base_dir
    for field, target in plan.run_targets():
        for where, variable, holds in _variables(field, target):
            if not os.environ.get(variable):
                expected = f"expected the environment variable {variable} to hold {holds}; it is not set"
                raise InputError(file, where, expected)
        named = TARGETS.of(target).callable_field
        if named is not None:
            _check_callable(getattr(target, named), f"{field}.{named}", file, base_dir, callables or {})
    check_commands(plan)
    check_sandboxes(plan)
    for i, grader in enumerate(spec.graders):
        named = GRADERS.of(grader).callable_field  # an evaluator module beside the experiment file
        if named is not None:
            _check_callable(getattr(grader, named), f"graders[{i}].{named}", file, base_dir, callables or {})
    # the subject and the cheap graders run on Ray workers; the judges stay here
    travelling = [(f, t) for f, t in plan.run_targets() if not f.startswith("graders")]
    travelling += [(f"graders[{i}]", g) for i, g in enumerate(spec.graders) if GRADERS.of(g).callable_field]
    check_ray_experiment(spec, file, callables or {}, travelling)


def warn_unscorable(plan: ExperimentPlan) -> None:
    """`validate` and `run` (once, before the run): a grader that runs but can score none of some
    cases; the report repeats it among its warnings."""
    for field, why in unscorable_graders(plan.spec):
        warn_input(plan.file, field, why)


def warn_free_race(plan: ExperimentPlan) -> None:
    """A race on cost per pass ranks by what trials cost: a model with no price costs nothing, and
    the race would rank its variants as free (an agent or a Python target may report its own cost)."""
    spec, stopping = plan.spec, plan.spec.stopping
    if stopping is None or stopping.rule != "race" or stopping.objective != "cost_per_pass":
        return
    free = [name for name, target in plan.targets.items() if _unpriced(spec, target)]
    if free:
        warn_input(
            plan.file, "stopping.objective",
            f"cost_per_pass, but {', '.join(free)} run a model with no price ([pricing] or the target's "
            "price): their trials cost 0 and the race ranks them as free",
        )  # fmt: skip


def _unpriced(spec: ExperimentSpec, target: TargetSpec) -> bool:
    if not TARGETS.of(target).priced_per_token or target.price is not None:
        return False
    return target.model is None or target.model not in spec.pricing


def _variables(field: str, target: TargetSpec) -> Iterator[tuple[str, str, str]]:
    """(field, variable, what it holds) for every environment variable a target reads."""
    kind = TARGETS.of(target)  # its declaration holds the spec to HttpTarget / CommandTargetSpec
    tables: dict[str, dict[str, str | EnvRef]] = {}
    if kind.speaks_http:
        http = cast(HttpTarget, target)
        if http.api_key_env:
            yield f"{field}.api_key_env", http.api_key_env, "the API key"
        tables = {"headers": http.headers, "query": http.query}
    elif kind.runs_command:
        tables = {"env": cast(CommandTargetSpec, target).env}
    for table, values in tables.items():
        for name, value in values.items():
            if isinstance(value, EnvRef):
                yield f"{field}.{table}.{name}", value.env, f"the {name} {table.rstrip('s')}"


def _check_callable(
    name: str, field: str, file: str, base_dir: Path | None, callables: Mapping[str, Callable[..., Any]]
) -> None:
    if name in callables:
        return
    try:
        import_callable(name, base_dir)
    except Exception as exc:  # whatever importing the user's module raised, said in one line
        where = f"sys.path, then {base_dir}" if base_dir is not None else "sys.path"
        why = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError) else str(exc)
        expected = f"cannot import {name!r} ({why}; modules are looked up on {where})"
        raise InputError(file, field, expected) from None
