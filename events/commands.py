"""The one way engine spells a command for a person to run: `engine` and its arguments, each quoted
for a POSIX shell, so what is printed (a rerun, a `next:` hint, a way out of an error) runs as printed.

Every command the CLI, the reports and the exports show is built here; a test collects them from real
runs and runs each one.
"""

from __future__ import annotations

import shlex


def engine_command(*args: str) -> str:
    """`engine ARG...`, each argument shell-quoted (a path with a space, a glob, `temperature=0.2`)."""
    return " ".join(shlex.quote(part) for part in ("engine", *args))
