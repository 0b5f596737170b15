"""`validate` refuses what a target would be built of and must not be: a URL that is no http(s) URL,
a header with CR/LF, a literal credential header, a placeholder in a shell string. Exit 2, one line
naming the file and field, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.errors import InputError
from engine.input.loader import load_experiment
from tests.conftest import run_engine

HTTP = """
name = "x"
[target]
kind = "openai"
model = "m"
{target}
[[cases]]
id = "a"
prompt = "hi"
expected = "hi"
{extra}
"""


def load_error(tmp_path: Path, target: str, extra: str = "") -> InputError:
    path = tmp_path / "exp.toml"
    path.write_text(HTTP.format(target=target, extra=extra))
    with pytest.raises(InputError) as caught:
        load_experiment(path)
    return caught.value


NOT_URLS = ["not a url", "ftp://example.com/v1", "http://", "https:///v1", "example.com", "http://host:99999/v1",
            "http://exa mple.com", "http://host/\r\nX: 1"]  # fmt: skip


@pytest.mark.parametrize("url", NOT_URLS)
def test_a_base_url_that_is_not_an_http_url(tmp_path: Path, url: str) -> None:
    error = load_error(tmp_path, f"base_url = {json.dumps(url)}")
    assert error.field == "target.base_url"
    assert "expected an http:// or https:// URL with a host" in error.expected


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "https://api.example.com/v1", "http://[::1]:9/v1"])
def test_http_urls_pass(tmp_path: Path, url: str) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(HTTP.format(target=f"base_url = {json.dumps(url)}", extra=""))
    assert load_experiment(path).target.base_url == url  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("headers", "field", "expected"),
    [
        ('{ "X-Trace" = "a\\r\\nX-Admin: 1" }', "target.headers.X-Trace", "without CR, LF"),
        ('{ "X-T\\r\\nX-Admin" = "1" }', "target.headers.'X-T\\r\\nX-Admin'", "expected a header name"),
        ('{ "X Trace" = "1" }', "target.headers.'X Trace'", "expected a header name"),
        ('{ "api-key" = "sk-live-123456" }', "target.headers.api-key", 'use { env = "VAR" }'),
        ('{ "Authorization" = "Bearer sk-1" }', "target.headers.Authorization", 'use { env = "VAR" }'),
        ('{ "X-API-KEY" = "sk-1" }', "target.headers.X-API-KEY", 'use { env = "VAR" }'),
        ('{ "X-Auth-Token" = "t" }', "target.headers.X-Auth-Token", 'use { env = "VAR" }'),
        ('{ "x-client-secret" = "s" }', "target.headers.x-client-secret", 'use { env = "VAR" }'),
    ],
)
def test_bad_or_secret_headers_are_refused(tmp_path: Path, headers: str, field: str, expected: str) -> None:
    error = load_error(tmp_path, f'base_url = "http://127.0.0.1:9/v1"\nheaders = {headers}')
    assert error.field == field and expected in error.expected


def test_secrets_from_variables_and_plain_headers_pass(tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    headers = '{ "api-key" = { env = "AZURE_KEY" }, "X-Auth-Token" = { env = "T" }, "X-Trace" = "on" }'
    path.write_text(HTTP.format(target=f'base_url = "http://127.0.0.1:9/v1"\nheaders = {headers}', extra=""))
    assert set(load_experiment(path).target.headers) == {"api-key", "X-Auth-Token", "X-Trace"}  # type: ignore[union-attr]


def test_a_variant_or_judge_target_is_checked_too(tmp_path: Path) -> None:
    variant = '[[variants]]\nname = "v"\ntarget = { headers = { "x-api-key" = "sk-9" } }'
    error = load_error(tmp_path, 'base_url = "http://127.0.0.1:9/v1"', variant)
    assert error.field == "variants[0].target.headers.x-api-key"
    judge = '[[graders]]\nkind = "judge"\njudge = { base_url = "ftp://x" }'
    error = load_error(tmp_path, 'base_url = "http://127.0.0.1:9/v1"', judge)
    assert error.field == "graders[0].judge.base_url"


COMMAND = """
name = "x"
[target]
kind = "command"
command = {command}
prompt_via = "{via}"
[[cases]]
id = "a"
prompt = "$(touch {marker})"
expected = "hi"
"""


def test_validate_refuses_a_placeholder_in_a_shell_string_with_the_argv_form(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "exp.toml"
    path.write_text(COMMAND.format(command="'echo \"{prompt}\"'", via="template", marker=marker))
    for args in (["validate"], ["run", "--store", "st"]):
        done = run_engine(*args, str(path), cwd=tmp_path)
        err = done.stderr.decode()
        assert done.returncode == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert f"{path}: target.command: expected placeholders ({{prompt}}) in an argv list" in err
        assert err.strip().endswith('write command = ["echo", "{prompt}"]'), err
    assert not marker.exists() and not (tmp_path / "st").exists()
    # the form it names runs the prompt as one inert argument
    path.write_text(COMMAND.format(command='["echo", "{prompt}"]', via="template", marker=marker))
    done = run_engine("run", str(path), "--json", "--store", "st", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert not marker.exists()


@pytest.mark.parametrize(
    ("command", "via"),
    [("'cat'", "stdin"), ("'printf %s'", "arg"), ("'echo {prompt}'", "stdin"), ('["echo", "{prompt}"]', "template")],  # noqa: E501
)
def test_shell_strings_without_placeholders_still_validate(tmp_path: Path, command: str, via: str) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(COMMAND.format(command=command, via=via, marker=tmp_path / "m"))
    assert load_experiment(path).target.prompt_via == via  # type: ignore[union-attr]
