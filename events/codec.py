"""Encoders and decoders, built once (msgspec codecs are reusable and fast).

Versions live on the event classes (VERSION, UPCASTERS). The encoder stamps an event with its
class's VERSION. A stored event whose `v` is older (or that no longer fits its class) is decoded
raw, lifted through the class's upcasters in version order, then converted to the current Struct.
The fast path (an event at its current version) never pays. A spec of a kind engine does not ship
(an installed package's, or one installed no longer) takes the raw path too (see kind_convert).
"""

from __future__ import annotations

from typing import Any

import msgspec

from engine.events.errors import EngineError
from engine.events.kind_convert import convert_kinded
from engine.events.kinds import EVENT_TYPES, AnyEvent, Event, tag_of

_encoder = msgspec.msgpack.Encoder()
# built at the first decode: it reads every event's annotations, which `engine list` never needs
# (benchmarks/README.md#in-code-start-up)
_decoder: msgspec.msgpack.Decoder[AnyEvent] | None = None
_raw_decoder = msgspec.msgpack.Decoder()
_json_encoder = msgspec.json.Encoder(order="deterministic")
_TYPE_BY_TAG: dict[str, type[Event]] = {tag_of(t): t for t in EVENT_TYPES}


class EventDecodeError(EngineError, ValueError):
    """A stored event that no known version or upcaster can read: damage to the user's store (exit 2)."""


def _stamped(event: Event) -> Event:
    # VERSION is read from the class each time (cheap), so a test may change it with monkeypatch
    version = type(event).VERSION
    return event if event.v == version else msgspec.structs.replace(event, v=version)


def encode(event: Event) -> bytes:
    return _encoder.encode(_stamped(event))


def encode_many(events: list[Event]) -> list[bytes]:
    enc = _encoder.encode
    return [enc(_stamped(e)) for e in events]


def decode(data: bytes | memoryview) -> AnyEvent:
    try:
        event = (_decoder or _event_decoder()).decode(data)
    except msgspec.ValidationError:
        return _decode_upcasting(data)
    if event.v != type(event).VERSION:
        return _decode_upcasting(data)
    return event


def _event_decoder() -> msgspec.msgpack.Decoder[AnyEvent]:
    global _decoder
    _decoder = msgspec.msgpack.Decoder(AnyEvent)
    return _decoder


def _decode_upcasting(data: bytes | memoryview) -> AnyEvent:
    raw = _raw_decoder.decode(data)
    if not isinstance(raw, dict) or "type" not in raw:
        raise EventDecodeError(f"not an event: {raw!r:.80}")
    tag = raw["type"]
    cls = _TYPE_BY_TAG.get(tag)
    if cls is None:
        raise EventDecodeError(f"unknown event type {tag!r}")
    version = int(raw.get("v", 1))
    while version < cls.VERSION:
        upcaster = cls.UPCASTERS.get(version)
        if upcaster is None:
            raise EventDecodeError(f"no upcaster for {tag} v{version} -> v{version + 1}")
        raw = upcaster(dict(raw))
        version += 1
        raw["v"] = version
    try:
        return convert_kinded(raw, AnyEvent, lenient=True)  # type: ignore[no-any-return]
    except msgspec.ValidationError as exc:
        raise EventDecodeError(f"{tag} v{version}: {exc}") from exc


def to_json(obj: Any) -> bytes:
    """Deterministic JSON (sorted map keys) for reports and exports."""
    return _json_encoder.encode(obj)


def to_builtins(obj: Any) -> Any:
    return msgspec.to_builtins(obj)
