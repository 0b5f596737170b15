"""From a spec and its variants to concrete trial jobs (pure functions)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import msgspec

from engine.actors.messages import GradeJob, TrialJob
from engine.actors.scheduler import Plan
from engine.actors.targets.fingerprint import request_fingerprint
from engine.actors.targets.input_hashes import InputHashes
from engine.actors.targets.target_protocol import TargetRequest, resolve_target
from engine.events import kinds as k
from engine.events.graders import GRADERS, CommandGraderSpec
from engine.events.spec import CaseSpec, ExperimentSpec, TargetSpec, VariantSpec


def trial_seed(seed: int, variant: str, case: str, repeat: int) -> int:
    """Stable across processes and runs (unlike hash()): same trial, same seed."""
    digest = hashlib.blake2b(f"{seed}\x00{variant}\x00{case}\x00{repeat}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


def priced(spec: ExperimentSpec, target: TargetSpec) -> TargetSpec:
    """A target without its own price takes the [pricing] table's entry for its model."""
    if target.price is not None or target.model is None or target.model not in spec.pricing:
        return target
    return msgspec.structs.replace(target, price=spec.pricing[target.model])


def render_prompt(variant: VariantSpec, case: CaseSpec) -> str:
    if variant.prompt_template is None:
        return case.prompt
    return variant.prompt_template.replace("{prompt}", case.prompt)


def grades_exit_codes(spec: ExperimentSpec) -> bool:
    """With an exit_code grader or a verifier (a command grader) an agent's non-zero exit is a result
    to grade, not an error: its exit code is what they judge, or its tests failing is what they find.
    A timeout, a setup failure or an agent that is not there stays an error."""
    return any(GRADERS.of(g).reads_exit_code for g in spec.graders)


def build_plan(
    spec: ExperimentSpec,
    run_id: str,
    variants: list[VariantSpec],
    load_output: Callable[[str], str],
    repeats: int | None = None,
    base_dir: Path | None = None,
) -> Plan:
    """The plan's jobs; `base_dir`, the experiment's folder, is where an agent's relative scripts are
    found for the request fingerprint (read once per plan: see InputHashes)."""
    targets = {v.name: priced(spec, resolve_target(spec.target, v)) for v in variants}
    hashes = InputHashes(base_dir)
    grades_exit = grades_exit_codes(spec)
    keeps_workspace = any(isinstance(g, CommandGraderSpec) and g.workspace for g in spec.graders)
    cases: dict[str, CaseSpec] = {}  # by id, made at the first regrade (most runs have none)
    by_name = {v.name: v for v in variants}

    def make_job(variant: VariantSpec, case: CaseSpec, repeat: int) -> TrialJob:
        target = targets[variant.name]
        request = TargetRequest(
            run_id=run_id,
            variant=variant,
            case=case,
            repeat=repeat,
            prompt=render_prompt(variant, case),
            system=variant.system,
            context=case.context,
            model=target.model,
            params={**spec.params, **variant.params},
            flags=dict(variant.flags),
            seed=trial_seed(spec.seed, variant.name, case.id, repeat),
            timeout_s=spec.execution.trial_timeout_s or target.timeout_s,
            accept_nonzero_exit=grades_exit,
            keep_workspace=keeps_workspace,
        )
        return TrialJob(
            variant, case, repeat, target, request, fingerprint=request_fingerprint(target, request, hashes)
        )

    def load_regrade(completed: k.TrialCompleted) -> GradeJob:
        output = load_output(completed.output_hash)
        if not cases:
            cases.update((c.id, c) for c in spec.cases)
        return GradeJob(
            by_name[completed.variant], cases[completed.case], completed.repeat, output, completed
        )

    strategy = spec.repeat
    return Plan(
        run_id=run_id,
        variants=variants,
        cases=list(spec.cases),
        repeats=repeats or strategy.count,
        early_exit=strategy.strategy == "pass_at_k" and strategy.early_exit,
        make_job=make_job,
        load_regrade=load_regrade,
    )
