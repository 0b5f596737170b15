"""What can go wrong with the store itself, as errors the CLI turns into one line and an exit code.

Each carries its exit code (engine.events.errors): a store that cannot be used as asked is the user's
to fix (2); a write the disk refused is the machine's (1).
"""

from __future__ import annotations

from engine.events.commands import engine_command
from engine.events.errors import EngineError


class StoreError(EngineError):
    """A store that cannot be used as asked: exit code 2, one line."""


class StoreDamagedError(StoreError):
    """The files are not a readable log (truncated, zeroed pages, flipped bytes...)."""

    def __init__(self, path: object, what: str) -> None:
        super().__init__(f"store damaged: {path}: {what} (engine check; restore a backup)")


class StoreReadOnlyError(StoreError):
    """A write asked of a store opened read-only (or whose files are not writable)."""


class StoreWriteError(StoreError):
    """An append the disk refused (an I/O error): exit code 1.

    Nothing of the failed batch was written; what was committed before stays, and the run resumes.
    """

    exit_code = 1
    what = "write failed"

    def __init__(self, run_id: str, committed: int, cause: str) -> None:
        self.run_id, self.committed = run_id, committed
        resume = engine_command("run", "--resume", run_id)
        super().__init__(f"{self.what}: {committed} events committed, resume with {resume} ({cause})")


class StoreFullError(StoreWriteError):
    """No room left to append: the disk is full, or the map reached its size limit."""

    what = "disk full"
