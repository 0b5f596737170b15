"""`engine report RUN --html FILE` on a 2,000-trial run: the self-contained file's size (target: under
5 MB) and the time to write it, for outputs of about 500, 2,000 and 8,000 characters.

    .venv/bin/python benchmarks/bench_report_file.py [--trials N]

The run is made by the engine itself (python target, instant answers: 200 cases x 2 variants x 5
repeats); the answers are varied prose so the word diffs against the baseline are not empty.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MAKE_RUN = r"""
import random, sys, trio
from engine.api import open_engine, spec_from_dict

WORDS = ("the capital is Paris and the river Seine crosses it while museums line its banks "
         "many visitors arrive each year to see the tower the cathedral and old streets").split()
chars = int(sys.argv[3])

async def prose(request):
    rnd = random.Random(request.seed)
    words = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append(rnd.choice(WORDS))
    return " ".join(words)

trials, store = int(sys.argv[1]), sys.argv[2]
spec = spec_from_dict({
    "name": "file-bench", "target": {"kind": "python", "callable": "prose"},
    "variants": [{"name": "a"}, {"name": "b", "params": {"t": 1}}],
    "cases": [{"id": f"c{i:05d}", "prompt": f"Tell me about city {i} in a paragraph.", "expected": "Paris",
               "tags": ["t%d" % (i % 7)]} for i in range(trials // 10)],
    "graders": [{"kind": "contains", "value": "Paris"}],
    "repeat": {"count": 5}, "execution": {"concurrency": 64},
})

async def main():
    async with open_engine(store, callables={"prose": prose}) as eng:
        await eng.run(spec, run_id="file")

trio.run(main)
"""


def measure(trials: int, chars: int, work: Path) -> tuple[int, float]:
    store = work / f"st-{chars}"
    make = [sys.executable, "-c", MAKE_RUN, str(trials), str(store), str(chars)]
    subprocess.run(make, cwd=ROOT, check=True)
    out = work / f"file-{chars}.html"
    cmd = [sys.executable, "-m", "engine.cli.main", "report", "file", "--store", str(store)]
    cmd += ["--html", str(out)]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    return out.stat().st_size, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for chars in (500, 2000, 8000):
            size, seconds = measure(args.trials, chars, Path(tmp))
            verdict = "OK" if size < 5_000_000 else "OVER 5 MB"
            print(f"{args.trials} trials, outputs ~{chars} chars: {size / 1e6:.2f} MB, written in "
                  f"{seconds:.1f} s ({verdict})")  # fmt: skip


if __name__ == "__main__":
    main()
