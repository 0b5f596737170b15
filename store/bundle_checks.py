"""What a bundle must be before one byte of it is written: the checks `engine check` makes of a store,
made of the bundle, so an import that succeeds never leaves a store `check` calls damaged.

A bundle's trailing checksum proves only that the file is the one its writer made; whoever wrote it
may have made it wrong on purpose (a header naming another run than its events, with the checksum
recomputed). So every event must decode, carry the tag its row says and belong to the header's run,
the events must match the header's content digest, and every blob must match its key and every blob
an event names must be there.
"""

from __future__ import annotations

from engine.events.codec import decode
from engine.events.kinds import tag_of
from engine.store.blobs import blob_key
from engine.store.bundle_format import Bundle, events_digest
from engine.store.log.verify import blob_refs

SHOWN = 3  # problems named in the one line; the rest are counted


def bundle_problems(bundle: Bundle) -> list[str]:
    """Everything that would make the imported run read as damaged ([] when the bundle is sound)."""
    run_id = bundle.header.run_id
    problems: list[str] = []
    if not bundle.events:
        return ["it holds no events"]
    named: set[str] = set()
    for row in bundle.events:
        try:
            event = decode(row.data)
        except Exception as exc:  # whatever the bytes make the decoder raise: damage, named
            problems.append(f"event {row.seq} does not decode ({type(exc).__name__})")
            continue
        if tag_of(type(event)) != row.tag:
            problems.append(f"event {row.seq} is a {tag_of(type(event))}, its row says {row.tag!r:.40}")
        if event.run_id != run_id:
            theirs = f"{event.run_id!r:.40}"
            problems.append(f"event {row.seq} belongs to run {theirs}, the header names {run_id!r:.40}")
        named.update(blob_refs(event))
    digest = events_digest((row.tag, row.data) for row in bundle.events)
    if bundle.header.events_digest and bundle.header.events_digest != digest:
        problems.append("its events do not match the header's content digest")
    held = set()
    for blob in bundle.blobs:
        if blob_key(blob.data) != blob.key:
            problems.append(f"blob {blob.key[:16]!r} does not match its content hash")
        held.add(blob.key)
    problems.extend(f"blob {key[:16]} is missing (an event names it)" for key in sorted(named - held))
    return problems


def summary(problems: list[str]) -> str:
    more = len(problems) - SHOWN
    return "; ".join(problems[:SHOWN]) + (f"; and {more} more" if more > 0 else "")
