"""Connecting to Ray for a `backend = "ray"` run, before its first event; disconnecting after it.

With no address, a local Ray instance is started (the example runs anywhere); `"auto"`, `"host:port"`
or `"ray://host:port"` join an existing cluster. A connection that fails, or a runtime_env that
cannot be set up on a worker (a missing package), is bad configuration: exit 2, nothing logged.
Ray is connected once per process; concurrent runs in one process share the connection, and the
last one to finish disconnects.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from engine.actors.sandbox.probe import sandbox_problem_on_worker
from engine.errors import InputError
from engine.events.spec import RaySpec
from engine.input.experiment_plan import ExperimentPlan
from engine.input.ray_check import check_ray
from engine.input.sandbox_check import sandboxes
from engine.runtime.ray_reaper import kill_started, marked, ray_processes, start_reaper, stop_reaper

WORKER_LOG = "ray._private.worker"
TOKEN_LOG = "ray._private.authentication.authentication_token_setup"

_lock = trio.Lock()
_users = 0
_owned = False  # whether engine connected (a host application's own Ray connection is left alone)
_reaper: subprocess.Popen[bytes] | None = None  # stops the local instance engine started, even on kill -9


@asynccontextmanager
async def ray_session(plan: ExperimentPlan, stopping: trio.Event | None = None) -> AsyncIterator[None]:
    """Connected to Ray inside the block when the experiment runs on Ray; a no-op otherwise. A stop
    (SIGTERM) while Ray starts is honoured at once: the block then runs without Ray (the run sees
    its stop before any trial) and what Ray had started is stopped."""
    execution = plan.spec.execution
    if execution.backend != "ray":
        yield
        return
    global _users, _owned
    async with _lock:
        connected = True
        if _users == 0:
            kinds = _sandbox_kinds(plan)
            connected = await _connect_unless_stopped(execution.ray, plan.file, stopping, kinds)
            _owned = bool(connected)
        if connected is not None:
            _users += 1
    if connected is None:
        yield
        return
    try:
        yield
    finally:
        with trio.CancelScope(shield=True):
            async with _lock:
                _users -= 1
                if _users == 0 and _owned:
                    await trio.to_thread.run_sync(_disconnect)


def _sandbox_kinds(plan: ExperimentPlan) -> tuple[tuple[str, str], ...]:
    """(field, kind) of the run's sandboxes, one per kind: each must start on the workers."""
    first: dict[str, str] = {}
    for field, policy in sandboxes(plan):
        first.setdefault(policy.kind, field)
    return tuple((field, kind) for kind, field in first.items())


async def _connect_unless_stopped(
    settings: RaySpec, file: str, stopping: trio.Event | None, kinds: tuple[tuple[str, str], ...] = ()
) -> bool | None:
    """_connect's answer, or None when a stop came first (ray.init cannot be interrupted: its thread
    is left to finish on its own, and the processes it started so far are killed)."""
    async with trio.open_nursery() as nursery:
        if stopping is not None:

            async def cancel_on_stop() -> None:
                await stopping.wait()
                nursery.cancel_scope.cancel()

            nursery.start_soon(cancel_on_stop)
        connected = await trio.to_thread.run_sync(_connect, settings, file, kinds, abandon_on_cancel=True)
        nursery.cancel_scope.cancel()
        return connected
    kill_started(marked(ray_processes(os.getpid())))
    return None


def _connect(settings: RaySpec, file: str, kinds: tuple[tuple[str, str], ...] = ()) -> bool:
    """Connect (True), or use the connection the embedding application already made (False)."""
    check_ray(settings, file)
    import ray

    owned = not ray.is_initialized()
    if owned:
        _init(settings, file)
        if settings.address is None:  # a local instance: its processes are engine's to stop
            global _reaper
            _reaper = start_reaper(ray_processes(os.getpid()))
    if settings.runtime_env:
        _probe_runtime_env(settings, file, owned)
    if kinds:
        _probe_sandbox(settings, file, owned, kinds)
    return owned


def _probe_sandbox(settings: RaySpec, file: str, owned: bool, kinds: tuple[tuple[str, str], ...]) -> None:
    """A sandboxed run on a worker without bubblewrap is refused before its first event (exit 2). One
    task asks one worker; a worker without it that joins later fails its sandboxed trials as class
    `sandbox` (never runs them unsandboxed)."""
    import ray

    options: dict[str, Any] = {"num_cpus": 0}
    if settings.runtime_env:
        options["runtime_env"] = dict(settings.runtime_env)
    for field, kind in kinds:
        problem = ray.get(ray.remote(sandbox_problem_on_worker).options(**options).remote(kind))
        if problem is not None:
            if owned:
                _disconnect()
            raise InputError(file, field, f"a {kind} sandbox cannot start on the Ray worker {problem}")


def _init(settings: RaySpec, file: str) -> None:
    import ray

    options: dict[str, Any] = {
        "include_dashboard": False, "log_to_driver": False, "configure_logging": False,
        "logging_level": logging.ERROR,
    }  # fmt: skip
    if settings.address is None:
        # a local instance, sized to this machine (or ENGINE_RAY_NUM_CPUS: CI's shared cores)
        cpus = os.environ.get("ENGINE_RAY_NUM_CPUS")
        options["num_cpus"] = int(cpus) if cpus else None
    else:
        options["address"] = settings.address
    _diagnostics_to_stderr()
    # engine handles SIGTERM itself (a graceful stop); Ray says it cannot from a thread: expected here
    for name, quiet in ((WORKER_LOG, _NotSigterm), (TOKEN_LOG, _NotTokenNotice)):
        log = logging.getLogger(name)
        if not any(isinstance(f, quiet) for f in log.filters):
            log.addFilter(quiet())
    try:
        ray.init(**options)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError... for a bad cluster
        message = f"cannot connect to Ray: {_first_line(exc)}"
        raise InputError(file, "execution.ray.address", message) from None


class _NotSigterm(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


class _NotTokenNotice(logging.Filter):
    """Ray's notice that a new local instance uses token authentication: said on every run, nothing
    to act on (the notice that authentication is off still shows)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Token authentication is enabled for this Ray cluster")


def _diagnostics_to_stderr() -> None:
    """Ray's driver prints the cluster's messages ("a worker died...") on stdout, where they would
    corrupt `engine run --json`: they go to stderr, with every other diagnostic."""
    from ray._private import worker

    original = worker.print_to_stdstream
    if getattr(original, "engine_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    to_stderr.engine_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


def _probe_runtime_env(settings: RaySpec, file: str, owned: bool) -> None:
    """One empty task: a runtime_env a worker cannot set up fails here, not on every trial."""
    import ray

    try:  # (the runtime_env goes with each task, so a bad one is told apart from a bad address)
        ray.get(ray.remote(_nothing).options(num_cpus=0, runtime_env=dict(settings.runtime_env)).remote())
    except Exception as exc:  # RuntimeEnvSetupError on the worker; ValueError for a bad working_dir here
        if owned:
            _disconnect()
        raise InputError(file, "execution.ray.runtime_env", f"cannot be set up: {_first_line(exc)}") from None


def _nothing() -> None:
    return None


def _disconnect() -> None:
    import ray

    global _reaper
    ray.shutdown()
    stop_reaper(_reaper)
    _reaper = None


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0][:300] if lines else type(exc).__name__
