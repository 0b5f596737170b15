"""Replay equivalence: the report depends on which trial facts are in the log, not on their order.

This is what makes a resumed run (whose events interleave differently) report
exactly what an uninterrupted run reports.
"""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.events import kinds as k
from engine.events.codec import to_json
from engine.events.spec import CaseSpec, ExperimentSpec, RepeatSpec, VariantSpec
from engine.store.projection import fold
from engine.store.projections.report_builder import build_report
from engine.store.projections.run_state import RunState, evolve

RUN = "r"


def header(variants: int, cases: int, repeats: int, strategy: str) -> list[k.Event]:
    spec = ExperimentSpec(
        name="eq",
        cases=[CaseSpec(id=f"c{i}", prompt="p") for i in range(cases)],
        repeat=RepeatSpec(count=repeats, strategy=strategy),  # type: ignore[arg-type]
    )
    events: list[k.Event] = [k.ExperimentDefined(run_id=RUN, spec=spec, spec_hash="h")]
    events += [
        k.VariantProposed(run_id=RUN, variant=VariantSpec(name=f"v{i}"), index=i) for i in range(variants)
    ]
    events.append(k.RunStarted(run_id=RUN, experiment="eq", trials_total=variants * cases * repeats))
    return events


outcome = st.one_of(
    st.tuples(st.just("graded"), st.integers(0, 10), st.integers(1, 5000), st.integers(0, 300)),
    st.tuples(st.just("failed"), st.just(0), st.integers(1, 5000), st.integers(0, 300)),
    st.tuples(st.just("ungraded"), st.just(0), st.integers(1, 5000), st.integers(0, 300)),
)


def trial_events(variant: str, case: str, repeat: int, result: tuple[str, int, int, int]) -> list[k.Event]:
    kind, score10, latency, tokens = result
    ident = {"run_id": RUN, "variant": variant, "case": case, "repeat": repeat}
    started = k.TrialStarted(**ident)
    if kind == "failed":
        return [started, k.TrialFailed(**ident, error_kind="infra", message="boom", tokens_in=tokens)]
    completed = k.TrialCompleted(
        **ident, output_hash="x", latency_ms=latency / 7, tokens_in=tokens, cost_usd=tokens / 3e5
    )
    if kind == "ungraded":
        return [started, completed]
    graded = k.TrialGraded(**ident, score=score10 / 10, passed=score10 >= 5, judge_tokens=tokens // 2)
    return [started, completed, graded]


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[k.Event], list[k.Event], int]:
    variants, cases, repeats = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    strategy = draw(st.sampled_from(["mean", "pass_at_k", "confidence_interval"]))
    per_trial = [
        trial_events(f"v{v}", f"c{c}", r, draw(outcome))
        for v in range(variants)
        for c in range(cases)
        for r in range(repeats)
    ]
    in_order = [e for events in per_trial for e in events]
    # another interleaving that keeps each trial's own order, with some events delivered twice
    queues = [list(events) for events in per_trial]
    shuffled: list[k.Event] = []
    doubled = 0
    while any(queues):
        queue = draw(st.sampled_from([q for q in queues if q]))
        event = queue.pop(0)
        shuffled.append(event)
        if draw(st.booleans()) and not isinstance(event, k.TrialStarted):
            shuffled.append(event)
            doubled += 1
    head = header(variants, cases, repeats, strategy)
    tail = [k.RunCompleted(run_id=RUN, status="completed")]
    return head + in_order + tail, head + shuffled + tail, doubled


@settings(max_examples=60, deadline=None)
@given(runs())
def test_report_does_not_depend_on_event_order_and_counts_a_result_logged_twice_once(
    pair: tuple[list[k.Event], list[k.Event], int],
) -> None:
    first, second, doubled = pair
    report_a = build_report(fold(evolve, RunState(RUN), first))
    report_b = build_report(fold(evolve, RunState(RUN), second))
    # a second result for a trial means it ran twice: flagged, never counted twice
    assert report_b.duplicate_results == doubled and bool(report_b.warnings) == bool(doubled)
    unflagged = msgspec.structs.replace(report_b, duplicate_results=0, warnings=[])
    assert to_json(report_a) == to_json(unflagged)
    # a variant's trials are the finished ones, as trials_done counts them: not those awaiting a grade
    finished = sum(v.trials + v.skipped for v in report_a.variants)
    assert finished == report_a.trials_done
