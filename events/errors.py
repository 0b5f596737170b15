"""The root of every error engine raises on purpose, and the exit code each kind carries.

It sits in the vocabulary so that every layer (the store, the actors, the engine, the CLI) can derive
its errors from it. The CLI prints any of them as one `error: ...` line, no traceback, and exits with
the class's `exit_code`: 2 for what the user can fix (bad input, a store that cannot be used as
asked), 1 for a failure of the machine or of a model (a write the disk refused, an unreachable judge).
"""

from __future__ import annotations

from typing import ClassVar


class EngineError(Exception):
    """An error engine raises on purpose: its message is the whole story for the person reading it."""

    exit_code: ClassVar[int] = 2
