"""Server-sent events (the text/event-stream format model APIs stream in), from body pieces as they arrive.

What is read: lines ended by LF or CRLF (a bare CR is not a line end here), `event:` and `data:` fields
(one optional space after the colon dropped; several `data:` lines joined by LF), comment lines
starting with `:` and other fields (`id:`, `retry:`) read past, an empty line ending an event. A
line may be split across pieces anywhere, a UTF-8 character included.
"""

from __future__ import annotations

Event = tuple[str, str]  # the event's name ("message" when it has none) and its data


class EventReader:
    """Feed it body pieces; it returns the events each completes."""

    def __init__(self) -> None:
        self._partial = b""
        self._name = ""
        self._data: list[str] = []

    def feed(self, piece: bytes) -> list[Event]:
        lines = (self._partial + piece).split(b"\n")
        self._partial = lines.pop()  # the unfinished line, kept for the next piece
        events: list[Event] = []
        for raw in lines:
            line = raw[:-1] if raw.endswith(b"\r") else raw
            if not line:
                if self._data:
                    events.append((self._name or "message", "\n".join(self._data)))
                self._name, self._data = "", []
                continue
            field, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if field == b"data":
                self._data.append(value.decode(errors="replace"))
            elif field == b"event":
                self._name = value.decode(errors="replace")
        return events
