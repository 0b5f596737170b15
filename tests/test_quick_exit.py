"""The `engine` program ends without the interpreter's teardown (cli.quick_exit): what a normal exit
does that anyone sees stays (exit codes, output, atexit handlers), and a thread a normal exit would
wait for is waited for."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from engine.cli.quick_exit import other_threads_running
from engine.store.open import open_event_log
from tests.conftest import engine_env

PROGRAM = "import sys; from engine.cli.main import program; sys.argv = ['engine', *sys.argv[1:]]; "


def python(code: str, *args: str, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], env=engine_env(), text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw,  # type: ignore[call-overload]
    )  # fmt: skip


def test_exit_code_output_and_atexit_handlers_are_kept(tmp_path: Path) -> None:
    open_event_log(tmp_path / "store").close()
    code = "import atexit; atexit.register(print, 'atexit ran'); " + PROGRAM + "program()"
    listed = python(code, "list", "--store", str(tmp_path / "store"), "--json")
    out, err = listed.communicate(timeout=120)
    assert (listed.returncode, out.split(), err) == (0, ["[]", "atexit", "ran"], "")
    refused = python(code, "validate", str(tmp_path / "missing.toml"))
    out, err = refused.communicate(timeout=120)
    assert refused.returncode == 2 and out == "atexit ran\n"
    assert err.startswith("error: ") and "missing.toml: file not found" in err


def test_a_running_thread_is_waited_for(tmp_path: Path) -> None:
    # the thread ends only when the test writes to its stdin, after the command's error line came:
    # had the process ended at once, its last line would be missing
    code = (
        "import threading; "
        "thread = threading.Thread(target=lambda: print('thread ended', sys.stdin.readline().strip())); "
        + PROGRAM + "thread.start(); program()"
    )
    proc = python(code, "validate", str(tmp_path / "missing.toml"), stdin=subprocess.PIPE)
    assert proc.stderr is not None and proc.stdin is not None
    assert proc.stderr.readline().startswith("error: ")
    proc.stdin.write("released\n")
    proc.stdin.flush()
    out, _ = proc.communicate(timeout=120)
    assert (proc.returncode, out) == (2, "thread ended released\n")


def test_only_threads_that_are_not_daemons_count() -> None:
    release = threading.Event()
    before = other_threads_running()
    daemon = threading.Thread(target=release.wait, daemon=True)
    daemon.start()
    assert other_threads_running() == before
    worker = threading.Thread(target=release.wait)
    worker.start()
    assert other_threads_running()
    release.set()
    worker.join()
    daemon.join()


def test_a_profiler_still_writes_its_findings(tmp_path: Path) -> None:
    script = tmp_path / "engine_script.py"
    script.write_text(PROGRAM + "program()\n")
    stats = tmp_path / "run.prof"
    profiled = [sys.executable, "-m", "cProfile", "-o", str(stats), str(script), "validate", "missing.toml"]
    done = subprocess.run(profiled, env=engine_env(), capture_output=True, text=True, timeout=120)
    assert done.stderr.startswith("error: ") and stats.stat().st_size > 0


def test_a_host_running_the_module_in_process_goes_on(tmp_path: Path) -> None:
    host = (
        "import runpy, sys; sys.argv = ['engine', 'validate', sys.argv[1]]\n"
        "try:\n    runpy.run_module('engine.cli.main', run_name='__main__')\n"
        "except SystemExit as done:\n    print('host goes on after', done.code)\n"
    )
    done = subprocess.run([sys.executable, "-c", host, str(tmp_path / "missing.toml")], env=engine_env(),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "host goes on after 2\n")
