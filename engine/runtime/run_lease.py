"""Holding a run's lease for as long as a process executes it (see store.lease)."""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from engine.errors import RunBusyError
from engine.runtime.run_status import process_alive
from engine.store.contract import EventStore, store_call
from engine.store.lease import LeaseHolder, release_lease, renew_lease, take_lease

HEARTBEAT_S = 10.0
# a holder on another host is presumed dead after this long without a heartbeat (on this host its
# pid says so at once); long enough that a loaded machine's stalls never look like a death
STALE_AFTER_S = 120.0


def holder_alive(holder: LeaseHolder) -> bool:
    if time.time() - holder.heartbeat > STALE_AFTER_S:
        return False  # also covers a dead holder whose pid was reused
    return process_alive(holder.pid, holder.host)


def me_now(token: str) -> LeaseHolder:
    return LeaseHolder(token=token, pid=os.getpid(), host=socket.gethostname(), heartbeat=time.time())


@asynccontextmanager
async def run_lease(log: EventStore, run_id: str) -> AsyncIterator[None]:
    """Take the run's lease or refuse (RunBusyError, exit 2); renew it while the body runs; release
    it after. If another process takes it over (this one stalled past STALE_AFTER_S), the body is
    cancelled with RunBusyError: two writers must never both go on."""
    token = uuid.uuid4().hex
    held, holder = await store_call(log, take_lease, log, run_id, me_now(token), holder_alive)
    if holder is not None:
        raise RunBusyError(
            f"run {run_id} is still running in another process (pid {holder.pid} on {holder.host}): "
            f"wait for it to end, or `engine cancel {run_id}` and resume it after"
        )
    lost = False
    try:
        async with trio.open_nursery() as nursery:

            async def heartbeat() -> None:
                nonlocal held, lost
                while True:
                    await trio.sleep(HEARTBEAT_S)
                    renewed = await store_call(log, renew_lease, log, run_id, held, me_now(token))
                    if renewed is None:
                        lost = True
                        nursery.cancel_scope.cancel()
                        return
                    held = renewed

            nursery.start_soon(heartbeat)
            yield
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await store_call(log, release_lease, log, run_id, held)
    if lost:
        raise RunBusyError(f"run {run_id}: another process took over its lease; this one stopped")
