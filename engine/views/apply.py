"""auto_apply: write accepted values into a config file (off by default: a double opt-in).

TOML files are edited in place, line by line, under a `[params]` table, so the
file's comments and layout survive; JSON files get a top-level "params" object.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_TABLE = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")


def apply_params(path: Path, values: dict[str, Any], table: str = "params") -> None:
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text()) if path.exists() else {}
        data.setdefault(table, {}).update(values)
        path.write_text(json.dumps(data, indent=2) + "\n")
        return
    lines = path.read_text().splitlines() if path.exists() else []
    for name, value in values.items():
        lines = _set_toml_value(lines, table, name, value)
    path.write_text("\n".join(lines) + "\n")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value))  # a JSON string literal is a valid TOML basic string


def _set_toml_value(lines: list[str], table: str, name: str, value: Any) -> list[str]:
    start = next(
        (i for i, line in enumerate(lines) if (m := _TABLE.match(line)) and m.group(1).strip() == table), None
    )
    entry = f"{name} = {_toml_value(value)}"
    if start is None:
        return [*lines, "", f"[{table}]", entry]
    end = next((i for i in range(start + 1, len(lines)) if _TABLE.match(lines[i])), len(lines))
    key = re.compile(rf"^\s*{re.escape(name)}\s*=")
    for i in range(start + 1, end):
        if key.match(lines[i]):
            return [*lines[:i], entry, *lines[i + 1 :]]
    return [*lines[: start + 1], entry, *lines[start + 1 :]]
