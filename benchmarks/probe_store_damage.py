"""Probe: damage a real store at random many times; every command must answer cleanly or with one
line and exit 2 (never a signal: SIGBUS, abort; never a traceback).

Each round copies a store holding one finished run, then flips random bits, zeroes a random page
range, or truncates at a random size, and runs `check`, `list`, `replay`, `export` and `status`.
Prints the outcomes by kind of damage. Exit 1 if any command crashed.

    .venv/bin/python benchmarks/probe_store_damage.py [--rounds N] [--seed S]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ("check", "list", "replay", "export", "status")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def engine(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    cmd = [sys.executable, "-m", "engine.cli.main", *args]
    return subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, timeout=300)


def damage(path: Path, chooser: random.Random) -> str:
    data = bytearray(path.read_bytes())
    kind = chooser.choice(["flip", "zero", "truncate"])
    if kind == "flip":
        for _ in range(chooser.randrange(1, 40)):
            data[chooser.randrange(len(data))] ^= 1 << chooser.randrange(8)
    elif kind == "zero":
        start = chooser.randrange(len(data))
        length = min(chooser.randrange(1, 5 * 4096), len(data) - start)
        data[start : start + length] = bytes(length)
    else:
        data = data[: chooser.randrange(len(data))]
    path.write_bytes(bytes(data))
    return kind


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    chooser = random.Random(args.seed)
    outcomes: collections.Counter[tuple[str, str]] = collections.Counter()
    crashes = 0
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        done = engine("run", str(ROOT / "examples/quickstart.toml"), "-q", "--store", "pristine", cwd=base)
        assert done.returncode == 0, done.stderr
        for _ in range(args.rounds):
            shutil.rmtree(base / "st", ignore_errors=True)
            shutil.copytree(base / "pristine", base / "st")
            kind = damage(base / "st" / "data.mdb", chooser)
            for command in COMMANDS:
                result = engine(command, "--store", "st", cwd=base)
                crashed = result.returncode not in (0, 2) or b"Traceback" in result.stderr
                crashes += crashed
                outcomes[(kind, "CRASH" if crashed else f"exit {result.returncode}")] += 1
                if crashed:
                    print(f"{kind} {command}: {result.returncode}\n{result.stderr.decode()[-800:]}")
    for (kind, outcome), count in sorted(outcomes.items()):
        print(f"{kind:<9} {outcome:<7} {count}")
    print(f"{crashes} crashes in {args.rounds * len(COMMANDS)} commands")
    return 1 if crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
