"""A streamed answer as it arrives (stream = true on an HTTP target): its server-sent events handed to
the kind's reader, the text they carry gathered, and its pace measured on trio's clock.

Time to first token runs from the moment the request has been written to the first event carrying
answer text; tokens per second is the tokens after the first over the time from the first to the last.
The tokens are the server's usage count when it sends one (the OpenAI kind asks for it with
stream_options.include_usage), else the events that carried text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import msgspec
import trio

from engine.actors.targets.http.common import malformed, token_count
from engine.actors.targets.http.sse import EventReader
from engine.actors.targets.target_protocol import TargetError, TargetResponse

_decode = msgspec.json.Decoder().decode


class StreamedAnswer:
    """The sink a streamed request's body goes to: `on_event(name, data)` returns the text an event
    carried ("" for none)."""

    def __init__(self, on_event: Callable[[str, str], str]) -> None:
        self._events = EventReader()
        self._on_event = on_event
        self.parts: list[str] = []
        self.sent_at = self.first_at = self.last_at = 0.0

    def sent(self) -> None:
        self.sent_at = trio.current_time()

    def piece(self, data: bytes) -> None:
        before = len(self.parts)
        for name, payload in self._events.feed(data):
            if text := self._on_event(name, payload):
                self.parts.append(text)
        if len(self.parts) > before:  # the events of one piece arrived together: one reading of the clock
            self.last_at = trio.current_time()
            if not before:
                self.first_at = self.last_at

    def check_ended(self, finished: bool, marker: str) -> None:
        """The body ended cleanly (its HTTP framing whole): a complete answer if its end marker or a
        finish reason arrived (servers such as llama.cpp variants and some proxies skip the marker; a
        half event after it is read past), else a network error saying where it was cut."""
        if finished:
            return
        if self._events.mid_event:
            raise TargetError(
                "infra", "network: the stream ended mid-event", retryable=True, error_class="network"
            )
        raise cut_short(marker)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def pace(self, tokens_out: int) -> tuple[float | None, float | None]:
        """(ttft_ms, tokens_per_s); None where the answer had no text (or one token: no rate)."""
        if not self.parts:
            return None, None
        tokens, span = tokens_out or len(self.parts), self.last_at - self.first_at
        rate = round((tokens - 1) / span, 3) if tokens > 1 and span > 0 else None
        return round((self.first_at - self.sent_at) * 1000, 3), rate


class StreamEvents(Protocol):
    """A kind's reader of its own events: the text each carried, whether the end marker (`done`) or a
    finish reason (`finished`) came, and the usage the server sent."""

    done: bool
    finished: bool
    usage: dict[str, Any] | None

    def on_event(self, name: str, data: str) -> str: ...


async def read_stream(
    send: Callable[[StreamedAnswer], Awaitable[None]], events: StreamEvents, marker: str,
    usage_keys: tuple[str, str],
) -> TargetResponse:  # fmt: skip
    """A streamed call's response: `send` streams the request's answer into a StreamedAnswer reading
    `events`; it must end with `marker` or a finish reason. `usage_keys`: the input and output token
    counts' names in the kind's usage."""
    answer = StreamedAnswer(events.on_event)
    await send(answer)
    answer.check_ended(events.done or events.finished, marker)
    tokens_in, tokens_out = (token_count(events.usage, key) for key in usage_keys)
    ttft_ms, rate = answer.pace(tokens_out)
    return TargetResponse(
        text=answer.text, tokens_in=tokens_in, tokens_out=tokens_out, ttft_ms=ttft_ms, tokens_per_s=rate
    )


def event_json(data: str) -> dict[str, Any]:
    """An event's data as a JSON object, or a malformed response."""
    try:
        value = _decode(data)
    except msgspec.DecodeError:
        raise malformed(f"invalid JSON in a streamed event: {data[:120]!r}") from None
    if not isinstance(value, dict):
        raise malformed(f"a streamed event is {type(value).__name__}, expected an object")
    return value


def cut_short(marker: str) -> TargetError:
    """A stream whose body ended between events before its end marker or a finish reason: cut
    mid-answer, retried as a network error."""
    return TargetError(
        "infra", f"network: the stream ended before {marker} or a finish reason", retryable=True,
        error_class="network",
    )  # fmt: skip


def error_in_stream(detail: Any) -> TargetError:
    """An error the server sent as an event after its 200 head (overloaded, internal): a server error."""
    message = f"server error in the stream: {str(detail)[:200]}"
    return TargetError("infra", message, retryable=True, error_class="http_5xx")
