"""The event log's upkeep: `engine check` (of a consistent copy), `engine backup`, the map's size.

Each copies the store in one read transaction, so it is a consistent snapshot even while a run
appends; the checker itself (store.verify) is imported only when a check runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import lmdb

from engine.store.errors import StoreError
from engine.store.log.guard import DAMAGE, damage_as_error
from engine.store.log.handles import ALL_TREES, LAYOUT_VERSION, LogHandles

if TYPE_CHECKING:  # a reader never loads the checker
    from engine.store.log.verify import CheckReport


class LogUpkeep(LogHandles):
    """Checking, backing up and sizing the whole store: the maintenance part of `EventLog`."""

    def check(self, run_id: str | None = None) -> CheckReport:
        """Read everything (one run's events, when given) and list what is damaged.

        Of one consistent snapshot: the store is copied in one read transaction first (a live run
        goes on appending meanwhile), and the copy is what is verified, so a healthy live store
        never shows damage that is only a commit in progress. The copy's pages are verified byte by
        byte outside LMDB before its records are read through LMDB (see `store.verify`)."""
        import tempfile  # random and its hashes: only `engine check` copies the store

        from engine.store.log.verify import CheckReport, check_snapshot

        with tempfile.TemporaryDirectory(prefix="engine-check-") as snapshot:
            with self._lock, damage_as_error(self.path):
                if not self._ready():
                    return CheckReport()  # a store being created: nothing in it yet
                self._walk(tuple(ALL_TREES))  # the copy reads every page
                self._snapshot(snapshot)
            with damage_as_error(self.path):
                return check_snapshot(Path(snapshot), run_id, LAYOUT_VERSION)
        raise AssertionError("unreachable")

    def _snapshot(self, folder: str) -> None:
        try:
            self._env.copy(folder)
        except lmdb.Error as exc:
            if isinstance(exc, DAMAGE):
                raise
            import tempfile

            where = tempfile.gettempdir()
            raise StoreError(f"engine check copies the store to {where} first (set TMPDIR): {exc}") from None

    def backup(self, dest: Path) -> None:
        """A compacted copy of the whole store in `dest` (an existing empty folder), in one read
        transaction: a consistent snapshot even while a run appends."""
        with self._lock, damage_as_error(self.path):
            if not self._ready():
                raise StoreError(f"store {self.path} is being created by another process: back it up after")
            self._walk(tuple(ALL_TREES))  # the copy reads every page
            self._env.copy(str(dest), compact=True)

    def map_size(self) -> int:
        return 0 if self._env is None else int(self._env.info()["map_size"])
