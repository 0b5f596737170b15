"""Workspaces shared by every trial of a variant (a command target's `workspace = "shared"`).

Each executor worker builds its own targets, so the shared folders live here, one per (run,
variant), counted by the targets using them: the variant's setup runs once, every replica then
works in (and may change) the same files, and the folder goes when the last target closes. What the
setup returns (a sandbox's shared services) is kept with the folder and closed before it goes.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import trio

Key = tuple[str, str]  # (run id, variant name)


class Attached(Protocol):
    async def aclose(self) -> None: ...


@dataclass
class _Shared:
    path: Path
    lock: trio.Lock = field(default_factory=trio.Lock)
    ready: bool = False
    users: int = 0
    attached: Attached | None = None


class SharedWorkspaces:
    def __init__(self) -> None:
        self._folders: dict[Key, _Shared] = {}

    async def acquire(self, key: Key, setup: Callable[[Path], Awaitable[Attached | None]]) -> Path:
        """The key's folder, set up once; a setup that failed is tried again by the next trial."""
        shared = self._folders.get(key)
        if shared is None:
            shared = self._folders[key] = _Shared(Path(tempfile.mkdtemp(prefix="engine-shared-")))
        shared.users += 1
        try:
            async with shared.lock:
                if not shared.ready:
                    shared.attached = await setup(shared.path)
                    shared.ready = True
        except BaseException:
            with trio.CancelScope(shield=True):  # a cancelled trial still gives its place back
                await self.release(key)
            raise
        return shared.path

    def attached(self, key: Key) -> Attached | None:
        shared = self._folders.get(key)
        return shared.attached if shared is not None else None

    async def release(self, key: Key) -> None:
        shared = self._folders.get(key)
        if shared is None:
            return
        shared.users -= 1
        if shared.users <= 0:
            del self._folders[key]
            if shared.attached is not None:
                await shared.attached.aclose()
            await trio.to_thread.run_sync(shutil.rmtree, shared.path, True)


SHARED = SharedWorkspaces()
