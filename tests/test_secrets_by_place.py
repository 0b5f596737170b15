"""A credential is recognised by name and by place, refused when literal, accepted as
`{ env = "VAR" }`; every secret value engine hands to a subject (headers, URL query, command
environment) is redacted from everything it writes, an agent's own output and stderr included."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from engine.actors.secrets import is_credential_header, is_credential_name, looks_like_key
from tests.conftest import run_engine
from tests.fakes.openai_server import open_fake_openai

SECRET = "agent-secret-value-7f3a9c2e11"
CASE = '[[cases]]\nid = "c"\nprompt = "q"\nexpected = "42"\n'


def test_names_and_shapes() -> None:
    for header in ("Ocp-Apim-Subscription-Key", "x-functions-key", "X-Goog-Api-Key", "x-auth-token"):
        assert is_credential_header(header), header
    for header in ("Idempotency-Key", "X-Idempotency-Key", "X-Cache-Key", "api-version", "X-Request-Id"):
        assert not is_credential_header(header), header
    for name in ("api_key", "apikey", "OPENAI_API_KEY", "access_token", "client-secret", "DB_PASSWORD",
                 "sig", "subscription-key", "AWS_SECRET_ACCESS_KEY", "refresh.token"):  # fmt: skip
        assert is_credential_name(name) and is_credential_name(name, "x"), name
    for name in ("api-version", "temperature", "MONKEY", "keyboard", "model", "PATH", "max_tokens"):
        assert not is_credential_name(name, "Zx81-long-value-0123456789"), name
    assert looks_like_key("sk-proj-abcdefgh12345") and looks_like_key("ghp_abcdefghijklmnop")
    assert not looks_like_key("skip-this") and not looks_like_key("hello")


# names that only may hold a secret: refused for a key-like or random value, never for a plain one
MAYBE = ("GITHUB_TOKEN", "OPENAI_KEY", "X_AUTH", "DB_PWD", "GITLAB_PAT", "service.key")
PLAIN_VALUES = ("x", "2", "created_at", "v2", "true", "/home/me/.ssh/id_ed25519.pub")
KEYS = ("ghp_abcdefghijklmnop1234", "0f3a9c2e11b84d5e9a7c6b5d4e3f2a1b", "Zx81QhT0pLm4vB7nK2sW")
# well-known names that end like a credential and are not one, with values that would be refused
NOT_SECRETS = ("SORT_KEY", "CACHE_KEY", "cache-key", "EOS_TOKEN", "pad_token", "bos_token",
               "idempotency_key", "PARTITION_KEY")  # fmt: skip


@pytest.mark.parametrize("name", MAYBE)
def test_a_name_that_may_hold_a_secret_is_judged_by_its_value(name: str) -> None:
    assert not is_credential_name(name)  # the name alone (extra_params lists names only)
    for value in PLAIN_VALUES:
        assert not is_credential_name(name, value), (name, value)
    for value in KEYS:
        assert is_credential_name(name, value), (name, value)


@pytest.mark.parametrize("name", NOT_SECRETS)
def test_well_known_names_are_not_secrets(name: str) -> None:
    for value in (*PLAIN_VALUES, "0f3a9c2e11b84d5e9a7c6b5d4e3f2a1b", "<|eot_id|>"):
        assert not is_credential_name(name, value), (name, value)


def test_names_that_only_look_like_credentials_pass_validate(tmp_path: Path) -> None:
    """The false alarms of a name rule: a tokenizer's pad_token sent to a vLLM server, a retry's
    Idempotency-Key and a cache key header, an agent's SORT_KEY / CACHE_KEY / EOS_TOKEN."""
    target = ('kind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nextra_params = ["pad_token", "min_p"]\n'
              '[target.headers]\nIdempotency-Key = "run-42"\n'
              'X-Cache-Key = "0f3a9c2e11b84d5e9a7c6b5d4e3f2a1b"\n')
    agent = ('kind = "command"\ncommand = ["cat"]\n'
             '[target.env]\nSORT_KEY = "created_at"\nCACHE_KEY = "0f3a9c2e11b84d5e9a7c6b5d4e3f2a1b"\n'
             'EOS_TOKEN = "<|eot_id|>"\nGITHUB_TOKEN = "unused"\n')  # fmt: skip
    for body in (target, agent):
        (tmp_path / "exp.toml").write_text(f'name = "x"\n[target]\n{body}{CASE}')
        done = run_engine("validate", "exp.toml", cwd=tmp_path)
        assert done.returncode == 0, done.stderr.decode()


LITERALS = {
    "APIM header": ('kind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
                    '[target.headers]\nOcp-Apim-Subscription-Key = "abc123def456"\n',
                    "target.headers.Ocp-Apim-Subscription-Key"),
    "userinfo": ('kind = "openai"\nbase_url = "http://user:KEY123456@127.0.0.1:9/v1"\n', "target.base_url"),
    "query key in base_url": ('kind = "openai"\nbase_url = "http://127.0.0.1:9/v1?api_key=KEY123456"\n',
                              "target.base_url"),
    "query table": ('kind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n[target.query]\ncode = "x"\n'
                    'access_token = "KEY123456"\n', "target.query.access_token"),
    "extra_params": ('kind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nextra_params = ["api_key"]\n',
                     "target.extra_params"),
    "command env by name": ('kind = "command"\ncommand = ["cat"]\n'
                            '[target.env]\nOPENAI_API_KEY = "x-1234"\n', "target.env.OPENAI_API_KEY"),
    "command env, random value": ('kind = "command"\ncommand = ["cat"]\n'
                                  '[target.env]\nGH_TOKEN = "0f3a9c2e11b84d5e9a7c"\n', "target.env.GH_TOKEN"),
    "command env by shape": ('kind = "command"\ncommand = ["cat"]\n'
                             '[target.env]\nHARMLESS = "sk-abcdefgh123"\n', "target.env.HARMLESS"),
}  # fmt: skip


@pytest.mark.parametrize("shape", LITERALS)
def test_a_literal_credential_is_refused_with_the_env_form(tmp_path: Path, shape: str) -> None:
    target, field = LITERALS[shape]
    (tmp_path / "exp.toml").write_text(f'name = "x"\n[target]\n{target}{CASE}')
    done = run_engine("validate", "exp.toml", cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err, err
    assert field in err and "env" in err


def test_env_forms_are_accepted_and_read_at_the_start(tmp_path: Path) -> None:
    target = ('kind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
              '[target.headers]\nOcp-Apim-Subscription-Key = { env = "APIM_KEY" }\n'
              '[target.query]\napi-version = "2024-02-01"\napi_key = { env = "QUERY_KEY" }\n')  # fmt: skip
    (tmp_path / "exp.toml").write_text(f'name = "x"\n[target]\n{target}{CASE}')
    unset = run_engine("validate", "exp.toml", cwd=tmp_path)
    assert unset.returncode == 2 and "APIM_KEY" in unset.stderr.decode()
    done = run_engine("validate", "exp.toml", cwd=tmp_path, APIM_KEY="k1-secret", QUERY_KEY="k2-secret")
    assert done.returncode == 0, done.stderr.decode()


async def test_query_values_reach_the_server_and_never_the_store(tmp_path: Path, monkeypatch) -> None:
    from engine.api import open_engine, spec_from_dict

    monkeypatch.setenv("QUERY_KEY", SECRET)
    async with open_fake_openai(faults=lambda i, body: "echo") as server:
        target = {"kind": "openai", "base_url": server.base_url, "max_retries": 0,
                  "query": {"api-version": "2024-02-01", "api_key": {"env": "QUERY_KEY"}}}  # fmt: skip
        spec = spec_from_dict({"name": "q", "target": target, "execution": {"max_error_rate": 1.0},
                               "cases": [{"id": "c", "prompt": "q", "expected": "42"}]})  # fmt: skip
        async with open_engine(tmp_path / "store") as eng:
            await eng.run(spec, run_id="r1")
    sent = server.requests[0]
    assert "api-version=2024-02-01" in sent.path and f"api_key={SECRET}" in sent.path
    stored = b"".join(p.read_bytes() for p in (tmp_path / "store").iterdir())
    assert SECRET.encode() not in stored and b"QUERY_KEY" in stored


def test_an_agent_printing_its_secret_env_is_redacted_everywhere(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import os, sys\nprint('token is', os.environ['AGENT_TOKEN'])\n"
        "print('stderr has', os.environ['AGENT_TOKEN'], file=sys.stderr)\n"
    )
    (tmp_path / "exp.toml").write_text(
        f'name = "x"\n[target]\nkind = "command"\ncommand = {json.dumps([sys.executable, str(agent)])}\n'
        '[target.env]\nAGENT_TOKEN = { env = "MY_TOKEN" }\nPLAIN = "visible"\n'
        '[execution]\nmax_error_rate = 1.0\n' + CASE
    )
    args = ("run", "exp.toml", "--run-id", "r1", "-q", "--store", "st")
    ran = run_engine(*args, cwd=tmp_path, MY_TOKEN=SECRET)
    assert ran.returncode in (0, 1), ran.stderr.decode()
    written = [ran.stdout, ran.stderr, *(p.read_bytes() for p in (tmp_path / "st").iterdir())]
    for fmt in ("jsonl", "junit"):
        done = run_engine("export", "r1", "--store", "st", "-f", fmt, cwd=tmp_path)
        assert done.returncode == 0, done.stderr.decode()
        written.append(done.stdout)
    rundir = run_engine("export", "r1", "--store", "st", "-f", "rundir", "-o", "rd", cwd=tmp_path)
    assert rundir.returncode == 0, rundir.stderr.decode()
    written += [p.read_bytes() for p in (tmp_path / "rd").rglob("*") if p.is_file()]
    assert run_engine("report", "r1", "--html", "r.html", "--store", "st", cwd=tmp_path).returncode == 0
    written.append((tmp_path / "r.html").read_bytes())
    for data in written:
        assert SECRET.encode() not in data
    jsonl = run_engine("export", "r1", "--store", "st", "-f", "jsonl", cwd=tmp_path).stdout
    record = json.loads(jsonl.splitlines()[0])
    assert record["output"].strip() == "token is [redacted]" and "stderr has [redacted]" in record["stderr"]
