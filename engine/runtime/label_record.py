"""People's labels recorded: one (`engine label`, the web view) or many from a file. Every row is
checked against the run's outputs first, then all are appended in one write (all or nothing);
appending a label is one small write, safe beside a live run."""

from __future__ import annotations

import getpass
import time
from typing import NamedTuple

import msgspec

from engine.errors import InputError
from engine.events import kinds as k
from engine.input.labels_file import LabelRow
from engine.store.contract import EventStore
from engine.store.projections.labels import TrialKey, load_outputs
from engine.store.writes import append_events


def default_by() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


NOTE_MAX = 4000  # characters: a note says why, in a few lines (a file's or the web's alike)
BY_MAX = 200


class RunOutputs(NamedTuple):
    """A run's outputs by trial, with its variants and cases gathered once: a row is checked in
    constant time (a scan of every output per row made 100,000 labels a quadratic wait)."""

    by_trial: dict[TrialKey, str]
    variants: frozenset[str]
    cases: frozenset[str]

    @classmethod
    def of(cls, outputs: dict[TrialKey, str]) -> RunOutputs:
        return cls(outputs, frozenset(key[0] for key in outputs), frozenset(key[1] for key in outputs))


def check_row(outputs: RunOutputs, row: LabelRow, where: str) -> k.LabelRecorded:
    """The label event for a row, or an InputError naming `where` and the field at fault."""
    for name, text, most in (("note", row.note, NOTE_MAX), ("by", row.by, BY_MAX)):
        if len(text) > most:
            raise InputError(where, name, f"expected at most {most:,} characters, got {len(text):,}")
    if row.verdict not in ("pass", "fail"):
        raise InputError(where, "verdict", f"expected pass or fail, got {row.verdict!r}")
    if row.score is not None and not 0.0 <= row.score <= 1.0:
        raise InputError(where, "score", f"expected a number from 0 to 1, got {row.score!r}")
    if row.variant not in outputs.variants:
        names = ", ".join(sorted(outputs.variants))
        raise InputError(where, "variant", f"expected one of {names}, got {row.variant!r}")
    if row.case not in outputs.cases:
        raise InputError(where, "case", f"no output of a case {row.case!r} in this run")
    output = outputs.by_trial.get((row.variant, row.case, row.repeat - 1))
    if output is None:
        raise InputError(where, "repeat", f"no output of repeat {row.repeat} (repeats count from 1)")
    return k.LabelRecorded(
        run_id="", ts=time.time(), variant=row.variant, case=row.case, repeat=row.repeat - 1,
        output_hash=output, verdict=row.verdict, score=row.score, note=row.note, by=row.by or default_by(),
    )  # type: ignore[arg-type]  # fmt: skip


def record_labels(log: EventStore, run_id: str, rows: list[tuple[str, LabelRow]]) -> int:
    """Check every (where, row) first, then append them all in one write: all or nothing."""
    outputs = RunOutputs.of(load_outputs(log, run_id))
    events = [msgspec.structs.replace(check_row(outputs, row, where), run_id=run_id) for where, row in rows]
    append_events(log, events)
    return len(events)
