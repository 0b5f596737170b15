"""S1 side by side: engine and promptfoo on the same fake OpenAI server, 2,000 cases, a contains grader
(S4, the big run: `--cases 50000 --rounds 1`).

Run by hand (it needs Node.js and the npm package `promptfoo`, which the project does not install):

    npm install --prefix /tmp/promptfoo promptfoo          # once; or set PROMPTFOO to your own binary
    .venv/bin/python benchmarks/side_by_side_promptfoo.py [--cases 2000] [--concurrency 64] [--rounds 3]
        [--promptfoo /tmp/promptfoo/node_modules/.bin/promptfoo]

Both tools run from the shell as a person runs them, start-up included, against one fake server
(tests/fakes/openai_server.py) in its own process: `engine run` on an experiment file, and
`promptfoo eval` on an equivalent config (the prompt is the case's text, one `icontains` assertion,
the same concurrency, no cache, telemetry and update checks off). The script prints each round's wall
time and peak RSS (each process's own, from wait4; promptfoo's node workers, if any, are not in it),
each tool's median, trials/s, and the ratio, with the load average: compare on a quiet
machine (other work on the CPUs slows both, not always alike).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_s1 import child_usage, start_server, write_experiment  # noqa: E402


def promptfoo_config(folder: Path, base_url: str, cases: int) -> Path:
    tests = [
        {"vars": {"prompt": f"question {i}"}, "assert": [{"type": "icontains", "value": "answer"}]}
        for i in range(cases)
    ]
    config = {
        "description": "s1",
        "prompts": ["{{prompt}}"],
        "providers": [{"id": "openai:chat:fake", "config": {"apiBaseUrl": base_url, "apiKey": "sk-fake"}}],
        "tests": tests,
    }
    path = folder / "promptfooconfig.json"
    path.write_text(json.dumps(config))
    return path


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and the child's peak RSS in MiB (its own rusage, from wait4)."""
    wall, usage = child_usage(args, env, cwd, ok=(0, 100))  # promptfoo exits 100 when an assertion failed
    return wall, usage.ru_maxrss / 1024


def find_promptfoo(given: str | None) -> str:
    found = given or os.environ.get("PROMPTFOO") or shutil.which("promptfoo")
    default = Path("/tmp/promptfoo/node_modules/.bin/promptfoo")
    if found is None and default.exists():
        found = str(default)
    if found is None:
        sys.exit("promptfoo not found: npm install --prefix /tmp/promptfoo promptfoo (or --promptfoo PATH)")
    return found


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--promptfoo", help="the promptfoo executable")
    args = parser.parse_args()
    promptfoo = find_promptfoo(args.promptfoo)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1", PROMPTFOO_CACHE_ENABLED="false")
    server, base_url = start_server(0)
    engine_runs: list[tuple[float, float]] = []
    promptfoo_runs: list[tuple[float, float]] = []
    load = os.getloadavg()[0]
    try:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            experiment = write_experiment(folder, base_url, args.cases, args.concurrency)
            config = promptfoo_config(folder, base_url, args.cases)
            pf = [promptfoo, "eval", "-c", str(config), "-j", str(args.concurrency), "--no-cache",
                  "--no-table", "--no-write", "--no-progress-bar"]  # fmt: skip
            for i in range(args.rounds):  # interleaved, so a change of load hits both
                store = folder / f"store{i}"
                engine_runs.append(
                    timed(
                        [
                            sys.executable,
                            "-m",
                            "engine.cli.main",
                            "run",
                            "-q",
                            str(experiment),
                            "--store",
                            str(store),
                        ],
                        folder,
                        env,
                    )  # fmt: skip
                )
                promptfoo_runs.append(timed(pf, folder, env))
                (ew, em), (pw, pm) = engine_runs[-1], promptfoo_runs[-1]
                walls = f"engine {ew:.2f} s {em:.0f} MiB, promptfoo {pw:.2f} s {pm:.0f} MiB"
                print(f"round {i + 1}: {walls}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)
    e, p = statistics.median(w for w, _ in engine_runs), statistics.median(w for w, _ in promptfoo_runs)
    em, pm = max(m for _, m in engine_runs), max(m for _, m in promptfoo_runs)
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after ({os.cpu_count()} CPUs)")
    print(f"engine:    {e:.2f} s median, {args.cases / e:.0f} trials/s (start-up included)")
    print(f"promptfoo: {p:.2f} s median, {args.cases / p:.0f} trials/s (start-up included)")
    print(f"engine is {p / e:.1f}x promptfoo's rate; peak RSS engine {em:.0f} MiB, promptfoo {pm:.0f} MiB"
          f" ({pm / em:.1f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
