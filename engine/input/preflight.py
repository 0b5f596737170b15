"""What a run needs from its environment, checked before the first event is written.

`engine validate` and `engine run` both call it, so a missing API key variable or a
Python target that cannot be imported is one clear line and exit 2, never a crashed
run left "interrupted" in the store.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from engine.actors.graders.factory import judge_target
from engine.actors.targets.base import resolve_target
from engine.actors.targets.python import import_callable
from engine.actors.variants import expand_variants
from engine.errors import InputError, warn_input
from engine.events.graders import GRADERS
from engine.events.spec import EnvRef, ExperimentSpec, HttpTarget, TargetSpec
from engine.events.targets import TARGETS
from engine.input.preflight_command import check_commands
from engine.input.ray_check import check_ray_experiment
from engine.input.validate import variant_field
from engine.store.projections.outcome import unscorable_graders


def run_targets(spec: ExperimentSpec) -> Iterator[tuple[str, TargetSpec]]:
    """Every target a run may call, with the field that configures it."""
    yield "target", spec.target
    for i, variant in enumerate(expand_variants(spec)):
        if variant.target or variant.model is not None:
            yield f"{variant_field(spec, i, variant.name)}.target", resolve_target(spec.target, variant)
    for i, grader in enumerate(spec.graders):
        if GRADERS.of(grader).calls_model:
            yield f"graders[{i}].judge", judge_target(spec.target, grader)[0]


def check_environment(
    spec: ExperimentSpec,
    file: str,
    base_dir: Path | None = None,
    callables: Mapping[str, Callable[..., Any]] | None = None,
) -> None:
    """Raise InputError (file, field, what was expected) for the first target the run could not use."""
    for field, target in run_targets(spec):
        for where, variable, holds in _variables(field, target):
            if not os.environ.get(variable):
                expected = f"expected the environment variable {variable} to hold {holds}; it is not set"
                raise InputError(file, where, expected)
        named = TARGETS.of(target).callable_field
        if named is not None:
            _check_callable(getattr(target, named), f"{field}.{named}", file, base_dir, callables or {})
    check_commands(spec, file, base_dir)
    for i, grader in enumerate(spec.graders):
        named = GRADERS.of(grader).callable_field  # an evaluator module beside the experiment file
        if named is not None:
            _check_callable(getattr(grader, named), f"graders[{i}].{named}", file, base_dir, callables or {})
    # the subject and the cheap graders run on Ray workers; the judges stay here
    travelling = [(f, t) for f, t in run_targets(spec) if not f.startswith("graders")]
    travelling += [(f"graders[{i}]", g) for i, g in enumerate(spec.graders) if GRADERS.of(g).callable_field]
    check_ray_experiment(spec, file, callables or {}, travelling)


def warn_unscorable(spec: ExperimentSpec, file: str) -> None:
    """`validate` and `run` (once, before the run): a grader that runs but can score none of some
    cases; the report repeats it among its warnings."""
    for field, why in unscorable_graders(spec):
        warn_input(file, field, why)


def _variables(field: str, target: TargetSpec) -> Iterator[tuple[str, str, str]]:
    """(field, variable, what it holds) for every environment variable a target reads."""
    if not isinstance(target, HttpTarget):
        return
    if target.api_key_env:
        yield f"{field}.api_key_env", target.api_key_env, "the API key"
    for name, value in target.headers.items():
        if isinstance(value, EnvRef):
            yield f"{field}.headers.{name}", value.env, f"the {name} header"


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
