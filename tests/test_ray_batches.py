"""How many trials a Ray task carries: learnt from the tasks that came back, capped by the cluster's
task slots (pure: no cluster needed; the batches on a real cluster are in test_ray_backend)."""

from __future__ import annotations

import trio

from engine.actors.messages import TrialJob
from engine.actors.ray.batches import MAX_BATCH, TARGET_TASK_S, BatchSizing, take_batch


def test_a_batch_is_one_trial_until_a_task_has_come_back() -> None:
    assert BatchSizing(in_flight=128, slots=2).size() == 1


def test_short_trials_fill_batches_up_to_a_share_that_keeps_every_slot_busy() -> None:
    sizing = BatchSizing(in_flight=128, slots=2)  # 2 slots, each with one batch running, one queued
    sizing.observe(wall_s=0.002, trials=1)
    assert sizing.cap == 32 and sizing.size() == 32
    assert BatchSizing(in_flight=1 << 30, slots=1).cap == MAX_BATCH


def test_trials_near_the_task_length_travel_alone_or_in_pairs() -> None:
    sizing = BatchSizing(in_flight=128, slots=2)
    sizing.observe(wall_s=TARGET_TASK_S, trials=1)
    assert sizing.size() == 1
    sizing.observe(wall_s=TARGET_TASK_S, trials=4)  # the moving mean: 0.7 x 0.1 + 0.3 x 0.025 s
    assert sizing.size() == 1
    for _ in range(10):
        sizing.observe(wall_s=TARGET_TASK_S, trials=2)
    assert sizing.size() == 2


def test_few_trials_in_flight_never_batch() -> None:
    sizing = BatchSizing(in_flight=4, slots=2)  # concurrency 2: batching would leave a CPU idle
    sizing.observe(wall_s=0.001, trials=1)
    assert sizing.size() == 1


def test_a_batch_takes_only_what_is_already_waiting() -> None:
    send, receive = trio.open_memory_channel[TrialJob](10)
    jobs = [object() for _ in range(3)]
    for job in jobs[1:]:
        send.send_nowait(job)  # type: ignore[arg-type]
    assert take_batch(receive, jobs[0], 8) == jobs  # type: ignore[arg-type]
    send.send_nowait(jobs[0])  # type: ignore[arg-type]
    send.send_nowait(jobs[1])  # type: ignore[arg-type]
    assert take_batch(receive, jobs[2], 2) == [jobs[2], jobs[0]]  # type: ignore[arg-type]


def test_once_trials_batch_two_tasks_per_slot_are_in_flight_else_one_per_unit_of_concurrency() -> None:
    sizing = BatchSizing(in_flight=128, slots=2, concurrency=64)
    assert sizing.tasks.total_tokens == 64  # nothing known: every trial may be a long one
    sizing.observe(wall_s=0.001, trials=1)
    assert sizing.tasks.total_tokens == 4  # short: the others gather into the next batches
    for _ in range(20):
        sizing.observe(wall_s=5.0, trials=1)
    assert sizing.size() == 1 and sizing.tasks.total_tokens == 64
