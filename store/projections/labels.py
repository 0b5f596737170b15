"""People's labels of a run's outputs and the judges' verdicts on the same trials, folded from the log.

A label names the output it was given on (its hash), so a regrade keeps it and the latest label of
an output wins. The judges' verdicts are those of the latest grading round that judges made (a round
made from labels is skipped: it would compare people with themselves).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.events import kinds as k
from engine.events.graders import GRADERS
from engine.events.spec import ExperimentSpec
from engine.store.contract import EventStore
from engine.store.log.guard import decode_stored
from engine.store.projection import Projection
from engine.store.projections import labels_fast as fast

TrialKey = tuple[str, str, int]  # variant, case, repeat (from 0)


@dataclass(slots=True)
class TrialJudged:
    """One trial's judge verdicts in the round: grader -> passed (None: the judge gave no verdict)."""

    verdicts: dict[str, bool | None] = field(default_factory=dict)
    spread: bool = False  # some judge's repeats gave different scores


@dataclass(slots=True)
class LabelState:
    labels: dict[tuple[str, str, int, str], k.LabelRecorded] = field(default_factory=dict)
    outputs: dict[TrialKey, str] = field(default_factory=dict)  # the trial's output hash
    judged: dict[TrialKey, TrialJudged] = field(default_factory=dict)
    judges: list[str] = field(default_factory=list)  # judge graders, in the order first seen
    grading: int = 0
    label_rounds: set[int] = field(default_factory=set)  # grading rounds made from labels

    def label_of(self, key: TrialKey) -> k.LabelRecorded | None:
        output = self.outputs.get(key)
        return None if output is None else self.labels.get((*key, output))

    def current(self) -> list[tuple[TrialKey, k.LabelRecorded]]:
        """The labels of the outputs the trials have, in variant, case, repeat order."""
        found = [(key, self.label_of(key)) for key in self.outputs]
        return sorted((key, label) for key, label in found if label is not None)


def _label(s: LabelState, e: k.LabelRecorded) -> None:
    s.labels[(e.variant, e.case, e.repeat, e.output_hash)] = e


def _completed(s: LabelState, e: k.TrialCompleted) -> None:
    s.outputs.setdefault((e.variant, e.case, e.repeat), e.output_hash)


def _defined(s: LabelState, e: k.ExperimentDefined) -> None:
    """The run's judge graders, named before any grade: a panel with no labels yet still lists them."""
    s.judges.extend(name for name in declared_judges(e.spec) if name not in s.judges)


def declared_judges(spec: ExperimentSpec | None) -> list[str]:
    """The names of the experiment's judge graders (an LLM grading each output; not pairwise ones)."""
    kinds = ((g, GRADERS.of(g)) for g in (spec.graders if spec is not None else []))
    return [g.name or g.kind for g, kind in kinds if kind.calls_model and not kind.pairwise]


def _regrade(s: LabelState, e: k.RegradeStarted) -> None:
    if e.labels:
        s.label_rounds.add(e.grading)
        return
    s.grading = e.grading
    s.judged.clear()


def _graded(s: LabelState, e: k.TrialGraded) -> None:
    if e.grading != s.grading or e.grading in s.label_rounds:
        return
    key = (e.variant, e.case, e.repeat)
    if key in s.judged:
        return  # a trial graded twice: its first grade counts, as in the report
    judged = s.judged[key] = TrialJudged()
    for grade in e.grades:
        if not grade.judge_model:
            continue
        if grade.name not in s.judges:
            s.judges.append(grade.name)
        judged.verdicts[grade.name] = None if grade.error else grade.passed
        judged.spread = judged.spread or bool(grade.spread)


LABELS = Projection[LabelState]({
    k.ExperimentDefined: _defined,
    k.LabelRecorded: _label,
    k.TrialCompleted: _completed,
    k.TrialReused: _completed,
    k.RegradeStarted: _regrade,
    k.TrialGraded: _graded,
})  # fmt: skip


def load_labels(log: EventStore, run_id: str) -> LabelState:
    """Every trial's output and judge verdicts, and the labels (the labelling queue needs them all)."""
    state = LabelState()
    for seq, data in log.read_run(run_id, tags=set(LABELS.tags)):
        light = fast.decode_trial(data)
        if light is not None:
            (_completed if isinstance(light, fast.Completed) else _graded)(state, light)  # type: ignore[arg-type]
        else:
            LABELS.evolve(state, decode_stored(log, seq, data), seq)
    return state


def load_labelled(log: EventStore, run_id: str) -> LabelState:
    """The labelled trials only, for the agreement figures: the labels and rounds first (few), then
    the judges' grades of just those trials. A trial's output is the one its latest label names
    (a trial completes once, and a label is checked against its output when it is recorded)."""
    state = LabelState()
    for seq, data in log.read_run(run_id, tags={"experiment.defined", "label.recorded", "regrade.started"}):
        LABELS.evolve(state, decode_stored(log, seq, data), seq)
    for variant, case, repeat, output in state.labels:
        state.outputs[(variant, case, repeat)] = output  # in log order: the latest label's output
    wanted = set(state.outputs)
    for seq, data in log.read_run(run_id, tags={"trial.graded"}):
        key = fast.graded_key(data)
        if key is not None and key not in wanted:
            continue
        light = fast.decode_trial(data)
        if light is not None:
            _graded(state, light)  # type: ignore[arg-type]
        else:
            LABELS.evolve(state, decode_stored(log, seq, data), seq)
    return state


def load_outputs(log: EventStore, run_id: str) -> dict[TrialKey, str]:
    """Each trial's output hash (its first completion: a trial completes once)."""
    found: dict[TrialKey, str] = {}
    for seq, data in log.read_run(run_id, tags=set(k.OUTPUT_TAGS)):
        event = fast.decode_trial(data) or decode_stored(log, seq, data)
        if isinstance(event, (fast.Completed, k.TrialCompleted)):
            found.setdefault((event.variant, event.case, event.repeat), event.output_hash)
    return found


def has_labels(log: EventStore, run_id: str) -> bool:
    """Cheap: the run index alone says whether any label was recorded."""
    return next(iter(log.read_run(run_id, tags={"label.recorded"})), None) is not None
