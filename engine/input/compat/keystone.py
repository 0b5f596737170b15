"""Keystone agent-eval shapes: `parallelism: {replicas, matrix, isolation}` (repeats and matrix variants)
and `resources: {concurrency_limit}` (the executor pool's size)."""

from __future__ import annotations

from typing import Any

from engine.errors import InputError
from engine.input.compat.common import move, table_of


def normalize_keystone(out: dict[str, Any], file: str) -> dict[str, Any]:
    _parallelism(out, file)
    return out


def _parallelism(out: dict[str, Any], file: str) -> None:
    if "parallelism" in out:
        parallelism = dict(table_of(out.pop("parallelism"), file, "parallelism"))
        isolation = parallelism.pop("isolation", "per_run")
        if isolation not in ("per_run", "shared"):
            raise InputError(file, "parallelism.isolation", "expected 'per_run' or 'shared'")
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
