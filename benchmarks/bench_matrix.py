"""The web matrix, its search and the trials API on a 100,000-trial run read from the kept trial
index: each request's first load on a fresh `engine serve` and its warm repeats (server CPU time and
client wall time), the server's RSS; and what keeping the index costs the writer per trial.

Targets: the matrix page and the trials API (any filter, any page) under 300 ms on first load; a
search (substring and regex, over prompts, outputs, expected answers and reasons) under 300 ms; server
memory that does not grow with the run; the writer's extra CPU under 0.02 ms per trial.

    .venv/bin/python benchmarks/bench_matrix.py [--trials 100000] [--store DIR] [--warm 3] [--skip-writer]

The run is made by the engine itself (python target, 2 variants x 10,000 cases x 5 repeats, outputs
of ten words drawn from unicode ones, a `contains` grader). `--store DIR` measures a store made before
(its run `--run`, default `big`; a store made by an older engine needs `engine rebuild` first).
Server CPU is the `engine serve` process's user+sys time across the request, read from /proc.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.events import kinds as k  # noqa: E402
from engine.events.codec import encode  # noqa: E402
from engine.events.kinds import TAG_BY_TYPE  # noqa: E402
from engine.store.blobs import pack_blob  # noqa: E402
from engine.store.open import open_event_log  # noqa: E402

MAKE_RUN = r"""
import sys, trio
from engine.api import open_engine, spec_from_dict

WORDS = ["Paris", "straße", "naïve", "Ünïcödé", "yes", "no", "maybe", "東京", "ΣΟΦΙΑ", "error 42"]

async def varied(request):
    n = request.seed
    return " ".join(WORDS[(n >> s) % len(WORDS)] for s in range(0, 40, 4)) + f" #{n % 9973}"

trials, store, run_id = int(sys.argv[1]), sys.argv[2], sys.argv[3]
spec = spec_from_dict({
    "name": "matrix-bench", "target": {"kind": "python", "callable": "varied"},
    "variants": [{"name": "a"}, {"name": "b", "params": {"t": 1}}],
    "cases": [{"id": f"c{i:05d}", "prompt": f"question {i}", "expected": "Paris", "tags": ["t%d" % (i % 7)]}
              for i in range(trials // 10)],
    "graders": [{"kind": "contains", "value": "Paris"}],
    "repeat": {"count": 5}, "execution": {"concurrency": 64},
})

async def main():
    async with open_engine(store, callables={"varied": varied}) as eng:
        await eng.run(spec, run_id=run_id)

trio.run(main)
"""

REQUESTS = [
    "/runs/big/matrix", "/runs/big/matrix?show=failing", "/runs/big/matrix?show=differs",
    "/runs/big/matrix?page=150", "/runs/big/matrix?tag=t3&sort=-latency", "/runs/big/matrix?q=paris",
    "/runs/big/matrix?q=%E6%9D%B1%E4%BA%AC.*%CE%A3%CE%9F%CE%A6&regex=1", "/runs/big/matrix?q=zzz-nowhere",
    "/api/runs/big/matrix?show=failing", "/api/runs/big/trials?limit=50",
    "/api/runs/big/trials?offset=95000", "/api/runs/big/trials?status=fail&variant=b&offset=20000",
    "/api/runs/big/trials?case=c04242", "/api/runs/big/trials?q=stra%C3%9Fe",
    "/runs/big/trial?case=c00042", "/api/runs/big/matrix.csv?show=failing&tag=t1",
]  # fmt: skip


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Server:
    def __init__(self, store: Path) -> None:
        cmd = [sys.executable, "-m", "engine.cli.main", "serve", "--store", str(store), "--port", "0"]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.url = self.proc.stdout.readline().split()[2].rstrip("/")  # type: ignore[union-attr]
        self.client = httpx.Client(timeout=120)

    def get(self, path: str) -> tuple[float, float]:
        """(server CPU ms, wall ms) of one request."""
        before, start = cpu_s(self.proc.pid), time.perf_counter()
        self.client.get(self.url + path).raise_for_status()
        wall = (time.perf_counter() - start) * 1000
        return (cpu_s(self.proc.pid) - before) * 1000, wall

    def close(self) -> None:
        self.client.close()
        self.proc.terminate()
        self.proc.wait()


def requests_of(store: Path, run: str) -> list[str]:
    """REQUESTS for `run`, naming two of its cases (the first and the 4,243rd, or its last)."""
    from engine.store.trial_index.read import load_index

    with open_event_log(store) as log:
        index = load_index(log, run)
        spec = index.catalogue.spec if index is not None else None
        cases = [c.id for c in spec.cases] if spec is not None else ["c00042", "c04242"]
    first, other = cases[min(42, len(cases) - 1)], cases[min(4242, len(cases) - 1)]
    return [p.replace("big", run).replace("c00042", first).replace("c04242", other) for p in REQUESTS]


def serve_figures(store: Path, warm: int, run: str) -> None:
    print(f"{'request':62} {'first cpu/wall ms':>18} {'warm cpu/wall ms':>17}")
    rss = []
    requests = requests_of(store, run)
    for path in requests:
        server = Server(store)  # a fresh server: nothing of the run is in memory
        try:
            server.get("/api/runs")  # the server up and its imports done; not this run's data
            first = server.get(path)
            again = [server.get(path) for _ in range(warm)]
            rss.append(rss_mib(server.proc.pid))
        finally:
            server.close()
        cpu, wall = statistics.median(a[0] for a in again), statistics.median(a[1] for a in again)
        print(f"{path[:62]:62} {first[0]:8.0f} /{first[1]:6.0f}   {cpu:7.0f} /{wall:6.0f}")
    print(f"server RSS after each request's rounds: {min(rss):.0f}-{max(rss):.0f} MiB")
    server = Server(store)
    try:
        for _ in range(3):
            for path in requests:
                server.get(path)
            print(f"  one server, every request again: RSS {rss_mib(server.proc.pid):.0f} MiB")
    finally:
        server.close()


def writer_cost(trials: int, folder: str | None) -> None:
    """CPU per trial of appending a run's events with and without keeping the trial index."""
    import engine.store.kept.snapshots as snapshots

    words = ["Paris", "straße", "naïve", "東京", "ΣΟΦΙΑ", "yes", "no"]
    blobs = [pack_blob(" ".join(words[(i >> s) % 7] for s in range(0, 30, 3)).encode()) for i in range(512)]
    batches: list[tuple[list[tuple[str, str, bytes]], list[tuple[str, bytes]]]] = []
    for b in range(trials // 64):
        rows, used = [], []
        for i in range(b * 64, b * 64 + 64):
            ident = {"run_id": "w", "variant": f"v{i % 2}", "case": f"c{i % 5000}", "repeat": i // 5000}
            key, blob = blobs[i % 512]
            late = {
                **ident,
                "case": f"c{(i - 40) % 5000}",
                "repeat": (i - 40) // 5000,
            }  # graded batches later
            events = [k.TrialStarted(**ident), k.TrialCompleted(**ident, output_hash=key, latency_ms=3.0)]
            if i >= 40:
                events.append(k.TrialGraded(**late, score=1.0, passed=True))
            rows += [(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in events]
            used.append((key, blob))
        batches.append((rows, used))
    keep_index = snapshots.Keeper._keep_index
    print(f"writer: {trials:,} trials (3 events each, outputs as blobs), batches of 64 trials")
    for with_index in (False, True, False, True):
        if not with_index:
            snapshots.Keeper._keep_index = lambda *a: None  # type: ignore[method-assign]
        try:
            with tempfile.TemporaryDirectory(dir=folder) as path, open_event_log(path, 1 << 30) as log:
                start = time.process_time()
                for rows, used in batches:
                    log.append(rows, blobs=used)
                per = (time.process_time() - start) / trials * 1000
        finally:
            snapshots.Keeper._keep_index = keep_index  # type: ignore[method-assign]
        print(f"  {'with' if with_index else 'without'} the trial index: {per:.4f} ms CPU per trial")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--store", type=Path)
    parser.add_argument("--warm", type=int, default=3)
    parser.add_argument("--run", default="big", help="the run of --store to read")
    parser.add_argument("--skip-writer", action="store_true")
    parser.add_argument("--dir", default="/dev/shm" if Path("/dev/shm").is_dir() else None)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    if not args.skip_writer:
        writer_cost(args.trials, args.dir)
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp) / "store"
        if args.store is None:
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", MAKE_RUN, str(args.trials), str(store), "big"], cwd=ROOT, check=True
            )
            print(f"made a {args.trials:,}-trial run in {time.perf_counter() - start:.0f} s")
        serve_figures(store, args.warm, args.run)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
