"""Checks msgspec's types cannot express: ranges, uniqueness, required-together fields."""

from __future__ import annotations

import re

from engine.errors import InputError
from events.spec import ExperimentSpec, GraderSpec


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
    from actors.variants import expand_variants

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


def _check_target(spec: ExperimentSpec, fail) -> None:  # noqa: ANN001
    targets = [("target", spec.target.kind, spec.target)]
    for i, variant in enumerate(spec.variants):
        kind = variant.target.get("kind", spec.target.kind)
        targets.append((f"variants[{i}].target", kind, None))
    for field, kind, target in targets:
        if target is None:
            continue
        if kind == "openai" and not target.base_url:
            fail(f"{field}.base_url", "expected the server's base URL for an openai target")
        if kind == "command" and not target.command:
            fail(f"{field}.command", "expected the command to run for a command target")
        if kind == "python" and not target.callable:
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
