"""Runs folded from simulated trials, for the compare gates' tests and benchmarks/sim_gates.py.

Each trial is real events through the real fold (the same RunState `engine compare` reads); only
the subject is simulated: `trial(variant, case, repeat)` says its latency, cost and pass.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.events import kinds as k
from engine.events.spec import CaseSpec, ExperimentSpec, RepeatSpec, VariantSpec
from engine.store.projections.run_state import RunState, evolve

# -> latency_ms, cost_usd, passed (None: the trial errored, a timeout with no output)
Trial = Callable[[str, str, int], tuple[float, float, bool | None]]


def simulated_run(
    run_id: str, variants: list[str], cases: int, repeats: int, trial: Trial, seed: int = 7
) -> RunState:
    spec = ExperimentSpec(
        name="sim", seed=seed, cases=[CaseSpec(id=f"c{i:02d}", prompt="p") for i in range(cases)],
        variants=[VariantSpec(name=v) for v in variants], repeat=RepeatSpec(count=repeats),
    )  # fmt: skip
    events: list[k.Event] = [k.ExperimentDefined(run_id=run_id, spec=spec, spec_hash="h")]
    events += [k.VariantProposed(run_id=run_id, variant=v, index=i) for i, v in enumerate(spec.variants)]
    events.append(k.RunStarted(run_id=run_id, experiment="sim", trials_total=len(variants) * cases * repeats))
    state = RunState(run_id)
    for event in events:
        state = evolve(state, event)
    for variant in variants:
        for case in spec.cases:
            for repeat in range(repeats):
                latency_ms, cost_usd, passed = trial(variant, case.id, repeat)
                ident = {"run_id": run_id, "variant": variant, "case": case.id, "repeat": repeat}
                if passed is None:
                    failed = k.TrialFailed(**ident, error_kind="timeout", message="timed out",
                                           latency_ms=latency_ms, error_class="timeout")  # fmt: skip
                    state = evolve(state, failed)
                    continue
                state = evolve(state, k.TrialCompleted(**ident, output_hash="x", latency_ms=latency_ms,
                                                       cost_usd=cost_usd))  # fmt: skip
                state = evolve(state, k.TrialGraded(**ident, score=float(passed), passed=passed))
    return state
