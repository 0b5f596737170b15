"""Retries: backoff with jitter, Retry-After, per-attempt timeouts; on trio's virtual clock."""

from __future__ import annotations

import random

import pytest
import trio

from engine.actors.targets.retry import backoff_delay, call_with_retries
from engine.actors.targets.target_protocol import TargetError, TargetRequest, TargetResponse
from engine.events.spec import CaseSpec, VariantSpec

REQUEST = TargetRequest(
    run_id="r",
    variant=VariantSpec(name="v"),
    case=CaseSpec(id="c", prompt="p"),
    repeat=0,
    prompt="p",
    timeout_s=5,
)


class Scripted:
    """Fails with the scripted errors (or hangs on 'hang'), then answers."""

    def __init__(self, script: list[object]) -> None:
        self.script = script
        self.calls: list[float] = []

    async def call(self, request: TargetRequest) -> TargetResponse:
        self.calls.append(trio.current_time())
        step = self.script.pop(0) if self.script else None
        if step == "hang":
            await trio.sleep_forever()
        if isinstance(step, TargetError):
            raise step
        return TargetResponse(text="ok")

    async def aclose(self) -> None:
        return None


async def test_retries_transient_errors_then_succeeds(autojump_clock: trio.abc.Clock) -> None:
    target = Scripted([TargetError("infra", "500", retryable=True), "hang"])
    response = await call_with_retries(
        target, REQUEST, max_retries=3, rng=random.Random(1), retry_on=("timeout",)
    )
    assert response.text == "ok" and response.attempts == 3
    assert target.calls[2] - target.calls[1] >= 5  # the hang cost one full timeout


async def test_a_timeout_is_recorded_once_unless_the_target_opts_in(autojump_clock: trio.abc.Clock) -> None:
    """A hung agent with a 720 s timeout must not cost 4 x 720 s: timeouts are not transient."""
    target = Scripted(["hang", "hang"])
    with pytest.raises(TargetError) as caught:
        await call_with_retries(target, REQUEST, max_retries=3, rng=random.Random(1))
    assert (caught.value.error_class, caught.value.attempts, len(target.calls)) == ("timeout", 1, 1)


@pytest.mark.parametrize("error_class", ["agent_exit", "malformed_response", "subject_error"])
async def test_subject_failures_are_retried_only_when_listed(
    error_class: str, autojump_clock: trio.abc.Clock
) -> None:
    crash = TargetError("model", "crashed", error_class=error_class)
    once = Scripted([crash])
    with pytest.raises(TargetError):
        await call_with_retries(once, REQUEST, max_retries=3, rng=random.Random(1))
    assert len(once.calls) == 1
    opted = Scripted([TargetError("model", "crashed", error_class=error_class)])
    response = await call_with_retries(
        opted, REQUEST, max_retries=3, rng=random.Random(1), retry_on=[error_class]
    )
    assert response.attempts == 2


async def test_retry_after_is_honoured(autojump_clock: trio.abc.Clock) -> None:
    target = Scripted([TargetError("infra", "429", retryable=True, retry_after=4.5)])
    await call_with_retries(target, REQUEST, max_retries=1, rng=random.Random(1))
    assert target.calls[1] - target.calls[0] >= 4.5


async def test_retry_after_is_capped_by_the_trial_timeout_and_the_wall_budget(
    autojump_clock: trio.abc.Clock,
) -> None:
    long_wait = TargetError("infra", "429", retryable=True, retry_after=120.0)
    target = Scripted([long_wait])
    await call_with_retries(target, REQUEST, max_retries=1, rng=random.Random(1))
    assert target.calls[1] - target.calls[0] == pytest.approx(REQUEST.timeout_s)
    target = Scripted([long_wait])
    with trio.move_on_after(REQUEST.timeout_s / 2), pytest.raises(TargetError):  # the run's wall budget
        await call_with_retries(target, REQUEST, max_retries=1, rng=random.Random(1))
    assert len(target.calls) == 1  # it failed at once rather than sleep past the budget


async def test_non_retryable_errors_fail_at_once(autojump_clock: trio.abc.Clock) -> None:
    target = Scripted([TargetError("model", "400 bad request")])
    with pytest.raises(TargetError) as caught:
        await call_with_retries(target, REQUEST, max_retries=5, rng=random.Random(1))
    assert caught.value.attempts == 1 and len(target.calls) == 1


async def test_gives_up_after_max_retries(autojump_clock: trio.abc.Clock) -> None:
    target = Scripted(["hang"] * 10)
    with pytest.raises(TargetError) as caught:
        await call_with_retries(target, REQUEST, max_retries=2, rng=random.Random(1), retry_on=["timeout"])
    assert caught.value.kind == "timeout" and caught.value.attempts == 3


def test_backoff_grows_and_is_capped() -> None:
    rng = random.Random(3)
    caps = [max(backoff_delay(attempt, rng, None) for _ in range(200)) for attempt in (1, 3, 12)]
    assert caps[0] <= 0.5 and caps[1] <= 2.0 and 1.0 < caps[2] <= 30.0


async def test_adaptive_limit_halves_on_throttle_and_grows_back(autojump_clock: trio.abc.Clock) -> None:
    from engine.actors.targets.adaptive import AdaptiveLimit

    limit = AdaptiveLimit(ceiling=8, grow_after=2)
    limit.on_throttle()
    limit.on_throttle()
    assert limit.limit == 2
    for _ in range(4):
        limit.on_success()
    assert limit.limit == 4
    inside, most = 0, 0

    async def use() -> None:
        nonlocal inside, most
        async with limit.slot():
            inside += 1
            most = max(most, inside)
            await trio.sleep(0.01)
            inside -= 1

    async with trio.open_nursery() as nursery:
        for _ in range(12):
            nursery.start_soon(use)
    assert most == 4


async def test_throttled_calls_shrink_the_limit(autojump_clock: trio.abc.Clock) -> None:
    from engine.actors.targets.adaptive import AdaptiveLimit

    limit = AdaptiveLimit(ceiling=16)
    target = Scripted([TargetError("infra", "429", retryable=True, retry_after=1.0)] * 3)
    await call_with_retries(target, REQUEST, max_retries=3, rng=random.Random(1), limit=limit)
    assert limit.limit == 2
