"""What the HTTP targets share: one client per target instance over one SSL context, error mapping, cost.

One AsyncClient shared by many workers collapses under concurrency (its pool
scan; see BRIEF.md), so each executor worker's target owns a client, while the
SSL context (expensive to build) is made once per process.
"""

from __future__ import annotations

import email.utils
import os
import ssl
import time
from typing import Any

import httpx

from actors.targets.base import TargetError
from events.spec import TargetSpec

_ssl_context: ssl.SSLContext | None = None


def shared_ssl_context() -> ssl.SSLContext:
    global _ssl_context
    if _ssl_context is None:
        _ssl_context = httpx.create_ssl_context()
    return _ssl_context


def make_client(spec: TargetSpec, headers: dict[str, str]) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=4, max_keepalive_connections=4)
    return httpx.AsyncClient(
        verify=shared_ssl_context(),
        headers={**spec.headers, **headers},
        limits=limits,
        timeout=spec.timeout_s,
    )


def api_key(spec: TargetSpec) -> str | None:
    """Read the key from the variable the spec names; it is never stored anywhere else."""
    if not spec.api_key_env:
        return None
    key = os.environ.get(spec.api_key_env)
    if not key:
        raise TargetError("config", f"environment variable {spec.api_key_env} (api_key_env) is not set")
    return key


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


async def post_json(client: httpx.AsyncClient, url: str, body: dict[str, Any], timeout_s: float) -> Any:
    """POST and decode, mapping every failure to a TargetError of the right kind."""
    try:
        response = await client.post(url, json=body, timeout=timeout_s)
    except httpx.TimeoutException as exc:
        raise TargetError("timeout", f"{type(exc).__name__} after {timeout_s:g} s", retryable=True) from None
    except httpx.HTTPError as exc:
        raise TargetError("infra", f"{type(exc).__name__}: {exc}"[:500], retryable=True) from None
    status = response.status_code
    if status == 429:
        wait = retry_after(response.headers.get("retry-after"))
        raise TargetError("infra", "429 too many requests", retryable=True, retry_after=wait, throttled=True)
    if status >= 500:
        raise TargetError("infra", f"server error {status}: {response.text[:200]}", retryable=True)
    if status >= 400:
        raise TargetError("model", f"request refused {status}: {response.text[:300]}")
    try:
        return response.json()
    except ValueError:
        raise TargetError(
            "infra", f"malformed JSON from the server: {response.text[:120]!r}", retryable=True
        ) from None


def cost_of(spec: TargetSpec, tokens_in: int, tokens_out: int) -> float:
    if spec.price is None:
        return 0.0
    return (tokens_in * spec.price.input_per_mtok + tokens_out * spec.price.output_per_mtok) / 1e6
