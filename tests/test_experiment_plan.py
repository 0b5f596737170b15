"""An experiment resolved once into a plan: what it holds, and that a run's checks and the run share it."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

import engine.input.experiment_plan as experiment_plan
from engine.actors.variants import expand_variants
from engine.api import open_engine, spec_from_dict
from engine.errors import InputError
from engine.events import kinds as k
from engine.events.spec import ExperimentSpec, VariantSpec
from engine.input.decidable import run_notes
from engine.input.experiment_plan import ExperimentPlan, resolve
from engine.input.loader import load_experiment, load_plan
from engine.input.narrow import Narrowing, narrow
from engine.input.preflight import check_environment
from engine.input.run_size import check_size
from engine.store.memory import MemoryStore
from engine.store.projection import run_events

EXPERIMENT = """\
name = "planned"
seed = 5
[target]
kind = "local"
[[variants]]
name = "terse"
system = "Answer in one word."
[[variants]]
name = "remote"
target = { kind = "openai", base_url = "http://127.0.0.1:9/v1" }
model = "small"
[matrix]
temperature = [0.1, 0.9]
[[cases]]
id = "capital-fr"
prompt = "Capital of France?"
expected = "Paris"
[[cases]]
id = "capital-jp"
prompt = "Capital of Japan?"
expected = "Tokyo"
"""


def write(tmp_path: Path, text: str = EXPERIMENT) -> Path:
    sub = tmp_path / "exp"
    sub.mkdir(exist_ok=True)
    path = sub / "exp.toml"
    path.write_text(text)
    return path


def test_a_loaded_plan_holds_the_variants_expanded_their_origins_and_the_file(tmp_path: Path) -> None:
    path = write(tmp_path)
    plan = load_plan(path)
    assert [v.name for v in plan.variants] == ["terse", "remote", "temperature=0.1", "temperature=0.9"]
    matrix = ("matrix (temperature=0.1)", "matrix (temperature=0.9)")
    assert plan.origins == ("variants[0]", "variants[1]", *matrix)
    assert plan.file == str(path)
    assert plan.source == str(path.resolve())
    assert plan.base_dir == path.resolve().parent
    assert plan.spec == load_experiment(path)
    assert list(plan.variants) == expand_variants(plan.spec)


def test_each_variant_target_has_its_overrides_applied(tmp_path: Path) -> None:
    plan = load_plan(write(tmp_path))
    assert plan.targets["terse"] == plan.spec.target
    remote = plan.targets["remote"]
    assert remote.kind == "openai" and remote.model == "small"
    assert [plan.overrides_target(i) for i in range(len(plan.variants))] == [False, True, False, False]


def test_a_plan_is_frozen_and_renaming_it_keeps_what_was_resolved(tmp_path: Path) -> None:
    plan = load_plan(write(tmp_path))
    with pytest.raises(AttributeError):
        plan.file = "other"  # type: ignore[misc]
    targets = plan.targets
    renamed = plan.named("run r1")
    assert renamed.file == "run r1" and renamed.variants == plan.variants
    assert renamed.targets is targets
    assert plan.named(plan.file) is plan


def test_a_tuning_session_proposes_no_variants_at_its_start() -> None:
    temperature = {"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.5, "default": 0.5}
    spec = spec_from_dict(
        {
            "name": "t", "kind": "tune", "cases": [{"id": "a", "prompt": "p", "expected": "x"}],
            "tune": {"parameters": [temperature]},
        }
    )  # fmt: skip
    plan = resolve(spec, "t", Path.cwd())
    assert plan.tuning and plan.contestants == () and [v.name for v in plan.variants] == ["baseline"]


def test_a_matrix_that_does_not_expand_is_refused_at_matrix() -> None:
    spec = spec_from_dict({"name": "m", "cases": [{"id": "a", "prompt": "p", "expected": "x"}]})
    broken = msgspec.structs.replace(spec, matrix={"temperature": 3})  # a value where a list belongs
    with pytest.raises(InputError, match=r"^m: matrix: expected variant fields or parameters"):
        resolve(broken, "m", Path.cwd())


def test_narrowing_gives_a_new_plan_and_no_narrowing_the_same_one(tmp_path: Path) -> None:
    plan = load_plan(write(tmp_path))
    assert narrow(plan, Narrowing()) is plan
    narrowed = narrow(plan, Narrowing(variants=["temperature=0.9", "terse"], cases=["capital-jp"]))
    assert [v.name for v in narrowed.variants] == ["temperature=0.9", "terse"]
    assert narrowed.origins == ("variants[0]", "variants[1]")
    assert [c.id for c in narrowed.spec.cases] == ["capital-jp"]
    assert (narrowed.file, narrowed.source, narrowed.base_dir) == (plan.file, plan.source, plan.base_dir)


async def test_a_run_from_a_plan_records_what_a_run_from_its_spec_records(tmp_path: Path) -> None:
    local = EXPERIMENT.replace('target = { kind = "openai", base_url = "http://127.0.0.1:9/v1" }\n', "")
    plan = load_plan(write(tmp_path, local))
    store = MemoryStore()
    async with open_engine(store) as eng:
        from_plan = await eng.run(plan, run_id="from-plan")
        from_spec = await eng.run(plan.spec, run_id="from-spec", source=plan.source)
    defined = {
        run: next(e for e in run_events(store, run) if isinstance(e, k.ExperimentDefined))
        for run in ("from-plan", "from-spec")
    }
    assert defined["from-plan"].spec == defined["from-spec"].spec == plan.spec
    assert defined["from-plan"].source == defined["from-spec"].source == plan.source
    assert from_plan.trials_total == from_spec.trials_total == 4 * 2
    assert [v.name for v in from_plan.variants] == [v.name for v in from_spec.variants]


async def test_the_checks_before_a_run_and_the_run_expand_the_variants_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expanded: list[ExperimentSpec] = []

    def counted(spec: ExperimentSpec) -> list[VariantSpec]:
        expanded.append(spec)
        return expand_variants(spec)

    monkeypatch.setattr(experiment_plan, "expand_variants", counted)
    local = EXPERIMENT.replace('target = { kind = "openai", base_url = "http://127.0.0.1:9/v1" }\n', "")
    plan = narrow(load_plan(write(tmp_path, local)), Narrowing())
    check_size(plan, allow_large=False)
    check_environment(plan)
    assert run_notes(plan, figures=True)
    async with open_engine(MemoryStore()) as eng:
        report = await eng.run(plan, run_id="once")
    assert report.status == "completed"
    assert expanded == [plan.spec]


def test_an_embedding_caller_may_build_a_plan_of_its_own() -> None:
    spec = spec_from_dict({"name": "d", "cases": [{"id": "a", "prompt": "p", "expected": "x"}]})
    plan = resolve(spec, "<dict>", Path.cwd())
    assert isinstance(plan, ExperimentPlan) and plan.source == "" and plan.base_dir == Path.cwd()
