"""Target construction for the engine: built-in kinds plus Python callables registered by an embedding app."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from engine.actors.executor import MakeTarget
from engine.actors.targets.base import Target
from engine.actors.targets.python import PythonTarget, import_callable
from engine.events.spec import TargetSpec


def target_maker(
    callables: Mapping[str, Callable[..., Any]] | None = None, base_dir: Path | None = None
) -> MakeTarget:
    """Python targets resolve a registered callable by name, else import 'module:function' (modules
    are looked up on sys.path, then in base_dir: the experiment file's folder)."""
    registered = dict(callables or {})

    def make(spec: TargetSpec) -> Target:
        if spec.kind == "python":
            name = spec.callable or ""
            return PythonTarget(registered.get(name) or import_callable(name, base_dir))
        from engine.actors.targets.factory import make_target

        return make_target(spec)

    return make
