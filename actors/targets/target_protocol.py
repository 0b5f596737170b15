"""The target interface every executor worker calls.

A target is made per worker (so each worker owns its HTTP connection pool) and
per resolved TargetSpec (a variant may override the experiment's target).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgspec

from engine.actors.secrets import remember
from engine.events.errors import EngineError
from engine.events.kinds import ErrorKind
from engine.events.spec import CaseSpec, TargetSpec, VariantSpec, variant_target
from engine.events.spec_base import EnvRef


class TargetRequest(msgspec.Struct, kw_only=True, frozen=True):
    """Everything a target needs for one trial (not an event: never logged as such)."""

    run_id: str
    variant: VariantSpec
    case: CaseSpec
    repeat: int
    prompt: str
    system: str | None = None
    context: str | None = None
    model: str | None = None
    params: dict[str, Any] = {}
    flags: dict[str, Any] = {}
    # deterministic per trial: same (run seed, variant, case, repeat) -> same seed
    seed: int = 0
    timeout_s: float = 60.0
    # an exit_code grader or a verifier judges the result: a non-zero exit is then graded, not an error
    accept_nonzero_exit: bool = False
    # a grader runs in the trial's workspace: a command agent keeps it for the grader (who removes it)
    keep_workspace: bool = False


class TargetResponse(msgspec.Struct, kw_only=True):
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    exit_code: int | None = None
    attempts: int = 1
    stderr: str = ""  # an agent's diagnostics, kept as a blob next to its output
    metrics: dict[str, float] = {}  # what an agent reported of itself (tool calls...)
    transcript: str = ""  # the conversation a command agent wrote (ENGINE_TRANSCRIPT), JSONL
    tools: dict[str, int] = {}  # the transcript's tool calls per tool name
    service_logs: dict[str, str] = {}  # a sandbox's services' output by name, kept as blobs beside stderr
    # a streamed answer's: request sent to first content token, and tokens per second after it
    ttft_ms: float | None = None
    tokens_per_s: float | None = None
    workspace: str = ""  # the trial's workspace, kept for a grader (keep_workspace)
    workspace_owned: bool = False  # a per-trial one: whoever grades it removes it


_DEFAULT_CLASS = {"infra": "network", "timeout": "timeout", "model": "subject_error", "config": "config"}


class TargetError(EngineError):
    """A trial that could not produce an output.

    `retryable` marks transient infrastructure errors (connect, network, HTTP 429 and
    5xx): they are retried up to max_retries. A timeout, a malformed response or a
    crash of the subject is recorded once, unless the target lists its class in
    `retry_on`. `error_class` names what went wrong for reports ("connect", "agent_exit"), and
    `agent_exit_code` the code a command agent exited with. One that reaches the CLI (a target that
    cannot even be built or asked outside a trial) exits 1, as a run whose target is unreachable.
    """

    exit_code = 1

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        throttled: bool = False,
        error_class: str = "",
        agent_exit_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after
        # the server said "too many requests" (HTTP 429): the adaptive limit backs off
        self.throttled = throttled or retry_after is not None
        self.error_class = error_class or _DEFAULT_CLASS.get(kind, kind)
        self.agent_exit_code = agent_exit_code
        self.attempts = 1


class Target(Protocol):
    async def call(self, request: TargetRequest) -> TargetResponse: ...

    async def aclose(self) -> None: ...


class TargetClass(Protocol):
    """A target kind's implementation (what its declaration's `impl` names): made from its spec."""

    def from_spec(self, spec: Any, context: TargetContext) -> Target: ...


@dataclass(frozen=True)
class TargetContext:
    """What building a target may need beyond its spec: Python callables an embedding application
    registered by name, and the folder where relative paths and modules resolve (the experiment
    file's)."""

    callables: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    base_dir: Path | None = None


def resolve_target(default: TargetSpec, variant: VariantSpec) -> TargetSpec:
    """The experiment's target with the variant's overrides applied."""
    return variant_target(default, variant)


MAX_AMOUNT = 1e15  # beyond any real token count or bill: a larger figure is a broken report
_NUMBER = (int, float)  # made once: `int | float` in isinstance builds a union at every call


def check_response(response: TargetResponse) -> None:
    """The event boundary: what any target returned (a python callable included) must be real
    amounts before it is logged, or the trial is a bad_metrics error. A NaN cost or a negative token
    count in the log would poison the run's budgets and report."""
    r = response
    for name, value in (("tokens_in", r.tokens_in), ("tokens_out", r.tokens_out), ("cost_usd", r.cost_usd)):
        if not isinstance(value, _NUMBER) or not math.isfinite(value) or not 0 <= value <= MAX_AMOUNT:
            raise TargetError("model", f"bad metrics: {name} = {value!r}", error_class="bad_metrics")
    for name, value in response.metrics.items():
        if not isinstance(value, _NUMBER) or not math.isfinite(value):
            raise TargetError("model", f"bad metrics: {name} = {value!r}", error_class="bad_metrics")


def env_secret(value: EnvRef, what: str) -> str:
    """The value of the variable an `{ env = "VAR" }` names, remembered as a secret (redacted from
    everything the run writes: an echo of it in an error body, an agent printing its environment)."""
    found = os.environ.get(value.env)
    if not found:
        raise TargetError("config", f"environment variable {value.env} ({what}) is not set")
    return remember(found)
