"""Run-level outcome: errors by class, the error rate against its limit, a tuning session's winner."""

from __future__ import annotations

from engine.events import kinds as k
from engine.events.graders import GRADERS
from engine.events.report import ErrorSummary, VariationRecord
from engine.events.spec import ExperimentSpec
from engine.stats.comparisons import rnd
from engine.store.projections.run_state import RunState


def error_summaries(state: RunState) -> list[ErrorSummary]:
    """Trial errors before grading errors, then the most frequent first (ties by class name)."""
    ordered = sorted(state.errors.items(), key=lambda item: (item[0][0] != "trial", -item[1].count, item[0]))
    return [
        ErrorSummary(
            stage=stage,
            error_class=cls,
            count=tally.count,
            sample=tally.sample,
            variants=dict(sorted(tally.by_variant.items())),
        )  # fmt: skip
        for (stage, cls), tally in ordered
    ]


def error_rate(state: RunState) -> float | None:
    """Finished trials without a usable result (errored, or a grader failed to score them) over all
    finished trials. Outputs left unscored by an exhausted judge budget are a budget stop, not errors."""
    finished = bad = 0
    for cell in state.cells.values():
        finished += (cell.graded | cell.failed).bit_count()
        bad += (cell.failed | (cell.graded & cell.ungradable)).bit_count()
    return rnd(bad / finished) if finished else None


def unscorable_graders(spec: ExperimentSpec) -> list[tuple[str, str]]:
    """(the grader's field, why it cannot score some cases) for each exact or contains grader with no
    `value` of its own on cases without `expected`: it leaves them unscored ("no expected value")."""
    found = []
    for i, grader in enumerate(spec.graders):
        if not GRADERS.of(grader).needs_expected or getattr(grader, "value", None) is not None:
            continue
        missing = [c for c in spec.cases if c.expected is None]
        if not missing:
            continue
        referenced = sum(1 for c in missing if c.reference is not None)
        only = f" ({referenced} carry only a `reference`, which judges read)" if referenced else ""
        why = (
            f"{grader.name or grader.kind} needs each case's `expected` (or its own `value`): "
            f"{len(missing)} of {len(spec.cases)} cases have none{only}, so it cannot score them"
        )
        found.append((f"graders[{i}]", why))
    return found


def integrity_warnings(state: RunState) -> list[str]:
    found = [f"{field}: {why}" for field, why in (unscorable_graders(state.spec) if state.spec else [])]
    if state.duplicates:
        found.append(
            f"{state.duplicates} trial results were logged twice and counted once: those trials ran "
            "more than once (their spend is in the log, not in these totals)"
        )
    if state.unusable_count:
        found.append(
            f"{state.unusable_count} stored events could not be used and were skipped "
            f"(first at seq {state.unusable[0][0]}: {state.unusable[0][1]})"
        )
    return found


def tuning_winner(state: RunState) -> tuple[str | None, bool]:
    """A tuning session's winner is its accepted best (the last acceptance); significant when its
    acceptance rested on a significant paired test."""
    accepted = [v for v in state.variations if isinstance(v, k.VariationAccepted)]
    if not accepted:
        return None, False
    last = accepted[-1]
    alpha = state.spec.gate.alpha if state.spec else 0.05
    return last.variant, last.p_value is not None and last.p_value < alpha


def variation_record(e: k.VariationDecided) -> VariationRecord:
    """The report's record of a decision: the event's fields of the same names, and the verdict."""
    shared = {name: getattr(e, name) for name in VariationRecord.__struct_fields__ if hasattr(e, name)}
    return VariationRecord(**{**shared, "accepted": isinstance(e, k.VariationAccepted)})
