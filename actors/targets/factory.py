"""Make a target from its spec (one per executor worker and spec)."""

from __future__ import annotations

from engine.actors.targets.base import Target
from engine.events.spec import TargetSpec


def make_target(spec: TargetSpec) -> Target:
    if spec.kind == "local":
        from engine.actors.targets.local import LocalTarget

        return LocalTarget()
    if spec.kind == "command":
        from engine.actors.targets.command import CommandTarget

        return CommandTarget(spec)
    if spec.kind == "openai":
        from engine.actors.targets.openai import OpenAITarget

        return OpenAITarget(spec)
    if spec.kind == "anthropic":
        from engine.actors.targets.anthropic import AnthropicTarget

        return AnthropicTarget(spec)
    raise ValueError(f"target kind {spec.kind!r} needs the embedding API (python) or is unknown")
