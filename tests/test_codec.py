"""The wire format: round trips for every event type, golden bytes, upcasting old versions."""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Any, Literal

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.events import codec
from engine.events import kinds as k
from engine.events.spec import ExperimentSpec

# nested specs are big to generate: on a busy machine that must not fail a test
RELAXED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}

# --- strategies ---------------------------------------------------------------
# Structs go through st.builds and Literal / bool through st.from_type; the rest is hand-written:
# `Any` (msgspec only round-trips JSON-like values), floats (NaN != NaN), ints (msgpack holds 64 bits),
# and short text so nested specs stay small.
text = st.text(max_size=12)
finite = st.floats(allow_nan=False, allow_infinity=False)
int64 = st.integers(-(2**63), 2**63 - 1)
json_like = st.recursive(
    st.none() | st.booleans() | int64 | finite | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)


def for_type(annotation: Any) -> st.SearchStrategy[Any]:
    """A strategy for any annotation used in events.kinds / events.spec (within its Meta bounds)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return bounded(args[0], [m for m in args[1:] if isinstance(m, msgspec.Meta)])
    if annotation is Any:
        return json_like
    if annotation is type(None):
        return st.none()
    if annotation is str:
        return text
    if annotation is int:
        return int64
    if annotation is float:
        return finite
    if annotation is bool or origin is Literal:
        return st.from_type(annotation)
    if origin in (types.UnionType, typing.Union):
        return st.one_of([for_type(arg) for arg in args])
    if origin is list:
        return st.lists(for_type(args[0]), max_size=2)
    if origin is dict:
        return st.dictionaries(for_type(args[0]), for_type(args[1]), max_size=2)
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return struct_strategy(annotation)
    raise TypeError(f"no strategy for {annotation!r}: extend for_type")


def bounded(base: type, metas: list[msgspec.Meta]) -> st.SearchStrategy[Any]:
    meta = metas[0] if metas else msgspec.Meta()
    if base is str:
        return st.text(min_size=meta.min_length or 0, max_size=12)
    low = meta.ge if meta.ge is not None else meta.gt
    high = meta.le if meta.le is not None else meta.lt
    if base is int:
        lo = -(2**63) if low is None else int(low) + (meta.gt is not None)
        hi = 2**63 - 1 if high is None else int(high) - (meta.lt is not None)
        return st.integers(lo, hi)
    return st.floats(
        min_value=low, max_value=high, allow_nan=False, allow_infinity=False,
        exclude_min=meta.gt is not None, exclude_max=meta.lt is not None,
    )  # fmt: skip


def _valid(cls: type[msgspec.Struct], fields: dict[str, Any]) -> Any:
    """cls(**fields), or None where __post_init__ refuses them (a max below its min...)."""
    try:
        return cls(**fields)
    except ValueError:
        return None


@functools.cache
def struct_strategy(cls: type[msgspec.Struct]) -> st.SearchStrategy[Any]:
    """Every field drawn (optional ones too, so omitted defaults and set values are both exercised).

    `v` is the class's current VERSION: an older one is the upcasting path, tested below. Structs
    whose __post_init__ refuses a draw (cross-field rules) are drawn again.
    """
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = {name: for_type(hints[name]) for name in cls.__struct_fields__ if name != "v"}
    if "v" in cls.__struct_fields__:
        fields["v"] = st.just(cls.VERSION)  # type: ignore[attr-defined]
    return st.builds(functools.partial(_valid, cls), st.fixed_dictionaries(fields)).filter(
        lambda built: built is not None
    )


@pytest.mark.parametrize("event_type", k.EVENT_TYPES, ids=k.tag_of)
@settings(max_examples=25, **RELAXED)
@given(data=st.data())
def test_every_event_type_round_trips(event_type: type[k.Event], data: st.DataObject) -> None:
    event = data.draw(struct_strategy(event_type))
    wire = codec.encode(event)
    decoded = codec.decode(wire)
    assert type(decoded) is event_type
    assert decoded == event
    assert codec.decode(memoryview(wire)) == event  # LMDB hands out buffers too


@settings(max_examples=20, **RELAXED)
@given(st.lists(st.one_of([struct_strategy(t) for t in k.EVENT_TYPES]), max_size=8))
def test_encode_many_matches_encode(events: list[k.Event]) -> None:
    wires = codec.encode_many(events)
    assert wires == [codec.encode(e) for e in events]
    assert [codec.decode(w) for w in wires] == events


def test_every_event_type_is_in_the_union_with_a_unique_dotted_tag() -> None:
    tags = [k.tag_of(t) for t in k.EVENT_TYPES]
    assert len(tags) == len(set(tags)) and all("." in tag for tag in tags)
    assert set(codec._TYPE_BY_TAG) == set(tags)  # the decoder knows every tag
    assert k.TAG_BY_TYPE == dict(zip(k.EVENT_TYPES, tags, strict=True))
    # every concrete Event subclass (a leaf: VariationDecided is only their shared fields) is decodable
    def leaves(cls: type) -> set[type]:
        subs = cls.__subclasses__()
        return set().union(*(leaves(s) for s in subs)) if subs else {cls}

    # trial.reused is a trial.completed with its source: both are concrete
    assert leaves(k.Event) | {k.TrialCompleted} == set(k.EVENT_TYPES)


def test_a_trial_completed_stored_before_fingerprints_reads_the_same() -> None:
    """The fingerprint made trial.completed a 16-field struct (a map16 header on the wire): the
    bytes an older engine wrote (a fixmap header) still decode to the same event."""
    old = GOLDEN[0][1].replace(b"\xde\x00\x08", b"\x88", 1)
    assert codec.decode(old) == GOLDEN[0][0]


# --- golden bytes: captured once; a change here means old logs may no longer read the same -----
GOLDEN = [
    (
        k.TrialCompleted(
            run_id="r1", ts=1.5, variant="a", case="c", repeat=2, output_hash="h", latency_ms=3.25
        ),
        b"\xde\x00\x08\xa4type\xaftrial.completed\xa7variant\xa1a\xa4case\xa1c\xa6repeat\x02\xabo"
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
    (
        k.TrialGraded(
            run_id="r1",
            ts=2.0,
            variant="concise",
            case="capital-fr",
            repeat=0,
            score=0.75,
            passed=True,
            grades=[
                k.GraderResult(name="contains", score=1.0, passed=True),
                k.GraderResult(
                    name="judge", score=None, passed=False, weight=2.0, gate=True, reason="off", tokens=17
                ),
            ],
            grading=1,
            judge_tokens=17,
        ),
        b"\x8b\xa4type\xactrial.graded\xa7variant\xa7concise\xa4case\xaacapital-fr\xa6repeat\x00"
        b"\xa5score\xcb?\xe8\x00\x00\x00\x00\x00\x00\xa6passed\xc3\xa6grades\x92"
        b"\x83\xa4name\xa8contains\xa5score\xcb?\xf0\x00\x00\x00\x00\x00\x00\xa6passed\xc3"
        b"\x87\xa4name\xa5judge\xa5score\xc0\xa6passed\xc2\xa6weight\xcb@\x00\x00\x00\x00\x00\x00\x00"
        b"\xa4gate\xc3\xa6reason\xa3off\xa6tokens\x11"
        b"\xa7grading\x01\xacjudge_tokens\x11\xa6run_id\xa2r1\xa2ts\xcb@\x00\x00\x00\x00\x00\x00\x00",
    ),
]


@pytest.mark.parametrize(("event", "wire"), GOLDEN, ids=[k.tag_of(type(e)) for e, _ in GOLDEN])
def test_golden_bytes_do_not_change(event: k.Event, wire: bytes) -> None:
    assert codec.encode(event) == wire
    assert codec.decode(wire) == event


# --- upcasting: versions and upcasters are on the event classes ---------------------------------
def _rename_who_to_by(raw: dict[str, Any]) -> dict[str, Any]:
    raw["by"] = raw.pop("who")
    return raw


def test_an_old_version_is_upcast_to_the_current_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # v1 of cancel.requested (as it might have been) named the field `who`; v2 calls it `by`
    stored = msgspec.msgpack.encode({"type": "cancel.requested", "run_id": "r", "who": "ops"})
    monkeypatch.setattr(k.CancelRequested, "VERSION", 2)
    monkeypatch.setattr(k.CancelRequested, "UPCASTERS", {1: _rename_who_to_by})
    event = codec.decode(stored)
    assert event == k.CancelRequested(run_id="r", by="ops", v=2)
    # the encoder stamps the current version; such an event takes the fast path, untouched
    current = k.CancelRequested(run_id="r", by="cli")
    assert codec.decode(codec.encode(current)) == k.CancelRequested(run_id="r", by="cli", v=2)


def test_upcasters_chain_in_version_order(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
        calls.append(raw["v"] if "v" in raw else 1)
        return {**raw, "message": f"[{raw.get('message', '')}]"}

    def v2_to_v3(raw: dict[str, Any]) -> dict[str, Any]:
        calls.append(raw["v"])
        return {**raw, "status": {"done": "completed"}.get(raw["status"], raw["status"])}

    monkeypatch.setattr(k.RunCompleted, "VERSION", 3)
    monkeypatch.setattr(k.RunCompleted, "UPCASTERS", {1: v1_to_v2, 2: v2_to_v3})
    # stored at v1 with a value the current Literal rejects: the fast path fails, the upcasters fix it
    old = msgspec.msgpack.encode({"type": "run.completed", "run_id": "r", "status": "done", "message": "m"})
    assert codec.decode(old) == k.RunCompleted(run_id="r", status="completed", message="[m]", v=3)
    assert calls == [1, 2]
    # stored at v2 and still valid for the Struct: the version mismatch alone routes it to the upcaster
    calls.clear()
    mid = msgspec.msgpack.encode({"type": "run.completed", "run_id": "r", "status": "partial", "v": 2})
    assert codec.decode(mid) == k.RunCompleted(run_id="r", status="partial", v=3)
    assert calls == [2]


def test_a_missing_upcaster_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    stored = msgspec.msgpack.encode({"type": "run.completed", "run_id": "r", "status": "completed"})
    monkeypatch.setattr(k.RunCompleted, "VERSION", 3)
    monkeypatch.setattr(k.RunCompleted, "UPCASTERS", {1: lambda raw: raw})
    with pytest.raises(codec.EventDecodeError, match=r"no upcaster for run.completed v2 -> v3"):
        codec.decode(stored)


def test_an_upcaster_producing_an_invalid_event_is_a_decode_error(monkeypatch: pytest.MonkeyPatch) -> None:
    stored = msgspec.msgpack.encode({"type": "run.completed", "run_id": "r", "status": "completed"})
    monkeypatch.setattr(k.RunCompleted, "VERSION", 2)
    monkeypatch.setattr(k.RunCompleted, "UPCASTERS", {1: lambda raw: {**raw, "status": "exploded"}})
    with pytest.raises(codec.EventDecodeError, match="run.completed v2"):
        codec.decode(stored)


# a v1 experiment.defined as engine wrote it before targets and graders were tagged unions: the
# default local target omitted `kind`, and a grader carried a field its kind ignored
V1_DEFINED = msgspec.msgpack.encode(
    {
        "type": "experiment.defined", "run_id": "old", "spec_hash": "h",
        "spec": {
            "name": "old-run", "target": {"timeout_s": 30.0},
            "cases": [{"id": "c", "prompt": "p", "expected": "x"}],
            "graders": [{"kind": "contains", "case_sensitive": False, "timeout_s": 60.0}],
        },
    }
)  # fmt: skip


def test_a_v1_experiment_definition_still_reads() -> None:
    event = codec.decode(V1_DEFINED)
    assert isinstance(event, k.ExperimentDefined) and event.v == 2
    assert event.spec.target.kind == "local" and event.spec.target.timeout_s == 30.0
    assert event.spec.graders[0].kind == "contains" and not event.spec.graders[0].case_sensitive
    regex = {"kind": "regex", "pattern": "x", "value": "ignored"}
    old = {"type": "regrade.started", "run_id": "old", "grading": 1, "graders": [regex]}
    old_regrade = msgspec.msgpack.encode(old)
    assert codec.decode(old_regrade).graders[0].pattern == "x"


@pytest.mark.parametrize(
    ("stored", "match"),
    [
        ({"type": "no.such.event", "run_id": "r"}, "unknown event type 'no.such.event'"),
        ({"run_id": "r", "status": "completed"}, "not an event"),
        ([1, 2, 3], "not an event"),
        ("trial.completed", "not an event"),
        # a known tag whose payload does not fit the current version and has no upcaster path
        ({"type": "trial.completed", "run_id": "r"}, "trial.completed v1"),
    ],
)
def test_undecodable_events_raise_event_decode_error(stored: Any, match: str) -> None:
    with pytest.raises(codec.EventDecodeError, match=match):
        codec.decode(msgspec.msgpack.encode(stored))


# --- the experiment spec -----------------------------------------------------------------------
FULL_SPEC = {
    "name": "concise-vs-verbose",
    "seed": 42,
    "target": {
        "kind": "openai",
        "base_url": "http://127.0.0.1:8080/v1",
        "model": "my-model",
        "api_key_env": "OPENAI_API_KEY",
        "price": {"input_per_mtok": 0.5, "output_per_mtok": 1.5},
    },
    "params": {"temperature": 0.7, "max_tokens": 128},
    "variants": [
        {"name": "baseline"},
        {
            "name": "concise",
            "system": "Answer in one sentence.",
            "params": {"temperature": 0.2},
            "flags": {"max_retries": 5},
        },
    ],
    "matrix": {"temperature": [0.1, 0.9], "top_p": [1, 0.5]},
    "cases": [
        {"id": "capital-fr", "prompt": "Capital of France?", "expected": "Paris", "tags": ["geo"]},
        {"id": "json", "prompt": "p", "expected": {"a": [1, 2.5, None, True]}, "metadata": {"k": "v"}},
    ],
    "graders": [
        {"kind": "contains"},
        {"kind": "judge", "rubric": [{"name": "clarity", "weight": 2.0}], "threshold": 0.5, "gate": True},
    ],
    "repeat": {"count": 3, "strategy": "mean"},
    "budget": {"max_trials": 1000, "max_wall_time_s": 3600, "max_tokens": 1000000, "max_cost_usd": 5.0},
    "tune": {
        "strategy": "neighborhood",
        "parameters": [{"name": "temperature", "min": 0.0, "max": 1.0, "default": 0.7, "step": 0.1}],
        "auto_apply": True,
        "apply_to": "agent.toml",
    },
    "schedule": {"cron": "0 3 * * *"},
    "pricing": {"my-model": {"input_per_mtok": 1.0}},
}


def test_a_full_experiment_spec_round_trips_through_json() -> None:
    spec = msgspec.convert(FULL_SPEC, ExperimentSpec)
    wire = msgspec.json.encode(spec)
    assert msgspec.json.decode(wire, type=ExperimentSpec) == spec
    # defaults are omitted on the wire, what was set is kept
    decoded = msgspec.json.decode(wire)
    assert "execution" not in decoded and decoded["budget"]["max_trials"] == 1000
    # and through the event that carries it
    defined = k.ExperimentDefined(run_id="r", spec=spec, spec_hash="h", v=k.ExperimentDefined.VERSION)
    assert codec.decode(codec.encode(defined)) == defined


@settings(max_examples=25, **RELAXED)
@given(struct_strategy(ExperimentSpec))
def test_any_experiment_spec_round_trips_through_json(spec: ExperimentSpec) -> None:
    assert msgspec.json.decode(msgspec.json.encode(spec), type=ExperimentSpec) == spec


def test_the_spec_rejects_unknown_fields() -> None:
    wire = msgspec.json.encode({**FULL_SPEC, "repeat": {"cuont": 3}})
    with pytest.raises(msgspec.ValidationError, match=r"unknown field `cuont` - at `\$.repeat`"):
        msgspec.json.decode(wire, type=ExperimentSpec)
