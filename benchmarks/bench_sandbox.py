"""Per-trial cost of the bubblewrap sandbox: a command agent's trial (start, run, teardown) as a plain
process, in a sandbox, in a sandbox with limits, and in a sandbox with a service to wait for.

    .venv/bin/python benchmarks/bench_sandbox.py [--trials 500] [--quick]

Trials run one at a time through CommandTarget.call (what an executor worker does), so each figure is
one trial's wall time; the overhead is a mode's median minus the plain process's. Target: < 20 ms per
trial without services.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

import trio

from engine.actors.sandbox.probe import bwrap_problem
from engine.actors.targets.command_target import CommandTarget
from engine.actors.targets.target_protocol import TargetRequest
from engine.events.kind_convert import convert_kinded
from engine.events.spec import CaseSpec, VariantSpec
from engine.events.targets import TargetSpec


def _target(**fields: Any) -> TargetSpec:
    """A target spec from its fields, checked as a file's are."""
    return convert_kinded(fields, TargetSpec)  # type: ignore[no-any-return]


AGENT = ["/bin/cat"]  # the cheapest real agent: what is left is engine's and the sandbox's cost
SERVICE = {"name": "tick", "command": "touch ready; exec sleep 3600", "ready": "file:ready"}
MODES: dict[str, dict[str, Any]] = {
    "plain process": {},
    "bubblewrap": {"sandbox": "bubblewrap"},
    "bubblewrap + limits": {"sandbox": "bubblewrap", "limits": {"memory_mb": 512, "cpu_seconds": 30,
                                                                "max_processes": 64, "max_file_mb": 100}},
    "bubblewrap + a service": {"sandbox": "bubblewrap", "services": [SERVICE]},
}  # fmt: skip


def request(i: int) -> TargetRequest:
    case = CaseSpec(id=f"c{i}", prompt="hello")
    return TargetRequest(run_id="bench", variant=VariantSpec(name="v"), case=case, repeat=0, prompt="hello")


async def measure(fields: dict[str, Any], trials: int) -> list[float]:
    target = CommandTarget(_target(kind="command", command=AGENT, **fields))
    times = []
    for i in range(trials):
        started = time.perf_counter()
        response = await target.call(request(i))
        times.append((time.perf_counter() - started) * 1000)
        assert response.text == "hello", response
    await target.aclose()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="50 trials per mode")
    args = parser.parse_args()
    trials = 50 if args.quick else args.trials
    problem = bwrap_problem()
    if problem is not None:
        sys.exit(f"no sandbox here: {problem}")
    print(f"{trials} trials per mode, one at a time; load average {os.getloadavg()[0]:.2f}")
    medians = {}
    for mode, fields in MODES.items():
        times = trio.run(measure, fields, trials)
        medians[mode] = statistics.median(times)
        p95 = statistics.quantiles(times, n=20)[-1]
        overhead = medians[mode] - medians["plain process"]
        extra = f"  overhead {overhead:+.1f} ms" if mode != "plain process" else ""
        print(f"{mode:24} median {medians[mode]:6.1f} ms  p95 {p95:6.1f} ms{extra}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
