"""Targets made from their spec, through the kind's declaration (engine.events.targets.TARGETS)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from engine.actors.targets.target_protocol import Target, TargetClass, TargetContext, TargetError
from engine.events.targets import TARGETS, TargetSpec


def make_target(spec: TargetSpec, context: TargetContext | None = None) -> Target:
    """One target per executor worker and resolved spec (each worker owns its connections)."""
    kind = TARGETS.of(spec)
    if not kind.installed:  # named by a stored run (a resumed one): it cannot be called
        raise TargetError("config", f"the target kind {spec.kind!r} is not installed")
    made: TargetClass = kind.implementation()
    return made.from_spec(spec, context or TargetContext())


def target_maker(
    callables: Mapping[str, Callable[..., Any]] | None = None, base_dir: Path | None = None
) -> Callable[[TargetSpec], Target]:
    """make_target bound to a run's context: its registered callables and the experiment's folder."""
    return TargetMaker(TargetContext(callables or {}, base_dir))


class TargetMaker:
    """make_target with a run's context; python graders read the context to find their callable."""

    def __init__(self, context: TargetContext) -> None:
        self.context = context

    def __call__(self, spec: TargetSpec) -> Target:
        return make_target(spec, self.context)
