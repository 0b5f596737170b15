"""Server-sent events read the same however the stream is cut into pieces."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.actors.targets.http.sse import EventReader

STREAM = (
    b": a comment\r\n"
    b'event: content_block_delta\r\ndata: {"text": "h\xc3\xa9"}\r\n\r\n'
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


_TEXT = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=12)
_EVENT = st.tuples(st.sampled_from(["", "delta", "message_stop"]), st.lists(_TEXT, min_size=1, max_size=3))


@st.composite
def _streams(draw: st.DrawFn) -> tuple[bytes, list[tuple[str, str]]]:
    """A generated stream (each line ended by LF or CRLF, comments and other fields between the
    fields, a space after the colon or none) and the events it holds."""
    out, expected = [], []
    for name, lines in draw(st.lists(_EVENT, max_size=6)):
        fields = [f"event: {name}"] if name else []
        # the one space after the colon is dropped: a line starting with a space needs it written
        fields += [
            f"data:{' ' if line[:1] == ' ' else draw(st.sampled_from(['', ' ']))}{line}" for line in lines
        ]
        if draw(st.booleans()):
            fields.insert(draw(st.integers(0, len(fields))), draw(st.sampled_from([": keep-alive", "id: 7"])))
        for field in [*fields, ""]:
            out.append(field.encode() + draw(st.sampled_from([b"\n", b"\r\n"])))
        expected.append((name or "message", "\n".join(lines)))
    return b"".join(out), expected


@given(_streams(), st.lists(st.integers(0, 10_000), max_size=10))
def test_generated_streams_read_the_same_however_they_are_cut(
    stream: tuple[bytes, list[tuple[str, str]]], cuts: list[int]
) -> None:
    data, expected = stream
    bounds = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    reader = EventReader()
    assert [e for a, b in zip(bounds, bounds[1:], strict=False) for e in reader.feed(data[a:b])] == expected
