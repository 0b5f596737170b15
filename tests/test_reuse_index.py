"""The reuse index (fingerprint -> outputs) kept by the store's writer: a writer killed with SIGKILL at
any batch leaves an index that says exactly what folding the log again says, and `engine rebuild`
writes the same records."""

from __future__ import annotations

from pathlib import Path

from engine.store.kept import reuse_index
from engine.store.kept.snapshots import rebuild
from engine.store.open import open_event_log
from tests.killed_writers import killed_writers

WRITER = """
import sys
from engine.events import kinds as k
from engine.events.codec import encode
from engine.events.kinds import TAG_BY_TYPE
from engine.store.blobs import pack_blob
from engine.store.open import open_event_log
key, blob = pack_blob(b"an output")
every = int(sys.argv[2])
with open_event_log(sys.argv[1], map_size=1 << 20) as log:
    n = log.last_seq()
    while True:
        events = []
        for _ in range(every):
            ident = {"run_id": f"r{n % 3}", "variant": "v", "case": f"c{n}", "repeat": 0, "ts": float(n)}
            fp = f"fp{n % 10}"
            if n // 2 % 4 == 3:
                source = dict(source_run="r0", source_variant="v", source_case="c", source_ts=0.5)
                source["fingerprint"] = fp
                events.append(k.TrialReused(**ident, output_hash=key, latency_ms=1.0, **source))
            else:
                events.append(k.TrialCompleted(**ident, output_hash=key, latency_ms=1.0, fingerprint=fp))
            events.append(k.TrialFailed(**ident, error_kind="timeout", message="never indexed"))
            n += 2
        log.append([(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in events], blobs=[(key, blob)])
        print(n, flush=True)
"""


def test_a_killed_writer_leaves_the_index_the_log_folds_to(tmp_path: Path) -> None:
    for context in killed_writers(tmp_path, WRITER, max_every=5, max_batches=60):
        with open_event_log(tmp_path) as log:
            expected = dict(reuse_index.rebuild_rows(log))
            for i in range(10):
                key = reuse_index.key_of(f"fp{i}")
                assert log.get_snapshot(key) == expected.get(key), context
    with open_event_log(tmp_path) as log:
        kept = {key: log.get_snapshot(key) for key in dict(reuse_index.rebuild_rows(log))}
        assert kept and all(kept.values())
        rebuild(log)
        assert {key: log.get_snapshot(key) for key in kept} == kept
        reused = [s for i in range(10) for s in reuse_index.sources(log, f"fp{i}") if s.made_ts == 0.5]
        assert reused, "a reused output is indexed with its source's making time"
