"""Reading a run's trial index: the kept head and chunks' columns, folded forward over the run's
events after the head (the few a live run logged since its last save). A chunk's full records and
its texts are read only when asked for: a page describes a few trials, a search reads the texts.

None when the run has no index of this version (an older engine wrote the store, or the writer gave
up on it): the caller folds the log instead, and `engine rebuild` writes the index again.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.store.blobs import read_text
from engine.store.contract import EventStore
from engine.store.projections.trials import TrialRecord
from engine.store.trial_index.codec import (
    Catalogue,
    Columns,
    Lowered,
    Texts,
    columns_of,
    head_key,
    part_key,
    texts_of,
    unpack,
)  # fmt: skip
from engine.store.trial_index.index import TAGS, IndexState

TRIES = 3  # a save between reading the head and its chunks: read again


@dataclass(slots=True)
class RunIndex:
    run_id: str
    catalogue: Catalogue
    variants: list[str]  # the columns' variant indexes name these
    cases: list[str]
    columns: list[Columns]  # per chunk
    state: IndexState
    seq: int  # the last event of the run it covers
    # the texts last read ((chunk, part), value): a search asks a chunk's texts for its outputs and
    # then for its reasons, and each read decodes the whole chunk's outputs
    _last_text: tuple[tuple[int, bytes], Texts | Lowered] | None = None

    @property
    def size(self) -> int:
        """Rows per chunk."""
        return self.state.size

    def records(self, chunk: int) -> list[TrialRecord]:
        return self.state.chunk(chunk)

    def texts(self, chunk: int) -> Texts:
        """The chunk's outputs and reasons."""
        return self._text(chunk, b"t", Texts, 0)  # type: ignore[no-any-return]

    def lowered(self, chunk: int) -> Lowered:
        """The chunk's outputs lowered, joined."""
        return self._text(chunk, b"l", Lowered, 1)  # type: ignore[no-any-return]

    def _text(self, chunk: int, part: bytes, kind: type, which: int) -> Texts | Lowered:
        if self._last_text is not None and self._last_text[0] == (chunk, part):
            return self._last_text[1]
        found = self._read_text(chunk, part, kind, which)
        self._last_text = ((chunk, part), found)
        return found

    def _read_text(self, chunk: int, part: bytes, kind: type, which: int) -> Texts | Lowered:
        if chunk in self.state.chunks:  # the tail changed it: as the writer will save it
            return texts_of(self.state.chunks[chunk], self.state.outputs[chunk])[which]
        found = unpack(self.state.get(part_key(self.run_id, part, chunk)), kind)
        if found is None:
            raise ValueError(f"trial index texts {chunk} of run {self.run_id!r} are unreadable")
        return found  # type: ignore[no-any-return]


def load_index(log: EventStore, run_id: str) -> RunIndex | None:
    get = getattr(log, "get_snapshot", None)
    if get is None:
        return None
    for _ in range(TRIES):  # the head unchanged after the chunks (and the tail's) were read: one save's
        head = get(head_key(run_id))
        found = IndexState.stored(run_id, get, lambda key: read_text(log, key))
        index = _caught_up(log, *found) if found is not None else None
        if get(head_key(run_id)) == head:
            return index
    return None


def _caught_up(log: EventStore, state: IndexState, columns: list[Columns]) -> RunIndex:
    known = getattr(log, "last_of", None)
    last = known(state.run_id) if known is not None else None
    if last is None or last > state.seq:  # the run logged events after the index's save: fold them
        _fold_tail(log, state, columns)
    variants, cases = list(state.variants), list(state.cases)
    return RunIndex(state.run_id, state.catalogue, variants, cases, columns, state, state.seq)


def _fold_tail(log: EventStore, state: IndexState, columns: list[Columns]) -> None:
    for seq, data in log.read_run(state.run_id, state.seq + 1, tags=set(TAGS)):
        state.fold(seq, data)
    for c in sorted(state.dirty):  # chunks the tail changed, and new ones
        cols = columns_of(state.chunks[c], state.variants, state.cases)
        columns[c : c + 1] = [cols]
