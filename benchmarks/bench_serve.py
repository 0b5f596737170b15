"""`engine serve` on a 50,000-trial run: server time per page and API call, the server's RSS as
requests repeat, the run page's weight and first load in Chromium, the SSE event-to-browser latency
(appended to the log -> a progress summary on a page), and the live stream's bytes per second while
another run appends as fast as it can.

Targets: every page under 1 s of server time, flat server memory, an event on a page in under 1 s;
the run page under 300 KB and loaded in under 1 s; the live stream's bytes per second bounded
whatever the run's rate.

    .venv/bin/python benchmarks/bench_serve.py [--quick] [--trials N] [--samples N]

The run is made by the engine itself (python target, instant answers, 2 variants). The server is
`engine serve` in its own process; times are measured by the client over loopback (an upper bound on
server time). Latency uses headless Chromium when it is installed, else an SSE client.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.events import kinds as k  # noqa: E402
from engine.events.codec import encode  # noqa: E402
from engine.store.open import open_event_log  # noqa: E402

MAKE_RUN = r"""
import sys, trio
from engine.api import open_engine, spec_from_dict

async def instant(request):
    return "yes, Paris" if request.seed % 3 else "no"

trials, store, run_id = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cases = trials // 10
spec = spec_from_dict({
    "name": "serve-bench", "target": {"kind": "python", "callable": "instant"},
    "variants": [{"name": "a"}, {"name": "b", "params": {"t": 1}}],
    "cases": [{"id": f"c{i:05d}", "prompt": f"question {i}", "expected": "yes", "tags": ["t%d" % (i % 7)]}
              for i in range(cases)],
    "repeat": {"count": 5}, "execution": {"concurrency": 64},
})

async def main():
    async with open_engine(store, callables={"instant": instant}) as eng:
        await eng.run(spec, run_id=run_id)

trio.run(main)
"""

PAGES = [
    "/", "/runs/big", "/runs/big/matrix", "/runs/big/matrix?show=failing", "/runs/big/matrix?offset=4000",
    "/runs/big/trial?case=c00042", "/compare?base=big&cand=big", "/history/serve-bench",
    "/api/runs", "/api/runs/big", "/api/runs/big/trials?limit=50", "/api/runs/big/trials?offset=45000",
    "/api/runs/big/trials?status=fail&variant=b", "/api/runs/big/trials?tag=t3&limit=100",
    "/api/runs/big/matrix?show=failing", "/api/compare?base=big&cand=big",
]  # fmt: skip


def rss_mib(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of a process, MiB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def time_pages(client: httpx.Client, url: str, samples: int) -> None:
    print(f"{'path':48} {'cold ms':>9} {'warm median ms':>15} {'warm max ms':>12}")
    for path in PAGES:
        start = time.perf_counter()
        client.get(url + path).raise_for_status()
        cold = (time.perf_counter() - start) * 1000
        warm = []
        for _ in range(samples):
            start = time.perf_counter()
            client.get(url + path).raise_for_status()
            warm.append((time.perf_counter() - start) * 1000)
        print(f"{path:48} {cold:9.1f} {statistics.median(warm):15.1f} {max(warm):12.1f}")


def sse_latency_browser(url: str, store: Path, samples: int) -> list[float] | None:
    try:
        sys.path.insert(0, str(ROOT))
        from tests.browser import CHROMIUM, BrowserThread
    except ImportError:
        return None
    if CHROMIUM is None:
        return None
    browser = BrowserThread()
    try:
        browser.call(lambda page: page.goto(f"{url}/runs/big"))
        return [_one_browser_sample(browser, store) for _ in range(samples)]
    finally:
        browser.close()


def _one_browser_sample(browser, store: Path, run: str = "big") -> float:  # noqa: ANN001
    with open_event_log(store) as log:
        after = log.last_seq()
    # the promise is kept on the page (evaluate would wait for it): the event is appended after
    script = """([url, after]) => { window.__ready = false;
        delete document.body.dataset.benchReady; window.__arrival = new Promise((resolve) => {
        const source = new EventSource(`${url}?after=${after}`);
        source.addEventListener("progress", (m) => {
            if (window.__ready && Number(m.lastEventId) > after) { source.close(); resolve(Date.now()); }
            window.__ready = true;
            document.body.dataset.benchReady = "1";
        });
    }); }"""
    browser.call(lambda page: page.evaluate(script, [f"/api/runs/{run}/events", after]))
    # a selector, not wait_for_function: the view's CSP forbids the eval that needs
    browser.call(lambda page: page.wait_for_selector("body[data-bench-ready]", state="attached"))
    with open_event_log(store) as log:
        sent = time.time()
        log.append([(run, "cancel.requested", encode(k.CancelRequested(run_id=run, by="bench")))])
    arrived = browser.call(lambda page: page.evaluate("window.__arrival"))
    return arrived - sent * 1000


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--quick", action="store_true", help="5,000 trials")
    parser.add_argument("--trials", type=int, default=50_000)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--stream-s", type=float, default=10.0, help="seconds of live stream measured")
    args = parser.parse_args()
    trials = 5_000 if args.quick else args.trials
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "st"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", MAKE_RUN, str(trials), str(store), "big"], check=True, cwd=ROOT)
        print(f"made a {trials:,}-trial run in {time.perf_counter() - start:.1f} s")
        cmd = [sys.executable, "-m", "engine.cli.main", "serve", "--store", str(store), "--port", "0"]
        server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = server.stdout.readline().split()[2].rstrip("/")  # type: ignore[union-attr]
            print(f"server RSS at start: {rss_mib(server.pid)[0]:.0f} MiB")
            with httpx.Client(timeout=300) as client:
                time_pages(client, url, args.samples)
                after_one = rss_mib(server.pid)
                for _ in range(3):
                    time_pages_quiet(client, url)
            now, peak = rss_mib(server.pid)
            print(f"server RSS after one round: {after_one[0]:.0f} MiB; after 3 more: {now:.0f} MiB "
                  f"(peak {peak:.0f})")  # fmt: skip
            latencies = sse_latency_browser(url, store, args.samples)
            if latencies:
                latencies.sort()
                print(f"SSE event -> Chromium page: median {statistics.median(latencies):.0f} ms, "
                      f"max {latencies[-1]:.0f} ms over {len(latencies)} events")  # fmt: skip
            else:
                print("SSE latency: no chromium/playwright here (skipped)")
            page_weight(url, args.samples)
            live_stream_rate(url, store, trials, args.stream_s)
        finally:
            server.terminate()
            server.wait()


def page_weight(url: str, samples: int) -> None:
    """The run page's bytes (HTML, and with its stylesheets and script) and its first load in Chromium
    (navigation start -> load event; a fresh browser context each time: nothing cached)."""
    html = httpx.get(f"{url}/runs/big", timeout=300).content
    assets = sum(len(httpx.get(f"{url}/static/{name}", timeout=300).content)
                 for name in ("style.css", "report.css", "app.js"))  # fmt: skip
    total = (len(html) + assets) / 1024
    print(f"run page: {len(html) / 1024:.0f} KB HTML, {total:.0f} KB with its CSS and script")
    loads = browser_loads(f"{url}/runs/big", samples)
    if loads:
        median, load = statistics.median(loads), os.getloadavg()[0]
        print(f"run page first load in Chromium: median {median:.0f} ms, max {max(loads):.0f} ms "
              f"over {len(loads)} fresh contexts (load average {load:.1f})")  # fmt: skip


def browser_loads(page_url: str, samples: int) -> list[float]:
    try:
        from playwright.sync_api import sync_playwright

        from tests.browser import ARGS, CHROMIUM
    except ImportError:
        return []
    if CHROMIUM is None:
        return []
    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(samples):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(page_url, wait_until="load")
            timing = page.evaluate("JSON.stringify(performance.getEntriesByType('navigation')[0])")
            nav = json.loads(timing)
            out.append(nav["loadEventEnd"] - nav["startTime"])
            context.close()
        browser.close()
    return out


def live_stream_rate(url: str, store: Path, trials: int, seconds: float) -> None:
    """A second run appends as fast as the engine runs it; a client reads its live stream meanwhile:
    bytes and summaries per second against the events per second the run appends."""
    # big enough to still be appending when the window closes (it is stopped then)
    live_trials = str(max(trials, 200_000))
    writer = subprocess.Popen([sys.executable, "-c", MAKE_RUN, live_trials, str(store), "live"], cwd=ROOT)
    try:
        with open_event_log(store, readonly=True) as log:
            while not log.run_index("live", 1, limit=1):  # the run has started (a bench may poll)
                time.sleep(0.05)
            first = log.last_seq()
        got, summaries = 0, 0
        with (
            httpx.Client(timeout=300) as client,
            client.stream("GET", f"{url}/api/runs/live/events") as stream,
        ):
            start = time.perf_counter()
            for chunk in stream.iter_bytes():
                got += len(chunk)
                summaries += chunk.count(b"event: progress")
                if time.perf_counter() - start >= seconds:
                    break
            elapsed = time.perf_counter() - start
        with open_event_log(store, readonly=True) as log:
            appended = log.last_seq() - first
    finally:
        writer.terminate()
        writer.wait()
    print(f"live stream over {elapsed:.1f} s while the run appended ~{appended / elapsed:,.0f} events/s: "
          f"{got / elapsed:,.0f} bytes/s, {summaries / elapsed:.1f} summaries/s "
          f"(load average {os.getloadavg()[0]:.1f})")  # fmt: skip


def time_pages_quiet(client: httpx.Client, url: str) -> None:
    for path in PAGES:
        client.get(url + path).raise_for_status()


if __name__ == "__main__":
    main()
