"""Reads on a big store: `engine list`, `status`, `history`, `report --json` and the web view's run
page, each timed and its peak RSS taken, on kept projection snapshots and (for comparison) on a
full replay of the log.

Targets (a store of 1,000,000 trials over 10 runs): list, status, history under 100 ms and 100 MB
RSS; report --json of a 100,000-trial run under 200 ms; the run page under 300 ms on first load.

    .venv/bin/python benchmarks/bench_reads.py [--trials 1000000] [--runs 10] [--store PATH] [--quick]

The store is made by the engine itself, `openai` target against the fake OpenAI server in its own
process (2 variants x 5 repeats per case, a contains grader), all runs of one experiment; `--store`
keeps it there (and reuses it when it already holds runs). Each query runs in a fresh process: "ms"
is the query alone (imports excluded), "cli ms" the whole command as a person runs it. "status
(snapshots)" reads the figures kept beside the run's state (`engine status`); "status (whole
state)" decodes the kept state itself, as `engine status` did before (and still does on a store
written before those figures were kept, until `engine rebuild`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_trials import start_server  # noqa: E402
from engine.api import open_engine, spec_from_dict  # noqa: E402

EXPERIMENT = "reads-bench"


def spec(base_url: str, trials: int) -> object:
    cases = max(1, trials // 10)
    return spec_from_dict({
        "name": EXPERIMENT,
        "target": {"kind": "openai", "base_url": base_url, "model": "fake", "max_retries": 0},
        "variants": [{"name": "a"}, {"name": "b", "params": {"temperature": 0.5}}],
        "cases": [{"id": f"c{i:06d}", "prompt": f"question {i}", "expected": "answer"} for i in range(cases)],
        "graders": [{"kind": "contains", "case_sensitive": False}],
        "repeat": {"count": 5},
        "execution": {"concurrency": 64, "judge_concurrency": 4},
    })  # fmt: skip


async def fill(store: Path, base_url: str, runs: int, trials: int) -> None:
    async with open_engine(store) as eng:
        for i in range(runs):
            started = time.perf_counter()
            report = await eng.run(spec(base_url, trials), run_id=f"r{i:02d}")  # type: ignore[arg-type]
            print(f"  run r{i:02d}: {report.trials_done:,} trials in {time.perf_counter() - started:.0f} s",
                  flush=True)  # fmt: skip


QUERY = r"""
import sys, time
from pathlib import Path
from engine.store.open import open_event_log
what, store, run = sys.argv[1], sys.argv[2], sys.argv[3]
def work(log):
    if what == "list (snapshots)":
        from engine.runtime.run_status import list_runs
        return list_runs(log)
    if what == "list (replay)":
        from engine.store.projections.summary import load_summary
        return [load_summary(log, r) for r in log.run_ids()]
    if what == "status (snapshots)":
        from engine.runtime.run_status import run_status
        return run_status(log, run, time.time())
    if what == "status (whole state)":
        from engine.store.projections.status import status_view
        from engine.runtime.run_status import run_state, summarize
        return status_view(summarize(log, run), run_state(log, run), time.time())
    if what == "status (replay)":
        from engine.store.projections.run_state import load_run_state
        from engine.store.projections.summary import load_summary
        return load_summary(log, run), load_run_state(log, run)
    if what == "history (snapshots)":
        from engine.views.history import history
        return history(log, sys.argv[4])
    if what == "report --json (stored)":
        try:
            from engine.views.current_report import current_report_json as report_json
        except ImportError:  # an older checkout (--pythonpath)
            from engine.views.queries import report_json
        return report_json(log, run)
    if what == "report (kept state)":
        from engine.views.queries import replay_json
        return replay_json(log, run, replay=False)
    if what == "report (replay)":
        from engine.views.queries import replay_json
        return replay_json(log, run)
    raise SystemExit(what)
import engine.store.projections.report_builder, engine.views.queries, engine.views.history  # imports first
import resource
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
try:
    import engine.views.current_report
except ImportError:  # an older checkout (--pythonpath)
    pass
start, cpu_start = time.perf_counter(), cpu()
with open_event_log(store, readonly=True) as log:
    work(log)
elapsed, cpu_ms = time.perf_counter() - start, (cpu() - cpu_start) * 1000
status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
print(f"{elapsed * 1000:.0f} {int(status['VmHWM'].split()[0]) // 1024} {cpu_ms:.0f}")
"""

QUERIES = [
    "list (snapshots)", "list (replay)", "status (snapshots)", "status (whole state)", "status (replay)",
    "history (snapshots)",
    "report --json (stored)", "report (kept state)", "report (replay)",
]  # fmt: skip
COMMANDS = {
    "engine list": ["list"], "engine status": ["status", "{run}"], "engine history": ["history", EXPERIMENT],
    "engine report --json": ["report", "{run}", "--json"],
}  # fmt: skip


# --pythonpath: time another checkout's code (before/after, interleaved); the child processes start
# in it too (python -m puts its working directory first on the path)
PYTHONPATH = [str(ROOT)]


def cwd() -> Path:
    return Path(PYTHONPATH[0])


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(PYTHONPATH)}


def query(what: str, store: Path, run: str) -> tuple[int, int, int]:
    argv = [sys.executable, "-c", QUERY, what, str(store), run, EXPERIMENT]
    out = subprocess.run(argv, capture_output=True, text=True, env=env(), cwd=cwd(), check=True)
    ms, rss, cpu = out.stdout.split()
    return int(ms), int(rss), int(cpu)


def command(args: list[str], store: Path) -> tuple[float, str]:
    """Wall ms and peak RSS (MiB, by GNU time when it is there) of `engine ARGS --store STORE`."""
    timer = ["/usr/bin/time", "-f", "%M"] if Path("/usr/bin/time").exists() else []
    argv = [*timer, sys.executable, "-m", "engine.cli.main", *args, "--store", str(store)]
    start = time.perf_counter()
    done = subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env(), cwd=cwd()
    )
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode:
        raise RuntimeError(f"engine {' '.join(args)} exited {done.returncode}: {done.stderr}")
    rss = str(int(done.stderr.split()[-1]) // 1024) if timer else "-"
    return elapsed, rss


def serve(store: Path) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "engine.cli.main", "serve", "--store", str(store), "--port", "0"]
    server = subprocess.Popen(
        cmd, cwd=cwd(), env=env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    return server, server.stdout.readline().split()[2].rstrip("/")  # type: ignore[union-attr]


def cpu_s(pid: int) -> float:
    """The process's CPU time so far (user + system), from /proc: what a request cost the server."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_get(client: object, server: subprocess.Popen[str], url: str, path: str) -> str:
    before, start = cpu_s(server.pid), time.perf_counter()
    client.get(url + path).raise_for_status()  # type: ignore[attr-defined]
    wall, cpu = (time.perf_counter() - start) * 1000, (cpu_s(server.pid) - before) * 1000
    return f"  web {path:36} {wall:8.0f} ms wall {cpu:8.0f} ms server CPU"


def web(store: Path, run: str, other: str = "r01") -> None:
    import httpx

    server, url = serve(store)
    try:
        with httpx.Client(timeout=600) as client:
            for path in ("/", f"/runs/{run}", f"/api/runs/{run}", f"/runs/{run}", f"/history/{EXPERIMENT}"):
                print(timed_get(client, server, url, path))
        fields = dict(
            line.split(":", 1) for line in Path(f"/proc/{server.pid}/status").read_text().splitlines()
        )
        print(f"  web server peak RSS {int(fields['VmHWM'].split()[0]) // 1024} MiB")
    finally:
        server.terminate()
        server.wait()
    first_loads(store, run, other)


def first_loads(store: Path, run: str, other: str) -> None:
    """Each page as the first request of a fresh server (after one request for the runs page, as a
    person arrives), then again: the run page, its live fragment, the comparison of two runs."""
    import httpx

    pages = (f"/runs/{run}", f"/runs/{run}/live", f"/compare?base={run}&cand={other}",
             f"/api/compare?base={run}&cand={other}")  # fmt: skip
    for path in pages:
        server, url = serve(store)
        try:
            with httpx.Client(timeout=600) as client:
                client.get(url + "/").raise_for_status()
                print(timed_get(client, server, url, path) + " (first)")
                print(timed_get(client, server, url, path) + " (again)")
        finally:
            server.terminate()
            server.wait()


def measure(store: Path, run: str) -> None:
    size = (store / "data.mdb").stat().st_size
    print(f"store {size / 2**20:,.0f} MiB; load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f}")
    print(f"  {'query (fresh process, imports excluded)':44} {'ms':>7} {'peak RSS MiB':>13} {'CPU ms':>7}")
    for what in QUERIES:
        ms, rss, cpu = query(what, store, run)
        print(f"  {what:44} {ms:7d} {rss:13d} {cpu:7d}")
    print(f"  {'command (whole process)':44} {'ms':>7} {'peak RSS MiB':>13}")
    for name, args in COMMANDS.items():
        ms, rss = command([a.format(run=run) for a in args], store)
        print(f"  {name:44} {ms:7.0f} {rss:>13}")
    web(store, run)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--trials", type=int, default=1_000_000, help="trials in the whole store")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--store", type=Path, help="keep the store here (reused if it holds runs)")
    parser.add_argument("--quick", action="store_true", help="20,000 trials over 4 runs")
    parser.add_argument("--pythonpath", help="run the queries and the server from this checkout's code")
    parser.add_argument("--web-only", action="store_true", help="the web view's loads alone")
    args = parser.parse_args()
    if args.pythonpath:
        PYTHONPATH[:] = [args.pythonpath]
    trials, runs = (20_000, 4) if args.quick else (args.trials, args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp) / "st"
        if not (store / "data.mdb").exists():
            server, base_url = start_server(0)
            try:
                started = time.perf_counter()
                print(
                    f"making {runs} runs of {trials // runs:,} trials (engine, fake OpenAI server)",
                    flush=True,
                )
                trio.run(fill, store, base_url, runs, trials // runs)
                print(f"made the store in {time.perf_counter() - started:.0f} s")
            finally:
                server.terminate()
                server.wait()
        if args.web_only:
            print(f"load average {os.getloadavg()[0]:.1f}")
            web(store, "r00")
        else:
            measure(store, "r00")


if __name__ == "__main__":
    main()
