"""Checks msgspec's types cannot express: ranges, uniqueness, required-together fields."""

from __future__ import annotations

import re

import msgspec

from engine.errors import InputError
from engine.events.spec import ExperimentSpec, GraderSpec, SamplingParams, TargetSpec
from engine.input.parsing import split_validation_error


def check_spec(spec: ExperimentSpec, file: str) -> None:
    def fail(field: str, expected: str) -> None:
        raise InputError(file, field, expected)

    if not spec.name.strip():
        fail("name", "expected a non-empty experiment name")
    if not spec.cases:
        fail("cases", "expected at least one case (inline [[cases]] or a [suite] file)")
    _check_unique([c.id for c in spec.cases], "cases", "id", fail)
    _check_unique([v.name for v in spec.variants], "variants", "name", fail)
    _check_matrix(spec, fail)
    if spec.repeat.count < 1:
        fail("repeat.count", "expected an integer >= 1")
    if spec.execution.concurrency < 1:
        fail("execution.concurrency", "expected an integer >= 1")
    if spec.execution.judge_concurrency < 1:
        fail("execution.judge_concurrency", "expected an integer >= 1")
    if not 0.0 <= spec.scoring.pass_threshold <= 1.0:
        fail("scoring.pass_threshold", "expected a number between 0 and 1")
    if not 0.0 < spec.scoring.replica_aggregation.min_pass_rate <= 1.0:
        fail("scoring.replica_aggregation.min_pass_rate", "expected a number above 0, at most 1")
    for name in ("max_trials", "max_wall_time_s", "max_tokens", "max_cost_usd", "judge_max_tokens"):
        value = getattr(spec.budget, name)
        if value is not None and value <= 0:
            fail(f"budget.{name}", "expected a positive number")
    check_graders(spec.graders, file)
    if all(g.kind == "forbidden" for g in spec.graders):  # the default contains-check grades them
        for i, case in enumerate(spec.cases):
            if case.expected is None:
                fail(f"cases[{i}].expected", "expected an expected answer, or [[graders]] that need none")
    _check_case_commands(spec, fail)
    _check_target(spec, fail)
    _check_params(spec, fail)
    _check_variant_targets(spec, fail)
    if spec.kind == "tune":
        _check_tune(spec, fail)


def _check_case_commands(spec: ExperimentSpec, fail) -> None:  # noqa: ANN001
    for i, grader in enumerate(spec.graders):
        if grader.kind != "command" or grader.commands:
            continue
        for j, case in enumerate(spec.cases):
            commands = case.criteria.get("commands")
            if not commands or not isinstance(commands, str | list):
                fail(
                    f"graders[{i}].commands",
                    f"expected commands here or in every case's criteria.commands (cases[{j}] has none)",
                )


def _check_matrix(spec: ExperimentSpec, fail) -> None:  # noqa: ANN001
    from engine.actors.variants import expand_variants

    try:
        names = [v.name for v in expand_variants(spec)]
    except (TypeError, ValueError) as exc:
        fail("matrix", f"expected variant fields or parameters in each matrix entry ({exc})")
        return
    seen: set[str] = set()
    for name in names:
        if name in seen:
            fail("matrix", f"expected unique variant names; {name!r} appears twice (give entries a name)")
        seen.add(name)


def check_graders(graders: list[GraderSpec], file: str) -> None:
    def fail(field: str, expected: str) -> None:
        raise InputError(file, field, expected)

    for i, grader in enumerate(graders):
        _check_grader(grader, f"graders[{i}]", fail)


def _check_unique(names: list[str], section: str, key: str, fail) -> None:  # noqa: ANN001
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            fail(f"{section}[{i}].{key}", f"expected a unique {key}; {name!r} is used twice")
        seen.add(name)


def _check_grader(grader: GraderSpec, field: str, fail) -> None:  # noqa: ANN001
    if grader.weight < 0:
        fail(f"{field}.weight", "expected a weight >= 0")
    if grader.kind == "regex" and grader.pattern is None:
        fail(f"{field}.pattern", "expected a regular expression for a regex grader")
    if grader.kind == "forbidden" and grader.pattern is None and grader.value is None:
        fail(f"{field}.value", "expected the forbidden text (`value`) or a `pattern` for a forbidden rule")
    if grader.pattern is not None:
        try:
            re.compile(grader.pattern or "")
        except re.error as exc:
            fail(f"{field}.pattern", f"expected a valid regular expression ({exc})")
    if grader.kind == "judge":
        total = sum(c.weight for c in grader.rubric)
        if grader.rubric and total <= 0:
            fail(f"{field}.rubric", "expected rubric weights that add up to more than 0")


def describe_size(spec: ExperimentSpec) -> str:
    """How many trials the run plans: "2 variants x 3 cases x 2 repeats = 12 trials"; a tuning session
    gives its upper bound (each variation runs the candidate, and close calls add rounds of repeats
    to both it and the current best)."""
    from engine.actors.variants import expand_variants

    cases, repeats = len(spec.cases), spec.repeat.count
    if spec.kind == "tune" and spec.tune is not None:
        rounds = spec.tune.max_extra_repeats + 1
        variations = spec.tune.max_experiments
        bound = cases * repeats * rounds * (variations + 1)
        return (
            f"tuning: up to {variations} variations x {cases} cases x {repeats} repeats"
            f" (x{rounds} on close calls), baseline included = up to {bound} trials"
        )
    variants = len(expand_variants(spec))
    return f"{variants} variants x {cases} cases x {repeats} repeats = {variants * cases * repeats} trials"


def variant_field(spec: ExperimentSpec, index: int, name: str) -> str:
    """Where the index-th expanded variant comes from: a declared variant or a matrix entry."""
    return f"variants[{index}]" if index < len(spec.variants) else f"matrix ({name})"


def _check_params(spec: ExperimentSpec, fail) -> None:  # noqa: ANN001
    """Known generation parameters must have their type and range wherever they are set."""
    from engine.actors.variants import expand_variants

    tables = [("params", spec.params)]
    for i, variant in enumerate(expand_variants(spec)):
        tables.append((f"{variant_field(spec, i, variant.name)}.params", variant.params))
    for field, params in tables:
        try:
            msgspec.convert(params, SamplingParams, strict=True)
        except msgspec.ValidationError as exc:
            where, expected = split_validation_error(str(exc))
            fail(f"{field}.{where}", expected)


def _check_variant_targets(spec: ExperimentSpec, fail) -> None:  # noqa: ANN001
    """A variant's `target` table overrides fields of the experiment's target: same names, same types."""
    from engine.actors.targets.base import resolve_target
    from engine.actors.variants import expand_variants

    for i, variant in enumerate(expand_variants(spec)):
        if not variant.target and variant.model is None:
            continue  # it runs the experiment's own target, checked already
        field = f"{variant_field(spec, i, variant.name)}.target"
        try:
            target = resolve_target(spec.target, variant)
        except msgspec.ValidationError as exc:
            where, expected = split_validation_error(str(exc))
            fail(f"{field}.{where}" if where != "(top level)" else field, expected)
            return
        _check_one_target(field, target, fail)


def _check_target(spec: ExperimentSpec, fail) -> None:  # noqa: ANN001
    _check_one_target("target", spec.target, fail)


def _check_one_target(field: str, target: TargetSpec, fail) -> None:  # noqa: ANN001
    if target.kind == "openai" and not target.base_url:
        fail(f"{field}.base_url", "expected the server's base URL for an openai target")
    if target.kind == "command" and not target.command:
        fail(f"{field}.command", "expected the command to run for a command target")
    if target.kind == "python" and not target.callable:
        fail(f"{field}.callable", "expected 'module:function' for a python target")


def _check_tune(spec: ExperimentSpec, fail) -> None:  # noqa: ANN001
    if spec.tune is None or not spec.tune.parameters:
        fail("tune.parameters", "expected at least one parameter range for kind = 'tune'")
        return
    for i, p in enumerate(spec.tune.parameters):
        if p.min > p.max:
            fail(f"tune.parameters[{i}].max", "expected max >= min")
        if p.step is not None and p.step <= 0:
            fail(f"tune.parameters[{i}].step", "expected a positive step")
        if not p.min <= p.default <= p.max:
            fail(f"tune.parameters[{i}].default", "expected a default within [min, max]")
    if not 0.0 <= spec.tune.min_improvement < 1.0:
        # seed 000's scores run 1-10 (its default 0.5); engine's run 0-1, so 0.5 there is 0.05 here
        fail("tune.min_improvement", "expected a score delta in [0, 1): scores run from 0 to 1")
    if spec.tune.auto_apply and not spec.tune.apply_to:
        fail("tune.apply_to", "expected the config file to write accepted values to (auto_apply is on)")
    if spec.tune.max_experiments < 1:
        fail("tune.max_experiments", "expected an integer >= 1")
    if spec.tune.radius <= 0:
        fail("tune.radius", "expected a positive radius")
