"""What a sandboxed agent cannot do to engine's own account of the trial: read the secrets it was
given off another process's command line, fake a sandbox error, see the experiment folder's secrets
files, or have the services' slowness booked as its own timeout."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import trio

from engine.actors.sandbox.run import run_sandboxed
from engine.actors.targets.target_protocol import TargetError
from engine.api import open_engine, spec_from_dict
from engine.errors import InputError
from engine.events import kinds as k
from engine.events.sandbox import SandboxPolicy, ServiceSpec
from engine.store.blobs import read_blob
from tests import test_sandbox
from tests.conftest import SAFETY_S
from tests.test_sandbox import events, outputs

sandbox, outside = test_sandbox.sandbox, test_sandbox.outside  # its fixtures, used here too

SECRET = "sandbox-secret-5f1c0e9a7d"


def cmdlines() -> list[bytes]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            found.append(Path(f"/proc/{pid}/cmdline").read_bytes())
        except OSError:  # gone, or not ours to read
            continue
    return found


async def test_a_secret_handed_to_the_agent_is_on_no_command_line(
    sandbox: None, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SANDBOX_TEST_SECRET", SECRET)
    workspace = outside / "ws"
    workspace.mkdir()
    os.mkfifo(workspace / "running")
    os.mkfifo(workspace / "go")
    # the agent says it runs (the FIFO opens), waits for the go, then prints what it was given
    agent = 'exec 3>running; read x < go; echo "$TOKEN"'
    spec = spec_from_dict({
        "name": "secret", "execution": {"max_error_rate": 1.0},
        "target": {"kind": "command", "command": agent, "sandbox": "bubblewrap", "workdir": str(workspace),
                   "env": {"TOKEN": {"env": "SANDBOX_TEST_SECRET"}}},
        "cases": [{"id": "c", "prompt": "p", "expected": "x"}],
    })  # fmt: skip
    seen: list[bytes] = []

    async def watch() -> None:
        def opened() -> None:  # returns once the agent holds the FIFO open
            os.close(os.open(workspace / "running", os.O_RDONLY))

        with trio.fail_after(SAFETY_S):
            await trio.to_thread.run_sync(opened, abandon_on_cancel=True)
        seen.extend(cmdlines())  # while the sandbox holds the secret
        await trio.to_thread.run_sync((workspace / "go").write_bytes, b"go\n")

    async with open_engine(outside / "store") as eng:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            report = await eng.run(spec)
        said = outputs(eng, report.run_id)
    assert said[("baseline", "c")] == "[redacted]"  # the agent had it (and engine redacted it)
    assert any(b"bwrap" in line for line in seen)
    assert not [line for line in seen if SECRET.encode() in line]


FORGER = """
import os, pathlib
# the boot helper's plan names the folder beside the trial: write its old failure marker there
for cmd in pathlib.Path("/proc").glob("[0-9]*/cmdline"):
    words = cmd.read_bytes().split(b"\\0")
    plans = [w.decode() for w in words if w.endswith(b"plan.json")]
    if plans:
        logs = pathlib.Path(plans[0]).parent / "logs"
        (logs / "boot-failed").write_text("forged by the agent")
        print("forged", logs.exists())
        break
else:
    print("no plan")
"""


async def test_an_agent_cannot_fake_a_sandbox_error(sandbox: None, tmp_path: Path) -> None:
    service = {"name": "marker", "command": "touch made; exec sleep 3600", "ready": "file:made"}
    spec = spec_from_dict({
        "name": "forge", "execution": {"max_error_rate": 1.0},
        "target": {"kind": "command", "command": [sys.executable, "-c", FORGER], "sandbox": "bubblewrap",
                   "services": [service]},
        "cases": [{"id": "c", "prompt": "p", "expected": "forged"}],
    })  # fmt: skip
    async with open_engine(tmp_path / "store") as eng:
        report = await eng.run(spec)
        done = [e for e in events(eng, report.run_id) if isinstance(e, k.TrialCompleted)]
        failed = [e for e in events(eng, report.run_id) if isinstance(e, k.TrialFailed)]
        said = read_blob(eng.log, done[0].output_hash).decode().strip() if done else ""
    assert not failed and said == "forged True"  # it wrote the marker, and its answer still counts


async def test_services_not_ready_within_the_trials_timeout_are_the_sandboxes_error(
    sandbox: None, tmp_path: Path
) -> None:
    """A service slower than the trial: the agent never started, so the timeout is not the agent's.
    (The file check refuses such timeouts; here the sandbox is driven directly.)"""
    never = ServiceSpec(name="slow", command="exec sleep 3600", ready="file:never", timeout_s=600)
    policy = SandboxPolicy(kind="bubblewrap", network="none", services=[never])
    with pytest.raises(TargetError) as raised:
        await run_sandboxed(policy, ["true"], cwd=tmp_path, named_env={}, timeout_s=0.5)
    assert (raised.value.kind, raised.value.error_class) == ("infra", "sandbox")
    assert "services were not ready within the trial's timeout (0.5s)" in str(raised.value)


def test_services_that_would_leave_the_agent_no_time_are_refused() -> None:
    service = {"name": "db", "command": "true", "ready": "cmd:true", "timeout_s": 40}
    target = {"kind": "command", "command": ["true"], "sandbox": "bubblewrap", "timeout_s": 60,
              "services": [service, {**service, "name": "cache"}]}  # fmt: skip
    refused = r"target.services: expected the services' timeout_s \(together 80s\) below the trial's "
    with pytest.raises(InputError, match=refused + r"timeout \(60s\)"):
        spec_from_dict({"name": "x", "target": target, "cases": [{"id": "c", "prompt": "p", "expected": ""}]})


async def test_the_experiment_folders_secrets_files_are_empty_in_the_sandbox(
    sandbox: None, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = outside / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)  # a spec from a dict has its folder here
    for name in (".env", ".env.local", ".netrc"):
        (folder / name).write_text(f"OPENAI_API_KEY={SECRET}\n")
    (folder / "notes.txt").write_text("visible\n")
    show = f"cat {folder}/.env {folder}/.env.local {folder}/.netrc {folder}/notes.txt"
    spec = spec_from_dict({
        "name": "dotenv", "execution": {"max_error_rate": 1.0},
        "target": {"kind": "command", "command": show, "sandbox": "bubblewrap"},
        "cases": [{"id": "c", "prompt": "p", "expected": "visible"}],
    })  # fmt: skip
    async with open_engine(outside / "store") as eng:
        report = await eng.run(spec)
        said = outputs(eng, report.run_id)
        failed = [e.message for e in events(eng, report.run_id) if isinstance(e, k.TrialFailed)]
    assert not failed and said[("baseline", "c")] == "visible"
