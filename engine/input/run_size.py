"""How big a run is: the trials it plans (a tuning session: its upper bound), told as people count
them, and the confirmation a very large one needs (a typo can plan millions)."""

from __future__ import annotations

from engine.errors import InputError
from engine.input.experiment_plan import ExperimentPlan

LARGE_RUN = 1_000_000  # trials: above this a run needs --allow-large (a typo can plan millions)


def planned_trials(plan: ExperimentPlan) -> int:
    """The trials a run plans (a tuning session: its upper bound)."""
    spec = plan.spec
    cases, repeats = len(spec.cases), spec.repeat.count
    if spec.kind == "tune" and spec.tune is not None:
        return cases * repeats * (spec.tune.max_extra_repeats + 1) * (spec.tune.max_experiments + 1)
    return len(plan.variants) * cases * repeats


def check_size(plan: ExperimentPlan, allow_large: bool) -> None:
    planned = planned_trials(plan)
    if planned > LARGE_RUN and not allow_large:
        raise InputError(
            plan.file, "", f"this run plans {planned:,} trials ({describe_size(plan)}); "
            f"above {LARGE_RUN:,} pass --allow-large to confirm"
        )  # fmt: skip


def describe_size(plan: ExperimentPlan) -> str:
    """How many trials the run plans: "2 variants x 3 cases x 2 repeats = 12 trials"; a tuning session
    gives its upper bound (each variation runs the candidate, and close calls add rounds of repeats
    to both it and the current best)."""
    spec = plan.spec
    cases, repeats = len(spec.cases), spec.repeat.count
    if spec.kind == "tune" and spec.tune is not None:
        rounds = spec.tune.max_extra_repeats + 1
        variations = spec.tune.max_experiments
        bound = cases * repeats * rounds * (variations + 1)
        sizes = f"{counted(cases, 'case')} x {counted(repeats, 'repeat')}, x{rounds} on close calls"
        tried = f"{counted(variations, 'variation')} (+ baseline)"
        return f"tuning: up to {counted(bound, 'trial')}: {tried} x {sizes}"
    variants = len(plan.variants)
    sizes = f"{counted(variants, 'variant')} x {counted(cases, 'case')} x {counted(repeats, 'repeat')}"
    return f"{sizes} = {counted(variants * cases * repeats, 'trial')}"


def counted(n: int, noun: str) -> str:
    """'1 case', '3 cases'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
