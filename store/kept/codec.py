"""How a projection's state is kept in the store: versioned msgpack bytes, the same for the same state.

A snapshot record is `[version, seq, state]`: the state folded from a run's events up to and including
sequence number `seq`, compressed and checksummed like an event (one whose bytes changed on disk is
read as none, and folded again from the log). The version is the projection's own number (raised by
hand when a handler's meaning changes) and a fingerprint of the state's types (their fields, nested
types included), so a snapshot written by another version of the projection is rebuilt from the log,
never misread.

Encoding keeps dict order (a run's variants are reported in the order they were proposed) and sorts
sets (their order follows string hashes, which differ between processes), so a state folded in one
process and the same state folded in another encode to the same bytes.
"""

from __future__ import annotations

import functools
import typing
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, NamedTuple, TypeVar

import msgspec

from engine.store.kept.state_source import StateSource
from engine.store.kept.streamed import packed_pieces, structs_of
from engine.store.kept.unpacked import unpack
from engine.store.log.records import RESIDUE, TRAILER, crc32c, seal
from engine.store.projection import Projection

S = TypeVar("S")


class Stored(NamedTuple, Generic[S]):
    seq: int
    state: S


# hdrh is imported by the hooks: the run state's histograms need it, `engine list`'s summaries do not
def _enc_hook(value: object) -> object:
    from hdrh.histogram import HdrHistogram

    if isinstance(value, HdrHistogram):
        return value.encode()  # its counts, compressed: the same counts give the same bytes
    if isinstance(value, Mapping):  # a mapping kept in another form (run_state's CellTable): as its dict
        return dict(structs_of(value))
    raise NotImplementedError(f"no snapshot encoding for {type(value).__name__}")


def _dec_hook(kind: type, value: Any) -> object:
    from hdrh.histogram import HdrHistogram

    if kind is HdrHistogram:
        return HdrHistogram.decode(value)
    raise NotImplementedError(f"no snapshot decoding for {kind}")


BIG_INT = 1  # msgpack extension code: an int past 64 bits (a cell's repeat mask), as signed bytes
_INT_RANGE = range(-(1 << 63), 1 << 64)


def _big_ints(value: Any) -> Any:
    """The value with each int msgpack cannot hold an extension record (masks of > 64 repeats)."""
    if isinstance(value, int) and not isinstance(value, bool) and value not in _INT_RANGE:
        size = (value.bit_length() + 8) // 8
        return msgspec.msgpack.Ext(BIG_INT, value.to_bytes(size, "little", signed=True))
    if isinstance(value, list):
        return [_big_ints(item) for item in value]
    if isinstance(value, dict):
        return {_big_ints(key): _big_ints(item) for key, item in value.items()}
    return value


def _ext_hook(code: int, data: memoryview) -> int:
    if code != BIG_INT:
        raise ValueError(f"unknown snapshot extension {code}")
    return int.from_bytes(data, "little", signed=True)


def _canonical(value: Any) -> Any:
    """The value with every set (inside dataclasses and dicts, at any depth) a sorted list. Only the
    dataclasses whose types hold a set are copied, and of those only the fields that hold one: a
    run's cells (a dict of 200,000 at 100,000 cases x 2 variants) are neither copied nor walked."""
    if isinstance(value, set | frozenset):
        return sorted(value)
    if _is_dataclass(value) and not isinstance(value, type):
        fields = _set_fields(type(value))
        if not fields:
            return value
        import dataclasses  # loaded already: `value` is a dataclass

        return dataclasses.replace(value, **{name: _canonical(getattr(value, name)) for name in fields})
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    return value


def _is_dataclass(kind: Any) -> bool:
    """`dataclasses.is_dataclass`, without importing `dataclasses` (~3 M instructions) at every read:
    the kept records `list`, `status` and `history` read are Structs."""
    return hasattr(kind, "__dataclass_fields__")


@functools.cache
def _set_fields(kind: type) -> tuple[str, ...]:
    """The fields of a dataclass whose types hold a set (at any depth)."""
    import dataclasses  # loaded already: `kind` is a dataclass

    hints = typing.get_type_hints(kind)
    return tuple(f.name for f in dataclasses.fields(kind) if f.init and _holds_sets(hints[f.name]))


@functools.cache
def _holds_sets(kind: Any) -> bool:
    if kind in (set, frozenset) or typing.get_origin(kind) in (set, frozenset):
        return True
    if _is_dataclass(kind):
        return any(_holds_sets(hint) for hint in typing.get_type_hints(kind).values())
    return any(_holds_sets(arg) for arg in typing.get_args(kind))


def fingerprint(kind: type) -> int:
    """A checksum of the state's fields and their types, nested dataclasses and structs included."""
    seen: list[str] = []
    _describe(kind, seen, set())
    return zlib.crc32("\n".join(seen).encode())


def _describe(kind: Any, out: list[str], visited: set[Any]) -> None:
    if kind in visited:
        return
    visited.add(kind)
    if _is_dataclass(kind):
        import dataclasses  # loaded already: `kind` is a dataclass

        hints = typing.get_type_hints(kind)
        names = [f.name for f in dataclasses.fields(kind)]
    elif isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        hints, names = typing.get_type_hints(kind), list(kind.__struct_fields__)
    else:
        for arg in typing.get_args(kind):
            _describe(arg, out, visited)
        return
    config = getattr(kind, "__struct_config__", None)
    shape = " (array)" if config is not None and config.array_like else ""  # its fields by position
    out.append(f"{kind.__qualname__}{shape}: " + ", ".join(f"{n}={hints.get(n)}" for n in names))
    for name in names:
        _describe(hints.get(name), out, visited)


PIECE = 1 << 20


def _compressed(pieces: Iterable[bytes | memoryview]) -> bytes:
    """zlib level 1, fed at most a MiB at a time: `zlib.compress` sizes its output for the worst case,
    as big as the input again (+30 MiB at each save of a 200,000-cell state, on top of the packed
    bytes); the pieces may come as they are packed (store.kept.streamed)."""
    stream, parts = zlib.compressobj(1), []
    for piece in pieces:
        view = memoryview(piece)
        parts += [stream.compress(view[at : at + PIECE]) for at in range(0, len(view), PIECE)]
    parts.append(stream.flush())
    return b"".join(parts)


class KeptRecord(Generic[S]):
    """A record of type `kind` kept in the store per run under `name`, checksummed and versioned by
    its number and its type's fingerprint: a projection's state (Snapshotted), or a record made from
    one or from a stored report (store.snapshot_read.Derived, store.report_digest)."""

    def __init__(self, name: str, version: int, kind: type[S], streamed: str | None = None) -> None:
        """`streamed`: the field of a dataclass `kind` (a dict) that grows with the run: its records
        are packed in pieces (store.kept.streamed), not whole."""
        self.name = name
        self._number = version
        self.kind = kind
        self._streamed = streamed
        self._encoder = msgspec.msgpack.Encoder(enc_hook=_enc_hook)

    def _decode_state(self, raw: msgspec.Raw) -> S:
        try:  # typed, in one pass: unless an int past 64 bits was stored as an extension
            return self._decoder.decode(raw)
        except msgspec.ValidationError:
            plain = msgspec.msgpack.decode(raw, ext_hook=_ext_hook)
            return msgspec.convert(plain, self.kind, dec_hook=_dec_hook)

    @functools.cached_property
    def _decoder(self) -> msgspec.msgpack.Decoder[S]:
        return msgspec.msgpack.Decoder(self.kind, dec_hook=_dec_hook)

    @functools.cached_property
    def version(self) -> str:
        """The projection's number and its state's fingerprint (taken when first needed: it reads
        every nested type's fields, and `list` needs only the summaries')."""
        return f"{self._number}.{fingerprint(self.kind):08x}"

    def key(self, run_id: str) -> bytes:
        return self.name.encode() + b"\x00" + run_id.encode()

    def encode(self, seq: int, state: S) -> bytes:
        canonical = _canonical(state)
        try:
            if self._streamed is not None and _is_dataclass(canonical):
                head = (self.version, seq)
                return seal(_compressed(packed_pieces(self._encoder.encode, head, canonical, self._streamed)))
            packed = self._encoder.encode((self.version, seq, canonical))
        except OverflowError:  # a mask of more than 64 repeats: through builtins, that int an extension
            plain = msgspec.to_builtins(canonical, builtin_types=(bytes,), enc_hook=_enc_hook)
            packed = self._encoder.encode((self.version, seq, _big_ints(plain)))
        return seal(_compressed([packed]))

    def decode(self, data: bytes | None) -> Stored[S] | None:
        """The stored state, or None when there is none, or it is of another version (or unreadable:
        a snapshot is only ever a shortcut, the log says the same). A `kind` that names a few of a
        stored state's fields reads only those (a Struct skips the fields it does not name)."""
        if data is None or crc32c(data) != RESIDUE:  # bytes changed on disk: fold from the log instead
            return None
        try:
            packed = unpack(data, TRAILER)
            version, seq, raw = msgspec.msgpack.decode(packed, type=tuple[str, int, msgspec.Raw])
            if version != self.version:
                return None
            return Stored(seq, self._decode_state(raw))
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, TypeError, zlib.error):
            return None


class Snapshotted(KeptRecord[S]):
    """A projection whose state is kept in the store, per run, under `name`: folded by `projection`
    from a state made by `new`."""

    def __init__(
        self, name: str, version: int, projection: Projection[S], kind: type[S], new: Callable[[str], S],
        streamed: str | None = None,
    ) -> None:  # fmt: skip
        super().__init__(name, version, kind, streamed)
        self.projection, self.new = projection, new

    @functools.cached_property
    def source(self) -> StateSource:
        """This state as the records derived from it know it (store.kept.state_source): computed from
        its definition (its types' fingerprint, its fold's tags), by the writer that folds it."""
        return StateSource(self.name, self.version, self.projection.tags)


class VersionedAs(KeptRecord[S]):
    """A kept record read under a version recorded in the store (store.kept.state_source), not one
    computed from a type this process has loaded."""

    def __init__(self, name: str, kind: type[S], version: str) -> None:
        super().__init__(name, 0, kind)
        self.__dict__["version"] = version  # KeptRecord.version is a cached property: this is its value
