"""What engine needs to know of a kind comes from its declaration, never from its spec's class: a
kind from outside engine that declares a capability is treated as engine's own kinds are. Also the
one loader of entry points (kinds and formats), its warning for a misnamed entry point, and the
contract checks awaited from inside trio (pytest-trio)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from engine.actors.kind_contract import acheck_grader_kind, acheck_target_kind
from engine.actors.messages import TrialJob
from engine.actors.reservations import Reservations
from engine.actors.targets.target_protocol import TargetRequest
from engine.errors import InputError
from engine.events.graders import GRADERS, BaseGrader, GraderKind
from engine.events.kind_registry import KindRegistry
from engine.events.spec import CaseSpec, VariantSpec
from engine.events.targets import TARGETS, BaseTarget, HttpTarget, TargetKind
from engine.input.loader import plan_from_raw
from engine.presentation.formats import BUILT_IN, Formats
from engine.store.projections.run_state import RunState


class CappedSpec(BaseTarget, tag="capped_for_test"):
    pass


class OwnHttpSpec(HttpTarget, tag="own_http_for_test"):
    pass


class StepsGraderSpec(BaseGrader, tag="steps_for_test", kw_only=True):
    steps: list[str] = []


def worst_tokens(kind: TargetKind) -> int:
    """A budget's reservation for one trial asking max_tokens = 50, after outputs of up to 500."""
    state = RunState(run_id="r")
    state.spend.max_tokens_out, state.spend.max_trial_tokens = 500, 520
    variant, case = VariantSpec(name="v"), CaseSpec(id="c", prompt="hello")
    request = TargetRequest(
        run_id="r", variant=variant, case=case, repeat=0, prompt="hello", params={"max_tokens": 50}
    )
    job = TrialJob(variant=variant, case=case, repeat=0, target=kind.spec(), request=request)
    TARGETS.register(kind)
    try:
        worst = Reservations(state, max_tokens=10_000, max_cost_usd=None).worst_case(job)
    finally:
        TARGETS.unregister(kind.name)
    assert worst is not None
    return worst[0]


def test_a_plugin_target_that_honours_max_tokens_is_reserved_at_that_bound() -> None:
    assert worst_tokens(TargetKind(CappedSpec, "x:y", honours_max_tokens=True)) == 50
    assert worst_tokens(TargetKind(CappedSpec, "x:y")) == 520  # it may answer as long as any answer seen


def test_a_plugin_http_target_has_its_url_checked_before_a_run(tmp_path: Path) -> None:
    TARGETS.register(TargetKind(OwnHttpSpec, "x:y", speaks_http=True))
    raw = {"name": "e", "target": {"kind": "own_http_for_test", "base_url": "ftp://h"}, "cases": [
        {"id": "c", "prompt": "p", "expected": "x"}]}  # fmt: skip
    try:
        with pytest.raises(InputError, match="target.base_url"):
            plan_from_raw(raw, "exp.toml", tmp_path)
    finally:
        TARGETS.unregister("own_http_for_test")


def test_a_plugin_grader_left_empty_reads_its_field_from_each_case(tmp_path: Path) -> None:
    GRADERS.register(GraderKind(StepsGraderSpec, "x:y", case_fallback="steps"))
    cases = [{"id": "a", "prompt": "p", "criteria": {"steps": ["s"]}}, {"id": "b", "prompt": "p"}]
    raw = {"name": "e", "graders": [{"kind": "steps_for_test"}], "cases": cases}
    try:
        with pytest.raises(InputError, match=r"criteria.steps \(cases\[1\] has none\)"):
            plan_from_raw(raw, "exp.toml", tmp_path)
        plan_from_raw({**raw, "cases": cases[:1]}, "exp.toml", tmp_path)  # every case gives it
    finally:
        GRADERS.unregister("steps_for_test")


def test_a_declared_capability_its_spec_cannot_carry_is_refused() -> None:
    with pytest.raises(TypeError, match="must subclass HttpTarget"):
        TargetKind(CappedSpec, "x:y", speaks_http=True)
    with pytest.raises(TypeError, match="must subclass CommandTargetSpec"):
        TargetKind(CappedSpec, "x:y", runs_command=True)
    with pytest.raises(TypeError, match="has no field nope"):
        GraderKind(StepsGraderSpec, "x:y", case_fallback="nope")
    with pytest.raises(TypeError, match="has no field judge, repeats"):
        GraderKind(StepsGraderSpec, "x:y", repeats_judge=True)


KINDS_MODULE = """
from engine.events.targets import BaseTarget, TargetKind

class LoadedSpec(BaseTarget, tag="loaded_for_test"):
    pass

KIND = TargetKind(LoadedSpec, "loaded_kinds:LoadedSpec")

def report_upper(report):
    return report.run_id.upper()
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package as pip leaves it: one module and a dist-info naming two entry points."""
    (tmp_path / "loaded_kinds.py").write_text(KINDS_MODULE)
    info = tmp_path / "loaded_kinds-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: loaded-kinds\nVersion: 0.1\n")
    points = "[test.engine.targets]\nmisnamed = loaded_kinds:KIND\n\n"
    points += "[engine.formats]\nupper = loaded_kinds:report_upper\n"
    (info / "entry_points.txt").write_text(points)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_an_entry_point_named_unlike_its_kind_is_warned_about_once(installed: Path) -> None:
    registry = KindRegistry("target kind", "test.engine.targets", BaseTarget, [], TargetKind)
    with pytest.warns(UserWarning) as said:
        assert registry.get("loaded_for_test") is not None  # found by its tag, not the entry point's name
    assert [str(w.message) for w in said] == [
        "test.engine.targets entry point 'misnamed' (loaded-kinds) declares the kind 'loaded_for_test'; "
        "experiment files name it 'loaded_for_test'"
    ]
    registry.rescan()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second scan says nothing again
        assert registry.names() == ["loaded_for_test"]


def test_formats_come_through_the_same_loader(installed: Path) -> None:
    formats = Formats(BUILT_IN)
    assert formats.choices("report") == "markdown | html | json | upper"
    assert formats.choices("export") == "jsonl | junit | rundir | bundle"
    assert formats.get("upper", "report").__module__ == "loaded_kinds"


def test_format_help_lists_the_installed_formats(installed: Path) -> None:
    """`engine report --help` names a format another package installed, as `--format` accepts it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(installed), os.environ.get("PYTHONPATH", "")])}
    env["COLUMNS"] = "200"  # one help line per option
    shown = subprocess.run(
        [sys.executable, "-m", "engine.cli.main", "report", "--help"], env=env, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert "markdown | html | json | upper (to stdout" in shown.stdout
    exported = subprocess.run(
        [sys.executable, "-m", "engine.cli.main", "export", "--help"], env=env, capture_output=True, text=True
    )
    assert "jsonl | junit | rundir | bundle" in exported.stdout


async def test_the_contract_checks_can_be_awaited_inside_trio() -> None:
    for name in ("local", "openai", "command"):
        kind = TARGETS.get(name)
        assert kind is not None
        await acheck_target_kind(kind)
    for name in ("exact", "judge"):
        grader = GRADERS.get(name)
        assert grader is not None
        await acheck_grader_kind(grader)


async def test_the_awaited_contract_catches_a_kind_that_swallows_its_cancellation() -> None:
    from tests.test_plugins import SwallowSpec

    kind = TargetKind(SwallowSpec, "tests.test_plugins:Swallower")
    TARGETS.register(kind)
    try:
        with pytest.raises(AssertionError, match="swallow_cancel"):
            await acheck_target_kind(kind)
    finally:
        TARGETS.unregister("swallow_cancel")
