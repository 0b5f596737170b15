"""Whole commands as a person runs them: `engine list`, `status`, `history` and `report --json` on an
existing store, each a fresh process, wall and CPU (user + sys of the child) and peak RSS, medians
(min-max) of interleaved rounds. Pass several `LABEL=ENGINE` binaries (say, two checkouts' venvs) to
compare them in the same conditions; `LABEL=ENGINE@STORE` reads a store of its own (an older checkout
whose kept records are of its own version). `engine --help` (no store) is timed too.

Targets (a store of 1,000,000 trials over 10 runs, bench_reads.py makes one): list, status, history
under 100 ms and 100 MB; report --json of a 100,000-trial run under 200 ms.

    .venv/bin/python benchmarks/bench_commands.py --store PATH [--run r05] [--experiment NAME]
        [--rounds 9] [LABEL=path/to/engine ...]

Bytecode is cached (PYTHONPYCACHEPREFIX in a temp dir), as an installed engine has it: with
PYTHONDONTWRITEBYTECODE set an editable install would compile its sources at every start.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parent.parent


def commands(run: str, experiment: str) -> list[list[str]]:
    return [["list"], ["status", run], ["history", experiment], ["report", run, "--json"], ["--help"]]


def timed(binary: str, args: list[str], store: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(wall ms, CPU ms, peak RSS MiB) of one command: its own rusage, from wait4."""
    where = [] if args == ["--help"] else ["--store", str(store)]
    start = perf_counter()
    child = subprocess.Popen([binary, *args, *where], stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{binary} {' '.join(args)} exited {child.returncode}")
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss / 1024


def span(values: list[float]) -> str:
    return f"{statistics.median(values):5.0f} ({min(values):.0f}-{max(values):.0f})"


def main() -> None:
    plain = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=plain)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--run", default="r05", help="the run status and report read")
    parser.add_argument("--experiment", default="reads-bench", help="the experiment history reads")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("engines", nargs="*", help="LABEL=ENGINE (default: this checkout's .venv/bin/engine)")
    args = parser.parse_args()
    engines = [e.split("=", 1) for e in args.engines] or [["this", str(ROOT / ".venv" / "bin" / "engine")]]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="bench_commands_")
    stores = {label: Path(binary.partition("@")[2] or args.store).resolve() for label, binary in engines}
    engines = [[label, binary.partition("@")[0]] for label, binary in engines]
    todo = commands(args.run, args.experiment)
    for label, binary in engines:  # first runs write the bytecode cache: not timed
        for command in todo:
            timed(binary, command, stores[label], env)
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    load = os.getloadavg()[0]
    for _ in range(args.rounds):
        for label, binary in engines:
            for command in todo:
                figures = timed(binary, command, stores[label], env)
                results.setdefault((" ".join(command), label), []).append(figures)
    print(f"load {load:.2f} -> {os.getloadavg()[0]:.2f} (2 CPUs), {args.rounds} interleaved rounds")
    for (command, label), runs in sorted(results.items()):
        wall, cpu, rss = ([r[i] for r in runs] for i in range(3))
        figures = f"wall {span(wall)} ms  CPU {span(cpu)} ms  peak RSS {max(rss):.1f} MiB"
        print(f"{command:24s} {label:8s} {figures}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
