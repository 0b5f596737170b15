"""Errors the user can fix: each names the file, the field and what was expected."""

from __future__ import annotations


class InputError(Exception):
    """Bad input: exit code 2, one clear line, no traceback."""

    def __init__(self, file: str, field: str, expected: str) -> None:
        self.file = file
        self.field = field
        self.expected = expected
        where = f"{file}: {field}" if field else file
        super().__init__(f"{where}: {expected}")


class NotFoundError(Exception):
    """A run id or other name that the store does not hold (exit code 2)."""


def user_error(exc: BaseException) -> InputError | NotFoundError | None:
    """The user-fixable error inside `exc`, looking through Trio's exception groups."""
    if isinstance(exc, InputError | NotFoundError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = user_error(inner)
            if found is not None:
                return found
    return None
