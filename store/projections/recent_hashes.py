"""The output hashes a report state keeps, one object per distinct hash among the recent ones."""

from __future__ import annotations

# the output hashes cells keep, one object per distinct hash among the recent ones: runs whose outputs
# repeat (a label, a yes or no, temperature 0) keep one string per answer, not one per cell (64
# characters, 113 bytes: 22 MiB at 200,000 cells; benchmarks/README.md, "One report state per live
# run"). Bounded: cleared when full. Shared by the folds of every state (a dict's get and setdefault
# are atomic in CPython: two threads folding at once may at worst keep two equal strings).
RECENT_HASHES: dict[str, str] = {}
RECENT_KEPT = 4096


def shared_hash(output_hash: str) -> str:
    """`output_hash`, as the one object kept for that hash while it is recent."""
    found = RECENT_HASHES.get(output_hash)
    if found is None:
        if len(RECENT_HASHES) >= RECENT_KEPT:
            RECENT_HASHES.clear()
        found = RECENT_HASHES.setdefault(output_hash, output_hash)
    return found
