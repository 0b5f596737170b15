"""A shared-secret gate for a view bound beyond localhost (`engine serve --token T`)."""

from __future__ import annotations

import hmac
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Receive, Scope, Send

from engine.errors import InputError

COOKIE = "engine_token"
SHORTEST = 16  # characters: a token short enough to guess is no gate
MAKE_ONE = "python3 -c 'import secrets; print(secrets.token_urlsafe())'"


def check_token(token: str, field: str = "--token") -> str:
    """A token is printable, without spaces, and at least SHORTEST characters long."""
    if len(token) < SHORTEST or not token.isprintable() or any(c.isspace() for c in token):
        expected = f"expected a token of {SHORTEST}+ printable characters, no spaces (make one: {MAKE_ONE})"
        raise InputError("engine serve", field, expected)
    return token


class TokenGate:
    """Lets a request through when it carries the token: `Authorization: Bearer T`, the cookie, or
    `?token=T` (a shareable first link), which then sets the cookie so the page's links work."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    def __getattr__(self, name: str) -> Any:  # state, routes...: the wrapped app's
        return getattr(self.app, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.token is None or scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        given, from_query = self._given(scope)
        if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
            if scope["type"] == "http":  # (a websocket is just not accepted)
                await _refuse(send)
            return
        if from_query:
            send = _setting_cookie(send, self.token)
        await self.app(scope, receive, send)

    def _given(self, scope: Scope) -> tuple[str | None, bool]:
        headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
        auth = headers.get("authorization", "")
        if auth.startswith("Bearer "):
            return auth[7:], False
        query = parse_qs(scope.get("query_string", b"").decode()).get("token")
        if query:
            return query[0], True
        cookie = SimpleCookie(headers.get("cookie", "")).get(COOKIE)
        return (cookie.value if cookie else None), False


async def _refuse(send: Send) -> None:
    body = b'{"error":"this view needs its token: ?token=T or Authorization: Bearer T"}'
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json")]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def _setting_cookie(send: Send, token: str) -> Send:
    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict".encode()
            message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie)]}
        await send(message)

    return wrapped  # type: ignore[return-value]
