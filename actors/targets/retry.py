"""Retries with exponential backoff and jitter, honouring Retry-After, and a per-attempt timeout."""

from __future__ import annotations

import random
from collections.abc import Collection

import trio

from engine.actors.targets.adaptive import AdaptiveLimit
from engine.actors.targets.target_protocol import Target, TargetError, TargetRequest, TargetResponse

BASE_DELAY_S = 0.5
MAX_DELAY_S = 30.0


def backoff_delay(attempt: int, rng: random.Random, retry_after: float | None) -> float:
    """Full jitter (AWS style) on an exponential cap; a server's Retry-After wins if longer."""
    cap = min(MAX_DELAY_S, BASE_DELAY_S * 2 ** (attempt - 1))
    delay = rng.uniform(0, cap)
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_DELAY_S * 4))
    return delay


async def call_with_retries(
    target: Target,
    request: TargetRequest,
    *,
    max_retries: int,
    rng: random.Random | int,
    limit: AdaptiveLimit | None = None,
    retry_on: Collection[str] = (),
) -> TargetResponse:
    """Transient infrastructure errors are retried; other classes only when listed in retry_on. `rng`
    may be a seed: its generator is made at the first retry (most calls never need one)."""
    attempt = 0
    while True:
        attempt += 1
        try:
            response = await _attempt(target, request, limit)
            response.attempts = attempt
            return response
        except TargetError as exc:
            error = exc
        error.attempts = attempt
        if not (error.retryable or error.error_class in retry_on) or attempt > max_retries:
            raise error
        if isinstance(rng, int):
            rng = random.Random(rng)
        # a server's Retry-After is honoured up to the trial's own timeout; a wait past the run's wall
        # budget (the enclosing deadline) could never end in a call: the trial fails now instead
        delay = min(backoff_delay(attempt, rng, error.retry_after), request.timeout_s)
        if trio.current_time() + delay >= trio.current_effective_deadline():
            raise error
        await trio.sleep(delay)


async def _attempt(target: Target, request: TargetRequest, limit: AdaptiveLimit | None) -> TargetResponse:
    if limit is None:
        return await _timed(target, request)
    slot = limit.slot()
    try:  # a free slot is taken without the scheduler turn `async with` costs (trio's acquire yields)
        slot.acquire_nowait()
    except trio.WouldBlock:
        await slot.acquire()
    try:
        response = await _timed(target, request)
    except TargetError as exc:
        if exc.throttled:
            limit.on_throttle()
        raise
    finally:
        slot.release()
    limit.on_success()
    return response


async def _timed(target: Target, request: TargetRequest) -> TargetResponse:
    if getattr(target, "times_itself", False):  # one deadline per attempt: the target's own
        return await target.call(request)
    try:
        with trio.fail_after(request.timeout_s):
            return await target.call(request)
    except trio.TooSlowError:
        raise TargetError("timeout", f"no answer within {request.timeout_s:g} s") from None
