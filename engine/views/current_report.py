"""A run's report as of now: the stored one when nothing since has changed it, else built from the
kept run state.

A run writes its report (report.written + blob) when it ends and when a regrade or label round
ends. Serving those bytes costs a blob read; building the report of a 100,000-trial run costs its
statistics over every case. The stored report is current exactly when no event the report's fold
reads (the run state's tags) follows its report.written in the run's log: a resumed run's new trials,
a regrade started, a cancel, all make it stale until the next report is written. Labels are not in
that fold: they are merged into the report when it is read (report_labels.with_labels), stored or
built.
"""

from __future__ import annotations

import msgspec

from engine.events import kinds as k
from engine.store.blobs import read_blob
from engine.store.contract import EventStore
from engine.store.kept.read import RUN_HEADS, load
from engine.store.kept.state_source import recorded_source
from engine.store.log.guard import decode_of_run
from engine.store.projections.kept_head import STATE, kept_state_head

# the run's index is read backwards from its last event in windows of this many sequence numbers,
# doubling, until the report.written is in one: it is the run's last event or close to it
FIRST_WINDOW = 64
REPORT_TAG = "report.written"


class _ReportHead(msgspec.Struct):
    status: str = ""
    grading: int = 0


def _current_stored(log: EventStore, run_id: str, grading: int | None) -> tuple[str, bytes] | None:
    heads = load(log, RUN_HEADS, run_id)
    found = heads.report_hash(grading)
    stored = read_blob(log, found) if found is not None else None
    if found is None or stored is None:
        return None
    if found != heads.report_hash():
        return found, stored  # an earlier round's, and a later round wrote its report: it is over
    return (found, stored) if _current(log, run_id, found, stored, grading) else None


def _current(log: EventStore, run_id: str, found: str, stored: bytes, grading: int | None) -> bool:
    """Whether the run's latest stored report is its report now.

    From the snapshots when they settle it (a few fields of the kept state, no cell decoded): the
    state was kept at the run's last event, it last wrote this report, and it has the report's
    status and grading round. Every engine activity after a report changes one of those before it
    can change the report (a resume sets "running" until its own report, a regrade the round, a
    cancel "cancelled"). Otherwise (events after the kept state: a label, a mark, a live run) the
    run's index after the report says (its first read in a process walks the index: seconds)."""
    known = getattr(log, "last_of", None)
    last = known(run_id) if known is not None else None
    kept = kept_state_head(log, run_id)
    if kept is not None and last is not None and kept[0] == last:
        head = kept[1]
        report = msgspec.json.decode(stored, type=_ReportHead)
        if grading is not None and head.grading > grading == report.grading:
            return True  # that round is over: a later one is grading now
        return head.report_hash == found and (head.status, head.grading) == (report.status, report.grading)
    return _unchanged_since(log, run_id, found, grading is not None)


def _unchanged_since(log: EventStore, run_id: str, report_hash: str, one_round: bool) -> bool:
    """No RUN_STATE event follows the run's last report.written (up to the next regrade's start,
    when `one_round`: it grades a new round, the earlier one stays as it was), and that one wrote
    `report_hash`."""
    known = getattr(log, "last_of", None)
    last = known(run_id) if known is not None else None
    if last is None:
        last = log.last_seq()
    window, state_tags = FIRST_WINDOW, _state_tags(log)
    while True:
        start = max(1, last - window + 1)
        index = log.run_index(run_id, start)
        written = [seq for seq, tag in index if tag == REPORT_TAG]
        if written:
            for seq, tag in index:
                if seq <= written[-1] or tag == REPORT_TAG:
                    continue
                if one_round and tag == "regrade.started":
                    break
                if tag in state_tags:
                    return False
            return _wrote(log, run_id, written[-1], report_hash)
        if start == 1:
            return False  # the heads know a report the index does not: build it, never guess
        window *= 2


def _state_tags(log: EventStore) -> frozenset[str]:
    """The events that change the run state: as the store's writer recorded them (no import of the
    state's fold), else the fold's own (a store no writer of today recorded them in)."""
    source = recorded_source(log, STATE)
    if source is not None:
        return source.tags
    from engine.store.projections.run_state import RUN_STATE

    return RUN_STATE.tags


def _wrote(log: EventStore, run_id: str, seq: int, report_hash: str) -> bool:
    for found, data in log.read(seq, seq):
        event = decode_of_run(log, found, data, run_id)
        return isinstance(event, k.ReportWritten) and event.report_hash == report_hash
    return False


def current_report(log: EventStore, run_id: str, grading: int | None = None) -> bytes:
    """The run's report bytes without labels: stored when current (see the module's doc), else built
    from the kept state (of an earlier round without a stored report: folded from the log)."""
    found = _current_stored(log, run_id, grading)
    if found is not None:
        return found[1]
    # building costs the state's fold and the statistics: their modules are imported only then
    from engine.events.codec import to_json
    from engine.runtime.run_status import run_state
    from engine.store.projections.report_builder import build_report

    return to_json(build_report(run_state(log, run_id, grading)))


def current_report_json(log: EventStore, run_id: str, grading: int | None = None) -> bytes:
    """`engine report --json`: current_report with people's labels when the run has any."""
    from engine.views.report_labels import with_labels

    labelled = load(log, RUN_HEADS, run_id).labelled
    return with_labels(log, run_id, current_report(log, run_id, grading), labelled)
