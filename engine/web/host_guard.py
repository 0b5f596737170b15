"""What every response of the web view carries, and which Host headers it answers.

A tokenless view on localhost is readable by any process on the machine, and, through DNS
rebinding, by any web page the user opens: the page's own name resolves to 127.0.0.1, the browser
calls it same-origin. Answering only the names the view is reached by (loopback names, and those
`engine serve --allow-host` adds) closes that. The headers keep pages that show untrusted model
output from running anything but the view's own script, from being sniffed as another type, or
from being framed by another site.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
ANY_HOST = "*"  # `--allow-host '*'`: any name (the token is then the only gate)

# the pages load only /static/app.js and /static/style.css, with no inline script or style
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),  # a first link's ?token=T never leaves in a Referer
]


class Wrapper:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def __getattr__(self, name: str) -> Any:  # state, routes...: the wrapped app's
        return getattr(self.app, name)


class SecureHeaders(Wrapper):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)  # type: ignore[arg-type]


class HostGate(Wrapper):
    """Answers a request only when its Host header names an allowed host (any port)."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str]) -> None:
        super().__init__(app)
        self.allowed = frozenset(normal(name) for name in allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" or ANY_HOST in self.allowed:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        host = host_name(headers.get(b"host", b"").decode("latin-1"))
        if host in self.allowed:
            await self.app(scope, receive, send)
        elif scope["type"] == "http":  # (a websocket is just not accepted)
            await _refuse(send, host)


# RFC 9110's Host: uri-host [":" port], the host a reg-name (letters, digits, -._~ and %-escapes) or
# a bracketed IPv6 literal. Anything else (`127.0.0.1:8765@evil.example`, spaces, a path) names no host
_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._~%-]+))(?::\d{0,5})?")


def host_name(header: str) -> str:
    """`example.com:8765` -> `example.com`; `[::1]:8765` -> `::1`; lower case; "" when the header is
    not a host and port at all (so it matches no allowed name)."""
    header = header.strip().lower()
    found = _HOST.fullmatch(header)
    if found is None:
        return header if _is_bare_ipv6(header) else ""
    return found.group("v6") or found.group("name")


def _is_bare_ipv6(header: str) -> bool:
    try:
        return ipaddress.ip_address(header).version == 6
    except ValueError:
        return False


def normal(name: str) -> str:
    return name.strip().lower().strip("[]")


async def _refuse(send: Send, host: str) -> None:
    body = json.dumps({"error": f"this view does not answer for host {host!r} (engine serve --allow-host)"})
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-type", b"application/json")]})  # fmt: skip
    await send({"type": "http.response.body", "body": body.encode()})
