"""The request and error shapes of the OpenAI-compatible providers the README's recipes point at,
for the fake server to hold a request to (`FakeOpenAI.shape`): the path, the query, the headers each
expects, the error body it answers a wrong request with, and the headers of its rate-limit answer.
From each provider's public API reference; what a test can check without the real service."""

from __future__ import annotations

from dataclasses import dataclass, field

KEY = "k-provider-secret-7d1e"


@dataclass(frozen=True)
class ProviderShape:
    name: str
    path: str  # the chat completions path, as the provider serves it
    headers: dict[str, str] = field(default_factory=dict)  # expected exactly (lower-case names)
    query: dict[str, str] = field(default_factory=dict)
    models: tuple[str, ...] = ()  # a server that knows only these (a local one with pulled models)
    refused: int = 401  # the status of a request without the right headers
    error_body: str = '{{"error": {{"message": "{message}", "type": "invalid_request_error"}}}}'
    rate_limited: dict[str, str] = field(default_factory=dict)  # a 429's headers

    def error(self, message: str) -> bytes:
        return self.error_body.format(message=message.replace('"', "'")).encode()


SHAPES = {
    "azure": ProviderShape(
        "azure", "/openai/deployments/gpt-4o-prod/chat/completions", {"api-key": KEY},
        {"api-version": "2024-10-21"},
        error_body='{{"error": {{"code": "401", "message": "{message}"}}}}',
        rate_limited={"retry-after": "2", "retry-after-ms": "1500", "x-ratelimit-remaining-requests": "0"},
    ),
    "gemini": ProviderShape(
        "gemini", "/v1beta/openai/chat/completions", {"authorization": f"Bearer {KEY}"}, refused=400,
        error_body='[{{"error": {{"code": 400, "message": "{message}", "status": "INVALID_ARGUMENT"}}}}]',
    ),
    "ollama": ProviderShape(
        "ollama", "/v1/chat/completions", models=("llama3.2",), refused=404,
        error_body='{{"error": {{"message": "{message}", "type": "api_error"}}}}',
    ),
    "vllm": ProviderShape(
        "vllm", "/v1/chat/completions", {"authorization": f"Bearer {KEY}"},
        models=("Qwen/Qwen2.5-1.5B-Instruct",), error_body='{{"error": "{message}"}}',
    ),
    "llamacpp": ProviderShape(
        "llamacpp", "/v1/chat/completions",
        error_body='{{"error": {{"code": 401, "message": "{message}", "type": "authentication_error"}}}}',
    ),
    "openrouter": ProviderShape(
        "openrouter", "/api/v1/chat/completions",
        {"authorization": f"Bearer {KEY}", "http-referer": "https://example.com/evals",
         "x-title": "engine evals"},
        error_body='{{"error": {{"code": 401, "message": "{message}"}}}}',
        rate_limited={"x-ratelimit-limit": "20", "x-ratelimit-remaining": "0", "retry-after": "3"},
    ),
}  # fmt: skip


def mismatch(shape: ProviderShape, path: str, headers: dict[str, str], body: dict[str, object]) -> str:
    """Why the provider would refuse this request ("" when it would not)."""
    route, _, query = path.partition("?")
    if route != shape.path:
        return f"no route {route}"
    given = dict(part.split("=", 1) for part in query.split("&") if "=" in part)
    for name, value in shape.query.items():
        if given.get(name) != value:
            return f"missing or wrong query parameter {name}"
    for name, value in shape.headers.items():
        if headers.get(name) != value:
            return f"missing or wrong header {name}"
    if shape.models and body.get("model") not in shape.models:
        return f"model {body.get('model')} not found"
    return ""
