"""Write values into a config file: `promote`, and a tuning session's auto_apply (a double opt-in).

TOML files are edited with tomlkit, which keeps the file's comments (inline ones too), order and
layout; JSON files get a top-level object per table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def apply_params(path: Path, values: dict[str, Any], table: str = "params") -> None:
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text()) if path.exists() else {}
        data.setdefault(table, {}).update(values)
        path.write_text(json.dumps(data, indent=2) + "\n")
        return
    import tomlkit

    doc = tomlkit.parse(path.read_text()) if path.exists() else tomlkit.document()
    if table not in doc:
        doc[table] = tomlkit.table()
    for name, value in values.items():
        doc[table][name] = value  # type: ignore[index]
    text = tomlkit.dumps(doc)
    path.write_text(text if text.endswith("\n") else text + "\n")
