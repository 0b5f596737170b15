"""Requests through the proxy the environment names (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY).

The engine's own client (`client`) talks to the model API directly. Where a company network
routes traffic through a proxy, the request goes through httpx instead, which speaks to proxies
(absolute-form requests, CONNECT tunnels, proxy credentials), with the same headers, TLS roots and
error classes, so a trial's outcome reads the same either way.
"""

from __future__ import annotations

import os
import ssl
import urllib.parse
from collections.abc import Callable

from engine.actors.targets.http import client as http


def proxy_for(url: str) -> str | None:
    """The proxy the environment sets for `url`, or None (none set, or NO_PROXY exempts its host)."""
    if not any(name.lower().endswith("_proxy") for name in os.environ):
        return None  # the only variables urllib reads proxies from: without one, no import of it
    # imported here: urllib.request (http.client, email) was most of every target's import
    from urllib.request import getproxies_environment, proxy_bypass_environment

    proxies = getproxies_environment()
    parts = urllib.parse.urlsplit(url)
    found = proxies.get(parts.scheme) or proxies.get("all")
    if not found or not parts.hostname:
        return None
    if proxy_bypass_environment(parts.hostname, proxies):
        return None
    return found


def proxy_names() -> str:
    """The proxy variables the environment sets (for a message saying which to unset)."""
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
    return " / ".join(name for name in names if os.environ.get(name)) or "a proxy"


class ProxiedPool:
    """HttpPool's interface (post, aclose) over an httpx client that goes through `proxy`."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        tls: Callable[[], ssl.SSLContext],
        proxy: str,
        max_connections: int,
    ) -> None:
        import httpx  # only where a proxy is set: the direct path does not import it

        self._httpx = httpx
        self._url = url
        self._headers = headers
        limits = httpx.Limits(max_connections=max_connections)
        self._client = httpx.AsyncClient(proxy=proxy, verify=tls(), limits=limits, trust_env=False)

    async def post(self, body: bytes, timeout_s: float) -> tuple[int, dict[str, str], bytes]:
        httpx = self._httpx
        try:
            answer = await self._client.post(
                self._url, content=body, headers=self._headers, timeout=timeout_s
            )
        except httpx.ConnectTimeout as exc:
            raise http.ConnectTimeout(str(exc)) from exc
        except (httpx.ConnectError, httpx.ProxyError) as exc:
            raise http.ConnectError(str(exc)) from exc
        except httpx.TimeoutException as exc:
            raise http.ReadTimeout(str(exc)) from exc
        except httpx.UnsupportedProtocol as exc:
            raise http.UnsupportedProtocol(str(exc)) from exc
        except httpx.HTTPError as exc:
            raise http.RemoteProtocolError(str(exc)) from exc
        return answer.status_code, {k.lower(): v for k, v in answer.headers.items()}, answer.content

    async def aclose(self) -> None:
        await self._client.aclose()
