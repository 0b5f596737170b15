"""The `engine` process ends without the interpreter's teardown once a command is done.

When a command returns, its work is finished: the store committed and closed, the children it started
waited for, its output written. What a normal exit adds after that is the interpreter taking apart
every module and object it loaded, which a one-trial run waited for longer than for its trial
(benchmarks/README.md#cold-start-the-interpreters-teardown).

So the process ends with `os._exit`, after what a normal exit does that anyone can see: the atexit
handlers run (temporary folders' finalizers, Ray's shutdown, logging's flush) and stdout and stderr
are flushed. It falls back to the normal exit when a thread that is not a daemon still runs (a normal
exit waits for it), when the exit code is not a number (`sys.exit("text")` prints the text), when a
profiler or debugger watches the process (it writes its findings after the program returns), or when
flushing the output fails (a closed pipe: the normal exit reports it as before). Only the program
does this, as the process's own main module; engine embedded in another application (or run by it
with runpy) never ends its host's process. What a normal exit did beyond that is not done: files a
plugin left open are not closed by the collector (their unflushed bytes are lost), and `-X dev`
warnings about them are not printed.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading


def end_process(done: SystemExit) -> None:
    """End the process now with `done`'s exit code when that is safe; else return, and the caller
    lets `done` end the process the normal way."""
    code = 0 if done.code is None else done.code
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)  # CPython's own exit calls this
    if not isinstance(code, int) or run_exitfuncs is None or other_threads_running() or _watched():
        return
    if not _flushed():
        return
    run_exitfuncs()
    os._exit(code if _flushed() else 120)  # 120: what Python exits with when its last flush fails


def other_threads_running() -> bool:
    """Whether a thread other than the main one, and not a daemon, is alive: a normal exit would
    wait for it to end."""
    main = threading.main_thread()
    return any(thread is not main and not thread.daemon for thread in threading.enumerate())


def _watched() -> bool:
    """Whether a profiler, debugger or coverage tracer watches the process (`python -m cProfile
    .venv/bin/engine ...`): it writes what it found after the program returns. Python 3.12 and later
    give cProfile, and later pdb, `sys.monitoring` instead of a profile or trace function."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)
    return monitoring is not None and any(monitoring.get_tool(tool) for tool in range(6))


def _flushed() -> bool:
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a reader gone (BrokenPipeError), a stream closed
        return False
    return True
