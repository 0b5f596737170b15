"""`kind = "gemini_native"`: Gemini's own API, POST {base_url}/models/{model}:generateContent.

A provider whose request and answer are not OpenAI's needs a kind of its own; the engine's HTTP
target base (`JsonApiTarget`) gives it the rest: the keep-alive pool, `headers` and `query` with
`{ env = ... }` secrets, the key from `api_key_env`, and the error classes (429 with its wait, 5xx
retried, 4xx recorded, a malformed answer said as such). What is left is the body and the answer.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from engine.actors.targets.http.common import JsonApiTarget, malformed, text_content, token_count
from engine.actors.targets.target_protocol import TargetError, TargetRequest, TargetResponse
from engine.events.targets import HttpTarget, TargetKind

# engine's sampling parameter names -> generationConfig's
CONFIG = {"temperature": "temperature", "top_p": "topP", "top_k": "topK", "max_tokens": "maxOutputTokens",
          "stop": "stopSequences", "seed": "seed"}  # fmt: skip


class GeminiNativeSpec(HttpTarget, tag="gemini_native"):
    """Gemini's generateContent (base_url defaults to Google's v1beta endpoint)."""


def content_body(request: TargetRequest) -> dict[str, Any]:
    body: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": request.prompt}]}]}
    system = "\n\n".join(part for part in (request.system, request.context) if part)
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    config = {CONFIG[name]: value for name, value in request.params.items() if name in CONFIG}
    stop = config.get("stopSequences")
    if isinstance(stop, str):
        config["stopSequences"] = [stop]
    body["generationConfig"] = {"seed": request.seed, **config}
    return body


class GeminiNativeTarget(JsonApiTarget):
    DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"

    def __init__(self, spec: GeminiNativeSpec) -> None:
        if spec.stream:  # streamGenerateContent is another shape again: not in this example
            raise TargetError("config", "gemini_native target: stream = true is not supported")
        # the model is in the path: one target per resolved spec, so per variant's model
        self.PATH = f"/models/{urllib.parse.quote(spec.model or 'gemini-2.0-flash', safe='')}:generateContent"
        super().__init__(spec)

    def auth_headers(self, key: str | None) -> dict[str, str]:
        return {"x-goog-api-key": key} if key else {}

    async def call(self, request: TargetRequest) -> TargetResponse:
        data = await self.post(content_body(request), request.timeout_s)
        try:
            parts = data["candidates"][0]["content"]["parts"]
        except (KeyError, IndexError, TypeError):
            raise malformed(f"no candidates in the answer: {str(data)[:120]}") from None
        if not isinstance(parts, list):
            raise malformed("candidates[0].content.parts is not a list")
        texts = [p.get("text") for p in parts if isinstance(p, dict) and "text" in p]
        text = "".join(text_content(t, "candidates[0].content.parts[].text") for t in texts)
        usage = data.get("usageMetadata")
        tokens_in = token_count(usage, "promptTokenCount")
        return TargetResponse(
            text=text, tokens_in=tokens_in, tokens_out=token_count(usage, "candidatesTokenCount")
        )


KIND = TargetKind(
    GeminiNativeSpec, "engine_gemini_native.generate_content:GeminiNativeTarget",
    {"base_url": "{url}", "model": "m", "max_retries": 0}, tuple(CONFIG),
    speaks_http=True, honours_max_tokens=True, priced_per_token=True,
)  # fmt: skip
