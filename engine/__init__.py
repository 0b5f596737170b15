"""engine: run A/B/n experiments on LLM apps and agents, event-sourced on LMDB.

The public embedding surface, re-exported lazily (the way trio re-exports from private modules), so
`import engine` and `engine --help` stay fast:

    from engine import open_engine, load_experiment, spec_from_dict, TargetRequest, TargetResponse

The layers install as one namespace: engine.events (the vocabulary), engine.stats (pure statistics),
engine.store (the log and projections), engine.actors, engine (loading, runtime, views) and engine.cli.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "open_engine": "engine.api",
    "Engine": "engine.api",
    "RunHandle": "engine.api",
    "spec_from_dict": "engine.api",
    "load_experiment": "engine.api",
    "new_run_id": "engine.api",
    # hosts that are not Trio programs: a blocking call, and a Trio guest inside asyncio
    "run_experiment": "engine.hosts",
    "open_engine_asyncio": "engine.hosts",
    "EngineError": "engine.events.errors",
    "InputError": "engine.errors",
    "UserError": "engine.errors",
    "TargetRequest": "engine.actors.targets.target_protocol",
    "TargetResponse": "engine.actors.targets.target_protocol",
    "RunReport": "engine.events.report",
    "ExperimentSpec": "engine.events.spec",
    # the events a handle streams, for `isinstance` checks in the host application
    "Event": "engine.events.kinds",
    "TrialCompleted": "engine.events.kinds",
    "TrialFailed": "engine.events.kinds",
    "TrialGraded": "engine.events.kinds",
    "RunCompleted": "engine.events.kinds",
    # the web view as an ASGI app (needs the `serve` extra: starlette, hypercorn)
    "serve_app": "engine.web.app",
}

__all__ = [
    "Engine",
    "EngineError",
    "Event",
    "ExperimentSpec",
    "InputError",
    "RunCompleted",
    "RunHandle",
    "RunReport",
    "TargetRequest",
    "TargetResponse",
    "TrialCompleted",
    "TrialFailed",
    "TrialGraded",
    "UserError",
    "load_experiment",
    "new_run_id",
    "open_engine",
    "open_engine_asyncio",
    "run_experiment",
    "serve_app",
    "spec_from_dict",
]

if TYPE_CHECKING:
    from engine.actors.targets.target_protocol import TargetRequest, TargetResponse
    from engine.api import Engine, RunHandle, load_experiment, new_run_id, open_engine, spec_from_dict
    from engine.errors import InputError, UserError
    from engine.events.errors import EngineError
    from engine.events.kinds import Event, RunCompleted, TrialCompleted, TrialFailed, TrialGraded
    from engine.events.report import RunReport
    from engine.events.spec import ExperimentSpec
    from engine.hosts import open_engine_asyncio, run_experiment
    from engine.web.app import serve_app


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
