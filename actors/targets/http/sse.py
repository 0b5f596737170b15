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

    @property
    def mid_event(self) -> bool:
        """Whether the bytes so far end inside an event (a line or an event not yet ended)."""
        return bool(self._partial or self._data or self._name)

    def feed(self, piece: bytes) -> list[Event]:
        buffer = self._partial + piece if self._partial else piece
        lines = buffer.split(b"\n")
        self._partial = lines.pop()  # the unfinished line, kept for the next piece
        events: list[Event] = []
        crlf = b"\r" in buffer  # most servers end lines with LF alone: then no line needs its CR cut
        for line in lines:
            if crlf and line.endswith(b"\r"):
                line = line[:-1]
            if line.startswith(b"data:"):  # the common line first, without splitting it
                self._data.append(line[6:].decode(errors="replace") if line[5:6] == b" " else
                                  line[5:].decode(errors="replace"))  # fmt: skip
            elif not line:
                if self._data:
                    events.append((self._name or "message", "\n".join(self._data)))
                self._name, self._data = "", []
            elif line == b"data":  # a field without a colon: its value is empty
                self._data.append("")
            elif line.startswith(b"event:"):
                value = line[6:]
                self._name = (value[1:] if value.startswith(b" ") else value).decode(errors="replace")
        return events
