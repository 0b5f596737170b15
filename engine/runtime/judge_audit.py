"""`engine judge-audit RUN`: how stable is the run's judge? Regrade a sample of its outputs with the
same judge graders and compare with the grades the run logged. The subject is never called and
nothing is written to the log: an audit only reads and asks the judge again.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import trio

from engine.actors.executor import MakeTarget
from engine.actors.graders.factory import make_graders
from engine.actors.graders.grader_protocol import Submission
from engine.actors.targets.target_maker import target_maker
from engine.errors import InputError, UserError
from engine.events import kinds as k
from engine.events.graders import GRADERS
from engine.events.report import LabelAgreement
from engine.runtime.run_status import run_state
from engine.runtime.workers import grader_context
from engine.store.blobs import read_text
from engine.store.contract import EventStore
from engine.store.projection import run_events
from engine.store.projections.label_agreement import label_agreement
from engine.store.projections.labels import has_labels, load_labelled


class JudgeStability(msgspec.Struct, kw_only=True):
    grader: str
    sampled: int  # outputs judged again
    same_score: int  # exactly the score logged
    mean_abs_change: float | None  # on the 0-1 scale, over outputs scored both times
    max_abs_change: float | None
    pass_flips: int  # passed once, failed the other time
    unparseable: int  # the new answer could not be read


class JudgeUnreachable(UserError):
    """The judge could not be asked (a refused connection, a server error): an audit of a dead judge
    would only count every answer as unreadable. Exit code 1, as `engine run` on an unreachable
    target."""

    exit_code = 1


class JudgeAudit(msgspec.Struct, kw_only=True):
    run_id: str
    judges: list[JudgeStability]
    people: LabelAgreement | None = None  # the judges against people's labels, when the run has any


def _sample(log: EventStore, run_id: str, grading: int, size: int, seed: int) -> list[k.TrialGraded]:
    graded = [e for e in run_events(log, run_id, {"trial.graded"})
              if isinstance(e, k.TrialGraded) and e.grading == grading]  # fmt: skip
    unique = sorted({(e.variant, e.case, e.repeat): e for e in graded}.items())
    chosen = random.Random(seed).sample(unique, min(size, len(unique)))
    return [event for _, event in sorted(chosen, key=lambda item: item[0])]


async def judge_audit(
    log: EventStore, run_id: str, sample: int = 20, make_target: MakeTarget | None = None, seed: int = 0
) -> JudgeAudit:
    state = await trio.to_thread.run_sync(run_state, log, run_id)
    assert state.spec is not None
    judges = [g for g in state.spec.graders if GRADERS.of(g).calls_model and not GRADERS.of(g).pairwise]
    if not judges:
        raise InputError("engine judge-audit", "RUN", f"run {run_id} has no judge grader to audit")
    graders = make_graders(judges, grader_context(state.spec, state, make_target or target_maker()))
    outputs = _output_hashes(log, run_id)
    cases = {c.id: c for c in state.spec.cases}
    changes: dict[str, list[tuple[float | None, float | None, bool, bool]]] = {
        g.spec.name or "judge": [] for g in graders
    }
    for event in _sample(log, run_id, state.grading, sample, seed):
        key = (event.variant, event.case, event.repeat)
        if key not in outputs or event.case not in cases:
            continue
        output = await trio.to_thread.run_sync(read_text, log, outputs[key]) or ""
        submission = Submission(
            case=cases[event.case], output=output, variant=state.variants.get(event.variant)
        )
        logged = {g.name: g for g in event.grades}
        for grader in graders:
            again = await grader.grade(submission)
            if again.error == "judge_failed":  # stop at once: asking a dead judge 20 times says nothing more
                await _close(graders)
                raise JudgeUnreachable(f"engine judge-audit: judge {again.name!r}: {again.reason}")
            before = logged.get(again.name)
            if before is not None:
                changes[again.name].append((before.score, again.score, before.passed, again.passed))
    await _close(graders)
    people = await trio.to_thread.run_sync(_people, log, run_id)
    judges = [_stability(name, found) for name, found in changes.items()]
    return JudgeAudit(run_id=run_id, judges=judges, people=people)


def _people(log: EventStore, run_id: str) -> LabelAgreement | None:
    return label_agreement(load_labelled(log, run_id)) if has_labels(log, run_id) else None


async def _close(graders: list[Any]) -> None:
    for grader in graders:
        await grader.aclose()


def _output_hashes(log: EventStore, run_id: str) -> dict[tuple[str, str, int], str]:
    completed = (e for e in run_events(log, run_id, set(k.OUTPUT_TAGS)) if isinstance(e, k.TrialCompleted))
    return {(e.variant, e.case, e.repeat): e.output_hash for e in completed}


def _stability(name: str, found: list[tuple[float | None, float | None, bool, bool]]) -> JudgeStability:
    diffs = [abs(a - b) for a, b, _, _ in found if a is not None and b is not None]
    return JudgeStability(
        grader=name, sampled=len(found), same_score=sum(1 for d in diffs if d < 1e-9),
        mean_abs_change=round(sum(diffs) / len(diffs), 6) if diffs else None,
        max_abs_change=round(max(diffs), 6) if diffs else None,
        pass_flips=sum(1 for _, _, p, q in found if p != q),
        unparseable=sum(1 for _, b, _, _ in found if b is None),
    )  # fmt: skip
