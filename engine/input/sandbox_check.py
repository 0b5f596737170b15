"""Before the first event: a sandboxed agent or verifier on a machine where its sandbox cannot start is
refused in one line naming what to install (exit 2), never run unsandboxed instead. On a Ray cluster
the sandbox starts on the workers, so each worker checks before its first trial (actors.ray.task)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from engine.actors.sandbox.limits import nproc_exempt, pids_root
from engine.actors.sandbox.probe import sandbox_problem
from engine.errors import InputError, warn_input
from engine.events.graders import CommandGraderSpec
from engine.events.sandbox import SandboxPolicy
from engine.events.spec import CommandTargetSpec
from engine.input.experiment_plan import ExperimentPlan

NPROC_AS_ROOT = (
    "not enforced here: engine runs as root, which RLIMIT_NPROC exempts, and no pids cgroup "
    "can be made (run engine as another user, or give it a writable pids cgroup)"
)


def sandboxes(plan: ExperimentPlan) -> Iterator[tuple[str, SandboxPolicy]]:
    """(field, policy) of every sandboxed agent and verifier of the run."""
    for field, target in plan.run_targets():
        if isinstance(target, CommandTargetSpec) and target.policy.sandboxed:
            yield f"{field}.sandbox", target.policy
    for i, grader in enumerate(plan.spec.graders):
        if isinstance(grader, CommandGraderSpec) and grader.policy.sandboxed:
            yield f"graders[{i}].sandbox", grader.policy


def check_sandboxes(plan: ExperimentPlan) -> None:
    if plan.spec.execution.backend == "ray":
        return  # the workers check theirs
    for field, policy in sandboxes(plan):
        problem = sandbox_problem(policy.kind)
        if problem is not None:
            raise InputError(plan.file, field, f"a {policy.kind} sandbox cannot start here: {problem}")
        if policy.limits.max_processes is not None and nproc_exempt() and pids_root() is None:
            warn_input(plan.file, field.replace(".sandbox", ".limits.max_processes"), NPROC_AS_ROOT)


def check_service_timeouts(plan: ExperimentPlan, fail: Callable[[str, str], None]) -> None:
    """Services start one after another, each within its timeout_s, and the trial's timeout runs from
    the sandbox's start: services allowed as long as the trial would leave the agent no time at all."""
    for field, target in plan.run_targets():
        if not isinstance(target, CommandTargetSpec) or not target.policy.services:
            continue
        trial = plan.spec.execution.trial_timeout_s or target.timeout_s
        services = sum(service.timeout_s for service in target.policy.services)
        if services >= trial:
            expected = f"expected the services' timeout_s (together {services:g}s) below the trial's "
            fail(f"{field}.services", f"{expected}timeout ({trial:g}s): the agent would get no time left")


def describe_sandboxes(plan: ExperimentPlan) -> str | None:
    """`engine validate`'s line on the sandboxes (None: the run has none)."""
    kinds = sorted({policy.kind for _, policy in sandboxes(plan)})
    if not kinds:
        return None
    where = "checked on each Ray worker" if plan.spec.execution.backend == "ray" else "can start here"
    networks = sorted({policy.network for _, policy in sandboxes(plan)})
    return f"sandbox: {', '.join(kinds)} (network {', '.join(networks)}), {where}"
