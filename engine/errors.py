"""Errors the user can fix: each names the file, the field and what was expected."""

from __future__ import annotations

from engine.store.contract import StoreDamaged


class UserError(Exception):
    """Anything the user can fix: the CLI prints one line and exits 2."""


class InputError(UserError):
    """Bad input: exit code 2, one clear line, no traceback."""

    def __init__(self, file: str, field: str, expected: str) -> None:
        self.file = file
        self.field = field
        self.expected = expected
        where = f"{file}: {field}" if field else file
        super().__init__(f"{where}: {expected}")


class NotFoundError(UserError):
    """A run id or other name that the store does not hold (exit code 2)."""


class RunBusyError(UserError):
    """A run that a live process is executing: resuming it too would run its trials twice."""


class DamageError(UserError):
    """The store's bytes fail their own checks (exit 2): the message says what and suggests `engine check`."""


def user_error(exc: BaseException) -> UserError | None:
    """The user-fixable error inside `exc`, looking through Trio's exception groups."""
    if isinstance(exc, UserError):
        return exc
    if isinstance(exc, StoreDamaged):
        return DamageError(str(exc))
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = user_error(inner)
            if found is not None:
                return found
    return None
