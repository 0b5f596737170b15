"""What actors pass each other over channels (not events: these are never logged as such)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from engine.actors.targets.target_protocol import TargetRequest
from engine.events.kinds import Event, GraderResult, TrialCompleted
from engine.events.spec import CaseSpec, TargetSpec, VariantSpec

if TYPE_CHECKING:  # only in annotations: the plan and `engine list` import these without trio
    import trio

TrialKey = tuple[str, str, int]  # (variant, case, repeat)


@dataclass(slots=True)
class WriteBatch:
    """Events (and the blobs they refer to) for the log writer.

    `folded` is set once the batch is durable and the aggregator has folded it:
    a barrier for the engine at the end of a run.
    """

    events: list[Event]
    blobs: list[tuple[str, bytes]] = field(default_factory=list)
    folded: trio.Event | None = None


class Committed(NamedTuple):
    """What one commit of the log writer made durable, for the aggregator."""

    batches: list[WriteBatch]
    last_seq: int  # the number of the last event they added


@dataclass(slots=True)
class TrialJob:
    variant: VariantSpec
    case: CaseSpec
    repeat: int
    target: TargetSpec
    request: TargetRequest
    reserved: tuple[int, float] = (0, 0.0)  # the tokens and dollars the budgets hold for it
    budgeted: bool = False  # a budget counts it: its start is durable before the subject is called
    fingerprint: str = ""  # the request's (actors.targets.fingerprint): logged with its completion

    @property
    def key(self) -> TrialKey:
        return (self.variant.name, self.case.id, self.repeat)


@dataclass(slots=True)
class GradeJob:
    """An output to grade: fresh from an executor, or re-read from the log on resume/regrade."""

    variant: VariantSpec
    case: CaseSpec
    repeat: int
    output: str
    completed: TrialCompleted
    grading: int = 0
    # results of the cheap graders, already run where the output was made (a Ray worker), in the
    # graders' order; None where a grader (an LLM judge) still has to run in the coordinator
    precomputed: list[GraderResult | None] | None = None
    # the trial's workspace, kept for a grader that runs in it; removed after grading when owned
    workspace: str = ""
    workspace_owned: bool = False


@dataclass(slots=True)
class TrialDone:
    """Aggregator -> scheduler: a trial reached a final state (graded, failed or skipped)."""

    key: TrialKey
    passed: bool | None  # None: errored or skipped
    error_class: str = ""  # why it errored, for the unreachable-target check


@dataclass(slots=True)
class StopRequested:
    """Aggregator/watcher -> scheduler: stop scheduling (cancel event, signal)."""

    reason: str


Feedback = TrialDone | StopRequested
