"""The live stream's coalescing, on trio's virtual clock: a run appending at any rate reaches a page
as at most a few summaries a second, and a quiet run as keep-alives only."""

from __future__ import annotations

import trio

from engine.web.coalesce import KEEPALIVE, coalesced

GAP, POLL, KEEPALIVE_S = 0.25, 0.1, 15.0


async def _collect(poll, seconds: float) -> list[tuple[float, bytes]]:  # noqa: ANN001
    frames: list[tuple[float, bytes]] = []
    with trio.move_on_after(seconds):
        async for frame in coalesced(poll, GAP, POLL, KEEPALIVE_S):
            frames.append((trio.current_time(), frame))
    return frames


async def test_a_fast_run_gets_at_most_one_summary_per_gap(autojump_clock: trio.abc.Clock) -> None:
    appended = 0  # the run appends 100,000 events a second; each poll summarises all of them so far
    start = trio.current_time()

    async def poll() -> bytes:
        nonlocal appended
        appended = int((trio.current_time() - start) * 100_000)
        return b"data: %d\n\n" % appended

    frames = await _collect(poll, 10.0)
    assert 10 / GAP - 1 <= len(frames) <= 10 / GAP + 1  # 40 summaries in 10 s, not a million events
    gaps = [b[0] - a[0] for a, b in zip(frames, frames[1:], strict=False)]
    assert min(gaps) >= GAP
    assert frames[-1][1] == b"data: %d\n\n" % appended  # the last summary covers everything appended


async def test_changes_within_a_gap_become_one_summary(autojump_clock: trio.abc.Clock) -> None:
    changes = {3.0: b"a", 3.05: b"b", 3.1: b"c", 7.0: b"d"}  # when the log moved, and its summary
    start, seen = trio.current_time(), set()

    async def poll() -> bytes | None:
        now = trio.current_time() - start
        due = [at for at in changes if at <= now and at not in seen]
        seen.update(due)
        return changes[max(due)] if due else None

    frames = await _collect(poll, 10.0)
    summaries = [(t - start, f) for t, f in frames if f != KEEPALIVE]
    assert [f for _, f in summaries] == [b"a", b"c", b"d"]  # b and c, appended inside a's gap: one summary
    (a_at, _), (c_at, _), (d_at, _) = summaries
    assert 3.0 <= a_at <= 3.0 + POLL and c_at - a_at >= GAP and 7.0 <= d_at <= 7.0 + POLL


async def test_a_quiet_run_gets_keepalives_only(autojump_clock: trio.abc.Clock) -> None:
    async def poll() -> None:
        return None

    frames = await _collect(poll, 61.0)
    assert [f for _, f in frames] == [KEEPALIVE] * 4  # one every 15 s of silence
