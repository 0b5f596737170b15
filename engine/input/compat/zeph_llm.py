"""Zeph's `[llm]` section as the model under test: the agent's own provider is what its config tunes.

Providers that speak the OpenAI protocol become an `openai` target: `ollama` (`[llm].base_url`,
default localhost:11434, its OpenAI API under /v1), `openai` (`[llm.openai]`), `compatible` or a
`[[llm.compatible]]` entry's name. `claude` (`[llm.cloud]`) becomes an `anthropic` target. Keys are
read from Zeph's own variables (ZEPH_OPENAI_API_KEY, ZEPH_CLAUDE_API_KEY,
ZEPH_COMPATIBLE_<NAME>_API_KEY). The unified `[[llm.providers]]` list gives its `default = true`
entry (else the first), with `type` as the provider. Providers that run inside Zeph (candle) or route
between others (orchestrator, router) are refused: engine needs one endpoint to call.
"""

from __future__ import annotations

import re
from typing import Any

from engine.errors import InputError
from engine.input.compat.common import list_of, table_of

OLLAMA_URL = "http://localhost:11434"
OPENAI_URL = "https://api.openai.com/v1"
SUBJECT_HINT = (
    "names no model under test; add the agent's model (or a [target] table):\n"
    '[llm]\nprovider = "ollama"\nbase_url = "http://localhost:11434"\nmodel = "qwen3:8b"'
)


def llm_target(llm: Any, file: str) -> dict[str, Any]:
    """The target spec fields for Zeph's `[llm]` table."""
    table = table_of(llm, file, "llm")
    if "providers" in table:
        return _from_entry(_default_entry(table, file), file)
    provider = table.get("provider", "ollama")  # Zeph's default provider
    if provider == "ollama":
        return _ollama(table, "llm", file)
    if provider == "openai":
        return _openai(table_of(table.get("openai", {}), file, "llm.openai"), "llm.openai", file)
    if provider == "claude":
        return _claude(table_of(table.get("cloud", {}), file, "llm.cloud"), "llm.cloud", file)
    return _compatible(table, provider, file)


def _default_entry(table: dict[str, Any], file: str) -> tuple[dict[str, Any], int]:
    entries = list_of(table["providers"], file, "llm.providers")
    if not entries:
        raise InputError(file, "llm.providers", SUBJECT_HINT)
    index = next((i for i, e in enumerate(entries) if isinstance(e, dict) and e.get("default")), 0)
    return table_of(entries[index], file, f"llm.providers[{index}]"), index


def _from_entry(found: tuple[dict[str, Any], int], file: str) -> dict[str, Any]:
    entry, index = found
    field = f"llm.providers[{index}]"
    kind = entry.get("type")
    if kind == "ollama":
        return _ollama(entry, field, file)
    if kind == "openai":
        return _openai(entry, field, file)
    if kind == "claude":
        return _claude(entry, field, file)
    if kind == "compatible":
        name = str(entry.get("name", "compatible"))
        return _endpoint(entry, field, file, _key_variable(name))
    raise InputError(file, f"{field}.type", _unsupported(kind))


def _ollama(table: dict[str, Any], field: str, file: str) -> dict[str, Any]:
    base = str(table.get("base_url", OLLAMA_URL)).rstrip("/")
    target = {"kind": "openai", "base_url": base if base.endswith("/v1") else base + "/v1"}
    return {**target, **_model(table, field, file)}


def _openai(table: dict[str, Any], field: str, file: str) -> dict[str, Any]:
    return _endpoint({"base_url": OPENAI_URL, **table}, field, file, "ZEPH_OPENAI_API_KEY")


def _claude(table: dict[str, Any], field: str, file: str) -> dict[str, Any]:
    target: dict[str, Any] = {"kind": "anthropic", "api_key_env": "ZEPH_CLAUDE_API_KEY"}
    if isinstance(table.get("base_url"), str):
        target["base_url"] = table["base_url"]
    return {**target, **_model(table, field, file)}


def _compatible(table: dict[str, Any], provider: Any, file: str) -> dict[str, Any]:
    """`provider = "compatible"` (the first entry) or the name of a `[[llm.compatible]]` entry."""
    entries = table.get("compatible", [])
    entries = entries if isinstance(entries, list) else [entries]
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and provider in ("compatible", entry.get("name")):
            return _endpoint(entry, f"llm.compatible[{i}]", file, _key_variable(str(entry.get("name", ""))))
    if provider == "compatible" or not isinstance(provider, str):
        expected = "expected a [[llm.compatible]] entry with name, base_url, model"
        raise InputError(file, "llm.compatible", expected)
    raise InputError(file, "llm.provider", _unsupported(provider))


def _endpoint(table: dict[str, Any], field: str, file: str, key: str) -> dict[str, Any]:
    base_url = table.get("base_url")
    if not isinstance(base_url, str) or not base_url:
        raise InputError(file, f"{field}.base_url", "expected the provider's OpenAI-compatible URL")
    target = {"kind": "openai", "base_url": base_url, "api_key_env": key}
    return {**target, **_model(table, field, file)}


def _model(table: dict[str, Any], field: str, file: str) -> dict[str, Any]:
    model = table.get("model")
    if not isinstance(model, str) or not model:
        raise InputError(file, f"{field}.model", 'expected the model\'s name (e.g. model = "qwen3:8b")')
    out: dict[str, Any] = {"model": model}
    if isinstance(table.get("max_tokens"), int):
        out["params"] = {"max_tokens": table["max_tokens"]}  # engine keeps it with the sampling params
    return out


def _key_variable(name: str) -> str:
    return "ZEPH_COMPATIBLE_" + re.sub(r"\W", "_", name).upper() + "_API_KEY"


def _unsupported(provider: Any) -> str:
    return (
        f"provider {provider!r} has no endpoint engine can call (expected ollama, openai, compatible, "
        "claude or a [[llm.compatible]] name); add a [target] table for the model under test"
    )
