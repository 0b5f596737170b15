"""One run of a million trials: does the engine's memory and throughput stay level from the first
trial to the last?

Targets: the engine process's anonymous memory (RssAnon: RSS less the store's memory-mapped pages,
which the kernel may drop at will) under 150 MiB throughout, and trials/s per 100,000-trial segment
level from the first segment to the last.

    .venv/bin/python benchmarks/bench_million.py [--trials 1000000] [--quick] [--store PATH]
        [--cases N] [--variants N] [--suite-file] [--library]

The run is made by the engine itself, in a process of its own (`open_engine(...).run`), with the
`openai` target against the fake OpenAI server in another process: `--cases` cases (default trials /
10) x `--variants` variants (default 1) x as many repeats as make the trials (`--suite-file`: the
cases in a JSONL suite file, as an experiment of that many cases has them, not inline). The cases'
empty tags, criteria and metadata are shared as `engine run` shares them in every plan it loads (it
owns the plan); `--library` keeps one of each per case, as a library caller's spec has them (+18 MiB
at 100,000 cases: engine.input.shared_cases). The default is 100,000
cases x 10 repeats at a million trials (a report state of 100,000 cells); `--cases 10000 --variants
2` is 10,000 cases x 2 variants x 50 repeats (20,000 cells). This process only watches,
from outside: every few seconds it reads the engine process's /proc/PID/status (VmRSS, RssAnon,
RssFile) and CPU time, and the trials done from the store (the run's index of trial events since
the last look, tags only: nothing is decoded). The fake server's CPU is printed too, to tell
whether it, not the engine, was the bottleneck.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.fake_server import start_server  # noqa: E402
from engine.store.log.event_log import EventLog  # noqa: E402
from engine.store.open import open_event_log  # noqa: E402

RUN = "million"
SEGMENT = 100_000
DONE_TAGS = frozenset({"trial.completed", "trial.failed"})

CHILD = r"""
import sys, time, trio
from engine.api import open_engine, spec_from_dict
store, base_url, trials, cases, variants, shared = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
suite_file = sys.argv[7] if len(sys.argv) > 7 else ""
listed = [{"id": f"c{i:07d}", "prompt": f"question {i}", "expected": "answer"} for i in range(cases)]
if suite_file:  # the cases in a JSONL suite file, as an experiment of 100,000 cases has them
    import json
    with open(suite_file, "w") as out:
        out.writelines(json.dumps(case) + "\n" for case in listed)
    listed = []
spec = spec_from_dict({
    "name": "million", "target": {"kind": "openai", "base_url": base_url, "model": "fake", "max_retries": 0},
    "variants": [{"name": f"v{i}", "params": {"temperature": i / 10}} for i in range(variants)],
    "cases": listed, **({"suite": {"path": suite_file}} if suite_file else {}),
    "graders": [{"kind": "contains", "case_sensitive": False}],
    "repeat": {"count": max(1, trials // (cases * variants))},
    "execution": {"concurrency": 64, "judge_concurrency": 4},
})
del listed  # the spec holds what it needs: the dicts it was made from are the caller's, gone
if shared:  # as `engine run` does with every plan it loads (it owns the plan), cases inline or not
    from engine.input.shared_cases import share_empty_collections
    share_empty_collections(spec)
from engine.runtime.allocator import tune_allocator
tune_allocator()  # as `engine run` does: the process is the engine's own
async def main():
    async with open_engine(store) as eng:
        start = time.perf_counter()
        report = await eng.run(spec, run_id="RUN")
        print(f"done {report.trials_done} {time.perf_counter() - start:.1f}", flush=True)
trio.run(main)
""".replace("RUN", RUN)


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM, RssAnon, RssFile of the process, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            fields[name] = int(value.split()[0])
    return fields


def cpu_seconds(pid: int) -> float:
    """user + sys CPU time of the process so far."""
    after_name = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(after_name[11]) + int(after_name[12])) / os.sysconf("SC_CLK_TCK")


class Progress:
    """Trials done in the run, counted from the store's run index a chunk at a time (tags only). One
    handle for the whole run: opening one walks the index's pages (~1 s of CPU at a million trials,
    taken from the engine on a loaded machine)."""

    def __init__(self, store: Path) -> None:
        self.store, self.done, self._next = store, 0, 1
        self._log: EventLog | None = None

    def poll(self) -> int:
        if self._log is None:
            if not (self.store / "data.mdb").exists():
                return 0
            self._log = open_event_log(self.store, readonly=True)
        while True:
            rows = self._log.run_index(RUN, self._next, limit=65536)
            self.done += sum(1 for _, tag in rows if tag in DONE_TAGS)
            if rows:
                self._next = rows[-1][0] + 1
            if len(rows) < 65536:
                return self.done

    def close(self) -> None:
        if self._log is not None:
            self._log.close()


def watch(child: subprocess.Popen[str], server_pid: int, store: Path, every: float) -> list[tuple]:
    """Samples (seconds, trials done, engine CPU s, server CPU s, RSS KiB, anon KiB) until the run ends."""
    progress, samples, start = Progress(store), [], time.perf_counter()
    while child.poll() is None:
        try:
            status, cpu = proc_status(child.pid), cpu_seconds(child.pid)
        except (FileNotFoundError, ProcessLookupError):
            break
        done = progress.poll()
        samples.append((time.perf_counter() - start, done, cpu, cpu_seconds(server_pid),
                        status.get("VmRSS", 0), status.get("RssAnon", 0)))  # fmt: skip
        if len(samples) % 10 == 1:
            print(f"  {samples[-1][0]:6.0f} s {done:>9,} trials  RSS {status['VmRSS'] // 1024} MiB"
                  f"  anon {status.get('RssAnon', 0) // 1024} MiB", flush=True)  # fmt: skip
        time.sleep(every)
    samples.append((time.perf_counter() - start, progress.poll(), samples[-1][2] if samples else 0.0,
                    cpu_seconds(server_pid), 0, 0))  # fmt: skip
    progress.close()
    return samples


def segments(samples: list[tuple], total: int) -> None:
    """Per 100k trials: wall seconds, trials/s (wall and per engine CPU second), peak RSS and anon."""
    print(f"  {'segment':>17} {'wall s':>7} {'trials/s':>9} {'per CPU s':>10} {'server CPU':>10}"
          f" {'peak RSS':>9} {'peak anon':>10}")  # fmt: skip
    prev = samples[0]
    for start in range(0, total, SEGMENT):
        end = min(start + SEGMENT, total)
        inside = [s for s in samples if start <= s[1] < end or (end == total and s[1] >= start)]
        last = next((s for s in samples if s[1] >= end), samples[-1])
        wall, cpu, server = last[0] - prev[0], last[2] - prev[2], last[3] - prev[3]
        rss = max((s[4] for s in inside if s[4]), default=0) // 1024
        anon = max((s[5] for s in inside if s[5]), default=0) // 1024
        count = last[1] - prev[1]
        rate, per_cpu = count / max(wall, 1e-9), count / max(cpu, 1e-9)
        print(f"  {start:>8,}-{end:<8,} {wall:7.0f} {rate:9.0f} {per_cpu:10.0f}"
              f" {server:9.0f}s {rss:>5} MiB {anon:>6} MiB")  # fmt: skip
        prev = last


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100,000 trials")
    parser.add_argument("--store", type=Path, help="make the store here (default: a temporary folder)")
    parser.add_argument("--cases", type=int, help="default: trials / 10 (each case run 10 times)")
    parser.add_argument("--variants", type=int, default=1, help="the repeats are trials / (cases x variants)")
    parser.add_argument("--every", type=float, default=3.0, help="seconds between samples")
    parser.add_argument("--suite-file", action="store_true", help="the cases in a JSONL suite, not inline")
    parser.add_argument("--library", action="store_true", help="the cases' empty collections their own")
    args = parser.parse_args()
    trials = 100_000 if args.quick else args.trials
    cases = args.cases or trials // 10
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"one run of {trials:,} trials ({cases:,} cases x {args.variants} variant(s) x "
          f"{trials // (cases * args.variants)} repeats); load average {load}", flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp) / "st"
        server, base_url = start_server(0)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        argv = [
            sys.executable,
            "-c",
            CHILD,
            str(store),
            base_url,
            str(trials),
            str(cases),
            str(args.variants),
            str(int(not args.library)),
            *([str(Path(tmp) / "cases.jsonl")] if args.suite_file else []),
        ]
        child = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        try:
            samples = watch(child, server.pid, store, args.every)
            out = child.communicate()[0]
        finally:
            child.kill()
            server.terminate()
            server.wait()
        if child.returncode:
            raise SystemExit(f"the engine exited {child.returncode}: {out}")
        done = samples[-1][1]
        print(f"{out.strip()}  (trials, seconds)")
        segments(samples, done)
        peak_rss = max(s[4] for s in samples) // 1024
        peak_anon = max(s[5] for s in samples) // 1024
        print(f"peak RSS {peak_rss} MiB, peak anon {peak_anon} MiB; store "
              f"{(store / 'data.mdb').stat().st_size / 2**20:,.0f} MiB; engine CPU {samples[-2][2]:.0f} s;"
              f" load average after {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
