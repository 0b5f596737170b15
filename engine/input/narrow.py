"""Command-line narrowing of an experiment: some cases, some variants, another seed or session size.

`engine run FILE --case 'refund-*' --variant concise --seed 7` (AgentV's --test-id globs; Keystone's
reproducer reruns one scenario with its seed; a chat command's `/experiment start N`). The narrowed spec is
what the run records, so replay and resume see exactly what ran.
"""

from __future__ import annotations

import fnmatch

import msgspec

from engine.errors import InputError
from engine.events.spec import ReuseSpec
from engine.input.experiment_plan import ExperimentPlan, resolve
from engine.input.flags import check_max_experiments, check_seed
from engine.input.tune_rerun import as_experiment

MAX_REPEATS = 1000


class Narrowing(msgspec.Struct, kw_only=True, frozen=True):
    cases: list[str] = []  # id globs
    variants: list[str] = []  # names (matrix variants by their generated names too)
    seed: int | None = None
    max_experiments: int | None = None
    repeats: int | None = None  # a tuning candidate measured with extra repeats reruns with as many
    reuse: str | None = None  # --reuse: "on", or "store", "last", a run id (--reuse=X); --no-reuse: "off"


def narrow(plan: ExperimentPlan, by: Narrowing) -> ExperimentPlan:
    """The plan of the narrowed spec (the same plan when nothing narrows it), which says what narrowed
    it: a run of some cases or variants is a partial rerun, never green by itself."""
    narrowed = _narrowed(plan, by)
    marks = tuple(flag for flag, given in (("--case", by.cases), ("--variant", by.variants)) if given)
    if narrowed is plan:
        return plan
    marks = marks or narrowed.narrowed_by
    return msgspec.structs.replace(narrowed, narrowed_by=marks, warnings=plan.warnings)


def _narrowed(plan: ExperimentPlan, by: Narrowing) -> ExperimentPlan:
    spec, file = plan.spec, plan.file
    changes: dict[str, object] = {}
    if by.cases:
        kept = [c for c in spec.cases if any(fnmatch.fnmatchcase(c.id, glob) for glob in by.cases)]
        if not kept:
            raise InputError(file, "--case", f"no case id matches {', '.join(map(repr, by.cases))}")
        changes["cases"] = kept
    if by.variants:
        if plan.tuning:  # one configuration the session tried (a failing trial's rerun)
            experiment = as_experiment(spec, by.variants, file)
            return _narrowed(resolve(experiment, file, plan.base_dir, plan.source), _without_variants(by))
        known = {v.name: v for v in plan.variants}
        missing = [name for name in by.variants if name not in known]
        if missing:
            raise InputError(file, "--variant", f"no variant named {missing[0]!r} (have {', '.join(known)})")
        changes["variants"], changes["matrix"] = [known[name] for name in by.variants], None
    if by.seed is not None:
        check_seed(by.seed, file)
        changes["seed"] = by.seed
    if by.repeats is not None:
        if not 1 <= by.repeats <= MAX_REPEATS:
            raise InputError(file, "--repeats", f"expected an integer in 1..{MAX_REPEATS}")
        changes["repeat"] = msgspec.structs.replace(spec.repeat, count=by.repeats)
    if by.max_experiments is not None:
        if spec.tune is None or spec.kind != "tune":
            raise InputError(file, "--max-experiments", "applies to tuning sessions (kind = 'tune')")
        check_max_experiments(by.max_experiments, file)
        changes["tune"] = msgspec.structs.replace(spec.tune, max_experiments=by.max_experiments)
    if by.reuse is not None:
        changes["reuse"] = reuse_table(spec.reuse, by.reuse)
    if not changes:
        return plan
    return resolve(msgspec.structs.replace(spec, **changes), file, plan.base_dir, plan.source)


def reuse_table(table: ReuseSpec | None, flag: str) -> ReuseSpec:
    """The [reuse] table as `--reuse[=RUN]` or `--no-reuse` changes it (max_age kept)."""
    table = table or ReuseSpec()
    if flag == "off":
        return msgspec.structs.replace(table, enabled=False)
    if flag == "on":  # `--reuse` alone: the file's sources, or the whole store
        return msgspec.structs.replace(table, enabled=True)
    source: str | list[str] = flag if flag in ("store", "last") else [flag]
    return msgspec.structs.replace(table, from_=source, enabled=True)


def _without_variants(by: Narrowing) -> Narrowing:
    return msgspec.structs.replace(by, variants=[])
