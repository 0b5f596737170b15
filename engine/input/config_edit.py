"""Write values into a config file: `promote`, and a tuning session's auto_apply (a double opt-in).

TOML files are edited with tomlkit, which keeps the file's comments (inline ones too), order and
layout; JSON files get a top-level object per table. A Markdown file (an agents-fleet skill, with
or without front matter) takes a variant's text as its body. A file that cannot be read, parsed or
written is refused naming it (exit 2, one line), never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.errors import InputError

MARKDOWN = (".md", ".markdown")
KINDS = "expected a .toml or .json config file (or a Markdown skill file for a variant's text)"


def apply_params(path: Path, values: dict[str, Any], table: str = "params") -> None:
    suffix = path.suffix.lower()
    if suffix in MARKDOWN or suffix in (".yaml", ".yml"):
        raise InputError(str(path), "", f"cannot hold [{table}] values: {KINDS}")
    text = _read(path)
    if suffix == ".json":
        _write(path, _json_with(path, text, values, table))
        return
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text) if text else tomlkit.document()
    except TOMLKitError as exc:
        raise InputError(str(path), "", f"{KINDS}; it does not parse as TOML ({exc})") from None
    if table not in doc:
        doc[table] = tomlkit.table()
    elif not isinstance(doc[table], dict):
        raise InputError(str(path), table, "expected a table to write the values into")
    for name, value in values.items():
        doc[table][name] = value  # type: ignore[index]
    out = tomlkit.dumps(doc)
    _write(path, out if out.endswith("\n") else out + "\n")


def write_body(path: Path, body: str) -> None:
    """A Markdown file's body replaced by `body`; its front matter (between `---` lines) is kept. Front
    matter that does not parse as a YAML table is refused: replacing what cannot be read as front
    matter would drop the skill's name and tags."""
    text = _read(path)
    front = ""
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---" and not body.startswith("---\n"):  # a body with its own keeps that
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is None:
            raise InputError(str(path), "", "expected front matter closed by a `---` line")
        _check_front_matter(path, "".join(lines[1:end]))
        front = "".join(lines[: end + 1])
        front += "" if front.endswith("\n") else "\n"
    _write(path, front + (body if body.endswith("\n") else body + "\n"))


def _check_front_matter(path: Path, text: str) -> None:
    from engine.input.parsing import parse_yaml

    try:
        data = parse_yaml(text, str(path))
    except InputError as exc:
        raise InputError(str(path), "", f"expected front matter that parses: {exc.expected}") from None
    if data is not None and not isinstance(data, dict):
        raise InputError(str(path), "", "expected front matter that is a YAML table of keys")


def _json_with(path: Path, text: str, values: dict[str, Any], table: str) -> str:
    try:
        data = json.loads(text) if text else {}
    except json.JSONDecodeError as exc:
        raise InputError(str(path), "", f"{KINDS}; it does not parse as JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.setdefault(table, {}), dict):
        raise InputError(str(path), table, "expected a JSON object with an object to write the values into")
    data[table].update(values)
    return json.dumps(data, indent=2) + "\n"


def _read(path: Path) -> str:
    try:
        return path.read_text() if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(path), "", f"cannot read it ({exc})") from None


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError as exc:
        raise InputError(str(path), "", f"cannot write it ({exc.strerror or exc})") from None
