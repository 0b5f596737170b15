"""What the spec's types cannot say: a spec is checked as a whole before anything runs.

Ranges, required fields and each kind's own fields are in the types (engine.events); here are the
rules that span fields: unique ids, a matrix that expands, graders with something to grade, known
generation parameters wherever they are set, variant target overrides, a tuning space, the cron.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import msgspec

from engine.actors.graders.judge_call import judge_repeats, judge_target
from engine.actors.targets.target_protocol import resolve_target
from engine.errors import InputError
from engine.events.graders import GRADERS, CommandGraderSpec, JudgeGraderSpec
from engine.events.spec import ExperimentSpec, SamplingParams, VariantSpec
from engine.input.experiment_plan import ExperimentPlan
from engine.input.parsing import split_validation_error
from engine.input.sent_params import check_sent_params
from engine.input.target_checks import check_targets

Fail = Callable[[str, str], None]


def check_declared(spec: ExperimentSpec, file: str) -> None:
    """What must hold before the variants are expanded (a huge matrix is refused unexpanded)."""

    def fail(field: str, expected: str) -> None:
        raise InputError(file, field, expected)

    if not spec.name.strip():
        fail("name", "expected a non-empty experiment name")
    if not spec.cases:
        fail("cases", "expected at least one case (inline [[cases]] or a [suite] file)")
    _check_unique([c.id for c in spec.cases], "cases", "id", fail)
    _check_unique([v.name for v in spec.variants], "variants", "name", fail)
    _check_matrix_size(spec, fail)


def check_plan(plan: ExperimentPlan) -> None:
    """The rules that span fields, over the expanded variants."""
    spec, file = plan.spec, plan.file

    def fail(field: str, expected: str) -> None:
        raise InputError(file, field, expected)

    variants = list(plan.variants)
    _check_unique_variants(variants, fail)
    if all(GRADERS.of(g).veto_only for g in spec.graders):  # the default contains-check grades them
        for i, case in enumerate(spec.cases):
            if case.expected is None:
                fail(f"cases[{i}].expected", "expected an expected answer, or [[graders]] that need none")
    _check_case_commands(spec, fail)
    _check_params(plan, fail)
    _check_variant_targets(plan, fail)
    check_sent_params(plan, fail)  # after the targets they are sent to are checked
    _check_judge_targets(spec, fail)
    check_targets(plan, fail)
    _check_case_text(spec, fail)
    if spec.kind == "tune" and (spec.tune is None or not spec.tune.parameters):
        fail("tune.parameters", "expected at least one parameter range for kind = 'tune'")
    if spec.schedule is not None:
        check_cron(spec.schedule.cron, file)
    _check_stopping(spec, fail)
    if spec.tune is not None and spec.tune.strategy == "optuna":
        _check_optuna(fail)
    racing = spec.stopping is not None and spec.stopping.rule == "race"
    if racing and spec.kind != "tune" and len(variants) < 2:  # a tuning session races each candidate
        fail("stopping.rule", f"expected at least 2 variants to race; the run has {len(variants)}")
    _check_caps(spec, len(variants), fail)


def _check_caps(spec: ExperimentSpec, variants: int, fail: Fail) -> None:
    """maxVariants / maxTrialsPerRun: a plan beyond them is refused before launch, with its count."""
    budget = spec.budget
    if budget.max_variants is not None and variants > budget.max_variants:
        expected = f"expected at most {budget.max_variants} variants; the run has {variants}"
        fail("budget.max_variants", expected)
    cases, repeats = max(1, len(spec.cases)), spec.repeat.count
    trials = variants * cases * repeats
    if budget.max_trials_per_run is not None and trials > budget.max_trials_per_run:
        counted = f"{variants} variants x {cases} cases x {repeats} repeats = {trials}"
        fail("budget.max_trials_per_run", f"expected at most {budget.max_trials_per_run} trials; {counted}")


def _check_stopping(spec: ExperimentSpec, fail: Fail) -> None:
    stopping = spec.stopping
    if stopping is None or stopping.rule == "fixed":
        return
    if spec.kind == "tune":
        _check_tune_race(spec, fail)
    if stopping.rule == "race":
        _check_race(spec, fail)
        return
    if spec.repeat.strategy == "pass_at_k":
        fail("stopping.rule", "expected repeat.strategy 'mean' or 'confidence_interval' for sequential looks")
    if spec.repeat.count < stopping.looks:
        fail("stopping.looks", f"expected at most repeat.count ({spec.repeat.count}) looks: one round each")


def _check_tune_race(spec: ExperimentSpec, fail: Fail) -> None:
    """A tuning session races each candidate against the best on the mean score, the measure its
    accept rule uses; the margin that counts is the session's own min_improvement."""
    assert spec.stopping is not None
    if spec.stopping.rule != "race":
        fail("stopping.rule", "expected 'race' or 'fixed' in a tuning session (it spends alpha per decision)")
    if spec.stopping.objective != "score":
        fail("stopping.objective", "expected 'score' in a tuning session (its accept rule compares scores)")
    if spec.stopping.min_improvement:
        expected = "expected none in a tuning session (tune.min_improvement is its margin)"
        fail("stopping.min_improvement", expected)


def _check_race(spec: ExperimentSpec, fail: Fail) -> None:
    assert spec.stopping is not None
    if spec.repeat.strategy == "pass_at_k":
        fail("stopping.rule", "expected repeat.strategy 'mean' or 'confidence_interval' for a race")
    if len(spec.cases) < spec.stopping.rounds:
        fail("stopping.rounds", f"expected at most one round per case ({len(spec.cases)} cases)")


def _check_optuna(fail: Fail) -> None:
    try:
        import optuna  # noqa: F401 - importable, with its dependencies (find_spec would not say)
    except ImportError:
        fail("tune.strategy", "expected Optuna installed for 'optuna': pip install 'engine[optuna]'")


def check_cron(cron: str, file: str, field: str = "schedule.cron") -> None:
    from croniter import croniter

    if not croniter.is_valid(cron):
        raise InputError(file, field, f"expected a 5-field cron expression, got {cron!r}")


def _check_case_commands(spec: ExperimentSpec, fail: Fail) -> None:
    for i, grader in enumerate(spec.graders):
        if not isinstance(grader, CommandGraderSpec) or grader.commands:
            continue
        for j, case in enumerate(spec.cases):
            commands = case.criteria.get("commands")
            if not commands or not isinstance(commands, str | list):
                fail(
                    f"graders[{i}].commands",
                    f"expected commands here or in every case's criteria.commands (cases[{j}] has none)",
                )


def _check_unique_variants(variants: list[VariantSpec], fail: Fail) -> None:
    """The declared and matrix variants, with unique names."""
    seen: set[str] = set()
    for variant in variants:
        if variant.name in seen:
            fail("matrix", f"expected unique variant names; {variant.name!r} is twice (name the entries)")
        seen.add(variant.name)


MAX_VARIANTS = 10_000  # a matrix beyond this is a typo (a range pasted as a list), not an experiment


def _check_matrix_size(spec: ExperimentSpec, fail: Fail) -> None:
    """Before expanding it: a huge matrix would take minutes and gigabytes just to list."""
    if not isinstance(spec.matrix, dict):
        return
    size = math.prod(len(values) for values in spec.matrix.values())
    if size + len(spec.variants) > MAX_VARIANTS:
        dims = " x ".join(str(len(values)) for values in spec.matrix.values())
        fail("matrix", f"expected at most {MAX_VARIANTS} variants; this matrix expands to {dims} = {size}")


def _check_judge_targets(spec: ExperimentSpec, fail: Fail) -> None:
    """A judge table overrides fields of the experiment's target, like a variant's `target` table."""
    for i, grader in enumerate(spec.graders):
        if not GRADERS.of(grader).calls_model:
            continue
        try:
            judge_target(spec.target, grader)
        except msgspec.ValidationError as exc:
            where, expected = split_validation_error(str(exc))
            fail(f"graders[{i}].judge.{where}" if where != "(top level)" else f"graders[{i}].judge", expected)
        try:
            if isinstance(grader, JudgeGraderSpec):
                judge_repeats(grader)
        except ValueError as exc:
            fail(f"graders[{i}].judge.repeats", str(exc).split(": ", 1)[1])


def _check_case_text(spec: ExperimentSpec, fail: Fail) -> None:
    """A NUL byte cannot reach an agent (argv, environment) and no model means it: refuse it early."""
    for i, case in enumerate(spec.cases):
        for name in ("id", "prompt", "expected", "context"):
            value = getattr(case, name, None)
            if isinstance(value, str) and "\0" in value:
                fail(f"cases[{i}].{name}", "expected text without NUL bytes")
    for i, variant in enumerate(spec.variants):
        if variant.system and "\0" in variant.system:
            fail(f"variants[{i}].system", "expected text without NUL bytes")


def _check_unique(names: list[str], section: str, key: str, fail: Fail) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            fail(f"{section}[{i}].{key}", f"expected a unique {key}; {name!r} is used twice")
        seen.add(name)


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


def _check_params(plan: ExperimentPlan, fail: Fail) -> None:
    """Known generation parameters must have their type and range wherever they are set."""
    tables = [("params", plan.spec.params)]
    for origin, variant in zip(plan.origins, plan.variants, strict=True):
        tables.append((f"{origin}.params", variant.params))
    for field, params in tables:
        try:
            msgspec.convert(params, SamplingParams, strict=True)
        except msgspec.ValidationError as exc:
            where, expected = split_validation_error(str(exc))
            fail(f"{field}.{where}", expected)


def _check_variant_targets(plan: ExperimentPlan, fail: Fail) -> None:
    """A variant's `target` table overrides fields of the experiment's target: same names, same types."""
    for i, variant in enumerate(plan.variants):
        if not plan.overrides_target(i):
            continue  # it runs the experiment's own target
        field = f"{plan.origins[i]}.target"
        try:
            resolve_target(plan.spec.target, variant)
        except msgspec.ValidationError as exc:
            where, expected = split_validation_error(str(exc))
            fail(f"{field}.{where}" if where != "(top level)" else field, expected)
