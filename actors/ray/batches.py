"""How many trials one Ray task carries: enough to make its cost small beside theirs, no more.

A task costs the coordinator CPU (submitting, a thread waiting in `ray.get`) whatever it carries
(benchmarks/README.md#in-code-trials). Batches are sized from the trials seen so far, timed on the workers
(not counting a task's wait in Ray's queue): a task should work for about TARGET_TASK_S, so a trial of
a good share of that travels alone or in pairs and an instant one in dozens. The
first tasks carry one trial each (nothing is known yet; a long agent trial must not wait behind
others). A batch never takes more than a share of the trials in flight that leaves every task slot
of the cluster one batch running and one queued, so batching never idles a CPU the trials could use.
Once trials batch, that many tasks (two per slot) are in flight, not one per unit of concurrency:
trials then wait in the scheduler's channel and gather into the next batch, rather than each going
at once to a submitter of its own.
"""

from __future__ import annotations

import trio

from engine.actors.messages import TrialJob

TARGET_TASK_S = 0.1
MAX_BATCH = 256


class BatchSizing:
    """The batch size to send next, learnt from the tasks that came back (shared by the submitters)."""

    def __init__(self, in_flight: int | float, slots: int, concurrency: int = 1) -> None:
        self.slots = max(1, slots)
        self.cap = max(1, min(MAX_BATCH, int(min(in_flight, 1 << 20)) // (2 * self.slots)))
        self.trial_s: float | None = None  # a worker's seconds per trial (a moving mean)
        self.concurrency = max(1, concurrency)
        self.tasks = trio.CapacityLimiter(self.concurrency)  # tasks in flight

    def size(self) -> int:
        if self.trial_s is None:
            return 1
        return max(1, min(self.cap, round(TARGET_TASK_S / max(self.trial_s, 1e-6))))

    def observe(self, wall_s: float, trials: int) -> None:
        seen = wall_s / max(1, trials)
        self.trial_s = seen if self.trial_s is None else 0.7 * self.trial_s + 0.3 * seen
        batching = self.size() > 1
        self.tasks.total_tokens = min(self.concurrency, 2 * self.slots) if batching else self.concurrency


def take_batch(jobs: trio.MemoryReceiveChannel[TrialJob], first: TrialJob, size: int) -> list[TrialJob]:
    """`first` and up to size - 1 more jobs that are already waiting (never waits for more)."""
    batch = [first]
    while len(batch) < size:
        try:
            batch.append(jobs.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            break
    return batch


def cluster_slots(num_cpus: float) -> int:
    """How many tasks the connected cluster runs at once (its CPUs over each task's); 1 if unknown."""
    import ray

    try:
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
    except Exception:  # noqa: BLE001  # a sizing hint only: never a reason to fail the run
        return 1
    return max(1, int(cpus / num_cpus)) if num_cpus > 0 else max(1, int(cpus))
