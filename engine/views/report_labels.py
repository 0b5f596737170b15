"""A report with the judges measured against people's labels, when the run has any (the labels
themselves are recorded by engine.runtime.label_record)."""

from __future__ import annotations

import msgspec

from engine.events.codec import to_json
from engine.events.report import RunReport
from engine.store.contract import EventStore
from engine.store.projections.label_agreement import label_agreement
from engine.store.projections.labels import has_labels, load_labelled


def with_labels(log: EventStore, run_id: str, data: bytes, labelled: bool | None = None) -> bytes:
    """The report JSON with the judges measured against people's labels, when the run has labels
    (the report's other figures never change: labels do not grade). `labelled`: already known."""
    if not (has_labels(log, run_id) if labelled is None else labelled):
        return data
    report = msgspec.json.decode(data, type=RunReport)
    agreement = label_agreement(load_labelled(log, run_id))
    return to_json(msgspec.structs.replace(report, label_agreement=agreement))
