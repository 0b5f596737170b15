"""Server-sent events read the same however the stream is cut into pieces."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.actors.targets.http.sse import EventReader

STREAM = (
    b": a comment\r\n"
    b"event: content_block_delta\r\ndata: {\"text\": \"h\xc3\xa9\"}\r\n\r\n"
    b"data: one\ndata:two\nid: 7\n\n"
    b"retry: 10\n\n"
    b"data: [DONE]\n\n"
)
EXPECTED = [("content_block_delta", '{"text": "hé"}'), ("message", "one\ntwo"), ("message", "[DONE]")]


@given(st.lists(st.integers(0, len(STREAM)), max_size=8))
def test_events_do_not_depend_on_where_the_stream_is_cut(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(STREAM)]
    reader = EventReader()
    events = [e for a, b in zip(bounds, bounds[1:], strict=False) for e in reader.feed(STREAM[a:b])]
    assert events == EXPECTED


def test_an_unfinished_event_is_not_handed_on() -> None:
    assert EventReader().feed(b"data: half\n") == []
