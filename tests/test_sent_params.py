"""A generation parameter an HTTP target would drop, or the embedded model would not read, is refused
(exit 2) with the closest known name, unless target.extra_params names it; agent targets (command,
python) hand params to the agent as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_engine

FILE = """
name = "p"
[target]
kind = "{kind}"
base_url = "http://127.0.0.1:9/v1"
{extra}
[params]
{params}
[[variants]]
name = "a"
[[variants]]
name = "b"
params = {{ {variant} }}
[[cases]]
id = "c"
prompt = "x"
expected = "y"
"""


def validate(tmp_path: Path, kind: str = "openai", params: str = "", variant: str = "", extra: str = ""):
    path = tmp_path / "p.toml"
    path.write_text(FILE.format(kind=kind, params=params, variant=variant, extra=extra))
    return run_engine("validate", str(path), cwd=tmp_path)


@pytest.mark.parametrize(
    ("kind", "params", "variant", "field", "suggestion"),
    [
        ("openai", "temprature = 0.7", "", "params.temprature", "did you mean 'temperature'?"),
        ("openai", "", "top_pp = 0.5", "variants[1].params.top_pp", "did you mean 'top_p'?"),
        ("anthropic", "max_token = 9", "", "params.max_token", "did you mean 'max_tokens'?"),
        ("anthropic", "seed = 3", "", "params.seed", "target.extra_params names it"),
        ("openai", "mirostat = 2", "", "params.mirostat", "target.extra_params names it"),
    ],
)
def test_a_parameter_the_target_would_drop_is_refused(
    tmp_path: Path, kind: str, params: str, variant: str, field: str, suggestion: str
) -> None:
    result = validate(tmp_path, kind, params, variant)
    assert result.returncode == 2
    line = result.stderr.decode().strip()
    assert len(line.splitlines()) == 1 and suggestion in line
    assert f"p.toml: {field}: not sent by {kind}" in line


def test_extra_params_is_the_way_to_send_a_servers_own_parameter(tmp_path: Path) -> None:
    result = validate(tmp_path, params="mirostat = 2", extra='extra_params = ["mirostat"]')
    assert result.returncode == 0, result.stderr.decode()


def test_an_agent_target_takes_any_params(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    text = FILE.format(kind="command", params="temprature = 0.7", variant="anything = 1", extra="")
    path.write_text(text.replace('base_url = "http://127.0.0.1:9/v1"', 'command = ["cat"]'))
    result = run_engine("validate", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()


def test_the_local_model_refuses_a_parameter_it_does_not_read_as_openai_does(tmp_path: Path) -> None:
    """The quick start's own target: a misspelled temperature would change nothing."""
    path = tmp_path / "p.toml"
    text = FILE.format(kind="local", params="temprature = 0.7", variant="", extra="")
    path.write_text(text.replace('base_url = "http://127.0.0.1:9/v1"\n', ""))
    result = run_engine("validate", str(path), cwd=tmp_path)
    line = result.stderr.decode().strip()
    assert result.returncode == 2 and len(line.splitlines()) == 1, line
    assert "p.toml: params.temprature: not read by local: did you mean 'temperature'?" in line


def test_a_tuned_parameter_the_target_would_drop_is_refused() -> None:
    from engine.api import spec_from_dict
    from engine.errors import InputError

    with pytest.raises(InputError) as caught:
        spec_from_dict({
            "name": "t", "kind": "tune", "target": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1"},
            "cases": [{"id": "a", "prompt": "p", "expected": "x"}],
            "tune": {"parameters": [{"name": "temprature", "min": 0, "max": 1, "default": 0.5}]},
        })  # fmt: skip
    assert caught.value.field == "tune.parameters[0].name"
    assert "did you mean 'temperature'?" in str(caught.value)
