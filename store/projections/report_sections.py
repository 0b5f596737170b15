"""The report's sections that read the folded state alone: how the run stopped, its errors, its
grading and its cases (report_builder assembles them with the variants and their comparisons).
"""

from __future__ import annotations

from typing import Any

from engine.events import kinds as k
from engine.events.report import (
    BudgetStop,
    DataError,
    GroundTruth,
    IdenticalRepeats,
    JudgeAgreement,
    StoppingReport,
)
from engine.events.spec import ExecutionSpec
from engine.stats.comparisons import rnd
from engine.store.projections.outcome import error_rate, error_summaries
from engine.store.projections.race_report import race_stopping
from engine.store.projections.run_state import RunState
from engine.store.projections.scenarios import reproducers, scenario_verdicts
from engine.store.projections.variant_report import flaky_cases


def stopping_section(state: RunState, done: int) -> dict[str, Any]:
    return {
        "is_partial": is_partial(state, done),
        "stopping": stopping_report(state, done) or race_stopping(state, done),
        "budget_exhausted": list(state.budget_exhausted),
        "budget_stops": [budget_stop(e) for e in state.budget_stops],
        "stop_reason": state.stop_message,
    }


def errors_section(state: RunState) -> dict[str, Any]:
    rate = error_rate(state)
    max_rate = (state.spec.execution if state.spec else ExecutionSpec()).max_error_rate
    return {
        "errors": error_summaries(state),
        "error_rate": rate,
        "max_error_rate": max_rate,
        "error_rate_exceeded": rate is not None and rate > max_rate,
        "duplicate_results": state.duplicates,
        "data_errors": [DataError(seq=seq, message=message) for seq, message in state.unusable],
        "data_error_count": state.unusable_count,
    }


def grading_section(state: RunState) -> dict[str, Any]:
    truth = GroundTruth(from_labels=state.from_labels, from_judges=state.from_judges)
    return {
        "judge_agreement": judge_agreement(state),
        "grading": state.grading,
        "grading_name": state.grading_name or "original",
        "ground_truth": truth if state.label_round else None,
    }


def cases_section(state: RunState, names: list[str], case_ids: list[str]) -> dict[str, Any]:
    return {
        "flaky_cases": flaky_cases(state, names, case_ids),
        "identical_repeats": identical_repeats(state),
        "scenarios": scenario_verdicts(state, names, case_ids),
        "reproducers": reproducers(state, names, case_ids),
    }


def budget_stop(e: k.BudgetExhausted) -> BudgetStop:
    def num(x: float) -> str:
        return f"{x:,.4f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x):,}"

    note = f"{e.budget}: {num(e.used)} of {num(e.limit)} used"
    if e.reserved > 0:
        note += f"; stopped early: the next trial could spend up to {num(e.reserved)} (its reservation)"
    return BudgetStop(budget=e.budget, limit=e.limit, used=e.used, reserved=e.reserved, note=note)


def identical_repeats(state: RunState) -> list[IdenticalRepeats]:
    """(variant, case) cells whose two or more completed repeats all produced the same output."""
    # sorted as (variant, case) pairs are, by way of each variant's case names: no key tuple per cell
    # kept at once (200,000 of them at the end of a run that size: benchmarks/README.md, round five)
    cells = state.cells
    by_variant: dict[str, list[str]] = {}
    for (variant, case), cell in cells.items():
        if cell.completed.bit_count() >= 2 and not cell.outputs_vary:
            by_variant.setdefault(variant, []).append(case)
    return [
        IdenticalRepeats(variant=variant, case=case, repeats=cells[(variant, case)].completed.bit_count())
        for variant in sorted(by_variant)
        for case in sorted(by_variant[variant])
    ]


def stopping_report(state: RunState, done: int) -> StoppingReport | None:
    if not state.looks or state.spec is None or state.spec.stopping is None:
        return None
    last = state.looks[-1]
    fixed = state.trials_total
    return StoppingReport(
        rule=state.spec.stopping.rule, looks_done=last.look, max_looks=last.looks, stopped=last.stop,
        level=rnd(last.level) or 0.0, fixed_design_trials=fixed, trials_saved=max(0, fixed - done),
    )  # fmt: skip


def judge_agreement(state: RunState) -> dict[str, JudgeAgreement]:
    out = {}
    for name, t in sorted(state.judges.items()):
        mean = rnd(t.spread_sum / t.spread_count) if t.spread_count else None
        out[name] = JudgeAgreement(
            judged=t.judged, unparseable=t.unparseable, unparseable_rate=rnd(t.unparseable / t.judged) or 0.0,
            mean_spread=mean, max_spread=rnd(t.spread_max) if t.spread_count else None,
        )  # fmt: skip
    return out


def stopped_early(state: RunState) -> bool:
    """A sequential run that stopped at a look because the answer was clear, or a race that ended by
    its rule: complete, not partial."""
    if state.race_rounds:
        return state.race_rounds[-1].stop != ""
    return bool(state.looks) and state.looks[-1].stop in ("efficacy", "futility")


def is_partial(state: RunState, done: int) -> bool:
    if state.status in ("partial", "cancelled", "failed") or state.budget_exhausted:
        return True
    return done < state.trials_total and not stopped_early(state)
