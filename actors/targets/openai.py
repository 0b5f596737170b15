"""OpenAI-compatible /chat/completions (OpenAI, vLLM, llama.cpp server, Ollama /v1)."""

from __future__ import annotations

from typing import Any

from engine.actors.targets.http.common import (
    JsonApiTarget,
    malformed,
    text_content,
    token_count,
)
from engine.actors.targets.target_protocol import TargetRequest, TargetResponse
from engine.events.spec import OpenAITargetSpec
from engine.events.targets import OPENAI_SAMPLING as SAMPLING


def chat_body(spec: OpenAITargetSpec, request: TargetRequest) -> dict[str, Any]:
    messages: list[dict[str, str]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    if request.context:
        messages.append({"role": "system", "content": request.context})
    messages.append({"role": "user", "content": request.prompt})
    body: dict[str, Any] = {"model": request.model or spec.model or "default", "messages": messages}
    body.update({k: request.params[k] for k in (*SAMPLING, *spec.extra_params) if k in request.params})
    body.setdefault("seed", request.seed)
    return body


class OpenAITarget(JsonApiTarget):
    PATH = "/chat/completions"

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"} if key else {}

    async def call(self, request: TargetRequest) -> TargetResponse:
        data = await self.post(chat_body(self.spec, request), request.timeout_s)
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise malformed(f"no choices in the answer: {str(data)[:120]}") from None
        if not isinstance(message, dict):
            raise malformed("choices[0].message is not an object")
        text = text_content(message.get("content"), "choices[0].message.content")
        usage = data.get("usage") if isinstance(data, dict) else None
        if usage is not None and not isinstance(usage, dict):
            raise malformed(f"usage = {usage!r:.60} is not an object")
        tokens_in, tokens_out = token_count(usage, "prompt_tokens"), token_count(usage, "completion_tokens")
        return TargetResponse(text=text, tokens_in=tokens_in, tokens_out=tokens_out)  # priced by the executor
