"""Labels from a file for `engine label RUN --from FILE`: CSV with a header row, or JSON lines, each
row {case, variant, repeat, verdict, note?, score?, by?}. A bad row is named by file, row and field.

Parsed with bounds, so no file makes it raise anything but an InputError: a JSON line is decoded as
one object of plain values (a nested array or object is refused where it starts, never descended
into), a row is at most ROW_MAX bytes and a file at most FILE_MAX; notes are capped where every label
is checked (runtime/label_record.py)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import msgspec

from engine.errors import InputError

FIELDS = ("case", "variant", "repeat", "verdict", "note", "score", "by")
ROW_MAX = 64 * 1024
FILE_MAX = 256 * 1024 * 1024
_decode_row = msgspec.json.Decoder(dict[str, str | int | float | bool | None]).decode
REQUIRED = ("case", "variant", "repeat", "verdict")


class LabelRow(msgspec.Struct, kw_only=True):
    """One label as a person gives it: the trial (repeat from 1) and the verdict."""

    case: str
    variant: str
    repeat: int
    verdict: str
    note: str = ""
    score: float | None = None
    by: str = ""


def read_label_rows(path: Path) -> list[tuple[str, LabelRow]]:
    """(where, row) for each row: where is "FILE: row N" (data rows count from 1)."""
    try:
        if path.stat().st_size > FILE_MAX:
            raise InputError(str(path), "", f"expected a file of at most {FILE_MAX >> 20} MiB")
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's CSV export starts with a BOM
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(path), "", f"cannot read it ({exc})") from None
    raws = _csv_rows(path, text) if path.suffix.lower() == ".csv" else _jsonl_rows(path, text)
    return [(f"{path}: row {n}", _row(f"{path}: row {n}", raw)) for n, raw in enumerate(raws, 1)]


def _csv_rows(path: Path, text: str) -> list[dict[str, object]]:
    reader = csv.DictReader(io.StringIO(text))
    rows: list[dict[str, object]] = []
    try:
        for raw in reader:
            if None in raw:  # more cells than the header names
                raise InputError(f"{path}: row {len(rows) + 1}", "", "expected no more cells than the header")
            rows.append({key: value for key, value in raw.items() if key and value not in ("", None)})
    except csv.Error as exc:  # a cell over csv's own limit (128 kB), a NUL...
        raise InputError(f"{path}: row {len(rows) + 1}", "", f"expected a CSV row ({exc})") from None
    return rows


def _jsonl_rows(path: Path, text: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for n, line in enumerate((line for line in text.splitlines() if line.strip()), 1):
        if len(line) > ROW_MAX:
            raise InputError(f"{path}: row {n}", "", f"expected a row of at most {ROW_MAX // 1024} kB")
        try:
            rows.append(dict(_decode_row(line)))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            expected = f"expected a JSON object of plain values: text, numbers ({str(exc)[:120]})"
            raise InputError(f"{path}: row {n}", "", expected) from None
    return rows


def _row(where: str, raw: dict[str, object]) -> LabelRow:
    for name in REQUIRED:
        if name not in raw:
            raise InputError(where, name, "missing (a row needs case, variant, repeat and verdict)")
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise InputError(where, unknown[0], f"unknown column (expected {', '.join(FIELDS)})")
    values = dict(raw)
    values["repeat"] = _number(where, "repeat", raw["repeat"], int)
    if "score" in raw:
        values["score"] = _number(where, "score", raw["score"], float)
    for name in ("case", "variant", "verdict", "note", "by"):
        if name in values:
            values[name] = str(values[name])
    repeat = values["repeat"]
    if not isinstance(repeat, int) or repeat < 1:
        raise InputError(where, "repeat", f"expected a whole number from 1, got {raw['repeat']!r}")
    return msgspec.convert(values, LabelRow)


def _number(where: str, name: str, value: object, kind: type) -> object:
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise InputError(where, name, f"expected a number, got {value!r}") from None
    if kind is int and isinstance(value, float) and value != number:
        raise InputError(where, name, f"expected a whole number, got {value!r}")
    return number
