"""The HTML file's transcripts: each trial's agent conversation (engine.presentation.transcript) as
JSON for the file's script, cut to a share of a whole-file budget so a big run's file stays mailable;
what is cut is counted so the file can say so (engine serve's trial page has the whole transcript)."""

from __future__ import annotations

from engine.presentation.transcript import Message, conversation

TRANSCRIPT_CHARS = 20_000  # per trial in the file at most
TRANSCRIPT_BUDGET = 3_000_000  # characters of transcripts in the whole file
MIN_CHARS = 1_000


def transcript_cap(transcripts: int) -> int:
    """Each trial's transcript is cut here: 20,000 characters, less when many trials have one."""
    return max(MIN_CHARS, min(TRANSCRIPT_CHARS, TRANSCRIPT_BUDGET // max(transcripts, 1)))


def transcript_json(text: str | None, cap: int = TRANSCRIPT_CHARS) -> dict[str, object] | None:
    """{messages: [{role, content, answers, calls: [{id, name, arguments}]}], cut}: the messages in
    order until `cap` characters (of content and arguments) are used; `cut` counts the characters left
    out. None when the agent wrote no transcript."""
    if text is None:
        return None
    left, cut, messages = cap, 0, []
    for message in conversation(text):
        size = _size(message)
        if left <= 0:
            cut += size
            continue
        shown = _message_json(message, left)
        left -= size
        cut += max(-left, 0)
        messages.append(shown)
    return {"messages": messages, "cut": cut}


def _size(m: Message) -> int:
    return len(m.content) + sum(len(c.name) + len(c.arguments) for c in m.tool_calls)


def _message_json(m: Message, room: int) -> dict[str, object]:
    """One message, its content and arguments cut to the room left (in that order)."""
    content = m.content[:room]
    room -= len(content)
    calls = []
    for c in m.tool_calls:
        calls.append({"id": c.id, "name": c.name, "arguments": c.arguments[: max(room, 0)]})
        room -= len(c.name) + len(c.arguments)
    return {"role": m.role, "content": content, "answers": m.answers, "calls": calls}
