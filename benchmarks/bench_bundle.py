"""Run bundles: size per trial and export / import / replay time, at 10k and 100k trials.

A run is made by the engine itself (python target, outputs that differ per case so blobs are real),
then exported to a bundle file, imported into a fresh store, and replayed there.

    python benchmarks/bench_bundle.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

import trio

from engine.api import open_engine, spec_from_dict
from engine.input.bundle_files import load_bundle
from engine.runtime.bundle_import import import_bundle
from engine.store.open import open_event_log
from engine.views.export import bundle as bundle_export
from engine.views.queries import replay_json


async def instant(request: object) -> str:
    seed = request.seed  # type: ignore[attr-defined]
    case = request.case.id  # type: ignore[attr-defined]
    return f"answer {seed % 7} for {case}: " + "yes" * (1 + seed % 3)


def make_run(store: Path, trials: int, cases: int = 500) -> None:
    spec = spec_from_dict({
        "name": "bundle-bench", "target": {"kind": "python", "callable": "instant"},
        "variants": [{"name": "a"}, {"name": "b", "params": {"t": 1}}],
        "cases": [{"id": f"c{i}", "prompt": f"question {i}", "expected": "yes"} for i in range(cases)],
        "repeat": {"count": trials // (2 * cases)}, "execution": {"concurrency": 64},
    })  # fmt: skip

    async def main() -> None:
        async with open_engine(store, callables={"instant": instant}) as eng:
            await eng.run(spec, run_id="bench")

    trio.run(main)


def measure(trials: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_run(root / "src", trials)
        file = root / "bench.bundle"
        with open_event_log(root / "src") as log:
            start = time.perf_counter()
            events = bundle_export.write(log, "bench", file)
            exported = time.perf_counter() - start
        start = time.perf_counter()
        bundle = load_bundle(file)
        with open_event_log(root / "dest") as log:
            import_bundle(log, bundle, str(file))
        imported = time.perf_counter() - start
        start = time.perf_counter()
        with open_event_log(root / "dest") as log:
            replay_json(log, "bench")
        replayed = time.perf_counter() - start
        size = os.path.getsize(file)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{trials:>8} {events:>8} {size / 2**20:>8.1f} {size / trials:>9.0f} {exported:>7.2f} "
        f"{imported:>7.2f} {replayed:>7.2f} {peak:>9.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10k trials only")
    parser.add_argument("--trials", type=int, nargs="+", help="run sizes (default 10k and 100k)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(
        f"{'trials':>8} {'events':>8} {'MiB':>8} {'B/trial':>9} {'export':>7} {'import':>7} "
        f"{'replay':>7} {'peak MiB':>9}"
    )
    for trials in args.trials or ([10_000] if args.quick else [10_000, 100_000]):
        measure(trials)
    print(
        "(seconds; export = read the run + its blobs and write the file; import = verify + one transaction)"
    )


if __name__ == "__main__":
    main()
