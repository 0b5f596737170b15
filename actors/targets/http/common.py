"""What the HTTP targets share: one connection pool per target instance over one SSL context.

One client shared by many workers collapses under concurrency (its pool scan:
benchmarks/README.md#in-code-trials), so each executor worker's target owns a small pool, while the SSL
context (expensive to build) is made once per process. The pool is the engine's own small HTTP/1.1
client (`client`: why, there), or httpx where the environment names a proxy (`proxied`).
"""

from __future__ import annotations

import email.utils
import os
import re
import ssl
import time
import urllib.parse
from collections.abc import Awaitable
from typing import Any, Self

import msgspec

from engine.actors.secrets import is_credential_header, remember
from engine.actors.targets.http import client as http
from engine.actors.targets.http.proxied import ProxiedPool, proxy_for, proxy_names
from engine.actors.targets.target_protocol import TargetError, env_secret
from engine.events.spec_base import EnvRef
from engine.events.targets import HttpTarget

_ssl_context: ssl.SSLContext | None = None


def shared_ssl_context() -> ssl.SSLContext:
    """Verifying, with certifi's roots (or the files SSL_CERT_FILE / SSL_CERT_DIR name), as httpx did."""
    global _ssl_context
    if _ssl_context is None:
        if os.environ.get("SSL_CERT_FILE"):
            _ssl_context = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
        elif os.environ.get("SSL_CERT_DIR"):
            _ssl_context = ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
        else:
            import certifi

            _ssl_context = ssl.create_default_context(cafile=certifi.where())
    return _ssl_context


class JsonClient:
    """POST JSON, get JSON: a keep-alive pool with fixed headers."""

    def __init__(self, spec: HttpTarget, url: str, headers: dict[str, str]) -> None:
        own = {name: header_value(name, value) for name, value in spec.headers.items()}
        merged = {"content-type": "application/json", "accept": "application/json", **own, **headers}
        proxy = proxy_for(url)
        if proxy is not None and getattr(spec, "stream", False):  # httpx's path reads whole answers only
            raise TargetError(
                "config",
                f"{spec.kind} target: stream = true does not go through a proxy "
                f"({proxy_names()} is set for {_where(url)}): unset it, or set stream = false",
            )
        # the pool's timeout is one deadline for the whole call (httpx's, through a proxy, is per read)
        self.times_itself = proxy is None
        try:
            if proxy is None:
                self._pool: http.HttpPool | ProxiedPool = http.HttpPool(url, merged, shared_ssl_context, 4)
            else:
                self._pool = ProxiedPool(url, merged, shared_ssl_context, proxy, 4)
        except ValueError as exc:
            raise TargetError("config", f"{spec.kind} target: {exc}") from None

    async def post(self, body: dict[str, Any], timeout_s: float) -> tuple[int, dict[str, str], bytes]:
        return await self._pool.post(_encode(body), timeout_s)

    async def stream(
        self, body: dict[str, Any], limits: http.StreamTimeouts, sink: http.StreamSink
    ) -> tuple[int, dict[str, str], bytes]:
        assert isinstance(self._pool, http.HttpPool)  # a proxied streaming target is refused when made
        return await self._pool.stream(_encode(body), limits, sink)

    async def aclose(self) -> None:
        await self._pool.aclose()


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def make_client(spec: HttpTarget, url: str, headers: dict[str, str]) -> JsonClient:
    return JsonClient(spec, url, headers)


def header_value(name: str, value: str | EnvRef) -> str:
    """A header's text, or the environment variable it names (the spec holds the name, not the secret)."""
    if isinstance(value, str):  # a credential written into the spec is still a credential
        return remember(value) if is_credential_header(name) else value
    return env_secret(value, f"header {name}")


def request_url(base_url: str, path: str, query: dict[str, str | EnvRef]) -> str:
    """base_url + path + the spec's query. A credential in base_url itself (user:KEY@host) would be
    logged with the spec: refused here too, for callers that skipped `validate`."""
    parts = urllib.parse.urlsplit(base_url)
    if parts.username is not None or parts.password is not None:
        raise TargetError("config", "base_url: expected no user:password@ in the URL (use a header from env)")
    values = {name: value if isinstance(value, str) else env_secret(value, f"query {name}")
              for name, value in query.items()}  # fmt: skip
    url = base_url.rstrip("/") + path
    if not values:
        return url
    return url + ("&" if "?" in url else "?") + urllib.parse.urlencode(values)


def api_key(spec: HttpTarget) -> str | None:
    """Read the key from the variable the spec names; it is never stored anywhere else."""
    if not spec.api_key_env:
        return None
    key = os.environ.get(spec.api_key_env)
    if not key:
        raise TargetError("config", f"environment variable {spec.api_key_env} (api_key_env) is not set")
    return remember(key)


def retry_after(value: str | None) -> float | None:
    """Retry-After in seconds or as an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_NETWORK_ERRORS = (http.HttpError, OSError)
_ERRNO = re.compile(r"^\[Errno -?\d+\]\s*")


def _where(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return parts.netloc or url


def _root_os_error(exc: BaseException | None, depth: int = 0) -> OSError | None:
    """The OSError with an errno under an exception's causes and groups (trio reports "all attempts
    to connect failed" and keeps each attempt's own error below it)."""
    if exc is None or depth > 8:
        return None
    if isinstance(exc, OSError) and exc.errno:
        return exc
    inner = list(exc.exceptions) if isinstance(exc, BaseExceptionGroup) else []
    for nested in [*inner, exc.__cause__, exc.__context__]:
        found = _root_os_error(nested, depth + 1)
        if found is not None:
            return found
    return None


def _connect_error(exc: Exception, url: str) -> TargetError:
    root = _root_os_error(exc)
    why = os.strerror(root.errno).lower() if root is not None and root.errno else ""
    why = why or _ERRNO.sub("", str(exc)).strip().lower() or type(exc).__name__
    message = f"connect: {why} to {_where(url)}"[:500]
    return TargetError("infra", message, retryable=True, error_class="connect")


async def post_json(client: JsonClient, url: str, body: dict[str, Any], timeout_s: float) -> Any:
    """POST and decode, mapping every failure to a TargetError of the right kind and class."""
    status, headers, content = await exchange(client, url, timeout_s, client.post(body, timeout_s))
    check_status(status, headers, content)
    try:
        return _decode(content)
    except msgspec.DecodeError:
        raise malformed(f"invalid JSON: {content[:120].decode(errors='replace')!r}") from None


async def exchange(
    client: JsonClient, url: str, timeout_s: float, sending: Awaitable[tuple[int, dict[str, str], bytes]]
) -> tuple[int, dict[str, str], bytes]:
    """The answer to a request under way, a failure on the wire raised as a TargetError of its class."""
    try:
        return await sending
    except http.ConnectTimeout as exc:
        if client.times_itself:  # the attempt's one deadline ran out while connecting: a timeout
            raise TargetError("timeout", f"no answer within {timeout_s:g} s (connecting)") from None
        raise _connect_error(exc, url) from None  # httpx's own connect timeout, through a proxy
    except http.ConnectError as exc:
        raise _connect_error(exc, url) from None
    except http.StreamTimeout as exc:  # first_byte_timeout_s or idle_timeout_s: said as such
        raise TargetError("timeout", str(exc)) from None
    except http.TimeoutException as exc:  # the attempt's deadline, as the retry loop words its own
        raise TargetError("timeout", f"no answer within {timeout_s:g} s ({type(exc).__name__})") from None
    except _NETWORK_ERRORS as exc:  # a streamed answer cut mid-way included
        message = f"network: {type(exc).__name__}: {exc} ({_where(url)})"[:500]
        raise TargetError("infra", message, retryable=True, error_class="network") from None


def check_status(status: int, headers: dict[str, str], content: bytes) -> None:
    """A server's error answer (429, 5xx, 4xx) as a TargetError of its class."""
    if status < 400:
        return
    text = content[:300].decode(errors="replace")
    if status == 429:
        # Azure and OpenAI say it in milliseconds too (retry-after-ms): the finer figure wins
        milliseconds = retry_after(headers.get("retry-after-ms"))
        wait = retry_after(headers.get("retry-after")) if milliseconds is None else milliseconds / 1000
        raise TargetError(
            "infra", "429 too many requests", retryable=True, retry_after=wait, throttled=True,
            error_class="http_429",
        )  # fmt: skip
    if status >= 500:
        message = f"server error {status}: {text[:200]}"
        raise TargetError("infra", message, retryable=True, error_class="http_5xx")
    raise TargetError("model", f"request refused {status}: {text}", error_class="http_4xx")


def malformed(what: str) -> TargetError:
    """A response the engine cannot read: recorded once (retry_on = ["malformed_response"] to retry)."""
    return TargetError("infra", f"malformed response: {what}", error_class="malformed_response")


MAX_TOKENS = 1 << 40  # no real response is this long: a bigger count is a broken server, not a bill


def token_count(usage: Any, key: str) -> int:
    """A usage field as a sane token count; anything else is a malformed response, not a crash."""
    if not isinstance(usage, dict) or usage.get(key) is None:
        return 0
    value = usage[key]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        raise malformed(f"usage.{key} = {value!r:.60} is not a token count")
    return value


def text_content(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise malformed(f"{where} is {type(value).__name__}, expected a string")
    return value


class JsonApiTarget:
    """An HTTP model API: POST JSON to base_url + PATH over a pool of this target's own."""

    PATH = ""
    DEFAULT_BASE_URL: str | None = None

    @classmethod
    def from_spec(cls, spec: Any, context: object) -> Self:
        return cls(spec)

    def __init__(self, spec: Any) -> None:
        base_url = spec.base_url or self.DEFAULT_BASE_URL
        if not base_url:
            raise TargetError("config", f"{spec.kind} target: base_url is not set")
        self.spec = spec
        self._url = request_url(base_url, self.PATH, spec.query)
        self._client = make_client(spec, self._url, self.auth_headers(api_key(spec)))
        # one POST per call, under the pool's own deadline: the retry loop need not open a second one
        self.times_itself = self._client.times_itself

    def auth_headers(self, key: str | None) -> dict[str, str]:
        raise NotImplementedError

    async def post(self, body: dict[str, Any], timeout_s: float) -> Any:
        return await post_json(self._client, self._url, body, timeout_s)

    async def stream(self, body: dict[str, Any], timeout_s: float, sink: http.StreamSink) -> None:
        """POST, the answer's body streamed to `sink`; an error answer raised as post's are."""
        first_byte_s, idle_s = self.spec.first_byte_timeout_s, self.spec.idle_timeout_s
        limits = http.StreamTimeouts(timeout_s, first_byte_s or timeout_s, idle_s or timeout_s)
        sending = self._client.stream(body, limits, sink)
        check_status(*await exchange(self._client, self._url, timeout_s, sending))

    async def aclose(self) -> None:
        await self._client.aclose()
