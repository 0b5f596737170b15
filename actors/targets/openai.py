"""OpenAI-compatible /chat/completions (OpenAI, vLLM, llama.cpp server, Ollama /v1)."""

from __future__ import annotations

from typing import Any

import msgspec

from engine.actors.targets.http.common import (
    JsonApiTarget,
    malformed,
    text_content,
    token_count,
)
from engine.actors.targets.streaming import error_in_stream, read_stream
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
    if spec.stream:  # the usage comes in a last chunk of its own, only when asked for
        body["stream"] = True
        if spec.stream_usage:
            body["stream_options"] = {"include_usage": True}
    return body


class OpenAITarget(JsonApiTarget):
    PATH = "/chat/completions"

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"} if key else {}

    async def call(self, request: TargetRequest) -> TargetResponse:
        if self.spec.stream:
            return await self._streamed(request)
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

    async def _streamed(self, request: TargetRequest) -> TargetResponse:
        body = chat_body(self.spec, request)
        return await read_stream(
            lambda answer: self.stream(body, request.timeout_s, answer), ChatChunks(), "data: [DONE]",
            ("prompt_tokens", "completion_tokens"),
        )  # fmt: skip


class _Delta(msgspec.Struct):
    content: str | None = None


class _Choice(msgspec.Struct):
    delta: _Delta | None = None
    finish_reason: str | None = None


class _Chunk(msgspec.Struct):
    """One streamed chunk, as far as it is read (its other fields are skipped, not decoded)."""

    choices: list[_Choice] | None = None
    usage: dict[str, Any] | None = None
    error: Any = None


_read_chunk = msgspec.json.Decoder(_Chunk).decode


class ChatChunks:
    """What /chat/completions streams: chunks with choices[0].delta.content, a last one with usage
    (stream_options.include_usage), then `data: [DONE]`."""

    def __init__(self) -> None:
        self.done = False
        self.finished = False  # a finish_reason arrived: the answer is whole, [DONE] or not
        self.usage: dict[str, Any] | None = None

    def on_event(self, name: str, data: str) -> str:
        if data == "[DONE]":
            self.done = True
            return ""
        try:
            chunk = _read_chunk(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise malformed(f"a streamed chunk: {exc}: {data[:100]!r}") from None
        if chunk.error is not None:
            raise error_in_stream(chunk.error)
        if chunk.usage is not None:
            self.usage = chunk.usage
        if not chunk.choices:  # the usage chunk's choices are empty
            return ""
        choice = chunk.choices[0]
        if choice.finish_reason is not None:
            self.finished = True
        return choice.delta.content or "" if choice.delta is not None else ""
