"""The labels fold's fast path (store.projections.labels_fast: the trial events read for the few
fields the fold needs) gives the state the plain fold of fully decoded events gives, round by round:
judges' verdicts, errors, spreads, a label round skipped, a trial graded twice."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.events import kinds as k
from engine.events.codec import decode
from engine.store.memory import MemoryStore
from engine.store.projections.labels import LABELS, LabelState, load_labelled, load_labels, load_outputs
from engine.store.writes import append_events

RUN = "r"


def judge(name: str, passed: bool, error: str, spread: float | None) -> k.GraderResult:
    return k.GraderResult(name=name, score=None if error else float(passed), passed=passed, error=error,
                          judge_model="m", spread=spread)  # fmt: skip


@st.composite
def run_events(draw: st.DrawFn) -> list[k.Event]:
    events: list[k.Event] = []
    grading = 0
    for _ in range(draw(st.integers(1, 30))):
        variant, case, repeat = draw(st.sampled_from("ab")), draw(st.sampled_from(["c1", "c2", "c3"])), 0
        what = draw(st.sampled_from(["completed", "graded", "label", "regrade", "label-round"]))
        if what == "completed":
            output = draw(st.sampled_from(["h1", "h2"]))
            events.append(k.TrialCompleted(run_id=RUN, variant=variant, case=case, repeat=repeat,
                                           output_hash=output, latency_ms=1.0))  # fmt: skip
        elif what == "graded":
            judges = draw(st.sets(st.sampled_from(["j1", "j2"])))
            errors, spreads = st.sampled_from(["", "judge_unparseable"]), st.sampled_from([None, 0.0, 0.5])
            grades = [judge(j, draw(st.booleans()), draw(errors), draw(spreads)) for j in sorted(judges)]
            grades.append(k.GraderResult(name="exact", score=1.0, passed=True))  # no judge: not a verdict
            events.append(k.TrialGraded(run_id=RUN, variant=variant, case=case, repeat=repeat, score=None,
                                        passed=True, grades=grades, grading=grading))  # fmt: skip
        elif what == "label":
            events.append(k.LabelRecorded(run_id=RUN, variant=variant, case=case, repeat=repeat,
                                          output_hash=draw(st.sampled_from(["h1", "h2"])),
                                          verdict=draw(st.sampled_from(["pass", "fail"]))))  # fmt: skip
        else:
            grading += 1
            events.append(k.RegradeStarted(run_id=RUN, grading=grading, labels=what == "label-round"))
    return events


def plain_fold(store: MemoryStore) -> LabelState:
    state = LabelState()
    for seq, data in store.read_run(RUN, tags=set(LABELS.tags)):
        LABELS.evolve(state, decode(data), seq)
    return state


@settings(max_examples=60, deadline=None)
@given(run_events())
def test_the_fast_fold_is_the_plain_fold(events: list[k.Event]) -> None:
    store = MemoryStore()
    append_events(store, events)
    plain = plain_fold(store)
    assert load_labels(store, RUN) == plain
    assert load_outputs(store, RUN) == plain.outputs
    labelled = load_labelled(store, RUN)  # the labelled trials only, with their judges' verdicts
    assert labelled.labels == plain.labels
    for key in labelled.judged:
        assert labelled.judged[key] == plain.judged[key]
