"""Command-line values pass the checks the experiment file's own fields pass, before the first event:
a value the log could not hold (or could not read back) is one clear line and exit code 2."""

from __future__ import annotations

import re

import msgspec

from engine.errors import InputError
from engine.events.kind_convert import convert_kinded
from engine.events.spec import ExperimentSpec
from engine.input.parsing import split_validation_error

SEED_MAX = 2**63 - 1  # the experiment file's `seed` range (events.spec_base.Seed)
EXPERIMENTS_MAX = 100_000  # tune.max_experiments
RUN_ID_MAX = 128
# run ids are store keys, file names (exports) and URL path parts: plain characters only
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]*")


def check_seed(seed: int, file: str, field: str = "--seed") -> None:
    if not 0 <= seed <= SEED_MAX:
        raise InputError(file, field, f"expected an integer from 0 to {SEED_MAX} (2^63 - 1), got {seed}")


def check_max_experiments(count: int, file: str) -> None:
    if not 1 <= count <= EXPERIMENTS_MAX:
        raise InputError(
            file, "--max-experiments", f"expected an integer from 1 to {EXPERIMENTS_MAX}, got {count}"
        )


def check_run_id(run_id: str, where: str = "engine run", field: str = "--run-id") -> None:
    """A new run's id: 1 to 128 letters, digits and . _ : @ + - (starting with a letter or digit)."""
    if len(run_id) > RUN_ID_MAX:
        raise InputError(where, field, f"expected at most {RUN_ID_MAX} characters, got {len(run_id)}")
    if not _RUN_ID.fullmatch(run_id):
        raise InputError(
            where,
            field,
            f"expected letters, digits and . _ : @ + - (starting with a letter or digit), got {run_id!r}",
        )


def check_definition(spec: ExperimentSpec, file: str) -> None:
    """The definition reads back as it is written: a spec built in code (the embedding API, a
    narrowing) skipped the checks a file's fields pass, and a log holding a definition that no longer
    decodes would read as damaged from then on."""
    try:
        convert_kinded(msgspec.msgpack.decode(msgspec.msgpack.encode(spec)), ExperimentSpec)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        field, expected = split_validation_error(str(exc))
        raise InputError(file, field, expected) from None
    except OverflowError as exc:
        raise InputError(file, "definition", f"a number does not fit: {exc}") from None
