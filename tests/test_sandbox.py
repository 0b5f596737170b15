"""Agents in bubblewrap sandboxes: real agent scripts try to get out, real bwrap holds them.

Each attempt is a case of one run: it is contained, recorded as the trial's output, and the run
goes on. Skipped with the reason where bubblewrap cannot start; CI (ENGINE_REQUIRE_SANDBOX=1, set by
.ci/run once it installed bubblewrap) turns that skip into a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from engine.actors.graders.factory import make_grader
from engine.actors.graders.grader_protocol import Submission
from engine.actors.sandbox.limits import pids_root
from engine.actors.sandbox.probe import bwrap_problem
from engine.api import open_engine, spec_from_dict
from engine.errors import InputError
from engine.events import kinds as k
from engine.events.codec import decode
from engine.events.spec import CaseSpec, grader_spec
from engine.input.loader import load_plan
from engine.store.blobs import read_blob
from tests.conftest import ROOT, SAFETY_S, run_engine

AGENT = ROOT / "tests" / "fixtures" / "escape_agent.py"
PROBLEM = bwrap_problem()


@pytest.fixture
def sandbox() -> None:
    """Skip (or, in CI, fail) where bubblewrap cannot start a sandbox."""
    if PROBLEM is not None:
        if os.environ.get("ENGINE_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"bubblewrap was installed but cannot start a sandbox: {PROBLEM}")
        pytest.skip(f"no sandbox here: {PROBLEM}")


@pytest.fixture
def outside(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder of the host's /var/tmp (which a sandbox covers with its own, as it does /tmp): a
    person's files there never reach the agent. It holds a fake $HOME with an .ssh key, and the store."""
    folder = Path(tempfile.mkdtemp(prefix="engine-sandbox-test-", dir="/var/tmp"))
    (folder / "home" / ".ssh").mkdir(parents=True)
    (folder / "home" / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    monkeypatch.setenv("HOME", str(folder / "home"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def experiment(cases: dict[str, str], variants: list[dict[str, Any]] | None = None, **target: Any) -> Any:
    return spec_from_dict({
        "name": "escapes",
        "target": {"kind": "command", "command": [sys.executable, str(AGENT)], "sandbox": "bubblewrap",
                   "max_retries": 0, **target},
        "variants": variants or [],
        "cases": [{"id": name, "prompt": prompt, "expected": "x"} for name, prompt in cases.items()],
        "graders": [{"kind": "contains"}],
        "execution": {"max_error_rate": 1.0},
    })  # fmt: skip


def events(eng: Any, run_id: str) -> list[k.Event]:
    return [decode(data) for _, data in eng.log.read_run(run_id)]


def outputs(eng: Any, run_id: str) -> dict[tuple[str, str], str]:
    """(variant, case) -> what the agent printed."""
    done = [e for e in events(eng, run_id) if isinstance(e, k.TrialCompleted)]
    return {(e.variant, e.case): read_blob(eng.log, e.output_hash).decode().strip() for e in done}


async def test_files_home_and_store_are_out_of_reach(sandbox: None, outside: Path) -> None:
    home, store = outside / "home", outside / "store"
    cases = {
        "etc": "write /etc/engine-escape",
        "outside": f"write {outside}/escaped",
        "home": f"read {home}/.ssh/id_ed25519",
        "store": f"read {store}",
        "workspace": "write inside.txt",
    }
    async with open_engine(store) as eng:
        report = await eng.run(experiment(cases))
        seen = {case: text for (_, case), text in outputs(eng, report.run_id).items()}
    assert seen["etc"].startswith("blocked") and "Read-only" in seen["etc"]
    assert not (outside / "escaped").exists()  # written, if at all, to the sandbox's own /var/tmp
    assert seen["home"].startswith("blocked") and "No such file" in seen["home"]
    assert seen["store"] == f"listed {store}: []"  # an empty folder where the store is
    assert seen["workspace"] == "WROTE inside.txt"  # the run went on: every trial recorded
    assert report.variants[0].trials == len(cases)


async def test_the_hosts_unix_sockets_are_out_of_reach(sandbox: None, outside: Path) -> None:
    # a session bus, docker.sock or an ssh agent: connectable through a read-only mount, so covered
    path = outside / "service.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen(1)
        async with open_engine(outside / "store") as eng:
            report = await eng.run(experiment({"socket": f"unix {path}", "run": "read /run"}))
            seen = {case: text for (_, case), text in outputs(eng, report.run_id).items()}
        server.settimeout(0)
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody came
    assert seen["socket"].startswith("blocked")
    assert seen["run"] in ("listed /run: []", "listed /run: ['systemd']")  # the resolver's file at most


@pytest.mark.skipif(not os.access("/var/lib", os.W_OK), reason="a system service's folder: root makes one")
async def test_a_system_services_socket_elsewhere_is_covered_too(sandbox: None, tmp_path: Path) -> None:
    # a socket under /var/lib or /var/snap (a database, LXD): found in /proc/net/unix, covered one by one
    folder = Path(tempfile.mkdtemp(prefix="engine-sandbox-test-", dir="/var/lib"))
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(folder / "service.sock"))
            server.listen(1)
            async with open_engine(tmp_path / "store") as eng:
                report = await eng.run(experiment({"socket": f"unix {folder}/service.sock"}))
                seen = outputs(eng, report.run_id)
            server.settimeout(0)
            with pytest.raises(BlockingIOError):
                server.accept()  # nobody came
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert seen[("baseline", "socket")].startswith("blocked")


async def test_the_network_is_closed_unless_the_policy_opens_a_loopback_port(sandbox: None) -> None:
    async def greet(stream: trio.SocketStream) -> None:
        async with stream:
            await stream.send_all(b"hello from the host")

    async with trio.open_nursery() as nursery:
        (listener,) = await nursery.start(partial(trio.serve_tcp, greet, 0, host="127.0.0.1"))
        port = listener.socket.getsockname()[1]
        variants = [
            {"name": "closed"},
            {"name": "opened", "target": {"network": "loopback", "host_ports": [port]}},
        ]
        with tempfile.TemporaryDirectory(dir="/var/tmp") as store:
            async with open_engine(store) as eng:
                report = await eng.run(experiment({"tcp": f"connect {port}"}, variants))
                seen = outputs(eng, report.run_id)
        nursery.cancel_scope.cancel()
    assert seen[("closed", "tcp")].startswith("blocked")
    assert seen[("opened", "tcp")] == "CONNECTED: hello from the host"


async def test_a_fork_bomb_meets_max_processes_and_the_run_goes_on(sandbox: None, tmp_path: Path) -> None:
    # bounded: at most 64 children whatever the limit does, each gone when the agent exits
    spec = experiment({"bomb": "fork 64", "after": "write after.txt"}, limits={"max_processes": 16})
    async with open_engine(tmp_path / "store") as eng:
        report = await eng.run(spec)
        seen = {case: text for (_, case), text in outputs(eng, report.run_id).items()}
    made, refused = (int(word.strip(",")) for word in seen["bomb"].split()[1::2])
    assert made < 16 and refused == 64 - made
    assert seen["after"] == "WROTE after.txt"
    root = pids_root()  # as root the limit is a pids cgroup per trial: none is left behind
    assert root is None or not list(root.glob("engine-trial-*"))


async def test_a_file_past_max_file_mb_and_memory_past_memory_mb_are_refused(
    sandbox: None, tmp_path: Path
) -> None:
    spec = experiment(
        {"big": "bigfile 20", "alloc": "alloc 512"}, limits={"max_file_mb": 5, "memory_mb": 256}
    )
    async with open_engine(tmp_path / "store") as eng:
        report = await eng.run(spec)
        seen = outputs(eng, report.run_id)
    assert seen[("baseline", "big")] == "stopped after 5 MB: File too large"
    assert seen[("baseline", "alloc")] == "refused 512 MB"


async def wait_closed(fifo: Path) -> bytes:
    """Read the FIFO to its end: the end comes once every process holding it open for writing is dead."""
    with trio.fail_after(SAFETY_S):
        return await trio.to_thread.run_sync(fifo.read_bytes, abandon_on_cancel=True)


async def test_a_child_left_running_dies_with_the_trial(sandbox: None, outside: Path) -> None:
    workspace = outside / "ws"
    workspace.mkdir()
    os.mkfifo(workspace / "held")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait_closed, workspace / "held")
        async with open_engine(outside / "store") as eng:
            report = await eng.run(experiment({"child": "child held"}, workdir=str(workspace)))
            seen = outputs(eng, report.run_id)
    # the nursery ended: the FIFO reached its end, so the sleep holding it is dead (an hour early)
    assert seen[("baseline", "child")] == "left a child running"


async def test_a_timed_out_agent_takes_its_children_with_it(sandbox: None, outside: Path) -> None:
    workspace = outside / "ws"
    workspace.mkdir()
    os.mkfifo(workspace / "held")
    # a grandchild holds the FIFO; the agent never ends on its own
    hang = "exec 3>held; sleep 3600 & exec sleep 3600"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait_closed, workspace / "held")
        async with open_engine(outside / "store") as eng:
            report = await eng.run(
                experiment({"hang": "x"}, command=hang, workdir=str(workspace), timeout_s=0.5)
            )
            failed = [e for e in events(eng, report.run_id) if isinstance(e, k.TrialFailed)]
    assert [(f.error_class, f.case) for f in failed] == [("timeout", "hang")]


async def test_a_service_is_ready_before_the_agent_and_its_output_is_kept(
    sandbox: None, tmp_path: Path
) -> None:
    service = {"name": "greeter", "command": ["python3", "-c", SERVER], "ready": "tcp:8181"}
    spec = experiment({"ask": "connect 8181"}, services=[service])
    async with open_engine(tmp_path / "store") as eng:
        report = await eng.run(spec)
        (done,) = [e for e in events(eng, report.run_id) if isinstance(e, k.TrialCompleted)]
        answer = read_blob(eng.log, done.output_hash).decode().strip()
        assert done.agent is not None
        log = read_blob(eng.log, done.agent.services["greeter"]).decode()
    assert answer == "CONNECTED: hello from the service"
    assert "greeter listening" in log


SERVER = """
import socket
server = socket.create_server(("127.0.0.1", 8181))
print("greeter listening", flush=True)
while True:
    conn, _ = server.accept()
    conn.sendall(b"hello from the service")
    conn.close()
"""


async def test_a_service_never_ready_is_a_sandbox_error_not_the_agents(sandbox: None, tmp_path: Path) -> None:
    # it exits at once without making the file: not ready, known without waiting for the timeout
    service = {"name": "db", "command": "echo starting; exit 3", "ready": "file:db.ready"}
    spec = experiment({"ask": "write x"}, services=[service])
    async with open_engine(tmp_path / "store") as eng:
        report = await eng.run(spec)
        (failed,) = [e for e in events(eng, report.run_id) if isinstance(e, k.TrialFailed)]
    assert (failed.error_kind, failed.error_class) == ("infra", "sandbox")
    # why, then the tail of what the service said
    why = "sandbox boot failed: service 'db' exited with 3 before it was ready"
    assert failed.message == why + "\ndb: starting"
    assert report.variants[0].errors == 1


def test_sandbox_settings_without_a_sandbox_are_refused() -> None:
    target = {"kind": "command", "command": ["true"], "network": "loopback"}
    with pytest.raises(InputError, match=r"target.sandbox: expected \"bubblewrap\" \(network, limits"):
        spec_from_dict(
            {"name": "x", "target": target, "cases": [{"id": "c", "prompt": "p", "expected": "p"}]}
        )


def sandboxed_file(folder: Path, sandbox: str = "bubblewrap") -> Path:
    path = folder / "exp.toml"
    path.write_text(
        f'name = "boxed"\n[target]\nkind = "command"\ncommand = ["{sys.executable}", "{AGENT}"]\n'
        f'sandbox = "{sandbox}"\n[[cases]]\nid = "c"\nprompt = "write x"\nexpected = "x"\n'
    )
    return path


def test_validate_names_the_package_where_bubblewrap_is_missing(tmp_path: Path) -> None:
    # a PATH without bwrap: as on a machine where it is not installed
    done = run_engine("validate", str(sandboxed_file(tmp_path)), cwd=tmp_path, PATH=str(tmp_path))
    err = done.stderr.decode()
    assert done.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "target.sandbox: a bubblewrap sandbox cannot start here: bubblewrap (bwrap) is not installed" in (
        err
    )
    assert "apt-get install bubblewrap" in err


def test_docker_is_refused_in_one_line_never_run_without_a_sandbox(tmp_path: Path) -> None:
    done = run_engine("run", str(sandboxed_file(tmp_path, "docker")), "--store", "st", cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "target.sandbox: a docker sandbox cannot start here:" in err
    assert 'use sandbox = "bubblewrap"' in err
    assert run_engine("list", "--json", "--store", "st", cwd=tmp_path).stdout.strip() in (b"", b"[]")


def test_validate_says_the_sandbox_can_start_here(sandbox: None, tmp_path: Path) -> None:
    done = run_engine("validate", str(sandboxed_file(tmp_path)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert "  sandbox: bubblewrap (network none), can start here" in done.stdout.decode()


async def test_a_sandboxed_verifier_sees_the_output_but_not_the_home(sandbox: None, outside: Path) -> None:
    key = outside / "home" / ".ssh" / "id_ed25519"
    spec = grader_spec(kind="command", sandbox="bubblewrap", commands=[
        "grep -q Paris output.txt", f"cat {key}", "touch /usr/escaped",
    ])  # fmt: skip
    graded = await make_grader(spec).grade(Submission(case=CaseSpec(id="c", prompt="p"), output="Paris"))
    assert graded.score == pytest.approx(1 / 3) and not graded.passed
    assert "No such file" in graded.reason  # the first failure: the key is not there to read


async def test_a_variants_setup_runs_in_the_agents_sandbox(sandbox: None, tmp_path: Path) -> None:
    variants = [{"name": "seeded", "setup": ["echo seeded > seed.txt", "touch /usr/escaped || true"]}]
    spec = experiment({"seed": "read seed.txt"}, variants)
    async with open_engine(tmp_path / "store") as eng:
        report = await eng.run(spec)
        seen = outputs(eng, report.run_id)
    assert seen[("seeded", "seed")] == "READ seed.txt: seeded"
    assert not Path("/usr/escaped").exists()


COUNTER = """
import os, socket, sys
os.open(sys.argv[1], os.O_WRONLY)  # held until this service dies
server, served = socket.create_server(("127.0.0.1", 8282)), 0
print("counter listening", flush=True)
while True:
    conn, _ = server.accept()
    served += 1
    conn.sendall(str(served).encode())
    conn.close()
"""


async def test_a_shared_workspaces_services_start_once_and_stop_with_it(
    sandbox: None, outside: Path, tmp_path: Path
) -> None:
    held = tmp_path / "held"  # in the experiment's folder, which the sandbox shows (read-only)
    os.mkfifo(held)
    service = {"name": "counter", "command": ["python3", "-c", COUNTER, str(held)], "ready": "tcp:8282"}
    (tmp_path / "exp.json").write_text(json.dumps({
        "name": "shared", "repeat": {"count": 3},
        "target": {"kind": "command", "command": [sys.executable, str(AGENT)], "sandbox": "bubblewrap",
                   "workspace": "shared", "services": [service]},
        "cases": [{"id": "ask", "prompt": "connect 8282", "expected": "CONNECTED"}],
    }))  # fmt: skip
    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait_closed, held)  # ends once the service is dead
        async with open_engine(outside / "store") as eng:
            report = await eng.run(load_plan(tmp_path / "exp.json"))
            seen = sorted(outputs_by_repeat(eng, report.run_id))
    # one service served every trial (the readiness check's connection was its first)
    assert seen == ["CONNECTED: 2", "CONNECTED: 3", "CONNECTED: 4"]


def outputs_by_repeat(eng: Any, run_id: str) -> list[str]:
    done = [e for e in events(eng, run_id) if isinstance(e, k.TrialCompleted)]
    return [read_blob(eng.log, e.output_hash).decode().strip() for e in done]


@pytest.mark.parametrize("under", ["home/.local/bin", "bin"])  # a home; /var/tmp itself
def test_an_agent_under_a_hidden_folder_is_refused_before_the_run(
    outside: Path, tmp_path: Path, under: str
) -> None:
    agent = outside / under / "agent"
    agent.parent.mkdir(parents=True)
    agent.write_text("#!/bin/sh\necho hi\n")
    agent.chmod(0o755)
    file = tmp_path / "exp.toml"  # the experiment's folder is shown in the sandbox: not the agent's
    file.write_text(
        f'name = "hidden"\n[target]\nkind = "command"\ncommand = ["{agent}"]\nsandbox = "bubblewrap"\n'
        '[[cases]]\nid = "c"\nprompt = "p"\nexpected = "hi"\n'
    )
    done = run_engine("validate", str(file), cwd=tmp_path, HOME=str(outside / "home"))
    err = done.stderr.decode()
    assert done.returncode == 2 and len(err.strip().splitlines()) == 1, err
    hides = "expected the agent outside the folders a sandbox hides (the homes, /run, /var/tmp)"
    assert f"target.command: {hides}: {agent}" in err


def test_a_literal_secret_in_a_services_env_is_refused() -> None:
    service = {"name": "db", "command": "true", "ready": "cmd:true", "env": {"DB_PASSWORD": "hunter2"}}
    target = {"kind": "command", "command": ["true"], "sandbox": "bubblewrap", "services": [service]}
    with pytest.raises(
        InputError, match=r"target.services\[0\].env.DB_PASSWORD: a literal secret .* `pass_env`"
    ):
        spec_from_dict(
            {"name": "x", "target": target, "cases": [{"id": "c", "prompt": "p", "expected": "p"}]}
        )
