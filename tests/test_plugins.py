"""Kinds from outside engine: installed packages register targets and graders through entry points
(`engine.targets`, `engine.graders`); a log naming a kind installed no longer still replays; a log
written before kinds were declared this way replays byte for byte.

Packages are installed for real, into a folder put on the engine subprocess's PYTHONPATH: the
example plugin by pip, a kind made in a test as one module plus its dist-info (what pip leaves)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import trio

from engine.actors.graders.factory import make_grader
from engine.actors.graders.grader_protocol import Submission
from engine.actors.kind_contract import check_grader_kind, check_target_kind
from engine.actors.targets.target_maker import make_target
from engine.actors.targets.target_protocol import TargetError, TargetRequest
from engine.events import codec
from engine.events import kinds as k
from engine.events.graders import GRADERS
from engine.events.spec import CaseSpec
from engine.events.targets import TARGETS, BaseTarget, TargetKind
from tests.conftest import ROOT, run_engine

FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def example_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/plugin installed by pip (no index, no build isolation: offline) into a folder."""
    work = tmp_path_factory.mktemp("plugin")
    source = shutil.copytree(ROOT / "examples" / "plugin", work / "source")  # pip builds in the tree
    site = work / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    pip += ["--no-index", "--target", str(site), str(source)]
    subprocess.run(pip, check=True, capture_output=True, timeout=300)
    return site


def on_path(*folders: Path) -> str:
    return os.pathsep.join(map(str, [*folders, ROOT]))


def test_the_example_plugin_runs_and_its_log_replays_once_it_is_uninstalled(
    example_plugin: Path, tmp_path: Path
) -> None:
    experiment = shutil.copy(ROOT / "examples" / "plugin" / "experiment.toml", tmp_path / "exp.toml")
    site = on_path(example_plugin)
    ran = run_engine("run", str(experiment), "--json", "--store", "st", cwd=tmp_path, PYTHONPATH=site)
    assert ran.returncode == 0, ran.stderr.decode()
    report = json.loads(ran.stdout)
    # "You said: hello" has 3 words (within 6: 1.0); the long case 9 (6/9): the mean of the two
    assert {v["name"]: v["mean_score"] for v in report["variants"]} == pytest.approx(
        {"plain": (1 + 6 / 9) / 2, "shouting": (1 + 6 / 9) / 2}, abs=1e-3
    )
    exported = run_engine("export", report["run_id"], "--format", "jsonl", "--store", "st", cwd=tmp_path)
    outputs = {json.loads(line)["output"] for line in exported.stdout.decode().splitlines()}
    assert "YOU SAID: HELLO" in outputs and "You said: hello" in outputs  # the echo target answered

    replayed = run_engine("replay", report["run_id"], "--json", "--store", "st", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr.decode()
    assert replayed.stdout == ran.stdout  # without the plugin: the same report, not a damaged store


def test_the_example_plugin_keeps_the_contract(example_plugin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(example_plugin))
    GRADERS.rescan()
    TARGETS.rescan()
    try:
        grader, target = GRADERS.get("word_limit"), TARGETS.get("echo")
        assert grader is not None and target is not None  # found through their entry points
        check_grader_kind(grader)
        check_target_kind(target)
    finally:
        monkeypatch.undo()
        GRADERS.rescan()
        TARGETS.rescan()
    assert GRADERS.get("word_limit") is None


ONE_FILE = """
from engine.actors.graders.grader_protocol import SpecGrader, result
from engine.events.graders import BaseGrader, GraderKind


class EndsWithSpec(BaseGrader, tag="ends_with", kw_only=True):
    suffix: str


class EndsWith(SpecGrader):
    async def grade(self, submission):
        ok = submission.output.rstrip().endswith(self.spec.suffix)
        return result(self.spec, float(ok), ok)


KIND = GraderKind(EndsWithSpec, "ends_with:EndsWith", {"suffix": "x"})
"""

EXPERIMENT = """
name = "one-file"
[target]
kind = "python"
callable = "tests.fixtures.agent:capital"
[[graders]]
kind = "ends_with"
suffix = {suffix}
[[cases]]
id = "c1"
prompt = "What is the capital of country 1?"
[[cases]]
id = "c2"
prompt = "What is the capital of country 2?"
"""


def installed_one_file_kind(site: Path) -> Path:
    """A grader kind as one module, and the dist-info pip would leave for its entry point."""
    site.mkdir()
    (site / "ends_with.py").write_text(ONE_FILE)
    info = site / "ends_with-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ends-with\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[engine.graders]\nends_with = ends_with:KIND\n")
    return site


def test_a_kind_added_at_test_time_is_one_file(tmp_path: Path, write_experiment) -> None:
    site = on_path(installed_one_file_kind(tmp_path / "site"))
    good = write_experiment(EXPERIMENT.format(suffix='"1"'))
    ran = run_engine("run", str(good), "--json", "--store", "st", cwd=tmp_path, PYTHONPATH=site)
    assert ran.returncode == 0, ran.stderr.decode()
    by_case = {}
    exported = run_engine("export", json.loads(ran.stdout)["run_id"], "--format", "jsonl", "--store", "st",
                          cwd=tmp_path, PYTHONPATH=site)  # fmt: skip
    for line in exported.stdout.decode().splitlines():
        row = json.loads(line)
        by_case[row["case"]] = (row["output"], row["score"])
    assert by_case["c1"][1] == float(by_case["c1"][0].rstrip().endswith("1"))
    assert by_case["c2"][1] == float(by_case["c2"][0].rstrip().endswith("1"))

    bad = write_experiment(EXPERIMENT.format(suffix="3"), "bad.toml")
    refused = run_engine("validate", str(bad), cwd=tmp_path, PYTHONPATH=site)
    assert refused.returncode == 2
    assert "graders[0].suffix" in refused.stderr.decode() and "Traceback" not in refused.stderr.decode()

    unknown = run_engine("validate", str(bad), cwd=tmp_path)  # not installed: its name is a typo
    assert unknown.returncode == 2 and "graders[0].kind" in unknown.stderr.decode()
    listed = run_engine("validate", str(write_experiment(EXPERIMENT.replace("ends_with", "end_with").format(
        suffix='"1"'), "typo.toml")), cwd=tmp_path, PYTHONPATH=site)  # fmt: skip
    assert listed.returncode == 2 and "ends_with" in listed.stderr.decode()  # among the choices


def test_plugins_are_read_only_when_a_kind_engine_lacks_is_met(tmp_path: Path, write_experiment) -> None:
    site = installed_one_file_kind(tmp_path / "site")
    marker = tmp_path / "imported"
    (site / "ends_with.py").write_text(f"open({str(marker)!r}, 'w').close()\n" + ONE_FILE)
    for args in (["--help"], ["run", "--help"], ["validate", str(write_experiment(EXPERIMENT.replace(
            "ends_with", "contains").replace("suffix = ", "value = ").format(suffix='"1"')))]):  # fmt: skip
        assert run_engine(*args, cwd=tmp_path, PYTHONPATH=on_path(site)).returncode == 0
        assert not marker.exists(), args  # engine's own kinds only: no package was imported
    checked = run_engine("validate", str(write_experiment(EXPERIMENT.format(suffix='"1"'), "own.toml")),
                         cwd=tmp_path, PYTHONPATH=on_path(site))  # fmt: skip
    assert checked.returncode == 0, checked.stderr.decode()
    assert marker.exists()


def stored_definition(graders: list[dict], target: dict) -> bytes:
    """An experiment.defined event as a log holds it, naming kinds this process does not know."""
    spec = {"name": "gone", "target": target, "graders": graders}
    event = {"type": "experiment.defined", "run_id": "r1", "spec": spec, "spec_hash": "h", "v": 2}
    return msgspec.msgpack.encode(event)


def test_a_kind_installed_no_longer_reads_as_that_kind_and_cannot_score() -> None:
    graders = [{"kind": "gone_grader", "weight": 2.0, "limit": 3}]
    data = stored_definition(graders, {"kind": "gone_target", "model": "m"})
    event = codec.decode(data)
    assert isinstance(event, k.ExperimentDefined)
    grader, target = event.spec.graders[0], event.spec.target
    assert (grader.kind, grader.weight, grader.limit) == ("gone_grader", 2.0, 3)  # type: ignore[union-attr]
    assert (target.kind, target.model) == ("gone_target", "m")
    assert codec.decode(codec.encode(event)) == msgspec.structs.replace(event, v=2)  # stored back as it was
    assert not GRADERS.of(grader).installed and not TARGETS.of(target).installed

    async def grade() -> k.GraderResult:
        case = CaseSpec(id="c", prompt="p")
        return await make_grader(grader).grade(Submission(case=case, output="o"))

    found = trio.run(grade)
    assert (found.name, found.score, found.passed) == ("gone_grader", None, False)
    assert found.error == "not_installed"
    with pytest.raises(TargetError, match="not installed"):
        make_target(target)


def test_a_log_written_before_kinds_were_declared_once_replays_byte_for_byte(tmp_path: Path) -> None:
    """The bundle was exported by engine as it was before (exact, contains, regex, forbidden, json,
    python, exit_code and command graders; local, python and command targets; a regrade round);
    the JSON is that engine's `replay --json` of it."""
    replayed = run_engine("replay", str(FIXTURES / "kinds_before.bundle"), "--json", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr.decode()
    assert replayed.stdout == (FIXTURES / "kinds_before_replay.json").read_bytes()


class SwallowSpec(BaseTarget, tag="swallow_cancel"):
    pass


class Swallower:
    """A target that turns its cancellation into a failed call (the trial would be logged failed)."""

    @classmethod
    def from_spec(cls, spec: SwallowSpec, context: object) -> Swallower:
        return cls()

    async def call(self, request: TargetRequest) -> object:
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            raise TargetError("infra", "cancelled") from None
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        return None


def test_the_contract_catches_a_kind_that_swallows_its_cancellation() -> None:
    kind = TargetKind(SwallowSpec, f"{__name__}:Swallower")
    TARGETS.register(kind)
    try:
        with pytest.raises(AssertionError, match="swallow_cancel"):
            check_target_kind(kind)
    finally:
        TARGETS.unregister("swallow_cancel")
