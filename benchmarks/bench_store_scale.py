"""Whole commands on a small and a big store: does anything grow with the store rather than the run?

Give two stores holding the same run id (e.g. bench_reads.py's fill: 10 runs of 10k trials, and 10
runs of 100k). Each command runs as `engine ...` in a process of its own, which samples its own
/proc/self/status every 5 ms (anonymous and file-backed RSS peak separately; VmHWM is the exact
total peak) and reports its CPU time (getrusage). Printed per command: wall, CPU, peak RSS, peak
anonymous, peak file-backed, for each store, and the big/small ratios.

    .venv/bin/python benchmarks/bench_store_scale.py --small S100K --big S1M [--run r03]
        [--commands run,replay,export,check] [--python PATH]

`--python`: another checkout's interpreter (e.g. /work/main/.venv/bin/python) for before/after
figures. `run` is one trial of a local-target experiment (the cost of opening a big store to write);
it commits, so the stores change: use copies. The first open of a copy walks every page once (its
inode is new): `--warm` runs `engine run` once first, untimed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

WRAPPER = r"""
import json, resource, sys, threading, time
peaks = {"RssAnon": 0, "RssFile": 0}
def sample():
    while True:
        for line in open("/proc/self/status"):
            name, _, value = line.partition(":")
            if name in peaks:
                peaks[name] = max(peaks[name], int(value.split()[0]))
        time.sleep(0.005)
threading.Thread(target=sample, daemon=True).start()
start = time.perf_counter()
sys.argv = ["engine", *sys.argv[1:]]
from engine.cli.main import main
code = 0
try:
    main()
except SystemExit as exit:
    code = exit.code or 0
wall = time.perf_counter() - start
use = resource.getrusage(resource.RUSAGE_SELF)
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"code": code, "wall": wall, "cpu": use.ru_utime + use.ru_stime, "peak": hwm,
                  "anon": peaks["RssAnon"], "file": peaks["RssFile"]}), file=sys.stderr)
"""

EXPERIMENT = """name = "scale"
[target]
kind = "local"
[[cases]]
id = "one"
prompt = "Say something."
expected = "something"
"""


def command_args(name: str, store: Path, run: str, scratch: Path) -> list[str]:
    where = ["--store", str(store)]
    return {
        "run": ["run", str(scratch / "exp.toml"), "-q", *where],
        "replay": ["replay", run, *where],
        "export": ["export", run, "-f", "bundle", "-o", str(scratch / f"{store.name}.bundle"), *where],
        "check": ["check", *where],
    }[name]


def measure(python: str, args: list[str], scratch: Path) -> dict[str, float]:
    # run from the scratch folder: a checkout's own folders (engine/, store/) would shadow its install
    done = subprocess.run([python, "-c", WRAPPER, *args], capture_output=True, text=True, cwd=scratch)
    try:
        figures = json.loads(done.stderr.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise SystemExit(f"engine {' '.join(args)} failed: {done.stderr[-2000:]}") from None
    if figures["code"] not in (0, None):
        raise SystemExit(f"engine {' '.join(args)} exited {figures['code']}: {done.stderr[-2000:]}")
    return figures


def line(label: str, f: dict[str, float]) -> str:
    return (f"  {label:<6} wall {f['wall']:6.2f} s  CPU {f['cpu']:6.2f} s  peak {f['peak'] // 1024:5} MiB"
            f"  anon {f['anon'] // 1024:5} MiB  file {f['file'] // 1024:5} MiB")  # fmt: skip


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--small", type=Path, required=True)
    parser.add_argument("--big", type=Path, required=True)
    parser.add_argument("--run", default="r03")
    parser.add_argument("--commands", default="run,replay,export,check")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--warm", action="store_true", help="one untimed `engine run` per store first")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; python {args.python}")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        (scratch / "exp.toml").write_text(EXPERIMENT)
        if args.warm:
            for store in (args.small, args.big):
                measure(args.python, command_args("run", store, args.run, scratch), scratch)
        for name in args.commands.split(","):
            small = measure(args.python, command_args(name, args.small, args.run, scratch), scratch)
            big = measure(args.python, command_args(name, args.big, args.run, scratch), scratch)
            ratio = {k: big[k] / max(small[k], 1e-9) for k in ("wall", "cpu", "peak", "anon", "file")}
            print(f"{name}:\n{line('small', small)}\n{line('big', big)}")
            print("  big/small " + "  ".join(f"{k} {v:.2f}x" for k, v in ratio.items()), flush=True)


if __name__ == "__main__":
    main()
