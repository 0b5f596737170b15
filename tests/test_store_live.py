"""No false alarms: `engine check` on a store a run is appending to, and every reader on a store another
process is creating, read a consistent state (the snapshot, or an empty store), never "damaged".

Event-driven: the other process announces where it is (a line on stdout) and waits there for the
test (a line on stdin); nothing waits on the clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.store.open import open_event_log
from tests.conftest import SAFETY_S, run_engine
from tests.test_log import subprocess_env

APPENDER = """
import sys, threading
from engine.events import kinds as k
from engine.events.codec import encode
from engine.store.blobs import pack_blob
from engine.store.open import open_event_log

stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
with open_event_log(sys.argv[1]) as log:
    n = 0
    while not stop.is_set():
        batch, blobs = [], []
        for _ in range(40):
            key, stored = pack_blob(("output %d " % n).encode() * 50)
            e = k.TrialCompleted(run_id="live", variant="v", case="c%d" % n, repeat=0, output_hash=key,
                                 latency_ms=1.0)
            batch.append((e.run_id, "trial.completed", encode(e)))
            blobs.append((key, stored))
            n += 1
        log.append(batch, blobs)
        if n == 40:
            print("appending", flush=True)
"""

# the creator stops between creating the files (LMDB's first pages) and creating the databases
CREATOR = """
import sys
import engine.store.log.event_log as log_module

real = log_module.open_databases

def paused(*args):
    print("paused", flush=True)
    sys.stdin.readline()
    return real(*args)

log_module.open_databases = paused
with log_module.EventLog(sys.argv[1]) as log:
    print("created", flush=True)
    sys.stdin.readline()
"""


@contextmanager
def python(code: str, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=subprocess_env(),
    )
    try:
        yield child
    finally:
        assert child.stdin is not None
        child.stdin.close()
        assert child.wait(timeout=SAFETY_S) == 0


def say(child: subprocess.Popen[bytes], line: bytes = b"go\n") -> None:
    assert child.stdin is not None
    child.stdin.write(line)
    child.stdin.flush()


def heard(child: subprocess.Popen[bytes]) -> bytes:
    assert child.stdout is not None
    return child.stdout.readline().strip()


def test_check_of_a_store_a_run_appends_to_finds_nothing(tmp_path: Path) -> None:
    with python(APPENDER, str(tmp_path)) as appender:
        assert heard(appender) == b"appending"
        seen = []
        with open_event_log(tmp_path, readonly=True) as log:
            for _ in range(5):
                report = log.check()
                assert report.problems == [] and report.events >= 40, report.problems[:5]
                seen.append(report.events)
        done = run_engine("check", "--store", str(tmp_path), cwd=tmp_path)
        assert done.returncode == 0 and b"ok" in done.stdout, done.stderr
    assert seen == sorted(seen)


def readers_see_an_empty_store(store: Path, in_process: bool = True) -> None:
    listed = run_engine("list", "--json", "--store", str(store), cwd=store.parent)
    assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stderr
    checked = run_engine("check", "--store", str(store), cwd=store.parent)
    assert checked.returncode == 0 and b"0 events" in checked.stdout, checked.stderr
    status = run_engine("status", "--store", str(store), cwd=store.parent)
    assert b"damaged" not in status.stderr and b"no runs" in status.stderr, status.stderr
    if in_process:  # (one handle per store per process: LMDB's rule)
        with open_event_log(store, readonly=True) as log:
            assert (log.run_ids(), log.last_seq(), list(log.read())) == ([], 0, [])


def test_a_store_being_created_reads_as_empty_then_as_itself(tmp_path: Path) -> None:
    store = tmp_path / "st"
    with python(CREATOR, str(store)) as creator:
        assert heard(creator) == b"paused"  # the files exist; the databases do not yet
        readers_see_an_empty_store(store)
        with open_event_log(store, readonly=True) as early:  # opened while being created...
            say(creator)
            assert heard(creator) == b"created"
            readers_see_an_empty_store(store, in_process=False)
            # ...reads the store once it is whole
            assert early.run_ids() == [] and not early.check().problems and early.checked_from == 1
            say(creator)
    with open_event_log(store) as log:
        assert log.checked_from == 1 and not log.check().problems
