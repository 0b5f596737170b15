"""Honest failures, through the real CLI: a bad setting is one line naming file and field, exit 2, and
nothing logged; a failure during a run is shown by class in every report format and sets the exit code."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.conftest import run_engine
from tests.test_cli_run import experiment

UNSET = "ENGINE_TEST_SURELY_UNSET_KEY"


def assert_refused(result: object, *fragments: str) -> None:
    err = result.stderr.decode()  # type: ignore[attr-defined]
    assert result.returncode == 2, err  # type: ignore[attr-defined]
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert all(fragment in err for fragment in fragments), err


def free_port() -> int:
    """A port nothing listens on: bound, then released (connecting to it is refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def openai_experiment(base_url: str, extra: str = "", cases: int = 4) -> str:
    body = "\n".join(f'[[cases]]\nid = "c{i}"\nprompt = "q{i}"\nexpected = "a{i}"' for i in range(cases))
    return (
        f'name = "remote"\n[target]\nkind = "openai"\nbase_url = "{base_url}"\nmodel = "m"\n'
        f'[[variants]]\nname = "a"\n[[variants]]\nname = "b"\n[repeat]\ncount = 5\n{extra}\n{body}\n'
    )


def test_an_unset_api_key_variable_is_caught_by_validate_and_by_run(
    tmp_path: Path, write_experiment
) -> None:
    file = write_experiment(openai_experiment("http://127.0.0.1:1/v1"))
    file.write_text(file.read_text().replace('model = "m"\n', f'model = "m"\napi_key_env = "{UNSET}"\n', 1))
    assert_refused(run_engine("validate", str(file), cwd=tmp_path), str(file), "target.api_key_env", UNSET)
    assert_refused(run_engine("run", str(file), "--store", "st", cwd=tmp_path), "target.api_key_env", UNSET)
    assert not (tmp_path / "st").exists()  # nothing started, so no "interrupted" run either


def test_a_wrongly_typed_or_out_of_range_parameter_is_caught_by_validate(
    tmp_path: Path, write_experiment
) -> None:
    hot = write_experiment(experiment().replace("temperature = 0.7", 'temperature = "hot"'))
    assert_refused(run_engine("validate", str(hot), cwd=tmp_path), "params.temperature", "expected float")
    assert_refused(run_engine("run", str(hot), "--store", "st", cwd=tmp_path), "params.temperature")
    nan = write_experiment(experiment().replace("temperature = 0.1", "temperature = nan"), "nan.toml")
    assert_refused(run_engine("validate", str(nan), cwd=tmp_path), "variants[1].params.temperature")
    override = write_experiment(
        experiment().replace("params = { temperature = 0.1 }", 'target = { timeout_s = "soon" }'), "t.toml"
    )
    assert_refused(run_engine("validate", str(override), cwd=tmp_path), "variants[1].target.timeout_s")
    assert not (tmp_path / "st").exists()


def test_a_python_target_resolves_beside_the_experiment_or_is_refused_clearly(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "my_agent.py").write_text("def answer(request):\n    return request.case.expected\n")
    spec = experiment(cases=2, repeats=1).replace("tests.fixtures.agent:capital", "my_agent:answer")
    (folder / "exp.toml").write_text(spec)
    # run from another folder: the module is found next to the experiment file, without PYTHONPATH
    ran = run_engine("run", str(folder / "exp.toml"), "--json", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    assert all(v["pass_rate"] == 1.0 for v in json.loads(ran.stdout)["variants"])
    (folder / "bad.toml").write_text(spec.replace("my_agent:answer", "no_such_module:fn"))
    for command in (["validate"], ["run", "--store", "st2"]):
        result = run_engine(*command, str(folder / "bad.toml"), cwd=tmp_path)
        assert_refused(result, "target.callable", "no_such_module", str(folder))
    assert not (tmp_path / "st2").exists()


def test_regrade_with_a_missing_graders_file_says_so(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=1, repeats=1))
    assert run_engine("run", str(file), "-q", "--run-id", "r", "--store", "st", cwd=tmp_path).returncode == 0
    result = run_engine("regrade", "r", "--graders", "nope.toml", "--store", "st", cwd=tmp_path)
    assert_refused(result, "nope.toml", "expected a graders file")


def test_an_unreachable_target_stops_early_exits_1_and_every_format_names_the_cause(
    tmp_path: Path, write_experiment
) -> None:
    port = free_port()
    file = write_experiment(openai_experiment(f"http://127.0.0.1:{port}/v1", cases=8))
    ran = run_engine("run", str(file), "--json", "--run-id", "dead", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 1, ran.stderr.decode()
    report = json.loads(ran.stdout)
    cause = f"connect: connection refused to 127.0.0.1:{port}"
    assert report["status"] == "failed" and report["error_rate_exceeded"] and report["is_partial"]
    assert report["stop_reason"].startswith(f"target unreachable: {cause}")
    assert report["trials_done"] < report["trials_total"] == 2 * 8 * 5  # it did not burn the whole plan
    (summary,) = report["errors"]
    assert (summary["stage"], summary["class"], summary["sample"]) == ("trial", "connect", cause)
    assert summary["count"] == report["trials_done"] == sum(summary["variants"].values())
    line = f"connect ({summary['count']} trials"
    terminal = run_engine("report", "dead", "--store", "st", cwd=tmp_path).stdout.decode()
    markdown = run_engine("report", "dead", "--markdown", "--store", "st", cwd=tmp_path).stdout.decode()
    assert run_engine("report", "dead", "--html", "r.html", "--store", "st", cwd=tmp_path).returncode == 0
    html = (tmp_path / "r.html").read_text()
    for text in (terminal, markdown, html):
        assert line in text and "connection refused" in text and "target unreachable" in text


def test_a_run_above_its_error_rate_limit_exits_1_and_within_it_exits_0(
    tmp_path: Path, write_experiment
) -> None:
    broken = '[[variants]]\nname = "broken"\ntarget = { callable = "tests.fixtures.agent:always_fail" }\n'
    file = write_experiment(experiment(cases=3, repeats=1, extra=broken))
    ran = run_engine("run", str(file), "--json", "--store", "st", cwd=tmp_path)
    report = json.loads(ran.stdout)
    assert ran.returncode == 1 and report["error_rate"] == round(3 / 9, 6) and report["error_rate_exceeded"]
    (error,) = report["errors"]
    assert error["class"] == "subject_error" and "subject crashed" in error["sample"]
    table = run_engine("run", str(file), "--store", "st", cwd=tmp_path)
    assert table.returncode == 1 and "max_error_rate" in table.stderr.decode()
    lenient = write_experiment(file.read_text() + "[execution]\nmax_error_rate = 0.5\n", "lenient.toml")
    ran = run_engine("run", str(lenient), "--json", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0 and not json.loads(ran.stdout)["error_rate_exceeded"]


def test_regrade_is_a_new_named_round_and_the_original_stays_readable(
    tmp_path: Path, write_experiment
) -> None:
    file = write_experiment(experiment(cases=4, repeats=1))
    ran = run_engine("run", str(file), "--json", "--run-id", "r", "--store", "st", cwd=tmp_path)
    (tmp_path / "strict.toml").write_text('[[graders]]\nkind = "exact"\nvalue = "nothing matches this"\n')
    regraded = run_engine("regrade", "r", "--graders", "strict.toml", "--json", "--store", "st", cwd=tmp_path)
    latest = json.loads(regraded.stdout)
    assert (latest["grading"], latest["grading_name"]) == (1, "strict")
    assert all(v["pass_rate"] == 0.0 for v in latest["variants"])
    original = run_engine("report", "r", "--json", "--grading", "0", "--store", "st", cwd=tmp_path)
    assert original.stdout == ran.stdout  # the run's own report, byte for byte
    assert json.loads(original.stdout)["grading_name"] == "original"
    assert run_engine("report", "r", "--json", "--store", "st", cwd=tmp_path).stdout == regraded.stdout
    replayed = run_engine("replay", "r", "--json", "--store", "st", cwd=tmp_path)
    assert replayed.stdout == regraded.stdout
    terminal = run_engine("report", "r", "--store", "st", cwd=tmp_path).stdout.decode()
    assert "Grading round 1 (strict)" in terminal
    missing = run_engine("report", "r", "--grading", "7", "--store", "st", cwd=tmp_path)
    assert_refused(missing, "no grading round 7", "0, 1")


def test_terminal_tables_fit_100_columns_even_with_long_names(tmp_path: Path, write_experiment) -> None:
    long = "a-variant-with-a-really-quite-remarkably-long-descriptive-name"
    extra = f'[[variants]]\nname = "{long}"\nparams = {{ temperature = 0.3 }}\n'
    file = write_experiment(experiment(cases=3, repeats=2, extra=extra))
    assert run_engine("run", str(file), "-q", "--run-id", "w", "--store", "st", cwd=tmp_path).returncode == 0
    assert run_engine("run", str(file), "-q", "--run-id", "w2", "--store", "st", cwd=tmp_path).returncode == 0
    for args in (("report", "w"), ("list",), ("compare", "w", "w2"), ("status", "w")):
        out = run_engine(*args, "--store", "st", cwd=tmp_path).stdout.decode()
        # a command to copy is printed whole on its own line; everything else fits
        widths = [len(line.rstrip()) for line in out.splitlines() if not line.lstrip().startswith("engine ")]
        assert widths and max(widths) <= 100, (args, max(widths), out)
    compared = run_engine("compare", "w", "w2", "--store", "st", cwd=tmp_path).stdout.decode()
    assert "regressed" in compared and "candidate" in compared  # headers are whole when piped


def test_validate_gives_a_tuning_session_its_real_size(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    result = run_engine("validate", str(root / "examples" / "tune.toml"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    assert b"tuning: up to" in result.stdout and b"trials" in result.stdout


def test_status_of_a_killed_run_shows_nothing_in_flight(tmp_path: Path) -> None:
    from engine.api import spec_from_dict
    from engine.events import kinds as k
    from engine.events.codec import encode
    from engine.store.open import open_event_log

    spec = spec_from_dict({"name": "killed", "cases": [{"id": "c", "prompt": "p", "expected": "x"}]})
    ident = {"run_id": "dead", "variant": "baseline", "case": "c"}
    events = [
        k.ExperimentDefined(run_id="dead", spec=spec, spec_hash="h"),
        k.RunStarted(run_id="dead", experiment="killed", trials_total=2, pid=2**22 + 11),  # no such pid
        k.TrialStarted(**ident, repeat=0),
        k.TrialStarted(**ident, repeat=1),
    ]
    with open_event_log(tmp_path / "st") as log:
        log.append([(e.run_id, k.TAG_BY_TYPE[type(e)], encode(e)) for e in events])
    status = json.loads(run_engine("status", "dead", "--json", "--store", "st", cwd=tmp_path).stdout)
    assert (status["status"], status["in_flight"]) == ("interrupted", 0)
