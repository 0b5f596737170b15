"""An experiment resolved once: the plan that validation, preflight, narrowing, Ray and the runner share.

A spec says what to run; the plan adds what follows from it and where it came from, derived here
and nowhere else: the variants expanded (declared ones, then the matrix's), where each came from
(the field an error names), the experiment file's folder (paths and python modules resolve there)
and each variant's target with its overrides applied. It is frozen: a narrowed or resumed run gets
a new plan. The targets are resolved on first use, since a variant's bad override is a validation
error (engine.input.validate), not a crash while planning.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import msgspec

from engine.actors.targets.target_protocol import resolve_target
from engine.actors.variants import expand_variants
from engine.errors import InputError
from engine.events.graders import GRADERS
from engine.events.spec import ExperimentSpec, TargetSpec, VariantSpec


class ExperimentPlan(msgspec.Struct, frozen=True, dict=True):
    spec: ExperimentSpec
    file: str  # what error messages name: the experiment file as given, or the run
    base_dir: Path  # the experiment file's folder: relative paths and python target modules resolve there
    source: str = ""  # the experiment file's absolute path, recorded with the definition ("" for a dict)
    variants: tuple[VariantSpec, ...] = ()  # declared, then matrix; the first is the baseline
    origins: tuple[str, ...] = ()  # per variant: the field it comes from, "variants[0]" or "matrix (name)"
    warnings: tuple[str, ...] = ()  # what loading warned of, recorded with the definition
    narrowed_by: tuple[str, ...] = ()  # "--case", "--variant": the command line ran part of the file

    @property
    def tuning(self) -> bool:
        return self.spec.kind == "tune"

    @property
    def contestants(self) -> tuple[VariantSpec, ...]:
        """The variants a run proposes at its start: a tuning session generates its own as it goes."""
        return () if self.tuning else self.variants

    @functools.cached_property
    def targets(self) -> dict[str, TargetSpec]:
        """Each variant's target: the experiment's, with the variant's overrides applied."""
        return {v.name: resolve_target(self.spec.target, v) for v in self.variants}

    def run_targets(self) -> Iterator[tuple[str, TargetSpec]]:
        """Every target a run may call, with the field that configures it: the experiment's, each
        variant's own (its overrides applied) and each judge's."""
        from engine.actors.graders.judge_call import judge_target  # trio's import: not for `engine list`

        spec = self.spec
        yield "target", spec.target
        for i, variant in enumerate(self.variants):
            if self.overrides_target(i):
                yield f"{self.origins[i]}.target", self.targets[variant.name]
        for i, grader in enumerate(spec.graders):
            if GRADERS.of(grader).calls_model:
                yield f"graders[{i}].judge", judge_target(spec.target, grader)[0]

    def overrides_target(self, index: int) -> bool:
        """Whether the index-th variant runs a target of its own (a `target` table or a `model`)."""
        variant = self.variants[index]
        return bool(variant.target) or variant.model is not None

    def named(self, file: str) -> ExperimentPlan:
        """The same plan, its errors naming `file`."""
        if file == self.file:
            return self
        renamed = msgspec.structs.replace(self, file=file)
        renamed.__dict__.update(self.__dict__)  # what was resolved on first use stays resolved
        return renamed


def resolve(spec: ExperimentSpec, file: str, base_dir: Path, source: str = "") -> ExperimentPlan:
    """The plan of a spec; a matrix that does not expand into variants is an InputError at `matrix`."""
    try:
        variants = tuple(expand_variants(spec))
    except (TypeError, ValueError) as exc:
        expected = f"expected variant fields or parameters in each matrix entry ({exc})"
        raise InputError(file, "matrix", expected) from None
    declared = len(spec.variants)
    origins = tuple(
        f"variants[{i}]" if i < declared else f"matrix ({v.name})" for i, v in enumerate(variants)
    )
    return ExperimentPlan(spec, file, base_dir, source, variants, origins)
