"""Typos and bad paths are told the same way everywhere: a misspelled field of an experiment file says
"did you mean", a --store that is a file or cannot be made is exit 2 naming --store, and the
embedding API raises engine's own InputError, never a nursery's ExceptionGroup."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import open_engine, spec_from_dict
from engine.errors import InputError
from engine.input.loader import load_plan
from tests.conftest import run_engine

FILE = 'name = "q"\n{top}\n[[variants]]\n{variant}\n[[cases]]\nid = "c1"\nprompt = "hi"\nexpected = "x"\n'


@pytest.mark.parametrize(
    ("top", "variant", "said"),
    [
        ("[repaet]\ncount = 3", 'name = "a"', "(top level): unknown field repaet: did you mean 'repeat'?"),
        ("[repeat]\ncuont = 3", 'name = "a"', "repeat: unknown field cuont: did you mean 'count'?"),
        ("", 'nmae = "a"', "variants[0]: unknown field nmae: did you mean 'name'?"),
        ("[repeat]\nzzz = 3", 'name = "a"', "repeat: unknown field zzz"),
    ],
)
def test_a_misspelled_field_says_did_you_mean(tmp_path: Path, top: str, variant: str, said: str) -> None:
    path = tmp_path / "e.toml"
    path.write_text(FILE.format(top=top, variant=variant))
    with pytest.raises(InputError) as caught:
        load_plan(path)
    assert str(caught.value) == f"{path}: {said}"


def test_a_store_that_is_a_file_or_cannot_be_made_is_bad_input_naming_store(tmp_path: Path) -> None:
    (tmp_path / "e.toml").write_text(FILE.format(top="", variant='name = "a"'))
    (tmp_path / "afile").write_text("not a store")
    for args, said in (
        (("list", "--store", "afile"), "--store: afile is a file"),
        (("run", "e.toml", "-q", "--store", "afile"), "--store: afile is a file"),
        (("run", "e.toml", "-q", "--store", "afile/st"), "--store: cannot make the store directory afile/st"),
    ):
        done = run_engine(*args, cwd=tmp_path)
        err = done.stderr.decode()
        assert done.returncode == 2 and said in err and "Traceback" not in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err


async def test_the_embedding_api_raises_input_error_not_an_exception_group(tmp_path: Path) -> None:
    bad = {"name": "x", "cases": [{"id": "c", "prompt": "p", "expected": "y"}], "params": {"temprature": 1}}
    with pytest.raises(InputError, match="did you mean 'temperature'"):
        async with open_engine(tmp_path / "st") as eng:  # the spec made inside the engine's block
            await eng.run(spec_from_dict(bad))
