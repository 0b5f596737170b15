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

# Names that end like a credential but are well known not to be one: request ids for retries and
# caches, sort and partition keys, a tokenizer's special tokens (`pad_token` in extra_params). Compared
# lower-cased, `_` and `.` read as `-`, a leading `x-` dropped.
NOT_SECRET = frozenset({
    "idempotency-key", "cache-key", "sort-key", "partition-key", "primary-key", "routing-key",
    "dedup-key", "dedupe-key", "request-key", "group-key", "order-key", "lookup-key",
    "eos-token", "bos-token", "pad-token", "unk-token", "sep-token", "cls-token", "mask-token",
    "stop-token", "start-token", "end-token",
})  # fmt: skip

# The last word of a name that says its value is a secret, whatever the value looks like
# (API_KEY, access_token, client-secret, DB_PASSWORD, Azure SAS's sig, subscription-key).
_SECRET_WORD = re.compile(
    r"(?:^|-)(?:api-?key|secret|password|passwd|credentials?|private-key|subscription-key|access-key"
    r"|access-token|auth-token|refresh-token|session-token|id-token|bearer-token|sig|signature)$"
)
# A last word that is a secret only sometimes (GITHUB_TOKEN, OPENAI_KEY, but SORT_KEY, EOS_TOKEN):
# refused when the value looks like a key or a random string, not for its name alone.
_MAYBE_SECRET_WORD = re.compile(r"(?:^|-)(?:key|token|auth|pwd|pat)$")
# values shaped like well-known keys, whatever they are called (OpenAI, Anthropic, GitHub, Slack,
# AWS, Google, Hugging Face, GitLab, Stripe)
_KEY_SHAPE = re.compile(r"^(?:sk-|sk_|rk_|ghp_|gho_|ghs_|github_pat_|xox[abpr]-|AKIA|AIza|hf_|glpat-)\S{8,}")
# a random-looking string: 16+ characters of a key's alphabet with letters and digits mixed (not a
# path: a key file's path is not the key)
_RANDOM = re.compile(r"(?![/~.])(?=.*[A-Za-z].*[A-Za-z])(?=.*\d.*\d)[A-Za-z0-9_\-+/=.]{16,}")


def _normal(name: str) -> str:
    return re.sub(r"[_.]", "-", name.strip().lower()).removeprefix("x-")


def is_credential_header(name: str) -> bool:
    """A header whose value is a credential: never written literally into an experiment file."""
    lowered = name.strip().lower()
    if _normal(name) in NOT_SECRET:
        return False
    return lowered in CREDENTIAL_HEADERS or lowered.endswith(CREDENTIAL_SUFFIXES)


def is_credential_name(name: str, value: object = None) -> bool:
    """A query, body or environment variable that holds a credential: by its name alone when the name
    says so unambiguously, by name and value when the name only may (`value` None: not known)."""
    normal = _normal(name)
    if normal in NOT_SECRET:
        return False
    if _SECRET_WORD.search(normal):
        return True
    return bool(_MAYBE_SECRET_WORD.search(normal)) and isinstance(value, str) and _looks_random(value)


def _looks_random(value: str) -> bool:
    return looks_like_key(value) or bool(_RANDOM.fullmatch(value.strip().removeprefix("Bearer ")))


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
