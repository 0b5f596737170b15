"""`engine regrade RUN --labels`: a grading round with people's labels as the ground truth.

Labelled trials take the person's verdict (and score: the label's, else 1 for pass and 0 for fail);
every other trial keeps the verdict its judges gave in the round before. No grader is called: the
round is made from what the log holds, and the report counts the two kinds apart.
"""

from __future__ import annotations

import time

import msgspec
import trio

from engine.events import kinds as k
from engine.events.report import RunReport
from engine.runtime.pipeline import open_pipeline
from engine.runtime.run_status import run_state
from engine.store.contract import EventStore
from engine.store.projection import run_events
from engine.store.projections.labels import load_labels

BATCH = 500


async def label_round(log: EventStore, run_id: str, name: str = "") -> RunReport:
    folded_to = await trio.to_thread.run_sync(log.last_seq)  # the state loaded after holds that much
    state = await trio.to_thread.run_sync(run_state, log, run_id)
    assert state.spec is not None
    events = await trio.to_thread.run_sync(_round_events, log, run_id, state.grading, state.grading + 1)
    async with open_pipeline(log, state, folded_to=folded_to) as pipe:
        started = k.RegradeStarted(
            run_id=run_id, ts=time.time(), grading=state.grading + 1, graders=list(state.spec.graders),
            pass_threshold=state.spec.scoring.pass_threshold, name=name or "labels", labels=True,
        )  # fmt: skip
        await pipe.write_and_wait([started])
        for start in range(0, len(events), BATCH):
            await pipe.write_and_wait(list(events[start : start + BATCH]))
        return await pipe.write_report()
    raise AssertionError("unreachable")


def _round_events(log: EventStore, run_id: str, before: int, grading: int) -> list[k.Event]:
    labels = load_labels(log, run_id)
    graded: dict[tuple[str, str, int], k.TrialGraded] = {}
    for e in run_events(log, run_id, {"trial.graded"}):
        if isinstance(e, k.TrialGraded) and e.grading == before:
            graded.setdefault((e.variant, e.case, e.repeat), e)
    now = time.time()
    out: list[k.Event] = []
    for key in sorted(labels.outputs):
        label = labels.label_of(key)
        if label is not None:
            out.append(_from_label(run_id, label, grading, now))
        elif key in graded:
            out.append(msgspec.structs.replace(graded[key], ts=now, grading=grading))
    return out


def _from_label(run_id: str, label: k.LabelRecorded, grading: int, now: float) -> k.TrialGraded:
    passed = label.verdict == "pass"
    score = label.score if label.score is not None else float(passed)
    reason = f"{label.by}: {label.note}" if label.note else label.by
    grade = k.GraderResult(name=k.LABEL_GRADER, score=score, passed=passed, reason=reason)
    return k.TrialGraded(
        run_id=run_id, ts=now, variant=label.variant, case=label.case, repeat=label.repeat,
        score=score, passed=passed, grades=[grade], grading=grading,
    )  # fmt: skip
