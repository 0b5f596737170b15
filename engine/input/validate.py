"""What the spec's types cannot say: a spec is checked as a whole before anything runs.

Ranges, required fields and each kind's own fields are in the types (engine.events); here are the
rules that span fields: unique ids, a matrix that expands, graders with something to grade, known
generation parameters wherever they are set, variant target overrides, a tuning space, the cron.
"""

from __future__ import annotations

import math
from typing import cast

import msgspec

from engine.actors.graders.judge_call import judge_repeats, judge_target
from engine.actors.targets.target_protocol import resolve_target
from engine.errors import InputError
from engine.events.graders import GRADERS, JudgeGraderSpec
from engine.events.spec import AGE_EXPECTED, ExperimentSpec, SamplingParams, VariantSpec, age_seconds
from engine.input.experiment_plan import ExperimentPlan
from engine.input.parsing import split_validation_error
from engine.input.run_rules import Fail, check_caps, check_optuna, check_stopping
from engine.input.sandbox_check import check_service_timeouts
from engine.input.sent_params import check_sent_params
from engine.input.target_checks import check_targets


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
    if spec.reuse is not None and spec.reuse.max_age is not None:
        try:
            age_seconds(spec.reuse.max_age)
        except ValueError:
            fail("reuse.max_age", f"{AGE_EXPECTED}, got {spec.reuse.max_age!r}")


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
    check_service_timeouts(plan, fail)
    _check_case_text(spec, fail)
    if spec.kind == "tune" and (spec.tune is None or not spec.tune.parameters):
        fail("tune.parameters", "expected at least one parameter range for kind = 'tune'")
    if spec.schedule is not None:
        check_cron(spec.schedule.cron, file)
    check_stopping(spec, fail)
    if spec.tune is not None and spec.tune.strategy == "optuna":
        check_optuna(fail)
    racing = spec.stopping is not None and spec.stopping.rule == "race"
    if racing and spec.kind != "tune" and len(variants) < 2:  # a tuning session races each candidate
        fail("stopping.rule", f"expected at least 2 variants to race; the run has {len(variants)}")
    check_caps(spec, len(variants), fail)


def check_cron(cron: str, file: str, field: str = "schedule.cron") -> None:
    from croniter import croniter

    if not croniter.is_valid(cron):
        raise InputError(file, field, f"expected a 5-field cron expression, got {cron!r}")


def _check_case_commands(spec: ExperimentSpec, fail: Fail) -> None:
    for i, grader in enumerate(spec.graders):
        field = GRADERS.of(grader).case_fallback
        if field is None or getattr(grader, field):
            continue
        for j, case in enumerate(spec.cases):
            given = case.criteria.get(field)
            if not given or not isinstance(given, str | list):
                fail(
                    f"graders[{i}].{field}",
                    f"expected {field} here or in every case's criteria.{field} (cases[{j}] has none)",
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
            if GRADERS.of(grader).repeats_judge:  # its declaration holds it to judge and repeats fields
                judge_repeats(cast(JudgeGraderSpec, grader))
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
