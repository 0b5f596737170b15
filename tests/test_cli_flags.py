"""Command-line values pass the checks the experiment file's fields pass, before the first event:
one line naming the flag, exit code 2, no traceback, nothing logged (and the store reads fine after)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from engine.api import open_engine, spec_from_dict
from engine.errors import InputError
from engine.store.open import open_event_log
from tests.conftest import run_engine

EXPERIMENT = """name = "flags"
[target]
kind = "command"
command = ["echo", "{prompt}"]
[[cases]]
id = "a"
prompt = "hello"
expected = "hello"
"""

BAD = [
    (["--seed=-1"], "--seed: expected an integer from 0 to 9223372036854775807"),
    (["--seed", str(2**63)], "--seed: expected an integer from 0 to"),
    (["--seed", str(2**64)], "--seed: expected an integer from 0 to"),
    (["--run-id", "x" * 600], "--run-id: expected at most 128 characters, got 600"),
    (["--run-id", "a/b"], "--run-id: expected letters, digits"),
    (["--run-id", "-a"], "--run-id: expected letters, digits"),
    (["--run-id", "tab\there"], "--run-id: expected letters, digits"),
]


@pytest.mark.parametrize(("flags", "message"), BAD)
def test_a_bad_flag_is_one_line_and_exit_2_before_any_event(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    (tmp_path / "exp.toml").write_text(EXPERIMENT)
    done = run_engine("run", "exp.toml", *flags, "--store", "st", "--quiet", cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2 and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    if (tmp_path / "st" / "data.mdb").exists():
        with open_event_log(tmp_path / "st") as log:
            assert log.last_seq() == 0 and not log.check().problems
    listed = run_engine("list", "--store", "st", cwd=tmp_path)
    assert b"damaged" not in listed.stderr


def test_the_largest_seed_and_a_plain_run_id_run(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(EXPERIMENT)
    flags = ("--seed", str(2**63 - 1), "--run-id", "nightly-2.1_a:b@c+d")
    done = run_engine("run", "exp.toml", *flags, "--store", "st", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert run_engine("report", "nightly-2.1_a:b@c+d", "--store", "st", cwd=tmp_path).returncode == 0


async def test_a_definition_built_in_code_is_checked_before_the_first_event(tmp_path: Path) -> None:
    spec = spec_from_dict({"name": "n", "target": {"kind": "python", "callable": "f"},
                           "cases": [{"id": "a", "prompt": "p", "expected": "p"}]})  # fmt: skip
    async with open_engine(tmp_path, callables={"f": lambda request: "p"}) as eng:
        for bad, field in ((-1, "seed"), (2**64, "definition")):
            with pytest.raises(InputError, match=field):
                await eng.run(msgspec.structs.replace(spec, seed=bad), run_id="r")
        with pytest.raises(InputError, match="run_id"):
            await eng.run(spec, run_id="x" * 600)
        assert eng.log.last_seq() == 0
        report = await eng.run(spec, run_id="ok.1:a@b+c-d_e")
        assert report.trials_done == 1
