"""Exit codes as results where the tool says so: in Keystone's shape, and wherever a verifier or an
exit_code grader judges the trial, an agent's non-zero exit is graded (and fails), so scenarios read
pass, fail or flaky as Keystone defines them; timeouts stay errors. Elsewhere a non-zero exit is an
`agent_exit` error, and the error-rate gate sees it rise."""

from __future__ import annotations

import json
from pathlib import Path

from engine.api import open_engine
from engine.input.loader import load_experiment
from engine.presentation.formats import export_run
from engine.store.memory import MemoryStore
from tests.compat.helpers import run_file, write_script
from tests.conftest import run_engine

CASES = "\n".join(f'  - {{ id: scenario-{i:03d}, prompt: "fix test {i:03d}" }}' for i in range(10))

KEYSTONE = (
    """
name: fix-failing-test
agent:
  type: cli
  binary: ./bin/my-agent
  args: ["--model", "{{ matrix.model }}"]
  timeout_seconds: 0.5
parallelism:
  replicas: 3
  matrix:
    - { name: sonnet, model: claude-sonnet-4-5 }
cases:
"""
    + CASES
)

# Keystone's agents run the tests and exit with their status; one scenario hangs until killed
AGENT = """read prompt
case "$prompt" in
  *000*) echo "tests pass";;
  *001*) echo "2 tests failed" >&2; exit 1;;
  *002*) if [ "$ENGINE_REPEAT" = 1 ]; then echo "1 test failed"; exit 1; fi; echo "tests pass";;
  *003*) sleep 30;;
  *) echo "tests pass";;
esac
"""


def _project(folder: Path, agent: str = AGENT, spec: str = KEYSTONE) -> Path:
    write_script(folder / "bin" / "my-agent", agent)
    (folder / "spec.yaml").write_text(spec)
    return folder / "spec.yaml"


async def test_keystone_scenarios_read_pass_fail_flaky_and_a_timeout_stays_an_error(tmp_path: Path) -> None:
    file = _project(tmp_path)
    assert [g.kind for g in load_experiment(file).graders] == ["exit_code"]
    store = MemoryStore()
    report = await run_file(file, store, run_id="ks")
    verdicts = {s.case: (s.verdict, s.passes, s.runs) for s in report.scenarios}
    assert verdicts["scenario-000"] == ("pass", 3, 3)
    assert verdicts["scenario-001"] == ("fail", 0, 3)
    assert verdicts["scenario-002"] == ("flaky", 2, 3)
    assert verdicts["scenario-003"] == ("error", 0, 0)  # the timeout: no result, not a failure
    (variant,) = report.variants
    assert variant.errors_by_class == {"timeout": 3} and variant.unscored_cases == 1
    assert (variant.cases.passed, variant.cases.failed, variant.cases.flaky, variant.cases.errors) == (
        7,
        1,
        1,
        1,
    )
    lines: list[str] = []
    export_run(store, "ks", "jsonl", None, lines.append)
    trials = [json.loads(line) for line in lines]
    codes = {(t["case"], t["repeat"]): t["exit_code"] for t in trials if t["status"] != "error"}
    # exports number repeats from 1: ENGINE_REPEAT 1 is the export's repeat 2
    assert codes[("scenario-001", 1)] == 1 and codes[("scenario-000", 1)] == 0
    assert (codes[("scenario-002", 1)], codes[("scenario-002", 2)]) == (0, 1)
    assert len(codes) == 27 and all(code in (0, 1) for code in codes.values())  # every graded trial has one


async def test_a_keystone_files_own_exit_code_grader_is_kept_and_other_graders_keep_the_score(
    tmp_path: Path,
) -> None:
    own = KEYSTONE + "\ngraders:\n  - { kind: exit_code, exit_codes: [0, 1] }\n"
    assert [g.kind for g in load_experiment(_project(tmp_path, spec=own)).graders] == ["exit_code"]
    scored = KEYSTONE + "\ngraders:\n  - { kind: contains, value: pass }\n"
    spec = load_experiment(_project(tmp_path, spec=scored))
    assert [(g.kind, g.weight, g.gate) for g in spec.graders] == [
        ("contains", 1.0, False),
        ("exit_code", 0.0, True),
    ]


# the baseline's agent mostly exits 0 (scenario-002 is flaky)
HEALTHY_AGENT = AGENT.replace("sleep 30", 'echo "tests pass"').replace(
    'echo "2 tests failed" >&2; exit 1', "echo ok"
)
BROKEN_AGENT = """read prompt
case "$prompt" in
  *000*|*001*|*002*) echo "tests pass";;
  *) echo "3 tests failed" >&2; exit 1;;
esac
"""


def test_a_broken_keystone_agent_fails_the_gate_on_its_pass_rate(tmp_path: Path) -> None:
    healthy = HEALTHY_AGENT
    _project(tmp_path, agent=healthy, spec=KEYSTONE.replace("0.5", "30"))
    base = run_engine("run", "spec.yaml", "--run-id", "base", "--store", "st", "-q", cwd=tmp_path)
    assert base.returncode == 0, base.stderr.decode()
    write_script(tmp_path / "bin" / "my-agent", BROKEN_AGENT)  # the change under test broke 7 scenarios
    cand = run_engine("run", "spec.yaml", "--run-id", "cand", "--store", "st", "--json", cwd=tmp_path)
    report = json.loads(cand.stdout)
    assert report["error_rate"] is None or report["error_rate"] == 0.0  # failures, not errors
    assert report["variants"][0]["cases"]["failed"] == 7
    gated = run_engine("compare", "base", "cand", "--gate", "--json", "--store", "st", cwd=tmp_path)
    assert gated.returncode == 1
    rows = {m["metric"]: m for m in json.loads(gated.stdout)["metrics"]}
    assert rows["pass_rate"]["regressed"] and not rows["error_rate"]["regressed"]
    # a threshold that would let every comparison pass (NaN) or fail (negative) is bad input, as in a file
    for value in ("nan", "-0.1"):
        gate = ("--gate", "--max-pass-rate-drop", value)
        refused = run_engine("compare", "base", "cand", *gate, "--store", "st", cwd=tmp_path)
        assert refused.returncode == 2 and not refused.stdout
        assert refused.stderr.decode().splitlines() == [
            f"error: engine compare: --max-pass-rate-drop: expected float >= 0.0, got {float(value)}"
        ]


NATIVE = """
name = "fix-failing-test"
[target]
kind = "command"
command = ["./bin/my-agent"]
[repeat]
count = 3
[[graders]]
kind = "contains"
value = "pass"
""" + "".join(f'[[cases]]\nid = "scenario-{i:03d}"\nprompt = "fix test {i:03d}"\n' for i in range(10))


def test_without_a_verifier_the_broken_agents_exits_are_errors_and_the_error_rate_gate_fails(
    tmp_path: Path,
) -> None:
    write_script(tmp_path / "bin" / "my-agent", HEALTHY_AGENT)
    (tmp_path / "exp.toml").write_text(NATIVE)
    base = run_engine("run", "exp.toml", "--run-id", "base", "--store", "st", "--json", cwd=tmp_path)
    assert json.loads(base.stdout)["variants"][0]["errors_by_class"] == {"agent_exit": 1}
    write_script(tmp_path / "bin" / "my-agent", BROKEN_AGENT)
    cand = run_engine("run", "exp.toml", "--run-id", "cand", "--store", "st", "--json", cwd=tmp_path)
    assert cand.returncode == 1  # above execution.max_error_rate
    variant = json.loads(cand.stdout)["variants"][0]
    assert variant["pass_rate"] == 1.0 and variant["unscored_cases"] == 7  # the pass rate alone hides it
    gated = run_engine("compare", "base", "cand", "--gate", "--store", "st", cwd=tmp_path)
    assert gated.returncode == 1
    assert "REGRESSED: baseline: error_rate went from 0.033333 to 0.7" in " ".join(
        gated.stdout.decode().split()
    )


async def test_a_verifier_grades_a_non_zero_exit_and_sees_the_exit_code(tmp_path: Path) -> None:
    # the agent prints "tests pass" but exits 1 on scenario-002's second replica
    write_script(tmp_path / "bin" / "my-agent", AGENT.replace("sleep 30", 'echo "tests pass"'))
    verifier = """
[[graders]]
kind = "command"
commands = ['grep -q pass "$ENGINE_OUTPUT_FILE"', 'test "$ENGINE_AGENT_EXIT_CODE" = 0']
"""
    head, _, rest = NATIVE.partition("[[graders]]")
    (tmp_path / "exp.toml").write_text(head + verifier + "[[cases]]" + rest.partition("[[cases]]")[2])
    spec = load_experiment(tmp_path / "exp.toml")
    assert [g.kind for g in spec.graders] == ["command"]
    async with open_engine(MemoryStore()) as eng:
        report = await eng.run(spec, source=str(tmp_path / "exp.toml"))
    (variant,) = report.variants
    assert variant.errors == 0 and variant.scored == 30
    verdicts = {s.case: s.verdict for s in report.scenarios}
    assert (verdicts["scenario-001"], verdicts["scenario-002"], verdicts["scenario-000"]) == (
        "fail",
        "flaky",
        "pass",
    )


def test_a_variant_that_errors_more_than_the_baseline_keeps_the_run_from_going_green(tmp_path: Path) -> None:
    # "crashy" exits 1 (an agent_exit error: no verifier) on 7 of 10 scenarios; the errors stay
    # under the run's own limit, so only the paired error comparison notices
    agent = (
        'read prompt\nif [ "$ENGINE_VARIANT" = crashy ]; then\n'
        + BROKEN_AGENT.split("\n", 1)[1]
        + 'fi\necho "tests pass"\n'
    )
    write_script(tmp_path / "bin" / "my-agent", agent)
    two = NATIVE.replace("[repeat]", '[[variants]]\nname = "steady"\n[[variants]]\nname = "crashy"\n[repeat]')
    (tmp_path / "exp.toml").write_text(
        two.replace("count = 3", "count = 3\n[execution]\nmax_error_rate = 1.0")
    )
    ran = run_engine("run", "exp.toml", "--run-id", "r1", "--store", "st", "--json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    (compared,) = json.loads(ran.stdout)["comparisons"]
    assert compared["more_errors"] and compared["error_rate_delta"] == 0.7
    listed = run_engine("history", "fix-failing-test", "--json", "--store", "st", cwd=tmp_path)
    assert [p["green"] for p in json.loads(listed.stdout)] == [False]
