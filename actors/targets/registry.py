"""Target kinds: one line each. A new kind is a module with a class that has
`from_spec(spec, context)`, `call(request)` and `aclose()`, plus its line here and its spec
Struct in engine.events.targets."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from engine.actors.targets.base import Target, TargetContext
from engine.events.registry import Registry
from engine.events.spec import TargetSpec

TARGETS: Registry[type] = Registry(
    "target kind",
    {
        "local": "engine.actors.targets.local:LocalTarget",
        "openai": "engine.actors.targets.openai:OpenAITarget",
        "anthropic": "engine.actors.targets.anthropic:AnthropicTarget",
        "command": "engine.actors.targets.command:CommandTarget",
        "python": "engine.actors.targets.python:PythonTarget",
    },
)


def make_target(spec: TargetSpec, context: TargetContext | None = None) -> Target:
    """One target per executor worker and resolved spec (each worker owns its connections)."""
    return TARGETS.get(spec.kind).from_spec(spec, context or TargetContext())  # type: ignore[attr-defined]


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
