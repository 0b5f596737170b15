"""Anthropic Messages API (POST {base_url}/messages)."""

from __future__ import annotations

from typing import Any

from engine.actors.targets.http.common import (
    JsonApiTarget,
    malformed,
    text_content,
    token_count,
)
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
    return body


class AnthropicTarget(JsonApiTarget):
    PATH = "/messages"
    DEFAULT_BASE_URL = DEFAULT_BASE_URL

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"anthropic-version": "2023-06-01", **({"x-api-key": key} if key else {})}

    async def call(self, request: TargetRequest) -> TargetResponse:
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
