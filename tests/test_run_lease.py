"""One run, one live process: the lease is taken by compare-and-set, so racing starts or resumes
of the same run let exactly one in; the other exits 2. A dead holder's lease is taken over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import trio

from engine.runtime.run_lease import STALE_AFTER_S, holder_alive
from engine.store.lease import LeaseHolder, lease_key, take_lease
from engine.store.memory import MemoryStore
from engine.store.open import open_event_log
from tests.conftest import ROOT
from tests.fakes.openai_server import open_fake_openai
from tests.test_cli_lifecycle import TOTAL, Engine, answer, completions_per_trial, experiment

TAKE = """
import os, sys, time
from engine.store.open import open_event_log
from engine.store.lease import LeaseHolder, take_lease
log = open_event_log(sys.argv[1])
me = LeaseHolder(token=str(os.getpid()), pid=os.getpid(), host="h", heartbeat=time.time())
held, holder = take_lease(log, "run", me, lambda h: True)
print("won" if holder is None else "lost")
"""


def test_of_many_processes_taking_one_lease_exactly_one_wins(tmp_path: Path) -> None:
    open_event_log(tmp_path / "st").close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, "-c", TAKE, str(tmp_path / "st")], stdout=subprocess.PIPE, env=env)
        for _ in range(6)
    ]
    results = sorted(p.communicate(timeout=300)[0].decode().strip() for p in procs)
    assert results == ["lost"] * 5 + ["won"]


def holder(pid: int, host: str = "", age_s: float = 0.0) -> LeaseHolder:
    return LeaseHolder(token=f"t{pid}", pid=pid, host=host, heartbeat=time.time() - age_s)


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    return int(done.stdout)


def test_a_dead_or_silent_holder_is_taken_over_and_a_live_one_is_not() -> None:
    import socket

    here = socket.gethostname()
    me = holder(os.getpid(), here)
    for stale in (holder(dead_pid(), here), holder(os.getpid(), "elsewhere", age_s=STALE_AFTER_S + 1)):
        store = MemoryStore()
        store.swap(lease_key("r"), None, msgspec.msgpack.encode(stale))
        held, found = take_lease(store, "r", me, holder_alive)
        assert found is None and held == msgspec.msgpack.encode(me)
    for live in (holder(os.getppid(), here), holder(1, "elsewhere", age_s=1.0)):
        store = MemoryStore()
        store.swap(lease_key("r"), None, msgspec.msgpack.encode(live))
        assert take_lease(store, "r", me, holder_alive) == (b"", live)


async def test_two_engines_started_together_on_one_run_id_run_each_trial_once(tmp_path: Path) -> None:
    async with open_fake_openai(answer=answer) as server:
        (tmp_path / "exp.toml").write_text(experiment(server.base_url))
        server.gate.hold()  # the winner cannot finish (nor release its lease) until the gate opens
        args = ("run", "exp.toml", "--run-id", "same", "--json", "--store", "st")
        engines = [await Engine(tmp_path, f"e{i}").start(*args) for i in range(2)]
        finished: list[tuple[int, str, str]] = []

        async def finish(engine: Engine) -> None:
            finished.append(await engine.finish())
            server.gate.open()  # the loser is out: let the winner run to its end

        async with trio.open_nursery() as nursery:
            for engine in engines:
                nursery.start_soon(finish, engine)
    (lost_code, _, lost_err), (won_code, won_out, won_err) = finished
    assert lost_code == 2 and "still running in another process" in lost_err, lost_err
    assert "Traceback" not in lost_err and len(lost_err.strip().splitlines()) == 1
    assert won_code == 0, won_err
    assert len(server.requests) == TOTAL  # every trial called once
    counts = completions_per_trial(tmp_path / "st", "same")
    assert len(counts) == TOTAL and max(counts.values()) == 1
    assert json.loads(won_out)["duplicate_results"] == 0
