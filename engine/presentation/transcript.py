"""An agent's transcript as a conversation to show: each message's role, text, tool calls with their
arguments, and the tool results matched to the call they answer (the file format is described in
engine.actors.targets.transcript)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # as the agent wrote them; JSON arguments are shown indented


@dataclass(frozen=True, slots=True)
class Message:
    role: str
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    answers: str = ""  # a tool result: the name of the tool (and call id) it answers


def conversation(text: str | None) -> list[Message]:
    """The transcript's messages in order; a line that is not a message is skipped (the engine checked
    the file when the trial ran)."""
    names: dict[str, str] = {}
    messages = []
    for line in (text or "").splitlines():
        try:
            raw = json.loads(line)
        except ValueError:
            continue
        if isinstance(raw, dict):
            message = _message(raw, names)
            names.update((c.id, c.name) for c in message.tool_calls)
            messages.append(message)
    return messages


def _message(raw: dict[str, Any], names: dict[str, str]) -> Message:
    calls = [_call(c) for c in raw.get("tool_calls") or [] if isinstance(c, dict)]
    answers = ""
    if raw.get("role") == "tool":
        call_id = str(raw.get("tool_call_id") or "")
        answers = str(raw.get("name") or names.get(call_id, "")) + (f" ({call_id})" if call_id else "")
    return Message(str(raw.get("role", "")), _text(raw.get("content")), calls, answers.strip())


def _call(raw: dict[str, Any]) -> ToolCall:
    function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    return ToolCall(str(raw.get("id") or ""), str(function.get("name") or "(unnamed)"),
                    _arguments(function.get("arguments")))  # fmt: skip


def _arguments(value: object) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def _text(content: object) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return str(content)

