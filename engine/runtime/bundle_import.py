"""`engine import FILE...`: add a bundled run to a store, in one transaction.

The same bundle twice adds nothing (the run's content digest matches what the store holds); a
different run under an id the store already has is refused unless renamed (`--as ID`). Renaming
rewrites the run id inside every event and every stored report, so the renamed run reads, replays and
compares like one that was run under that id. Nothing is written unless the whole bundle passes the
checks `engine check` makes of a store (store/bundle_checks.py) and its run id the `--run-id` rule.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Literal

import msgspec

from engine.errors import UserError
from engine.events import kinds as k
from engine.events.codec import decode, encode, to_json
from engine.events.report import RunReport
from engine.input.flags import check_run_id
from engine.store.blobs import pack_blob
from engine.store.bundle_checks import bundle_problems, summary
from engine.store.bundle_format import Bundle, events_digest
from engine.store.contract import EventStore, Row

Outcome = Literal["imported", "already present"]


def import_bundle(
    log: EventStore, bundle: Bundle, name: str, as_id: str | None = None
) -> tuple[str, Outcome]:
    """Add the bundle's run to the store; (the run id it has there, what happened)."""
    source_id = bundle.header.run_id
    run_id = as_id or source_id
    if as_id is not None:
        check_run_id(as_id, "engine import", "--as")  # the rule every new run id follows
    else:
        _check_bundled_id(source_id, name)
    with _collector_paused():
        return _import_checked(log, bundle, name, source_id, run_id)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cycle collector off while a bundle is checked and appended: the whole bundle and what the
    keepers fold from it stay alive through the one transaction, and every full collection walked all
    of it again, so import time per trial grew with the bundle (benchmarks/README.md, "Import in
    bounded pieces"). An import makes no cycles worth collecting; the collector is back on after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _import_checked(
    log: EventStore, bundle: Bundle, name: str, source_id: str, run_id: str
) -> tuple[str, Outcome]:
    if problems := bundle_problems(bundle):
        raise UserError(f"{name}: refused, nothing imported: {summary(problems)}")
    rows = [(r.tag, r.data) for r in bundle.events]
    blobs = {b.key: b.data for b in bundle.blobs}
    if run_id != source_id:
        rows, blobs = _renamed(rows, blobs, run_id)
    if log.run_index(run_id, limit=1):
        held = [
            (tag, data)
            for (_, tag), (_, data) in zip(log.run_index(run_id), log.read_run(run_id), strict=True)
        ]
        if events_digest(held) == events_digest(rows):
            return run_id, "already present"
        raise UserError(
            f"{name}: the store already holds a different run {run_id}; "
            f"import it under another id with --as NEW_ID"
        )
    batch: list[Row] = [(run_id, tag, data) for tag, data in rows]
    log.append(batch, [pack_blob(data) for data in blobs.values()])
    return run_id, "imported"


def _check_bundled_id(run_id: str, name: str) -> None:
    """The bundle's own id follows the rule `--run-id` and `--as` do: an id from a crafted file must
    not be a path, a line break, an escape sequence or markup wherever runs are listed."""
    try:
        check_run_id(run_id, name, "run_id")
    except UserError as exc:
        raise UserError(f"{exc}; import it under another id with --as NEW_ID") from None


def _renamed(
    rows: list[tuple[str, bytes]], blobs: dict[str, bytes], run_id: str
) -> tuple[list[tuple[str, bytes]], dict[str, bytes]]:
    renamed: list[tuple[str, bytes]] = []
    for tag, data in rows:
        event = msgspec.structs.replace(decode(data), run_id=run_id)
        if isinstance(event, k.ReportWritten) and event.report_hash in blobs:
            key, report = _renamed_report(blobs[event.report_hash], run_id)
            blobs[key] = report
            event = msgspec.structs.replace(event, report_hash=key)
        renamed.append((tag, encode(event)))
    return renamed, blobs


def _renamed_report(data: bytes, run_id: str) -> tuple[str, bytes]:
    report = msgspec.structs.replace(msgspec.json.decode(data, type=RunReport), run_id=run_id)
    text = to_json(report)
    key, _ = pack_blob(text)
    return key, text
