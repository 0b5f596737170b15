"""One error root: every error engine raises on purpose derives from EngineError and carries the exit
code the CLI gives it, so the CLI reads `error.exit_code` instead of mapping classes by hand."""

from __future__ import annotations

import ast
import importlib

import pytest

from engine.actors.targets.target_protocol import TargetError
from engine.cli.main import _exit_and_line
from engine.errors import InputError, NotFoundError, RunBusyError, UserError
from engine.events.codec import EventDecodeError
from engine.events.errors import EngineError
from engine.store.bundle_format import BundleError
from engine.store.errors import (
    StoreDamagedError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
    StoreWriteError,
)
from engine.store.log.records import RecordDamaged
from tests.test_layering import LAYERS, module_name, package_files

# private control flow that never leaves its module (the log's "no room" retry signal)
PRIVATE = {"engine.store.log.writes._NoRoom"}


def defined_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in engine's folders, found by reading the source."""
    found = []
    for package in LAYERS:
        for path in package_files(package):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
            if not classes:
                continue
            module = importlib.import_module(module_name(path))
            for name in classes:
                value = getattr(module, name)
                if issubclass(value, BaseException) and not issubclass(value, Warning):
                    if f"{module.__name__}.{name}" not in PRIVATE:
                        found.append(value)
    return found


def test_every_error_engine_defines_derives_from_engine_error() -> None:
    errors = defined_exceptions()
    assert {UserError, StoreError, TargetError, BundleError} <= set(errors)
    assert [e.__qualname__ for e in errors if not issubclass(e, EngineError)] == []


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (UserError("bad"), 2),
        (InputError("exp.toml", "cases", "expected a list"), 2),
        (NotFoundError("no run"), 2),
        (RunBusyError("busy"), 2),
        (StoreError("newer format"), 2),
        (StoreDamagedError("/s", "zeroed page"), 2),
        (StoreReadOnlyError("read-only"), 2),
        (BundleError("not a bundle"), 2),
        (EventDecodeError("unknown event type"), 2),
        (RecordDamaged("checksum mismatch"), 2),
        (StoreWriteError("r1", 3, "EIO"), 1),
        (StoreFullError("r1", 3, "ENOSPC"), 1),
        (TargetError("infra", "connect refused", agent_exit_code=7), 1),
    ],
)
def test_each_error_carries_its_exit_code_and_the_cli_reads_it(error: EngineError, code: int) -> None:
    assert error.exit_code == code
    # inside Trio's exception groups too, as a nursery raises them
    assert _exit_and_line(ExceptionGroup("run", [ExceptionGroup("pool", [error])])) == (code, str(error))


def test_a_targets_agent_exit_code_is_not_its_cli_exit_code() -> None:
    error = TargetError("model", "agent exited with 3", agent_exit_code=3)
    assert (error.agent_exit_code, error.exit_code) == (3, 1)


def test_an_io_failure_exits_1_and_anything_else_is_a_bug_with_its_traceback() -> None:
    assert _exit_and_line(ExceptionGroup("run", [OSError(28, "No space left")])) == (
        1,
        "I/O error: [Errno 28] No space left",
    )
    assert _exit_and_line(ValueError("a bug")) is None
