"""`engine run`, `replay`, `report`, `list`, `status`, `validate`: the real CLI on a real store."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_engine

EXPERIMENT = """
name = "capitals"
seed = 7
[target]
kind = "python"
callable = "tests.fixtures.agent:capital"
[params]
temperature = 0.7
[[variants]]
name = "baseline"
[[variants]]
name = "cold"
params = {{ temperature = 0.1 }}
[repeat]
count = {repeats}
{cases}
"""


def experiment(cases: int = 12, repeats: int = 2, extra: str = "") -> str:
    body = "\n".join(
        f'[[cases]]\nid = "c{i:03d}"\nprompt = "What is the capital of country {i}?"\nexpected = "City{i}"'
        for i in range(cases)
    )
    return EXPERIMENT.format(repeats=repeats, cases=body) + extra


def store_with_runs(where: Path, *run_ids: str, cases: int = 3) -> Path:
    """A real store (`where/st`) holding these runs of the capitals experiment, made by `engine run`."""
    file = where / "capitals.toml"
    file.write_text(experiment(cases=cases, repeats=1))
    for run_id in run_ids:
        done = run_engine("run", str(file), "-q", "--run-id", run_id, "--store", "st", cwd=where)
        assert done.returncode == 0, done.stderr.decode()
    return where / "st"


def test_run_then_replay_and_report_are_byte_identical(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment())
    ran = run_engine("run", str(file), "--json", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    report = json.loads(ran.stdout)
    assert report["status"] == "completed" and not report["is_partial"]
    assert report["trials_total"] == report["trials_done"] == 2 * 12 * 2
    by_name = {v["name"]: v for v in report["variants"]}
    assert by_name["cold"]["mean_score"] > by_name["baseline"]["mean_score"]
    assert report["baseline"] == "baseline"

    replayed = run_engine("replay", report["run_id"], "--json", "--store", "st", cwd=tmp_path)
    stored = run_engine("report", report["run_id"], "--json", "--store", "st", cwd=tmp_path)
    assert replayed.returncode == stored.returncode == 0
    assert replayed.stdout == stored.stdout == ran.stdout


def test_list_status_and_terminal_report(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=3, repeats=1))
    assert run_engine("run", str(file), "-q", "--store", "st", cwd=tmp_path).returncode == 0
    listed = run_engine("list", "--json", "--store", "st", cwd=tmp_path)
    runs = json.loads(listed.stdout)
    assert [r["status"] for r in runs] == ["completed"] and runs[0]["experiment"] == "capitals"
    status = json.loads(run_engine("status", "--json", "--store", "st", cwd=tmp_path).stdout)
    assert status["trials_done"] == status["trials_total"] == 6
    table = run_engine("report", "--store", "st", cwd=tmp_path)
    assert b"capitals" in table.stdout and b"baseline" in table.stdout
    assert b"(winner)" in table.stdout or b"(tied best)" in table.stdout  # as the summary line says


def test_bad_input_exits_2_with_file_field_and_expectation(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(extra='[budget]\nmax_trials = "many"\n'))
    result = run_engine("run", str(file), "--store", "st", cwd=tmp_path)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert str(file) in err and "budget.max_trials" in err and "expected int" in err
    assert "Traceback" not in err
    assert not (tmp_path / "st").exists()  # nothing was started


def test_unknown_run_id_exits_2(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=1, repeats=1))
    assert run_engine("run", str(file), "-q", "--store", "st", cwd=tmp_path).returncode == 0
    result = run_engine("report", "nope", "--store", "st", cwd=tmp_path)
    assert result.returncode == 2 and b"no run 'nope'" in result.stderr and b"Traceback" not in result.stderr


def test_validate(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=4, repeats=3))
    result = run_engine("validate", str(file), cwd=tmp_path)
    assert result.returncode == 0 and b"2 variants x 4 cases x 3 repeats = 24 trials" in result.stdout


def test_budget_max_trials_gives_partial_report(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=10, repeats=2, extra="[budget]\nmax_trials = 7\n"))
    result = run_engine("run", str(file), "--json", "--store", "st", cwd=tmp_path)
    report = json.loads(result.stdout)
    assert report["is_partial"] and report["status"] == "partial"
    assert report["budget_exhausted"] == ["max_trials"]
    assert sum(v["trials"] for v in report["variants"]) == 7


def test_compare_gate_flags_a_regression(tmp_path: Path, write_experiment) -> None:
    good = write_experiment(
        experiment(cases=20, repeats=1).replace("temperature = 0.7", "temperature = 0.1"), "good.toml"
    )
    bad = write_experiment(
        experiment(cases=20, repeats=1).replace("temperature = 0.7", "temperature = 1.2"), "bad.toml"
    )
    for name, file in (("good", good), ("bad", bad), ("good2", good)):
        assert (
            run_engine("run", str(file), "-q", "--run-id", name, "--store", "st", cwd=tmp_path).returncode
            == 0
        )
    regressed = run_engine("compare", "good", "bad", "--gate", "--json", "--store", "st", cwd=tmp_path)
    assert regressed.returncode == 1, regressed.stderr.decode()
    result = json.loads(regressed.stdout)
    assert result["regressed"] and any("baseline: pass_rate" in r for r in result["regressions"])
    same = run_engine("compare", "good", "good2", "--gate", "--store", "st", cwd=tmp_path)
    assert same.returncode == 0 and b"no regression" in same.stdout


def test_compare_warns_or_refuses_when_case_sets_differ(tmp_path: Path, write_experiment) -> None:
    small = write_experiment(experiment(cases=5, repeats=1), "small.toml")
    large = write_experiment(experiment(cases=8, repeats=1), "large.toml")
    for name, file in (("small", small), ("large", large)):
        assert (
            run_engine("run", str(file), "-q", "--run-id", name, "--store", "st", cwd=tmp_path).returncode
            == 0
        )
    warned = run_engine("compare", "small", "large", "--json", "--store", "st", cwd=tmp_path)
    assert warned.returncode == 0 and "case sets differ" in json.loads(warned.stdout)["warnings"][0]
    refused = run_engine("compare", "small", "large", "--require-same-cases", "--store", "st", cwd=tmp_path)
    assert refused.returncode == 2 and b"same case set" in refused.stderr


def test_regrade_from_the_cli(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=4, repeats=1))
    assert run_engine("run", str(file), "-q", "--run-id", "r1", "--store", "st", cwd=tmp_path).returncode == 0
    graders = write_experiment('[[graders]]\nkind = "regex"\npattern = "City\\\\d+"\n', "graders.toml")
    result = run_engine("regrade", "r1", "--graders", str(graders), "--json", "--store", "st", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    stored = run_engine("report", "r1", "--json", "--store", "st", cwd=tmp_path)
    replayed = run_engine("replay", "r1", "--json", "--store", "st", cwd=tmp_path)
    assert result.stdout == stored.stdout == replayed.stdout
    bad = write_experiment('[[graders]]\nkind = "regex"\npattern = "("\n', "bad.toml")
    refused = run_engine("regrade", "r1", "--graders", str(bad), "--store", "st", cwd=tmp_path)
    assert refused.returncode == 2 and b"graders[0].pattern" in refused.stderr


def test_run_narrowed_to_some_cases_a_variant_and_a_seed(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=12, repeats=1))
    args = ["--case", "c00[0-2]", "--case", "c011", "--variant", "cold", "--seed", "99"]
    ran = run_engine("run", str(file), *args, "--json", "-q", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    report = json.loads(ran.stdout)
    assert [v["name"] for v in report["variants"]] == ["cold"] and report["baseline"] == "cold"
    assert report["trials_total"] == 4
    exported = run_engine("export", report["run_id"], "--format", "jsonl", "--store", "st", cwd=tmp_path)
    assert sorted(json.loads(line)["case"] for line in exported.stdout.splitlines()) == [
        "c000", "c001", "c002", "c011",
    ]  # fmt: skip
    # the narrowed spec is the one recorded: replay agrees byte for byte
    replayed = run_engine("replay", report["run_id"], "--json", "--store", "st", cwd=tmp_path)
    assert replayed.stdout == ran.stdout


def test_bad_narrowing_exits_2_naming_the_option(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=2, repeats=1))
    for args, expected in [
        (["--case", "nope-*"], b"--case: no case id matches 'nope-*'"),
        (["--variant", "warm"], b"--variant: no variant named 'warm' (have baseline, cold)"),
        (["--max-experiments", "3"], b"--max-experiments: applies to tuning sessions"),
    ]:
        done = run_engine("run", str(file), *args, "-q", "--store", "st", cwd=tmp_path)
        assert done.returncode == 2 and expected in done.stderr and b"Traceback" not in done.stderr
        # a schedule narrows every session the same way: checked before the process settles in
        done = run_engine("run", str(file), "--schedule", "0 3 * * *", *args, "--store", "st", cwd=tmp_path)
        assert done.returncode == 2 and expected in done.stderr, done.stderr
    assert not (tmp_path / "st").exists()  # refused before the store was touched


def test_run_without_a_file_takes_the_projects_default_experiment(tmp_path: Path) -> None:
    missing = run_engine("run", "-q", "--store", "st", cwd=tmp_path)
    assert (
        missing.returncode == 2
        and b"no engine.toml or engine.yaml or .engine/config.toml here" in missing.stderr
    )
    (tmp_path / "engine.toml").write_text(experiment(cases=2, repeats=1))
    done = run_engine("run", "-q", "--json", "--run-id", "d", "--store", "st", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["experiment"] == "capitals"


def test_promote_writes_the_variant_into_a_config_file(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=12, repeats=2))
    report = json.loads(run_engine("run", str(file), "--json", "-q", "--store", "st", cwd=tmp_path).stdout)
    config = tmp_path / "agent.toml"
    config.write_text(
        '# my agent\nname = "bot"\n\n[params]\ntemperature = 0.9  # was tuned by hand\nmax_tokens = 64\n'
    )
    args = ("promote", report["run_id"], "cold", "--to", str(config), "--store", "st")
    done = run_engine(*args, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["params"] == {"temperature": 0.1}
    text = config.read_text()
    assert text.startswith('# my agent\nname = "bot"') and text.endswith("\n") and "max_tokens = 64" in text
    assert "temperature = 0.1  # was tuned by hand\n" in text  # the inline comment survives
    said = run_engine(*args, cwd=tmp_path).stdout.decode()  # a person reads a summary, not JSON
    assert (
        said.startswith(f"promoted variant cold of run {report['run_id']} to ")
        and "[params] temperature = 0.1" in said
    )
    fresh = tmp_path / "fresh.toml"
    run_engine("promote", report["run_id"], "cold", "--to", str(fresh), "--store", "st", cwd=tmp_path)
    assert fresh.read_text() == "[params]\ntemperature = 0.1\n"  # no leading blank line
    # the default is the winner; a name the run does not have is refused
    winner = run_engine(
        "promote", report["run_id"], "--force", "--to", str(tmp_path / "w.json"), "--store", "st", "--json",
        cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(winner.stdout)["variant"] == report["winner"]
    missing = run_engine(
        "promote", report["run_id"], "warm", "--to", str(config), "--store", "st", cwd=tmp_path
    )
    assert missing.returncode == 2 and b"no variant 'warm' (have baseline, cold)" in missing.stderr


def test_compare_flags_one_case_that_broke_on_every_replica(tmp_path: Path, write_experiment) -> None:
    # 8 cases x 10 replicas: one case goes from 10/10 to 0/10. Over all cases that is a pass-rate drop of
    # 0.125 that the paired test does not call significant; on its own replicas it is decisive.
    text = experiment(cases=8, repeats=10).replace(
        "tests.fixtures.agent:capital", "tests.fixtures.agent:breaks_one_case"
    )
    before = write_experiment(text, "before.toml")
    after = write_experiment(
        text.replace("temperature = 0.7", 'temperature = 0.7\nbroken = "c003"'), "after.toml"
    )
    for name, file in (("before", before), ("after", after)):
        ran = run_engine("run", str(file), "-q", "--run-id", name, "--store", "st", cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr.decode()
    compared = run_engine("compare", "before", "after", "--gate", "--json", "--store", "st", cwd=tmp_path)
    assert compared.returncode == 1, compared.stderr.decode()
    result = json.loads(compared.stdout)
    failing = result["newly_failing"]
    assert {(c["variant"], c["case"], c["baseline"], c["candidate"]) for c in failing} == {
        ("baseline", "c003", "10/10", "0/10"),
        ("cold", "c003", "10/10", "0/10"),
    }
    assert all(c["p_value_adjusted"] < 0.01 for c in failing) and result["newly_passing"] == []
    assert any("case c003 went from 10/10 to 0/10" in r for r in result["regressions"])
    # the drop over all cases alone would not have fired
    assert not any(m["regressed"] for m in result["metrics"] if m["metric"] == "pass_rate")
    terminal = run_engine("compare", "before", "after", "--store", "st", cwd=tmp_path).stdout.decode()
    assert "newly failing" in terminal and "c003" in terminal
