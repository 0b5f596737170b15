"""Encoders and decoders, built once at import (msgspec codecs are reusable and fast).

Upcasting: a stored event whose `v` is older than its class expects is decoded
raw, passed through the registered upcasters for its tag in version order, then
converted to the current Struct. The fast path (current version) never pays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from engine.events.kinds import EVENT_TYPES, AnyEvent, Event, tag_of

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(AnyEvent)
_raw_decoder = msgspec.msgpack.Decoder()
_json_encoder = msgspec.json.Encoder(order="deterministic")

_upcasters: dict[tuple[str, int], Upcaster] = {}
CURRENT_VERSION: dict[str, int] = {tag_of(t): 1 for t in EVENT_TYPES}
# the same, keyed by class: the decode fast path does one dict lookup per event
_VERSION_BY_TYPE: dict[type, int] = {t: 1 for t in EVENT_TYPES}
_TYPE_BY_TAG: dict[str, type] = {tag_of(t): t for t in EVENT_TYPES}
# while every type is at version 1 no stored event can be older than its class (v >= 1), so the
# per-event version check is skipped: it is a third of decode's cost on replay
_all_at_v1 = True


class EventDecodeError(ValueError):
    """A stored event that no known version or upcaster can read."""


def register_upcaster(tag: str, from_version: int, upcaster: Upcaster) -> None:
    """Teach the decoder to lift `tag` events stored at `from_version` to `from_version + 1`."""
    _upcasters[(tag, from_version)] = upcaster


def set_current_version(tag: str, version: int) -> None:
    global _all_at_v1
    CURRENT_VERSION[tag] = version
    _all_at_v1 = all(v == 1 for v in CURRENT_VERSION.values())
    _VERSION_BY_TYPE[_TYPE_BY_TAG[tag]] = version


def encode(event: Event) -> bytes:
    return _encoder.encode(event)


def encode_many(events: list[Event]) -> list[bytes]:
    enc = _encoder.encode
    return [enc(e) for e in events]


def decode(data: bytes | memoryview) -> AnyEvent:
    try:
        event = _decoder.decode(data)
    except msgspec.ValidationError:
        return _decode_upcasting(data)
    if _all_at_v1:
        return event
    if event.v != _VERSION_BY_TYPE[type(event)]:
        return _decode_upcasting(data)
    return event


def _decode_upcasting(data: bytes | memoryview) -> AnyEvent:
    raw = _raw_decoder.decode(data)
    if not isinstance(raw, dict) or "type" not in raw:
        raise EventDecodeError(f"not an event: {raw!r:.80}")
    tag = raw["type"]
    target = CURRENT_VERSION.get(tag)
    if target is None:
        raise EventDecodeError(f"unknown event type {tag!r}")
    version = int(raw.get("v", 1))
    while version < target:
        upcaster = _upcasters.get((tag, version))
        if upcaster is None:
            raise EventDecodeError(f"no upcaster for {tag} v{version} -> v{version + 1}")
        raw = upcaster(dict(raw))
        version += 1
        raw["v"] = version
    try:
        return msgspec.convert(raw, AnyEvent)
    except msgspec.ValidationError as exc:
        raise EventDecodeError(f"{tag} v{version}: {exc}") from exc


def to_json(obj: Any) -> bytes:
    """Deterministic JSON (sorted map keys) for reports and exports."""
    return _json_encoder.encode(obj)


def to_builtins(obj: Any) -> Any:
    return msgspec.to_builtins(obj)
