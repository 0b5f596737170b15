"""Every target a run may call, checked before anything runs: what a request or a process is built of.

A `base_url` is an http(s) URL with a host (else every trial would retry as a `network` error);
header names are HTTP tokens and no name or value holds CR/LF (a header injected into the request);
a credential is never written literally (the spec is stored in the log, served and backed up: it
takes `{ env = "VAR" }`), recognised by name and by place: credential headers (the known list and
`*-key`, `*-token`, `*-secret`), URL userinfo, query parameters, `extra_params` and a command's `env`
named like keys, and values shaped like well-known keys; a command's shell string holds no
placeholder (see argv.py), nor does code an interpreter in its argv runs (interpreter_code.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast
from urllib.parse import parse_qsl, urlsplit

from engine.actors.secrets import is_credential_header, is_credential_name, looks_like_key
from engine.actors.targets.argv import shell_placeholders, shell_refusal
from engine.actors.targets.interpreter_code import code_placeholders, refusal
from engine.events.spec import CommandTargetSpec, EnvRef, HttpTarget
from engine.events.targets import TARGETS
from engine.input.experiment_plan import ExperimentPlan

Fail = Callable[[str, str], None]

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name (RFC 9110 token)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # CR, LF, NUL...: a tab is allowed in a value


def check_targets(plan: ExperimentPlan, fail: Fail) -> None:
    for field, target in plan.run_targets():
        kind = TARGETS.of(target)  # its declaration holds the spec to HttpTarget / CommandTargetSpec
        if kind.speaks_http:
            _check_http(cast(HttpTarget, target), field, fail)
            _check_stream(cast(HttpTarget, target), kind.streams, field, fail)
        if kind.runs_command:
            _check_command(cast(CommandTargetSpec, target), field, fail)


def _check_command(target: CommandTargetSpec, field: str, fail: Fail) -> None:
    for name, value in target.env.items():
        if isinstance(value, str) and (is_credential_name(name, value) or looks_like_key(value)):
            fail(f"{field}.env.{name}", _USE_ENV)
    for i, service in enumerate(target.services):
        for name, value in service.env.items():
            if is_credential_name(name, value) or looks_like_key(value):
                fail(f"{field}.services[{i}].env.{name}", _USE_PASS_ENV)
    command, via = target.command, target.prompt_via
    if isinstance(command, str):
        if shell_placeholders(command, via):
            fail(f"{field}.command", shell_refusal(command, via))
        return
    for index, placeholders in code_placeholders(command or [], lambda word: shell_placeholders(word, via)):
        fail(f"{field}.command[{index}]", refusal(command or [], index, placeholders))


_USE_ENV = (
    'use { env = "VAR" } naming the variable that holds this secret: a literal value would be stored '
    "in the log, served and backed up"
)


_USE_PASS_ENV = (
    "a literal secret would be stored in the log, served and backed up: name the host variable that "
    "holds it in the target's `pass_env` (the sandbox hands it to its services and agent)"
)


def _check_http(target: HttpTarget, field: str, fail: Fail) -> None:
    if target.base_url is not None and not is_http_url(target.base_url):
        expected = f"expected an http:// or https:// URL with a host, got {target.base_url!r:.80}"
        fail(f"{field}.base_url", expected)
    elif target.base_url is not None:
        _check_url_credentials(target.base_url, f"{field}.base_url", fail)
    for name, value in target.query.items():
        if isinstance(value, str) and (is_credential_name(name, value) or looks_like_key(value)):
            fail(f"{field}.query.{name}", _USE_ENV)
    for name in target.extra_params:
        if is_credential_name(name):
            fail(f"{field}.extra_params", f"{name!r} names a credential: params are stored in the log; "
                 'send it as a header or query value from { env = "VAR" }')  # fmt: skip
    for name, value in target.headers.items():
        where = f"{field}.headers.{name!r:.60}" if not _TOKEN.fullmatch(name) else f"{field}.headers.{name}"
        if not _TOKEN.fullmatch(name):
            fail(where, "expected a header name of letters, digits and -_.!#$%&'*+^`|~ (no spaces, CR or LF)")
        if isinstance(value, EnvRef):
            continue
        if _CONTROL.search(value):
            fail(where, "expected a header value without CR, LF or other control characters")
        if is_credential_header(name) or looks_like_key(value):
            fail(where, _USE_ENV)


def _check_stream(target: HttpTarget, streams: bool, field: str, fail: Fail) -> None:
    """stream = true on a kind that reads whole answers only, or through a proxy (the proxied path,
    httpx, reads whole answers): refused before the run rather than failing every trial."""
    if not target.stream:
        return
    if not streams:
        fail(f"{field}.stream", f"the {target.kind} target kind does not stream: expected stream = false")
        return
    # imported here: urllib.request is start-up time a check of a run that does not stream never needs
    from engine.actors.targets.http.proxied import proxy_for, proxy_names

    url = target.base_url or "https://api.anthropic.com/v1"  # the one streaming kind with a default
    if proxy_for(url) is not None:  # its URL not said: it may hold the proxy's user:password
        fail(f"{field}.stream", f"expected no proxy for a streamed answer ({proxy_names()} sets one for "
             "this host): unset it, or set stream = false")  # fmt: skip


def _check_url_credentials(url: str, field: str, fail: Fail) -> None:
    """A key in the URL (user:KEY@host, ?api_key=KEY) would be stored with the spec: it goes in a
    header or `query` from the environment instead."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        fail(field, "expected no user:password@ in the URL: send the credential as a header from "
                    '{ env = "VAR" } (or api_key_env)')  # fmt: skip
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if is_credential_name(name, value) or looks_like_key(value):
            fail(field, f"the query parameter {name!r} is a credential: write it as "
                        f'query = {{ {name} = {{ env = "VAR" }} }}')  # fmt: skip


def is_http_url(url: str) -> bool:
    """http(s)://host[:port][/path]: no whitespace or control characters, a port that is a number."""
    if _CONTROL.search(url) or any(c.isspace() for c in url):
        return False
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises on a port that is not a number in range
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)
