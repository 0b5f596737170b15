"""The wire format: round trips for every event type, golden bytes, upcasting old versions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events import codec
from events import kinds as k
from events.kinds import GraderResult
from events.spec import ExperimentSpec, GraderSpec, VariantSpec

text = st.text(max_size=20)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), finite, text)
json_like = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)


def _field_strategy(name: str, annotation: Any) -> st.SearchStrategy[Any] | None:
    """Hand-written where from_type cannot guess (Any fields, nested specs)."""
    if name in ("value",):
        return json_like
    if name == "values":
        return st.dictionaries(text, json_like, max_size=3)
    if name == "spec":
        return st.builds(lambda n: ExperimentSpec(name=n or "x"), text)
    if name == "variant" and annotation is VariantSpec:
        return st.builds(VariantSpec, name=text, params=st.dictionaries(text, json_like, max_size=3))
    if name == "graders":
        return st.lists(
            st.builds(GraderSpec, kind=st.sampled_from(["exact", "contains", "judge"])), max_size=2
        )
    if name == "grades":
        result = st.builds(
            GraderResult, name=text, score=st.none() | finite, passed=st.booleans(), weight=finite
        )
        return st.lists(result, max_size=3)
    if annotation == (float | None):
        return st.none() | finite
    return None


def event_strategy(event_type: type[k.Event]) -> st.SearchStrategy[k.Event]:
    overrides = {}
    for field in msgspec.structs.fields(event_type):
        custom = _field_strategy(field.name, field.type)
        if custom is not None:
            overrides[field.name] = custom
        elif field.type is float:
            overrides[field.name] = finite
        elif field.type is int:
            overrides[field.name] = st.integers(-(2**62), 2**62)
        elif field.type == (int | None):
            overrides[field.name] = st.none() | st.integers(-(2**62), 2**62)
    overrides.pop("v", None)
    return st.builds(event_type, **overrides)


any_event = st.one_of([event_strategy(t) for t in k.EVENT_TYPES])


@settings(max_examples=150, deadline=None)
@given(any_event)
def test_every_event_round_trips(event: k.Event) -> None:
    assert codec.decode(codec.encode(event)) == event


def test_every_event_type_is_covered_and_tags_are_unique() -> None:
    tags = [k.tag_of(t) for t in k.EVENT_TYPES]
    assert len(tags) == len(set(tags)) and all("." in tag for tag in tags)


GOLDEN = [
    (
        k.TrialCompleted(
            run_id="r1", ts=1.5, variant="a", case="c", repeat=2, output_hash="h", latency_ms=3.25
        ),
        b"\x88\xa4type\xaftrial.completed\xa7variant\xa1a\xa4case\xa1c\xa6repeat\x02\xabo"
        b"utput_hash\xa1h\xaalatency_ms\xcb@\n\x00\x00\x00\x00\x00\x00\xa6run_id\xa2r1"
        b"\xa2ts\xcb?\xf8\x00\x00\x00\x00\x00\x00",
    ),
    (
        k.CancelRequested(run_id="r1", reason="stop", by="cli"),
        b"\x84\xa4type\xb0cancel.requested\xa6reason\xa4stop\xa2by\xa3cli\xa6run_id\xa2r1",
    ),
    (
        k.RunCompleted(run_id="r1", status="partial"),
        b"\x83\xa4type\xadrun.completed\xa6status\xa7partial\xa6run_id\xa2r1",
    ),
]


@pytest.mark.parametrize(("event", "wire"), GOLDEN)
def test_golden_bytes_do_not_change(event: k.Event, wire: bytes) -> None:
    assert codec.encode(event) == wire
    assert codec.decode(wire) == event


@contextmanager
def bumped(tag: str, version: int) -> Iterator[None]:
    old = codec.CURRENT_VERSION[tag]
    codec.set_current_version(tag, version)
    try:
        yield
    finally:
        codec.set_current_version(tag, old)


def test_old_versions_are_upcast() -> None:
    stored = msgspec.msgpack.encode({"type": "cancel.requested", "run_id": "r", "who": "ops"})
    with bumped("cancel.requested", 2):
        codec.register_upcaster("cancel.requested", 1, lambda d: {**d, "by": d.pop("who")})
        event = codec.decode(stored)
    assert isinstance(event, k.CancelRequested) and event.by == "ops" and event.v == 2


def test_missing_upcaster_and_unknown_tags_are_clear_errors() -> None:
    stored = msgspec.msgpack.encode({"type": "run.completed", "run_id": "r", "status": "completed"})
    with bumped("run.completed", 3), pytest.raises(codec.EventDecodeError, match="no upcaster"):
        codec.decode(stored)
    with pytest.raises(codec.EventDecodeError, match="unknown event type"):
        codec.decode(msgspec.msgpack.encode({"type": "no.such.event", "run_id": "r"}))


def test_experiment_spec_round_trips_through_json() -> None:
    spec = msgspec.convert(
        {"name": "n", "cases": [{"id": "c", "prompt": "p", "expected": {"a": [1, 2]}}], "params": {"t": 0.5}},
        ExperimentSpec,
    )
    assert msgspec.json.decode(msgspec.json.encode(spec), type=ExperimentSpec) == spec
