"""`backend = "ray"` against a real local Ray cluster (marker `ray`: `.ci/run` runs them, joining the
cluster it starts; `pytest -m ray` starts one itself). The engine runs in a real subprocess; agents
report to FIFOs and wait on FIFOs, so the test decides when a trial may end (no sleeps, no polls)."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from engine.events import kinds as k
from tests.conftest import SAFETY_S, engine_cmd, engine_env, gone, run_engine
from tests.ray_cluster import local_cluster
from tests.test_cli_lifecycle import Engine, events_of, strip_volatile

pytest.importorskip("ray")
pytestmark = pytest.mark.ray

CASES = 4


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_AUTH_MODE", os.environ.get("RAY_AUTH_MODE", "disabled"))  # the engines it runs
        with local_cluster(num_cpus=2) as address:
            yield address


def backend(address: str | None, concurrency: int = 2) -> str:
    if address is None:
        return f"[execution]\nconcurrency = {concurrency}\n"
    return f'[execution]\nconcurrency = {concurrency}\nbackend = "ray"\nray = {{ address = "{address}" }}\n'


def cases(count: int = CASES) -> str:
    return "".join(
        f'[[cases]]\nid = "c{i}"\nprompt = "What is the capital of country {i}?"\nexpected = "C{i % 3}"\n'
        for i in range(count)
    )


LOCAL = 'name = "same"\nseed = 3\n[target]\nkind = "local"\n[params]\nmax_tokens = 24\n'
LOCAL += '[[variants]]\nname = "base"\n[[variants]]\nname = "hot"\nparams = { temperature = 1.3 }\n'
LOCAL += "[repeat]\ncount = 2\n"
# the answer depends on the trial (case, repeat), so a mix-up between trials would show
ANSWER = (
    "import os; e=os.environ; print('C' + str((int(e['ENGINE_CASE_ID'][1:]) + int(e['ENGINE_REPEAT'])) % 3))"
)
COMMAND = f'name = "same-cmd"\n[target]\nkind = "command"\ncommand = ["{sys.executable}", "-c", "{ANSWER}"]\n'
COMMAND += "[repeat]\ncount = 3\n"
COMMAND += '[[graders]]\nkind = "command"\ncommands = [\'grep -q "$ENGINE_EXPECTED" output.txt\']\n'
COMMAND += '[[graders]]\nkind = "contains"\n'


def report_of(tmp_path: Path, text: str, name: str) -> object:
    folder = tmp_path / name
    folder.mkdir()
    for module, source in MODULES.items():  # python targets and graders import from the file's folder
        (folder / f"{module}.py").write_text(source)
    (folder / "exp.toml").write_text(text)
    store = str(tmp_path / "st")
    done = run_engine("run", "exp.toml", "--json", "--store", store, "--run-id", name, cwd=folder)
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout.decode().replace(str(folder), "DIR"))  # reproducers name the file
    return strip_keys(strip_volatile(report), {"started_at", "finished_at", "spec_hash"})


def strip_keys(value: object, keys: set[str]) -> object:
    if isinstance(value, dict):
        return {
            key: strip_keys(v, keys) for key, v in value.items() if key not in keys and "latency" not in key
        }
    if isinstance(value, list):
        return [strip_keys(v, keys) for v in value]
    return value


# a Python target and a python grader by import path, from modules beside the experiment file
MODULES = {
    "my_agent": "def answer(request):\n"
    "    return 'C' + str(int(request.case.id[1:]) * (request.repeat + 1) % 3)\n",
    "my_grader": "def grade(case, output, context):\n"
    "    return {'score': 1.0 if output == case.expected else 0.25}\n",
}
PYTHON = 'name = "same-py"\n[target]\nkind = "python"\ncallable = "my_agent:answer"\n[repeat]\ncount = 2\n'
PYTHON += '[[graders]]\nkind = "python"\ncallable = "my_grader:grade"\n'


@pytest.mark.parametrize(
    "experiment", [LOCAL, COMMAND, PYTHON], ids=["local-model", "command-agent", "python-target"]
)
def test_a_deterministic_experiment_reports_the_same_on_ray_as_locally(
    tmp_path: Path, ray_address: str, experiment: str
) -> None:
    local = report_of(tmp_path, experiment + backend(None) + cases(), "local")
    on_ray = report_of(tmp_path, experiment + backend(ray_address) + cases(), "ray")
    assert on_ray == local
    assert isinstance(local, dict) and all(v["errors"] == 0 and v["scored"] for v in local["variants"])
    assert completions(tmp_path, "ray") == completions(tmp_path, "local")


def completions(tmp_path: Path, run_id: str) -> Counter[tuple[str, str, int]]:
    return Counter(
        (e.variant, e.case, e.repeat) for e in events_of(tmp_path / "st", run_id, k.TrialCompleted)
    )


# An agent that reports "its worker's pid, its own pid" on a FIFO, then waits for the gate FIFO.
HELD = """
import os, sys
with open(sys.argv[1], "w") as report:
    report.write(f"{os.getppid()} {os.getpid()}\\n")
hold = sys.argv[4] in ("always", os.environ["ENGINE_CASE_ID"]) or sys.argv[4] == "first"
if sys.argv[4] == "always" or hold and not os.path.exists(sys.argv[3]):
    open(sys.argv[3], "w").close()
    open(sys.argv[2]).read()
print("C" + os.environ["ENGINE_CASE_ID"][1:])
"""


def held_experiment(tmp_path: Path, address: str, count: int, concurrency: int, hold: str = "first") -> Path:
    (tmp_path / "agent.py").write_text(HELD)
    for name in ("report.fifo", "gate.fifo"):
        os.mkfifo(tmp_path / name)
    argv = (
        [sys.executable, str(tmp_path / "agent.py")]
        + [str(tmp_path / n) for n in ("report.fifo", "gate.fifo", "held.marker")]
        + [hold]
    )
    cases_text = "".join(f'[[cases]]\nid = "c{i}"\nprompt = "p"\nexpected = "C{i}"\n' for i in range(count))
    text = f'name = "held"\n[target]\nkind = "command"\ncommand = {json.dumps(argv)}\n'
    text += backend(address, concurrency) + cases_text
    (tmp_path / "exp.toml").write_text(text)
    return tmp_path / "exp.toml"


# lines read from a report FIFO and not yet taken: agents that write while the same read is open
# all reach it, so one read can bring several agents' lines
_UNTAKEN: dict[Path, list[str]] = {}


async def next_report(tmp_path: Path) -> tuple[int, int]:
    """The next agent's (worker pid, agent pid): reading the FIFO waits for an agent to start."""
    untaken = _UNTAKEN.setdefault(tmp_path, [])
    while not untaken:
        with trio.fail_after(SAFETY_S):
            text = await trio.to_thread.run_sync((tmp_path / "report.fifo").read_text, abandon_on_cancel=True)
        untaken += text.splitlines()
    worker, agent = untaken.pop(0).split()
    return int(worker), int(agent)


async def test_a_worker_killed_mid_trial_is_retried_and_logged_once(tmp_path: Path, ray_address: str) -> None:
    held_experiment(tmp_path, ray_address, count=3, concurrency=1)
    engine = await Engine(tmp_path, "run").start(
        "run", "exp.toml", "--run-id", "w", "--json", "--store", "st"
    )
    worker, first_agent = await next_report(tmp_path)  # trial c0's first attempt holds on the gate
    os.kill(worker, signal.SIGKILL)  # the Ray worker process running c0 dies mid-trial
    for _ in range(3):  # the retried c0 (no longer held: the marker exists), then c1, c2
        await next_report(tmp_path)
    code, out, err = await engine.finish()
    os.kill(first_agent, signal.SIGKILL)  # the orphaned first attempt, still waiting on its gate
    assert await gone(first_agent)
    assert code == 0, err
    assert completions(tmp_path, "w") == Counter({("baseline", f"c{i}", 0): 1 for i in range(3)})
    assert events_of(tmp_path / "st", "w", k.TrialFailed) == []
    assert out.startswith("{"), out[:2000]
    assert json.loads(out)["variants"][0]["pass_rate"] == 1.0


@pytest.mark.parametrize("how", ["engine-cancel", "sigint"])
async def test_cancel_stops_the_ray_tasks_in_flight_and_keeps_a_partial_report(
    tmp_path: Path, ray_address: str, how: str
) -> None:
    held_experiment(tmp_path, ray_address, count=4, concurrency=2, hold="always")
    engine = await Engine(tmp_path, "run").start(
        "run", "exp.toml", "--run-id", "c", "--json", "--store", "st"
    )
    agents = [(await next_report(tmp_path))[1] for _ in range(2)]  # two tasks in flight, both held
    if how == "sigint":
        engine.signal(signal.SIGINT)
    else:
        cancel = await trio.run_process(
            [*engine_cmd("cancel", "c", "--store", "st")], cwd=tmp_path, env=engine_env(), capture_stderr=True
        )
        assert cancel.returncode == 0, cancel.stderr
    code, out, err = await engine.finish()
    assert code == (130 if how == "sigint" else 3), err
    # backpressure: with concurrency 2, two tasks were sent, not the four trials the scheduler queued
    trials = events_of(tmp_path / "st", "c", k.TrialStarted, k.TrialFailed, k.TrialCompleted)
    assert sum(isinstance(e, k.TrialStarted) for e in trials) == 2, (trials, err[-3000:])
    for agent in agents:  # the cancelled tasks killed their agents (nothing left running on the cluster)
        assert await gone(agent)
    report = json.loads(out)
    assert report["status"] == "cancelled" and report["is_partial"]
    assert completions(tmp_path, "c") == Counter()


async def test_kill_9_of_the_coordinator_then_resume_reruns_only_unfinished_trials(
    tmp_path: Path, ray_address: str
) -> None:
    held_experiment(tmp_path, ray_address, count=3, concurrency=1, hold="c1")
    engine = await Engine(tmp_path, "run").start(
        "run", "exp.toml", "--run-id", "k", "--json", "--store", "st"
    )
    await next_report(tmp_path)  # c0 answers at once
    _, held_agent = await next_report(tmp_path)  # c1 holds
    engine.signal(signal.SIGKILL)
    await engine.finish()
    os.kill(held_agent, signal.SIGKILL)  # its worker went with the driver; the agent is ours to end
    assert await gone(held_agent)
    durable = completions(tmp_path, "k")
    assert set(durable) <= {("baseline", "c0", 0)}  # c1 never completed; c2 never started
    resume = await Engine(tmp_path, "resume").start("run", "--resume", "k", "--json", "--store", "st")
    rerun = [await next_report(tmp_path) for _ in range(3 - len(durable))]  # only what had no completion
    code, out, err = await resume.finish()
    assert code == 0, err
    assert len(rerun) == 3 - len(durable)
    assert completions(tmp_path, "k") == Counter({("baseline", f"c{i}", 0): 1 for i in range(3)})
    assert json.loads(out)["variants"][0]["pass_rate"] == 1.0


@pytest.mark.parametrize(
    "runtime_env", ['{ conda = "no-such-conda-env" }', '{ working_dir = "/no/such/folder" }']
)
def test_a_runtime_env_the_workers_cannot_set_up_is_refused(
    tmp_path: Path, ray_address: str, runtime_env: str
) -> None:
    text = held_experiment(tmp_path, ray_address, count=1, concurrency=1).read_text()
    text = text.replace(
        f'address = "{ray_address}"', f'address = "{ray_address}", runtime_env = {runtime_env}'
    )
    (tmp_path / "exp.toml").write_text(text)
    done = run_engine("run", "exp.toml", "--store", "st", cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "exp.toml: execution.ray.runtime_env:" in err and "Traceback" not in err, err
    assert run_engine("list", "--json", "--store", "st", cwd=tmp_path).stdout.strip() in (b"", b"[]")


def test_the_cluster_example_runs_on_a_local_ray_instance(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "cluster.toml"
    # no address: the run starts its own instance (or, where RAY_ADDRESS is set, joins that cluster)
    done = run_engine("run", str(example), "--json", "--store", str(tmp_path / "st"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout)
    assert report["status"] == "completed" and report["trials_done"] == 6
    assert report["variants"][0]["cases"] == {
        "passed": 2,
        "failed": 1,
        "flaky": 0,
        "errors": 0,
        "ungraded": 0,
    }


async def test_a_worker_dying_beyond_max_retries_is_a_worker_lost_error(
    tmp_path: Path, ray_address: str
) -> None:
    text = held_experiment(tmp_path, ray_address, count=2, concurrency=1).read_text()
    text = text.replace(f'address = "{ray_address}"', f'address = "{ray_address}", max_retries = 0')
    (tmp_path / "exp.toml").write_text(text)
    engine = await Engine(tmp_path, "run").start(
        "run", "exp.toml", "--run-id", "l", "--json", "--store", "st"
    )
    worker, first_agent = await next_report(tmp_path)
    os.kill(worker, signal.SIGKILL)
    await next_report(tmp_path)  # c1 runs; c0 is not retried
    code, out, err = await engine.finish()
    os.kill(first_agent, signal.SIGKILL)
    assert await gone(first_agent)
    assert code == 1, err  # 1 of 2 trials without a result: above max_error_rate
    failed = events_of(tmp_path / "st", "l", k.TrialFailed)
    assert [(e.case, e.error_class) for e in failed] == [("c0", "worker_lost")]
    assert completions(tmp_path, "l") == Counter({("baseline", "c1", 0): 1})


SUBJECT = """
def subject(request):
    return request.variant.params.get("answer", "4") + (" case-bad" if request.case.id == "bad" else "")
"""


async def test_llm_judges_stay_in_the_coordinator_under_its_judge_budget(
    tmp_path: Path, ray_address: str
) -> None:
    from engine import open_engine, spec_from_dict
    from engine.store.memory import MemoryStore
    from tests.test_judge import judge_model

    (tmp_path / "subject_mod.py").write_text(SUBJECT)  # the subject travels by import path
    spec = spec_from_dict(
        {
            "name": "judged-on-ray",
            "target": {"kind": "python", "callable": "subject_mod:subject"},
            "variants": [{"name": "right"}, {"name": "wrong", "params": {"answer": "5"}}],
            "cases": [{"id": f"c{i}", "prompt": "2+2?"} for i in range(6)]
            + [{"id": "bad", "prompt": "2+2?"}],
            # the judge is a callable of this process: it could not travel, and it need not
            "graders": [{"kind": "judge", "judge": {"kind": "python", "callable": "judge"}}],
            "execution": {"backend": "ray", "ray": {"address": ray_address}},
        }
    )
    async with open_engine(MemoryStore(), callables={"judge": judge_model}) as eng:
        report = await eng.run(spec, source=str(tmp_path / "exp.toml"))
    right, wrong = report.variants
    assert right.mean_score == 1.0 and wrong.mean_score == 0.0
    assert right.unscored == 1 and right.scored == 6 and right.judge_tokens == 6 * 60 + 55


async def test_a_host_applications_own_ray_connection_is_used_and_left_open(
    tmp_path: Path, ray_address: str
) -> None:
    import ray

    from engine import open_engine, spec_from_dict
    from engine.store.memory import MemoryStore

    await trio.to_thread.run_sync(lambda: ray.init(address=ray_address, log_to_driver=False))
    try:
        spec = spec_from_dict(
            {
                "name": "hosted",
                "target": {"kind": "local"},
                "cases": [{"id": "c", "prompt": "What is the capital of France?", "expected": "the"}],
                "execution": {"backend": "ray"},
            }
        )
        async with open_engine(MemoryStore()) as eng:
            report = await eng.run(spec)
        assert report.status == "completed" and report.trials_done == 1
        assert ray.is_initialized()  # engine did not disconnect what it did not connect
    finally:
        await trio.to_thread.run_sync(ray.shutdown)


BATCHED = """
import ray


def answer(request):
    with open({path!r}, "a") as out:  # which task ran which trial
        out.write(f"{{ray.get_runtime_context().get_task_id()}} {{request.case.id}}\\n")
    return "C" + request.case.id[1:]
"""


async def test_short_trials_travel_in_batches_and_each_is_logged_once(
    tmp_path: Path, ray_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine import open_engine, spec_from_dict
    from engine.actors.ray import batches as ray_batches
    from engine.events.codec import decode
    from engine.store.memory import MemoryStore

    # every trial is "short": once the first task is back, a submitter takes all it may (the cap)
    monkeypatch.setattr(ray_batches, "TARGET_TASK_S", 1e9)
    (tmp_path / "batched_mod.py").write_text(BATCHED.format(path=str(tmp_path / "tasks.txt")))
    count = 48
    spec = spec_from_dict(
        {
            "name": "batched",
            "target": {"kind": "python", "callable": "batched_mod:answer"},
            "cases": [{"id": f"c{i}", "prompt": "p", "expected": f"C{i}"} for i in range(count)],
            "graders": [{"kind": "exact"}],
            "execution": {"backend": "ray", "concurrency": 16, "ray": {"address": ray_address}},
        }
    )
    store = MemoryStore()
    async with open_engine(store) as eng:
        report = await eng.run(spec, source=str(tmp_path / "exp.toml"))
    (variant,) = report.variants
    assert report.status == "completed" and variant.pass_rate == 1.0  # each output is its own trial's
    events = [decode(data) for _, data in store.read_run(report.run_id)]
    ran = [line.split() for line in (tmp_path / "tasks.txt").read_text().splitlines()]
    by_task = Counter(task for task, _ in ran)
    assert sorted(case for _, case in ran) == sorted(f"c{i}" for i in range(count))  # each trial ran once
    assert len(by_task) < count and max(by_task.values()) > 1, by_task  # some tasks carried several
    for kind in (k.TrialStarted, k.TrialCompleted, k.TrialGraded):  # each logged once per trial
        assert sorted(e.case for e in events if isinstance(e, kind)) == sorted(f"c{i}" for i in range(count))
