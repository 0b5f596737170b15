"""What a live run's anonymous memory is made of: Python's allocator and glibc's, every few seconds.

    .venv/bin/python benchmarks/probe_live_memory.py [--cases 100000] [--variants 2] [--repeats 2]

Runs the engine in this process (`open_engine(...).run`, the `openai` target against the fake server
in a process of its own), the plan's cases inline and their empty collections shared as `engine run`
shares them. Every `--every` seconds, and when the run is done, it prints the process's RssAnon, glibc's
heap (`mallinfo2`: its size, in use, free) and buffers mapped on their own, and Python's allocator
(`sys._debugmallocstats`: arenas held, bytes in use). Anonymous memory well above what is in use means
holes (benchmarks/README.md, "Live memory, round five"). Linux and glibc only.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio  # noqa: E402

from benchmarks.fake_server import start_server  # noqa: E402
from engine.api import open_engine, spec_from_dict  # noqa: E402
from engine.input.shared_cases import share_empty_collections  # noqa: E402
from engine.runtime.allocator import tune_allocator  # noqa: E402

MIB = 1 << 20


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
        "keepcost",
    )]  # fmt: skip


def python_allocator() -> tuple[int, int]:
    """(arenas held, bytes in use) of Python's small-object allocator, from its debug report (stderr)."""
    read, write = os.pipe()
    saved = os.dup(2)
    os.dup2(write, 2)
    os.close(write)
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    os.set_blocking(read, False)
    text = b""
    try:
        while chunk := os.read(read, MIB):
            text += chunk
    except BlockingIOError:
        pass
    os.close(read)
    pairs = re.findall(rb"# ([a-z ]+?)\s+=\s+([\d,]+)", text)
    found = {key: int(value.replace(b",", b"")) for key, value in pairs}
    return found.get(b"arenas allocated current", 0), found.get(b"bytes in allocated blocks", 0)


def sample(tag: str) -> None:
    status = Path("/proc/self/status").read_text()
    anon = int(re.search(r"RssAnon:\s+(\d+)", status).group(1)) >> 10  # type: ignore[union-attr]
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    heap = libc.mallinfo2()
    arenas, used = python_allocator()
    print(f"{tag:>6}: anon {anon:4d} MiB | glibc heap {heap.arena // MIB:3d} (in use {heap.uordblks // MIB},"
          f" free {heap.fordblks // MIB}), mapped {heap.hblkhd // MIB:3d} | Python's allocator: {arenas}"
          f" arenas, {used // MIB} MiB in use", flush=True)  # fmt: skip


async def probe(cases: int, variants: int, repeats: int, every: float) -> None:
    server, base_url = start_server(0)
    try:
        listed = [{"id": f"c{i:07d}", "prompt": f"question {i}", "expected": "answer"} for i in range(cases)]
        spec = spec_from_dict({
            "name": "probe",
            "target": {"kind": "openai", "base_url": base_url, "model": "fake", "max_retries": 0},
            "variants": [{"name": f"v{i}", "params": {"temperature": i / 10}} for i in range(variants)],
            "cases": listed, "graders": [{"kind": "contains", "case_sensitive": False}],
            "repeat": {"count": repeats}, "execution": {"concurrency": 64, "judge_concurrency": 4},
        })  # fmt: skip
        del listed
        share_empty_collections(spec)  # as `engine run` does with the plan it owns
        sample("start")
        start = time.perf_counter()
        async with open_engine(Path(tempfile.mkdtemp()) / "store") as engine, trio.open_nursery() as nursery:

            async def every_few_seconds() -> None:
                while True:
                    await trio.sleep(every)
                    sample(f"{time.perf_counter() - start:.0f}s")

            nursery.start_soon(every_few_seconds)
            report = await engine.run(spec, run_id="probe")
            sample("done")
            print(f"{report.trials_done:,} trials in {time.perf_counter() - start:.1f} s")
            nursery.cancel_scope.cancel()
    finally:
        server.terminate()


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--variants", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    args = parser.parse_args()
    tune_allocator()  # as `engine run` does: the process is the engine's own
    trio.run(probe, args.cases, args.variants, args.repeats, args.every)


if __name__ == "__main__":
    main()
