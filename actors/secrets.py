"""Secret values the engine knows, and their redaction from everything it writes.

A server may echo the Authorization header in an error body, an agent may print
its environment, a judge may quote its prompt: whatever reaches an event, a blob
or an export passes through `redact` first. The engine knows a value is secret
when it read it for a target: an `api_key_env` variable, a header, query parameter
or command environment variable given as `{env = "VAR"}`, plus literal values of
credential headers. The book is per
process (a host app running several experiments shares it), which only ever
redacts more, never less.
"""

from __future__ import annotations

import re

MASK = "[redacted]"
SHORTEST = 6  # shorter values (a "1" flag) are not keys, and masking them would garble text

_known: set[str] = set()
_ordered: list[str] = []  # longest first, so a key that contains another is masked whole

CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "api-key", "x-api-key", "cookie"})
# x-auth-token, x-client-secret, x-goog-api-key, Azure APIM's Ocp-Apim-Subscription-Key, x-functions-key
CREDENTIAL_SUFFIXES = ("-token", "-secret", "-key", "-password")
# a query parameter, a body parameter or an environment variable named like a credential: the last
# word of its name (API_KEY, access_token, client-secret, DB_PASSWORD, sig, subscription-key)
_CREDENTIAL_NAME = re.compile(
    r"(?:^|[_.-])(?:api[_-]?key|apikey|key|token|secret|password|passwd|pwd|credentials?|auth|sig|signature"
    r"|private[_-]?key|subscription[_-]?key|access[_-]?key)$",
    re.IGNORECASE,
)
# values shaped like well-known keys, whatever they are called (OpenAI, Anthropic, GitHub, Slack,
# AWS, Google, Hugging Face, GitLab, Stripe)
_KEY_SHAPE = re.compile(r"^(?:sk-|sk_|rk_|ghp_|gho_|ghs_|github_pat_|xox[abpr]-|AKIA|AIza|hf_|glpat-)\S{8,}")


def is_credential_header(name: str) -> bool:
    """A header whose value is a credential: never written literally into an experiment file."""
    lowered = name.strip().lower()
    return lowered in CREDENTIAL_HEADERS or lowered.endswith(CREDENTIAL_SUFFIXES)


def is_credential_name(name: str) -> bool:
    """A query, body or environment variable name that says its value is a credential."""
    return bool(_CREDENTIAL_NAME.search(name.strip()))


def looks_like_key(value: str) -> bool:
    """A value shaped like a well-known provider's key."""
    return bool(_KEY_SHAPE.match(value.strip()))


def remember(value: str) -> str:
    """Register a secret value (and its bearer form); returns it unchanged for inline use."""
    for part in (value, value.removeprefix("Bearer ").strip()):
        if len(part) >= SHORTEST and part not in _known:
            _known.add(part)
            _ordered.append(part)
            _ordered.sort(key=len, reverse=True)
    return value


def redact(text: str) -> str:
    if not _ordered or not text:
        return text
    for secret in _ordered:
        if secret in text:
            text = text.replace(secret, MASK)
    return text
