"""Keystone agent-eval shapes: `agent: {type: cli, binary, args}` (a command target),
`parallelism: {replicas, matrix, isolation}` (repeats and matrix variants) and
`resources: {concurrency_limit}` (the executor pool's size).

In Keystone an agent's exit code is part of its scenario's result (agents exit non-zero when their
tests fail), and only a sandbox that fails to boot, a timeout or an infrastructure fault is an error.
So an agent block brings an `exit_code` gate: a non-zero exit is graded, and fails the replica."""

from __future__ import annotations

from typing import Any

from engine.errors import InputError
from engine.input.compat.common import move, table_of

AGENT_FIELDS = ("type", "binary", "args", "env", "timeout_seconds", "workdir")


def normalize_keystone(out: dict[str, Any], file: str) -> dict[str, Any]:
    if "agent" in out:
        move(out, ("target",), _agent(table_of(out.pop("agent"), file, "agent"), file), file, "agent")
        _exit_code_gate(out)
    _parallelism(out, file)
    return out


def _agent(agent: dict[str, Any], file: str) -> dict[str, Any]:
    """{type: cli, binary, args}: the binary runs once per trial with args ({{ matrix.x }} filled in);
    a relative binary resolves against the spec's folder, a bare name on PATH."""
    unknown = [key for key in agent if key not in AGENT_FIELDS]
    if unknown:
        raise InputError(file, f"agent.{unknown[0]}", f"expected one of {', '.join(AGENT_FIELDS)}")
    if agent.get("type", "cli") != "cli":
        raise InputError(file, "agent.type", f"expected 'cli' (a local agent binary), got {agent['type']!r}")
    binary, args = agent.get("binary"), agent.get("args", [])
    if not isinstance(binary, str) or not binary:
        raise InputError(file, "agent.binary", "expected the agent's executable (a name on PATH or a path)")
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        raise InputError(file, "agent.args", "expected a list of arguments")
    target: dict[str, Any] = {"kind": "command", "command": [binary, *map(str, args)]}
    for key, field in (("env", "env"), ("timeout_seconds", "timeout_s"), ("workdir", "workdir")):
        if key in agent:
            target[field] = agent[key]
    return target


def _exit_code_gate(out: dict[str, Any]) -> None:
    """Add the exit_code gate unless the file judges exit codes itself. It carries no weight when
    other graders score (the composite stays theirs; a non-zero exit fails the replica as a gate)."""
    graders = out.get("graders")
    if graders is None:
        graders = []
    if not isinstance(graders, list):
        return  # validation names the field
    if any(isinstance(g, dict) and g.get("kind") == "exit_code" for g in graders):
        return
    weighted = any(isinstance(g, dict) and g.get("kind") != "forbidden" for g in graders)
    gate = {"kind": "exit_code", "name": "exit_code", "gate": True, "weight": 0.0 if weighted else 1.0}
    out["graders"] = [*graders, gate]


def _share_workspace(out: dict[str, Any], file: str) -> None:
    target = out.get("target")
    if not isinstance(target, dict) or target.get("kind") != "command":
        expected = "'shared' shares a cli agent's workspace: expected an agent block"
        raise InputError(file, "parallelism.isolation", expected)
    out["target"] = {**target, "workspace": "shared"}


def _parallelism(out: dict[str, Any], file: str) -> None:
    if "parallelism" in out:
        parallelism = dict(table_of(out.pop("parallelism"), file, "parallelism"))
        isolation = parallelism.pop("isolation", "per_run")
        if isolation not in ("per_run", "shared"):
            raise InputError(file, "parallelism.isolation", "expected 'per_run' or 'shared'")
        if isolation == "shared":  # the replicas reuse one workspace: faster, and state can leak
            _share_workspace(out, file)
        if "replicas" in parallelism:
            move(out, ("repeat", "count"), parallelism.pop("replicas"), file, "parallelism.replicas")
        if "matrix" in parallelism:
            move(out, ("matrix",), parallelism.pop("matrix"), file, "parallelism.matrix")
        if parallelism:
            raise InputError(
                file, f"parallelism.{next(iter(parallelism))}", "expected replicas, matrix or isolation"
            )
    if "resources" in out:
        resources = dict(table_of(out.pop("resources"), file, "resources"))
        if "concurrency_limit" in resources:
            limit = resources.pop("concurrency_limit")
            move(out, ("execution", "concurrency"), limit, file, "resources.concurrency_limit")
        if resources:
            raise InputError(file, f"resources.{next(iter(resources))}", "expected concurrency_limit")
