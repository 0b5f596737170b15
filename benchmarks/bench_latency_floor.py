"""S3, the latency-bound run, against its floor: `engine run` on 2,000 cases at concurrency 64 against a
server that answers each request in 200 ms, beside a minimal client doing the same calls.

The floor has two readings, both printed:
- the waits alone: ceil(cases / concurrency) x latency (32 x 0.2 s = 6.40 s), what no process can beat;
- a minimal client (this file run with `--client`): a Python process that imports trio and sends the
  same chat-completion requests from `concurrency` workers, each on one kept-alive connection, with
  the request written by hand and the answer read by its Content-Length (no HTTP library: an httpx
  client took 8.2 s and 2.1 s of CPU here, slower than the engine), and checks each answer for the
  expected word; no log, no store, no report. Its wall time is the least a Python program on this
  machine pays for the same waits, start-up included.

Both run from the shell as whole processes, interleaved (`--rounds`), on one fake server in a process of
its own. The engine's ratio to each floor is printed with the load average: compare on a quiet machine.

    python benchmarks/bench_latency_floor.py [--rounds 3] [--cases 2000] [--concurrency 64] [--latency-ms 200]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench_s1 import ENGINE, run_once, timed, write_experiment  # noqa: E402 - a sibling script
from fake_server import start_server  # noqa: E402


async def _client(base_url: str, cases: int, concurrency: int) -> int:
    """The minimal client: every case's request, `concurrency` at a time on kept-alive connections,
    over trio's sockets with a request written by hand and the response read by its Content-Length
    (no HTTP library: the least a Python process can do per call); how many answers passed."""
    import json
    from urllib.parse import urlsplit

    import trio

    url = urlsplit(base_url)
    todo = iter(range(cases))
    passed = 0

    async def call(stream: trio.SocketStream, i: int, buffer: bytearray) -> bytes:
        body = json.dumps({"model": "fake", "messages": [{"role": "user", "content": f"question {i}"}]})
        head = f"POST {url.path}/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\n"
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        await stream.send_all(head.encode() + body.encode())
        while b"\r\n\r\n" not in buffer:
            buffer += await stream.receive_some()
        end = buffer.index(b"\r\n\r\n") + 4
        length = next(int(line.split(b":")[1]) for line in buffer[:end].split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))  # fmt: skip
        while len(buffer) < end + length:
            buffer += await stream.receive_some()
        answer = bytes(buffer[end : end + length])
        del buffer[: end + length]
        return answer

    async def worker() -> None:
        nonlocal passed
        buffer = bytearray()
        async with await trio.open_tcp_stream(url.hostname or "127.0.0.1", url.port or 80) as stream:
            for i in todo:
                answer = json.loads(await call(stream, i, buffer))
                passed += "answer" in answer["choices"][0]["message"]["content"].lower()

    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    return passed


def run_client(base_url: str, cases: int, concurrency: int) -> None:
    import trio

    passed = trio.run(_client, base_url, cases, concurrency)
    if passed != cases:
        sys.exit(f"the minimal client saw {passed} of {cases} answers pass")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--client", metavar="BASE_URL", help=argparse.SUPPRESS)  # the minimal client itself
    args = parser.parse_args()
    if args.client:
        return run_client(args.client, args.cases, args.concurrency)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    server, base_url = start_server(args.latency_ms)
    client = [sys.executable, __file__, "--client", base_url, "--cases", str(args.cases)]
    client += ["--concurrency", str(args.concurrency)]
    try:
        with tempfile.TemporaryDirectory() as folder:
            experiment = write_experiment(Path(folder), base_url, args.cases, args.concurrency)
            timed([*ENGINE, "--help"], env)  # bytecode caches written, files in the page cache
            load = os.getloadavg()
            engines, clients = [], []
            for _ in range(args.rounds):  # interleaved: a change in the machine's load hits both
                clients.append(timed(client, env))
                engines.append(run_once(experiment, env))
            load_after = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=10)
    waits = math.ceil(args.cases / args.concurrency) * args.latency_ms / 1000
    engine = statistics.median(w for w, _ in engines)
    floor = statistics.median(w for w, _ in clients)
    print(f"load average {load[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} CPUs); "
          f"medians of {args.rounds} rounds, whole processes")  # fmt: skip
    print(f"S3 ({args.cases} trials, concurrency {args.concurrency}, {args.latency_ms} ms server)")
    print(f"the waits alone: {waits:.2f} s")
    print(f"minimal client: wall {floor:.2f} s, CPU {statistics.median(c for _, c in clients):.2f} s "
          f"({floor / waits:.3f}x the waits)")  # fmt: skip
    print(f"engine run:     wall {engine:.2f} s, CPU {statistics.median(c for _, c in engines):.2f} s "
          f"({engine / waits:.3f}x the waits, {engine / floor:.3f}x the minimal client)")  # fmt: skip
    print("all rounds (wall s): engine " + ", ".join(f"{w:.2f}" for w, _ in engines)
          + "; minimal client " + ", ".join(f"{w:.2f}" for w, _ in clients))  # fmt: skip


if __name__ == "__main__":
    main()
