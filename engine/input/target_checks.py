"""Every target a run may call, checked before anything runs: what a request or a process is built of.

A `base_url` is an http(s) URL with a host (else every trial would retry as a `network` error);
header names are HTTP tokens and no name or value holds CR/LF (a header injected into the request);
a credential header is never written literally (the spec is stored in the log, served and backed
up: it takes `{ env = "VAR" }`); a command's shell string holds no placeholder (see argv.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast
from urllib.parse import urlsplit

from engine.actors.secrets import is_credential_header
from engine.actors.targets.argv import shell_placeholders, shell_refusal
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
        if kind.runs_command:
            _check_shell(cast(CommandTargetSpec, target), field, fail)


def _check_shell(target: CommandTargetSpec, field: str, fail: Fail) -> None:
    if isinstance(target.command, str) and shell_placeholders(target.command, target.prompt_via):
        fail(f"{field}.command", shell_refusal(target.command, target.prompt_via))


def _check_http(target: HttpTarget, field: str, fail: Fail) -> None:
    if target.base_url is not None and not is_http_url(target.base_url):
        expected = f"expected an http:// or https:// URL with a host, got {target.base_url!r:.80}"
        fail(f"{field}.base_url", expected)
    for name, value in target.headers.items():
        where = f"{field}.headers.{name!r:.60}" if not _TOKEN.fullmatch(name) else f"{field}.headers.{name}"
        if not _TOKEN.fullmatch(name):
            fail(where, "expected a header name of letters, digits and -_.!#$%&'*+^`|~ (no spaces, CR or LF)")
        if isinstance(value, EnvRef):
            continue
        if _CONTROL.search(value):
            fail(where, "expected a header value without CR, LF or other control characters")
        if is_credential_header(name):
            fail(where, 'use { env = "VAR" } naming the variable that holds this secret: a literal '
                        "value would be stored in the log, served and backed up")  # fmt: skip


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
