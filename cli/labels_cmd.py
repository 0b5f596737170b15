"""`engine label`: a person's verdict on one trial's output, or many from a CSV / JSON-lines file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from engine.errors import InputError


def label_command(
    log: Any, run_id: str, trial: list[str], from_file: Path | None, note: str, score: float | None, by: str
) -> None:
    from engine.input.labels_file import read_label_rows
    from engine.runtime.label_record import record_labels

    if from_file is not None:
        if trial:
            raise InputError("engine label", "--from", "give a file or CASE VARIANT REPEAT VERDICT, not both")
        rows = read_label_rows(from_file)
    else:
        rows = [("engine label", _trial_row(trial, note, score, by))]
    count = record_labels(log, run_id, rows)
    typer.echo(f"{count} label{'s' if count != 1 else ''} recorded for run {run_id}")


def _trial_row(trial: list[str], note: str, score: float | None, by: str) -> Any:
    from engine.input.labels_file import LabelRow

    if len(trial) != 4:
        raise InputError("engine label", "TRIAL", "expected CASE VARIANT REPEAT pass|fail (or --from FILE)")
    case, variant, repeat, verdict = trial
    if not repeat.isdigit() or int(repeat) < 1:
        raise InputError("engine label", "REPEAT", f"expected a whole number from 1, got {repeat!r}")
    return LabelRow(
        case=case, variant=variant, repeat=int(repeat), verdict=verdict, note=note, score=score, by=by
    )
