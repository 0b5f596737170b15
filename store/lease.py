"""A run's lease: at most one live process executes a run.

The lease is one value in the store, taken and renewed by compare-and-set (`EventStore.swap`,
one write transaction), so of two processes starting or resuming the same run together exactly
one wins; a read-then-write check would let both in. The holder renews its heartbeat while it
runs and deletes the lease when it ends. A lease whose holder died (its pid is gone on this host,
or its heartbeat is stale) is taken over, so a killed run stays resumable.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from engine.store.contract import EventStore


class LeaseHolder(msgspec.Struct, frozen=True):
    token: str  # unique per taking: a holder recognises its own lease after a takeover
    pid: int
    host: str
    heartbeat: float  # wall-clock time of the last renewal


IsAlive = Callable[[LeaseHolder], bool]
_encode = msgspec.msgpack.encode
_decoder = msgspec.msgpack.Decoder(LeaseHolder)
MAX_TAKEOVERS = 16  # racing takeovers of one dead lease: each loser re-reads the winner


def lease_key(run_id: str) -> str:
    return f"lease:{run_id}"


def read_holder(raw: bytes) -> LeaseHolder | None:
    try:
        return _decoder.decode(raw)
    except msgspec.DecodeError:  # unreadable: nobody can prove they hold it
        return None


def take_lease(
    log: EventStore, run_id: str, me: LeaseHolder, alive: IsAlive
) -> tuple[bytes, LeaseHolder | None]:
    """(what we wrote, None) when we hold the lease now; (b"", holder) when a live process holds it."""
    mine, expected = _encode(me), None
    for _ in range(MAX_TAKEOVERS):
        found = log.swap(lease_key(run_id), expected, mine)
        if found == expected:
            return mine, None
        assert found is not None
        holder = read_holder(found)
        if holder is not None and alive(holder):
            return b"", holder
        expected = found  # dead: take it over, unless another process just did
    raise RuntimeError(f"lease of run {run_id}: too many concurrent takeovers")


def renew_lease(log: EventStore, run_id: str, held: bytes, me: LeaseHolder) -> bytes | None:
    """The renewed lease's bytes, or None when another process has taken it over (we were presumed
    dead): the caller must stop writing at once."""
    renewed = _encode(me)
    return renewed if log.swap(lease_key(run_id), held, renewed) == held else None


def release_lease(log: EventStore, run_id: str, held: bytes) -> None:
    log.swap(lease_key(run_id), held, None)  # a no-op if it was taken over meanwhile
