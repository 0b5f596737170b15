"""The Ray backend against local: per-trial overhead, scaling of CPU-bound trials, projection to N nodes.

    .venv/bin/python benchmarks/bench_ray.py [--quick] [--address HOST:PORT]

Needs `pip install 'engine[ray]'`. Without --address it starts a 2-CPU local cluster (`ray start
--head --block` in its own process group, stopped afterwards by its id) and joins it by address, as
a real deployment does. The run is in-process (the embedding API, an in-memory store); the Ray
connection is opened once, outside the timings, and reported on its own.

1. Overhead: instant trials (the embedded local model) with backend local vs ray, same concurrency
   (4: too few in flight to batch), then ray with 64 in flight, where trials travel in batches per
   task: the coordinator's CPU per trial (its whole process, Ray's threads included).
2. Scaling: trials that burn 50 ms of CPU (a Python target, by import path): 8 in flight (they
   batch; 240 trials, 80 with --quick: a run's fixed costs, its start and report, weigh on the
   shorter 2-CPU run), with each task holding 2 of the cluster's CPUs (one task at a time: 1 worker
   CPU) and then 1 (2 worker CPUs): the same trials, concurrency and batching, only the CPUs differ;
   and, as before, 1 and 2 in flight (one trial per task). Command trials that burn 1 s, 1 and 2 in flight.
   Efficiency = throughput / (CPUs x one CPU's throughput). Each configuration of the same 8 in
   flight is run briefly first (Ray stops a worker the previous run left idle; starting one inside
   the timing cost the 2-CPU run ~1 s of CPU), and on a local cluster the bench prints where the
   machine's CPUs went in each (`ray_cpu.py`): the workers' busy share, the coordinator, raylet, GCS,
   Ray's other daemons, the rest of the machine (other programs), and worker processes started.
3. Projection: N nodes of 2 CPUs. Each trial costs the coordinator `coordinator CPU per trial`
   (measured in 1: its whole process, Ray's threads included); throughput is the smaller of what the
   workers can do (N x 2 / (trial time + per-trial overhead)) and what the coordinator can feed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.ray_cpu import ClusterCpu, cluster_session  # noqa: E402
from engine import open_engine, spec_from_dict  # noqa: E402
from engine.input.experiment_plan import resolve  # noqa: E402
from engine.runtime.ray_session import ray_session  # noqa: E402
from engine.store.memory import MemoryStore  # noqa: E402
from tests.ray_cluster import local_cluster  # noqa: E402

BURN = "import time; end = time.process_time() + {s}\nwhile time.process_time() < end: pass\nprint('ok')"


BURN_MODULE = """import time


def burn(request):
    end = time.thread_time() + {s}
    while time.thread_time() < end:
        pass
    return "ok"
"""


def instant_spec(trials: int, backend: dict[str, object], concurrency: int = 4) -> dict[str, object]:
    cases = [{"id": f"c{i}", "prompt": f"What is number {i}?", "expected": "number"} for i in range(trials)]
    return {"name": "bench-instant", "target": {"kind": "local"}, "params": {"max_tokens": 8},
            "execution": {"concurrency": concurrency, **backend}, "cases": cases}  # fmt: skip


def python_burn_spec(trials: int, in_flight: int, address: str, num_cpus: int = 1) -> dict[str, object]:
    cases = [{"id": f"c{i}", "prompt": "p", "expected": "ok"} for i in range(trials)]
    ray = {"address": address, "num_cpus": num_cpus}
    execution = {"concurrency": in_flight, "backend": "ray", "ray": ray}
    return {"name": "bench-burn-py", "target": {"kind": "python", "callable": "burn_mod:burn"},
            "execution": execution, "cases": cases}  # fmt: skip


def burn_spec(trials: int, seconds: float, in_flight: int, address: str) -> dict[str, object]:
    command = [sys.executable, "-c", BURN.format(s=seconds)]
    cases = [{"id": f"c{i}", "prompt": "p", "expected": "ok"} for i in range(trials)]
    execution = {"concurrency": in_flight, "backend": "ray", "ray": {"address": address, "num_cpus": 1}}
    return {"name": "bench-burn", "target": {"kind": "command", "command": command},
            "execution": execution, "cases": cases}  # fmt: skip


async def timed_run(raw: dict[str, object], source: str | None = None) -> tuple[float, float, int]:
    """(wall s, this process's CPU s, trials done)."""
    spec = spec_from_dict(raw)
    async with open_engine(MemoryStore()) as eng:
        wall, cpu = time.perf_counter(), time.process_time()
        report = await eng.run(spec, source=source)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert report.status == "completed", report.status
    return wall, cpu, report.trials_done


async def bench(address: str, quick: bool) -> None:
    trials, burns, seconds = (60, 4, 1.0) if quick else (300, 8, 1.0)
    batched, short_burns = (500, 20) if quick else (2000, 60)
    ray_backend = {"backend": "ray", "ray": {"address": address}}
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; cluster {address}")
    started = time.perf_counter()
    async with ray_session(resolve(spec_from_dict(instant_spec(1, ray_backend)), "bench", Path.cwd())):
        print(f"connect to the cluster (once per run): {time.perf_counter() - started:.2f} s")
        await timed_run(instant_spec(8, ray_backend))  # warm the workers (first task imports engine)
        local_wall, local_cpu, n = await timed_run(instant_spec(trials, {}))
        ray_wall, ray_cpu, _ = await timed_run(instant_spec(trials, ray_backend))
        per_local, per_ray = local_wall / n * 1000, ray_wall / n * 1000
        print(f"\n1. instant trials ({n}, concurrency 4)")
        print(f"   local: {n / local_wall:7.1f} trials/s  {per_local:6.2f} ms/trial  coordinator CPU "
              f"{local_cpu / n * 1000:.2f} ms/trial")  # fmt: skip
        print(f"   ray:   {n / ray_wall:7.1f} trials/s  {per_ray:6.2f} ms/trial  coordinator CPU "
              f"{ray_cpu / n * 1000:.2f} ms/trial")  # fmt: skip
        print(f"   overhead of ray: {per_ray - per_local:+.2f} ms per trial (wall, 4 in flight)")
        b_wall, b_cpu, b_n = await timed_run(instant_spec(batched, ray_backend, concurrency=64))
        verdict = "met" if b_cpu / b_n < 0.0003 else "missed"
        print(f"   ray, 64 in flight ({b_n} trials, batched): {b_n / b_wall:7.1f} trials/s  coordinator CPU "
              f"{b_cpu / b_n * 1000:.2f} ms/trial (target < 0.30: {verdict})")  # fmt: skip
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "burn_mod.py").write_text(BURN_MODULE.format(s=0.05))
            source = str(Path(folder) / "exp.toml")
            short = {}
            for in_flight in (1, 2):  # one trial per task: too few in flight to batch
                wall, _, done = await timed_run(python_burn_spec(short_burns, in_flight, address), source)
                short[in_flight] = done / wall
            cpus, where = {}, {}
            cluster = ClusterCpu(cluster_session(int(address.rsplit(":", 1)[1])))
            # the same 8 in flight (batched), each task holding 2 of the cluster's CPUs (one task runs
            # at a time: 1 worker CPU) or 1 (two tasks at a time: 2 worker CPUs)
            for per_task in (2, 1):
                spec = python_burn_spec(short_burns * 4, 8, address, num_cpus=per_task)
                # the same set-up first: a worker left idle by the previous run was stopped by Ray,
                # and starting one (Python, Ray, engine's imports) is ~1 s of CPU on a 2-CPU machine
                await timed_run(python_burn_spec(8, 8, address, num_cpus=per_task), source)
                cluster.start()
                wall, cpu, done = await timed_run(spec, source)
                cpus[3 - per_task] = (done / wall, cpu / done * 1000)
                where[3 - per_task] = (wall, cpu, cluster.since(cpu), cluster.started)
        (one_rate, one_cpu), (two_rate, two_cpu) = cpus[1], cpus[2]
        print("\n2. CPU-bound Python trials (50 ms of CPU each)")
        print(f"   8 in flight, batched ({short_burns * 4} trials): 1 worker CPU {one_rate:.2f} "
              f"trials/s (ideal 20.00, efficiency {one_rate / 20:.2f}; "
              f"coordinator {one_cpu:.2f} ms CPU/trial)")  # fmt: skip
        print(f"   2 worker CPUs {two_rate:.2f} trials/s (ideal 40.00, efficiency {two_rate / 40:.2f}; "
              f"coordinator {two_cpu:.2f} ms CPU/trial): "
              f"2 CPUs / 1 CPU {two_rate / one_rate:.2f}x "
              f"(target >= 1.8x: {'met' if two_rate >= 1.8 * one_rate else 'missed'})")  # fmt: skip
        for worker_cpus, (wall, cpu, spent, started) in where.items():
            print_cpu(worker_cpus, wall, cpu, spent, started)
        print(f"   1 vs 2 in flight, one trial per task ({short_burns} trials): 1: {short[1]:.2f} "
              f"trials/s (efficiency {short[1] / 20:.2f}), "
              f"2: {short[2]:.2f} ({short[2] / short[1]:.2f}x)")  # fmt: skip
        results = {}
        for in_flight in (1, 2):
            wall, _, done = await timed_run(burn_spec(burns, seconds, in_flight, address))
            results[in_flight] = done / wall
        one, two = results[1], results[2]
        print(f"   CPU-bound command trials ({burns} x {seconds:.0f} s of CPU)")
        print(
            f"   1 worker CPU:  {one:.3f} trials/s (ideal {1 / seconds:.3f}): efficiency {one * seconds:.2f}"
        )
        print(f"   2 worker CPUs: {two:.3f} trials/s (ideal {2 / seconds:.3f}): efficiency "
              f"{two * seconds / 2:.2f}; vs 1 CPU x2: {two / (2 * one):.2f}")  # fmt: skip
    project(per_trial_s=1 / one, coordinator_cpu_s=ray_cpu / n)


def print_cpu(
    worker_cpus: int, wall: float, coordinator: float, spent: dict[str, float], started: int
) -> None:
    """Where the machine's CPU went in a run: the workers' busy share of their CPUs, and the rest."""
    if not spent:
        return  # a remote cluster: its processes are not seen from here
    workers = spent.pop("workers", 0.0)
    rest = ", ".join(f"{name} {s / wall:.2f}" for name, s in sorted(spent.items()))
    print(f"   {worker_cpus} worker CPU(s), CPUs in use over the run's {wall:.2f} s: workers "
          f"{workers / wall:.2f} (busy {workers / wall / worker_cpus:.0%} of {worker_cpus}), "
          f"coordinator {coordinator / wall:.2f}, {rest}; "
          f"processes started in the run: {started}")  # fmt: skip


def project(per_trial_s: float, coordinator_cpu_s: float, cpus_per_node: int = 2) -> None:
    """Throughput of N nodes: the workers' capacity, capped by what one coordinator can feed."""
    print(f"\n3. projection: nodes of {cpus_per_node} CPUs, 1 s trials taking {per_trial_s:.3f} s each "
          f"(measured, overhead included),")  # fmt: skip
    print(f"   coordinator {coordinator_cpu_s * 1000:.2f} ms CPU per trial")
    feed = 1 / coordinator_cpu_s
    for nodes in (1, 2, 4, 8, 16, 64, 256, 1024):
        workers = nodes * cpus_per_node / per_trial_s
        throughput = min(workers, feed)
        print(f"   {nodes:5d} nodes: {throughput:9.1f} trials/s = {throughput / (nodes * cpus_per_node):.2f} "
              f"x N CPUs{'  (coordinator-bound)' if feed < workers else ''}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer trials (about a minute)")
    parser.add_argument("--address", help="join this cluster instead of starting a 2-CPU local one")
    args = parser.parse_args()
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a loopback cluster of our own
    if args.address:
        trio.run(bench, args.address, args.quick)
        return
    with local_cluster(num_cpus=2) as address:
        trio.run(bench, address, args.quick)


if __name__ == "__main__":
    main()
