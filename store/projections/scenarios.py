"""Per (variant, case) verdicts and a reproducer command per failing trial (Keystone's scenarios).

A reproducer reruns one trial on its own: `engine run FILE --case C --variant V --seed S`. Trial
seeds derive from the experiment's seed, the variant, the case and the repeat, so the narrowed run
gives that trial the same seed it had.
"""

from __future__ import annotations

from engine.events.commands import engine_command
from engine.events.report import Reproducer, ScenarioVerdict
from engine.events.spec import ReplicaAggregation
from engine.store.projections.run_state import Cell, RunState
from engine.store.projections.verdicts import case_verdict

MAX_REPRODUCERS = 1000  # a report stays readable when most of a huge run fails


def scenario_verdicts(state: RunState, names: list[str], case_ids: list[str]) -> list[ScenarioVerdict]:
    aggregation = state.spec.scoring.replica_aggregation if state.spec else ReplicaAggregation()
    out = []
    for name in names:
        for case in case_ids:
            cell = state.cells.get((name, case))
            verdict = case_verdict(cell, aggregation) if cell is not None else None
            if verdict is not None:
                scored = cell.scored()  # type: ignore[union-attr]
                passes = (cell.passed & scored).bit_count()  # type: ignore[union-attr]
                out.append(ScenarioVerdict(variant=name, case=case, verdict=verdict, passes=passes,
                                           runs=scored.bit_count()))  # fmt: skip
    return out


def reproducer_command(source: str, case: str, variant: str, seed: int, repeats: int | None = None) -> str:
    """`engine run FILE --case C --variant V --seed S`, with `--repeats N` when the variant was measured
    with more repeats than the file plans (a tuning session's close call): the same trials, so the
    same verdict."""
    file = source or "EXPERIMENT_FILE"
    case = glob_literal(case)
    more = ["--repeats", str(repeats)] if repeats else []
    return engine_command("run", file, "--case", case, "--variant", variant, "--seed", str(seed), *more)


def glob_literal(text: str) -> str:
    """A glob matching exactly `text` (`--case` takes globs): `*`, `?` and `[` stand for themselves."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def reproducers(state: RunState, names: list[str], case_ids: list[str]) -> list[Reproducer]:
    """One per failing or errored trial, in variant, case, repeat order."""
    seed = state.spec.seed if state.spec else 0
    out: list[Reproducer] = []
    for name in names:
        for case in case_ids:
            cell = state.cells.get((name, case))
            if cell is None:
                continue
            failing = (cell.scored() & ~cell.passed) | cell.failed
            for repeat in (r for r in range(failing.bit_length()) if failing >> r & 1):
                if len(out) == MAX_REPRODUCERS:
                    return out
                command = reproducer_command(state.source, case, name, seed, _extra_repeats(state, cell))
                out.append(Reproducer(variant=name, case=case, repeat=repeat + 1, seed=seed, command=command))
    return out


def _extra_repeats(state: RunState, cell: Cell) -> int | None:
    planned = state.spec.repeat.count if state.spec else 0
    ran = cell.done().bit_length()
    return ran if ran > planned else None
