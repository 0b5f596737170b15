"""A run's stop from the shell: the first SIGINT/SIGTERM stops it gracefully (partial results kept), a
second forces; the process's exit code says which signal stopped it (130 for SIGINT, as shells expect)."""

from __future__ import annotations

import signal
import sys
from typing import Protocol

import trio

NOTE_RUN = "stopping; partial results are kept"
NOTE_SCHEDULE = "stopping after the current session's partial results"


def signal_exit_code(stop_reason: str | None) -> int:
    name = (stop_reason or "").removeprefix("signal ")
    return 128 + int(getattr(signal.Signals, name, signal.SIGINT)) if name.startswith("SIG") else 130


class Stoppable(Protocol):
    stop_reason: str | None

    def stop(self, reason: str = "stopped") -> None: ...


async def stop_on_signals(
    control: Stoppable,
    scope: trio.CancelScope,
    note: str,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """First SIGINT/SIGTERM: stop gracefully (partial results kept); a second one forces."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for signum in signals:
            name = signal.Signals(signum).name
            if control.stop_reason is None:
                print(f"\n{name}: {note} (again to force)", file=sys.stderr)
                control.stop(f"signal {name}")
            else:
                scope.cancel()
