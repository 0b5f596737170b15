"""AgentV's `scripts:` entries: a bare name (`build`, `test:unit`) is the project's package script,
run as `bun run NAME` or `npm run NAME` by the lock file the project keeps (bun.lockb / bun.lock, else
package-lock.json; npm when there is none). A name the package.json does not list is a config error
before the first trial, never a graded fail of every trial. Anything else is a shell command."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from engine.errors import InputError

BARE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_:.\-]*")
BUN_LOCKS = ("bun.lockb", "bun.lock")


def package_script(command: str, folders: list[Path], file: str, field: str) -> str:
    """`command` itself, or for a bare name the package manager's command that runs that script."""
    if not BARE_NAME.fullmatch(command):
        return command
    package = next((f for f in folders if (f / "package.json").is_file()), None)
    if package is None:
        where = ", ".join(str(f) for f in folders)
        raise InputError(file, field, f"expected a package script {command!r}: no package.json in {where}")
    scripts = _scripts(package / "package.json", file, field)
    if command not in scripts:
        have = ", ".join(sorted(scripts)) or "none"
        raise InputError(file, field, f"expected a script {command!r} in {package / 'package.json'} "
                                      f"(its scripts: {have})")  # fmt: skip
    runner = "bun" if any((package / lock).is_file() for lock in BUN_LOCKS) else "npm"
    return f"{runner} run {shlex.quote(command)}"


def _scripts(path: Path, file: str, field: str) -> dict[str, object]:
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(file, field, f"expected a readable package.json at {path} ({exc})") from None
    scripts = data.get("scripts", {}) if isinstance(data, dict) else {}
    return scripts if isinstance(scripts, dict) else {}
