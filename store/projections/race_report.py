"""A race's inputs and its report section, from the run state.

Per case, each variant's value on the race's objective (stats.racing), and the report's record of the
race: the rounds with their standings, and every elimination."""

from __future__ import annotations

from engine.events import kinds as k
from engine.events.report import RaceElimination, RaceRound, RaceStanding, StoppingReport
from engine.stats.racing import CaseCost, PerCase
from engine.store.projections.cases import case_values
from engine.store.projections.run_state import SCALE, RunState


def race_values(
    state: RunState, variants: list[str], case_ids: list[str], objective: str
) -> dict[str, PerCase]:
    if objective == "cost_per_pass":
        return {v: _costs(state, v, case_ids) for v in variants}
    strategy = "pass_rate" if objective == "pass_rate" else "mean"
    return {v: case_values(state, v, case_ids, strategy) for v in variants}


def _costs(state: RunState, variant: str, case_ids: list[str]) -> dict[str, CaseCost]:
    out = {}
    for case in case_ids:
        cell = state.cells.get((variant, case))
        if cell is None or not cell.scored():
            continue
        scored = cell.scored()
        passes = (cell.passed & scored).bit_count() / scored.bit_count()
        runs = cell.done().bit_count() or 1
        out[case] = CaseCost(cell.cost / SCALE / runs, passes)
    return out


def race_rounds(state: RunState) -> list[RaceRound]:
    return [
        RaceRound(
            round=e.round, cases=e.cases, leader=e.leader, survivors=list(e.survivors), threshold=e.threshold,
            standings=[RaceStanding(variant=s.variant, mean=s.mean, lo=s.lo, hi=s.hi, cases=s.cases)
                       for s in e.standings],
        )
        for e in state.race_rounds
    ]  # fmt: skip


def race_eliminations(state: RunState) -> list[RaceElimination]:
    return [_elimination(e) for e in state.eliminated.values()]


def _elimination(e: k.VariantEliminated) -> RaceElimination:
    return RaceElimination(
        variant=e.variant, round=e.round, lost_to=e.lost_to, delta=e.delta, p_value=e.p_value,
        threshold=e.threshold, cases=e.cases,
    )  # fmt: skip


def race_stopping(state: RunState, done: int) -> StoppingReport | None:
    """The report's stopping section for a race (None before its first round is decided)."""
    if not state.race_rounds or state.spec is None or state.spec.stopping is None:
        return None
    last = state.race_rounds[-1]
    fixed = state.trials_total
    return StoppingReport(
        rule="race", looks_done=last.round, max_looks=last.rounds, stopped=last.stop, level=last.threshold,
        # trials a budget or a cancel cut are not saved by the race: only an end by its own rule counts
        fixed_design_trials=fixed, trials_saved=max(0, fixed - done) if last.stop else 0,
        objective=state.spec.stopping.objective,
        survivors=list(last.survivors), eliminations=race_eliminations(state), rounds=race_rounds(state),
    )  # fmt: skip


def race_winner(state: RunState) -> tuple[str | None, bool]:
    """The leader of the last round; significant when it is the only one left."""
    if not state.race_rounds:
        return None, False
    last = state.race_rounds[-1]
    return last.leader, last.stop == "one_left"


def race_warnings(state: RunState) -> list[str]:
    """A race on cost per pass among variants whose trials cost nothing ranks them as free."""
    stopping = state.spec.stopping if state.spec is not None else None
    if stopping is None or stopping.rule != "race" or stopping.objective != "cost_per_pass":
        return []
    raced = [s.variant for s in state.race_rounds[0].standings] if state.race_rounds else []
    free = [v for v in raced if (totals := state.totals.get(v)) is not None and totals.cost == 0]
    if not free:
        return []
    return [
        f"stopping.objective: cost_per_pass, but no trial of {', '.join(free)} had a cost (no price "
        "for its model in [pricing] or the target, and none reported by the agent): the race ranked "
        "them as free"
    ]
