"""Anthropic Messages API (POST {base_url}/messages)."""

from __future__ import annotations

from typing import Any

from engine.actors.targets.http.common import (
    JsonApiTarget,
    malformed,
    text_content,
    token_count,
)
from engine.actors.targets.streaming import error_in_stream, event_json, read_stream
from engine.actors.targets.target_protocol import TargetRequest, TargetResponse
from engine.events.targets import ANTHROPIC_SAMPLING as SAMPLING
from engine.events.targets import AnthropicTargetSpec

DEFAULT_BASE_URL = "https://api.anthropic.com/v1"


def messages_body(spec: AnthropicTargetSpec, request: TargetRequest) -> dict[str, Any]:
    system = "\n\n".join(part for part in (request.system, request.context) if part)
    body: dict[str, Any] = {
        "model": request.model or spec.model or "default",
        "max_tokens": int(request.params.get("max_tokens", 256)),
        "messages": [{"role": "user", "content": request.prompt}],
    }
    if system:
        body["system"] = system
    body.update({k: request.params[k] for k in (*SAMPLING, *spec.extra_params) if k in request.params})
    if spec.stream:
        body["stream"] = True
    return body


class AnthropicTarget(JsonApiTarget):
    PATH = "/messages"
    DEFAULT_BASE_URL = DEFAULT_BASE_URL

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"anthropic-version": "2023-06-01", **({"x-api-key": key} if key else {})}

    async def call(self, request: TargetRequest) -> TargetResponse:
        if self.spec.stream:
            return await self._streamed(request)
        data = await self.post(messages_body(self.spec, request), request.timeout_s)
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            raise malformed(f"no content in the answer: {str(data)[:120]}")
        texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        text = "".join(text_content(t, "content[].text") for t in texts)
        usage = data.get("usage")
        if usage is not None and not isinstance(usage, dict):
            raise malformed(f"usage = {usage!r:.60} is not an object")
        tokens_in, tokens_out = token_count(usage, "input_tokens"), token_count(usage, "output_tokens")
        return TargetResponse(text=text, tokens_in=tokens_in, tokens_out=tokens_out)  # priced by the executor

    async def _streamed(self, request: TargetRequest) -> TargetResponse:
        body = messages_body(self.spec, request)
        return await read_stream(
            lambda answer: self.stream(body, request.timeout_s, answer), MessageEvents(),
            "event: message_stop", ("input_tokens", "output_tokens"),
        )  # fmt: skip


class MessageEvents:
    """What the Messages API streams: message_start (input usage), content_block_delta (text_delta),
    message_delta (output usage), message_stop; ping read past, an error event a server error."""

    def __init__(self) -> None:
        self.done = False
        self.finished = False  # message_delta gave a stop_reason: the answer is whole
        self.usage: dict[str, Any] = {}

    def on_event(self, name: str, data: str) -> str:
        if name == "ping":
            return ""
        event = event_json(data)
        if name == "error":
            raise error_in_stream(event.get("error"))
        if name == "message_stop":
            self.done = True
        elif name == "message_start" and isinstance(message := event.get("message"), dict):
            self._add_usage(message.get("usage"))
        elif name == "message_delta":
            self._add_usage(event.get("usage"))
            delta = event.get("delta")
            self.finished = self.finished or isinstance(delta, dict) and delta.get("stop_reason") is not None
        elif name == "content_block_delta" and isinstance(delta := event.get("delta"), dict):
            if delta.get("type") == "text_delta":
                return text_content(delta.get("text"), "content_block_delta.delta.text")
        return ""

    def _add_usage(self, usage: Any) -> None:
        if isinstance(usage, dict):  # message_delta's counts are the running totals: the later wins
            self.usage.update({k: v for k, v in usage.items() if v is not None})
