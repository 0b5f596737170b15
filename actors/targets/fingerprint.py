"""A trial's request fingerprint: a stable hash of everything that decides the subject's answer.

The fields are taken from what the target sends, built by the target's own code (`chat_body`,
`messages_body`, `build_argv`), so the fingerprint cannot drift from the request: two trials with
the same fingerprint sent the same bytes to the same endpoint, for the same repeat index. Never in
it: credentials (an API key, a credential header's value, a header read from the environment: its
variable's name only), the run id, the variant's name (beyond the seed it decides), timeouts and
retries (they decide whether an answer comes, not which). docs/reuse.md lists the fields.

Files are read for what they hold, not their names: a command agent's scripts (every word of its
command line that names a file, relative ones against the experiment's folder), its fixed workdir,
a python target's module. Their hashes are kept for one plan (`InputHashes`: one run, one round, one
tuning step), never for the process: a long-lived `engine serve` or host app sees an edited script.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import msgspec

from engine.actors.secrets import is_credential_header
from engine.actors.targets.anthropic import DEFAULT_BASE_URL, AnthropicTarget, messages_body
from engine.actors.targets.argv import build_argv
from engine.actors.targets.command_target import engine_variables
from engine.actors.targets.input_hashes import InputHashes
from engine.actors.targets.openai import OpenAITarget, chat_body
from engine.actors.targets.target_protocol import TargetError, TargetRequest
from engine.events.spec import TargetSpec
from engine.events.spec_base import EnvRef
from engine.events.targets import (
    AnthropicTargetSpec,
    CommandTargetSpec,
    HttpTarget,
    OpenAITargetSpec,
    PythonTargetSpec,
)

VERSION = 2  # raised when the fields change: an older fingerprint then never matches a newer one
_ENCODER = msgspec.json.Encoder(order="deterministic")


def request_fingerprint(target: TargetSpec, request: TargetRequest, hashes: InputHashes | None = None) -> str:
    """The fingerprint of one trial's request (32 hex digits)."""
    return fingerprint_of(request_fields(target, request, hashes))


def fingerprint_of(fields: dict[str, Any]) -> str:
    return hashlib.blake2b(_ENCODER.encode(fields), digest_size=16).hexdigest()


def request_fields(
    target: TargetSpec, request: TargetRequest, hashes: InputHashes | None = None
) -> dict[str, Any]:
    """What the fingerprint is computed from: the target's identity, what it sends, the repeat index."""
    hashes = hashes or InputHashes()
    fields: dict[str, Any] = {"v": VERSION, "kind": target.kind, "repeat": request.repeat}
    if isinstance(target, OpenAITargetSpec):
        fields["url"] = endpoint(target.base_url, OpenAITarget.PATH)
        fields["body"] = chat_body(target, request)
    elif isinstance(target, AnthropicTargetSpec):
        fields["url"] = endpoint(target.base_url or DEFAULT_BASE_URL, AnthropicTarget.PATH)
        fields["body"] = messages_body(target, request)
    elif isinstance(target, CommandTargetSpec):
        fields.update(_command_fields(target, request, hashes))
    elif isinstance(target, PythonTargetSpec):
        fields["callable"] = target.callable
        fields["module"] = module_hash(target.callable, hashes)
        fields["request"] = _request_fields(request)
    else:  # the embedded model, and installed kinds: their whole spec and the request
        fields["target"] = msgspec.to_builtins(_identity(target))
        fields["request"] = _request_fields(request)
    if isinstance(target, HttpTarget):
        fields["headers"] = _headers(target)
        fields["query"] = _named(target.query)  # added to the URL (an api-version; a key by its name)
    return fields


@functools.cache
def endpoint(base_url: str, path: str) -> str:
    """The URL posted to, without credentials (a user:password@ part) or a query string."""
    parts = urlsplit(base_url.rstrip("/") + path)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _headers(target: HttpTarget) -> dict[str, str]:
    """Headers may change the answer (an API version); a credential's value never enters the hash."""
    kept = {name.lower(): value for name, value in target.headers.items() if not is_credential_header(name)}
    secret = {name.lower(): value for name, value in target.headers.items() if isinstance(value, EnvRef)}
    return _named({**kept, **secret})


def _named(values: Mapping[str, str | EnvRef]) -> dict[str, str]:
    """Values as written, a value read from the environment by its variable's name only (a secret)."""
    return {
        name: f"env:{value.env}" if isinstance(value, EnvRef) else value for name, value in values.items()
    }


def _request_fields(request: TargetRequest) -> dict[str, Any]:
    return {
        "model": request.model, "system": request.system, "context": request.context,
        "prompt": request.prompt, "params": request.params, "flags": request.flags, "seed": request.seed,
        "case": {"expected": request.case.expected, "metadata": request.case.metadata},
    }  # fmt: skip


def _identity(target: TargetSpec) -> TargetSpec:
    """The spec without what decides whether an answer comes rather than which one."""
    return msgspec.structs.replace(target, timeout_s=0.0, max_retries=0, concurrency=None, retry_on=[])


def _command_fields(target: CommandTargetSpec, request: TargetRequest, hashes: InputHashes) -> dict[str, Any]:
    try:
        argv, stdin = build_argv(target, request)
    except TargetError:  # a command that cannot be built fails its trial: nothing to reuse either way
        argv, stdin = [], None
    env = {**_named(target.env), **engine_variables(request)}
    return {
        "argv": argv, "stdin": None if stdin is None else stdin.decode(), "env": env,
        "workdir": target.workdir, "workspace": target.workspace, "setup": request.variant.setup,
        "inputs": hashes.tree(target.workdir) if target.workdir else "",
        "scripts": hashes.scripts(_words(target.command, argv), target.workdir),
        # what the agent may reach and use decides its answer too (a network closed, a service's data)
        "sandbox": msgspec.to_builtins(target.policy),
    }  # fmt: skip


def _words(command: list[str] | str, argv: list[str]) -> list[str]:
    """The command's words: the argv as built, or a shell string's words as the shell splits them."""
    if isinstance(command, list):
        return argv
    try:
        return shlex.split(command)
    except ValueError:  # unbalanced quotes: the shell will say so, in the trial
        return []


def module_hash(path: str, hashes: InputHashes | None = None) -> str:
    """A hash of the file of a 'module:function' callable's module ("" for one registered by name, or a
    module not found on the path): an edited target module is a different subject."""
    module_name = path.partition(":")[0]
    if ":" not in path:
        return ""
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return ""
    origin = spec.origin if spec is not None else None
    if not origin or not Path(origin).is_file():
        return ""
    return (hashes or InputHashes()).file(Path(origin))
