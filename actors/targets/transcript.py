"""ENGINE_TRANSCRIPT: the conversation a command agent may write, one JSON message per line.

Each line is an OpenAI-style chat message: `role` (system, user, assistant, tool), `content`, and on
an assistant message `tool_calls` ([{"id", "type": "function", "function": {"name", "arguments"}}]);
a tool result carries `tool_call_id` (and may carry `name`). The engine keeps the file as a blob with
the trial and counts the tool calls per tool; it does not judge the conversation itself.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import msgspec

from engine.actors.targets.target_protocol import TargetError

TRANSCRIPT_KEEP = 4 << 20  # a runaway agent's transcript is cut here, as its stderr is
ROLES = ("system", "user", "assistant", "tool")


def read_transcript(path: Path) -> tuple[str, dict[str, int]]:
    """The transcript's text and its tool calls per tool name; ("", {}) when the agent wrote none.
    A line that is not a JSON message is a bad_transcript error, as a malformed metrics file is."""
    try:
        raw = path.read_bytes()
    except OSError:
        return "", {}
    if len(raw) > TRANSCRIPT_KEEP:  # whole messages only: a line cut in two would not parse
        raw = raw[: raw.rfind(b"\n", 0, TRANSCRIPT_KEEP) + 1]
    counts: Counter[str] = Counter()
    for number, line in enumerate(raw.splitlines(), 1):
        if line.strip():
            counts.update(_tool_names(_message(line, path.name, number)))
    return raw.decode("utf-8", errors="replace"), dict(counts)


def _message(line: bytes, name: str, number: int) -> dict[str, object]:
    try:
        message = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        raise _bad(f"{name} line {number} is not JSON ({exc})") from None
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        raise _bad(f"{name} line {number}: expected a message with a role ({', '.join(ROLES)})")
    return message


def _tool_names(message: dict[str, object]) -> list[str]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    names = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        names.append(name if isinstance(name, str) and name else "(unnamed)")
    return names


def _bad(message: str) -> TargetError:
    return TargetError("model", f"bad transcript: {message}", error_class="bad_transcript")
