"""Errors the user can fix: each names the file, the field and what was expected."""

from __future__ import annotations

from engine.events.errors import EngineError


class UserError(EngineError):
    """Anything the user can fix: the CLI prints one line and exits 2 (or the class's exit_code)."""


class InputError(UserError):
    """Bad input: exit code 2, one clear line, no traceback."""

    def __init__(self, file: str, field: str, expected: str) -> None:
        self.file = file
        self.field = field
        self.expected = expected
        where = f"{file}: {field}" if field else file
        super().__init__(f"{where}: {expected}")


class InputWarning(UserWarning):
    """A setting engine can run with but the user should hear about (`engine` prints `warning: ...`)."""


def warn_input(file: str, field: str, message: str) -> None:
    import warnings

    where = f"{file}: {field}" if field else file
    warnings.warn(InputWarning(f"{where}: {message}"), stacklevel=2)


class NotFoundError(UserError):
    """A run id or other name that the store does not hold (exit code 2)."""


class RunBusyError(UserError):
    """A run that a live process is executing: resuming it too would run its trials twice."""


def user_error(exc: BaseException) -> UserError | None:
    """The user-fixable error inside `exc`, looking through Trio's exception groups."""
    found = find_error(exc, UserError)
    return found if isinstance(found, UserError) else None


def find_error(exc: BaseException, kinds: type | tuple[type, ...]) -> BaseException | None:
    """The first exception of `kinds` inside `exc`, looking through exception groups."""
    if isinstance(exc, kinds):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = find_error(inner, kinds)
            if found is not None:
                return found
    return None

