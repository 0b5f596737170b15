"""The writer's side of the trial index: folded as batches commit, inside the store's write
transaction, and saved (the chunks that changed, and the head) every `EVERY` events of a run and at
the batch that ends it. `rebuild_index` folds it again from the log, to the same bytes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.store.blobs import unpack_blob
from engine.store.contract import EventStore
from engine.store.trial_index import index as trial_index
from engine.store.trial_index.index import TAGS, IndexState

KEPT_RUNS = 16  # runs whose index a writer keeps in memory
Put = Callable[[bytes, bytes], None]


class IndexKeeper:
    def __init__(self) -> None:
        self._cache: dict[str, IndexState] = {}
        self._unsaved: dict[str, int] = {}
        self._saved: set[str] = set()  # runs whose index was saved in the current transaction
        self._abandoned: dict[str, IndexState] = {}
        self._retried: set[str] = set()  # runs whose cached state may hold the retried batch already
        self._resave: set[str] = set()  # runs whose save was in a transaction that did not commit

    def forget(self) -> None:
        """The transaction was abandoned. The runs' states not saved in it are kept aside for the same
        batch appended again at the same place (a full map grows, then the batch is retried): catching
        up from the store instead decoded the columns of every chunk, the case names and the spec again,
        a second copy of each beside the live run's (benchmarks/README.md, "Live memory, round three").
        A state saved in it is dropped: its chunks counted as saved, and may have been evicted."""
        self._abandoned = {run: state for run, state in self._cache.items() if run not in self._saved}
        self._resave |= self._saved
        self._unsaved = {run: n for run, n in self._unsaved.items() if run in self._abandoned}
        self._cache.clear()
        self._saved.clear()

    def begin(self, again: bool) -> None:
        """A batch's transaction starts; `again`: the batch last folded, retried at the same place (its
        transaction failed). The states that fold it already (and were not saved in that transaction)
        are the only ones trusted to hold it: never a state left by a batch of several pieces."""
        self._retried = set()
        if again:
            self._resave |= self._saved
            for run in self._saved:  # the failure came after the keepers: no `forget`
                self._cache.pop(run, None)
                self._unsaved.pop(run, None)
            self._cache.update(self._abandoned)
            self._retried = set(self._cache)
        else:
            self._unsaved = {run: n for run, n in self._unsaved.items() if run in self._cache}
        self._abandoned = {}
        self._saved.clear()

    def advance(
        self, io: object, run_id: str, prior: int, rows: list[tuple[int, str, bytes]], ending: bool,
        events: dict[int, Any] | None = None,
    ) -> None:  # fmt: skip
        """`events`: the rows' events decoded already (by seq), shared with the other kept projections.
        A run's index is dropped from memory once saved at the batch that ends the run (its report
        is built next, in the memory the index held); a later batch of the run with a trial event
        catches up from the store, one without (the report's) changes nothing."""
        untouched = run_id not in self._cache and run_id not in self._resave
        if untouched and not any(tag in TAGS for _, tag, _ in rows):
            return  # nothing of the index's: what is stored stays true, and nothing is loaded for it
        state = self._cache.pop(run_id, None)
        if len(self._cache) >= KEPT_RUNS:  # runs this process no longer writes to
            oldest = next(iter(self._cache))
            del self._cache[oldest]
            self._unsaved.pop(oldest, None)
        folded = run_id in self._retried and state is not None and state.seq == rows[-1][0] > prior
        if not folded and (state is None or state.seq != prior):
            state = self._caught_up(io, run_id, prior)
            self._unsaved[run_id] = trial_index.EVERY  # caught up: worth saving now
        assert state is not None
        state.get, state.text = io.get, _blob_text(io)  # type: ignore[attr-defined]  # this transaction's
        for seq, tag, data in [] if folded else rows:
            if tag in TAGS and events is not None:
                state.fold_event(seq, events[seq])
            elif tag in TAGS:
                state.fold(seq, data)
        state.seq = rows[-1][0]
        self._cache[run_id] = state
        # a state that folded the batch already counted its rows in the abandoned transaction
        unsaved = self._unsaved[run_id] = self._unsaved.get(run_id, 0) + (0 if folded else len(rows))
        if ending or unsaved >= trial_index.EVERY:
            self._saved.add(run_id)  # before the puts: a full map may stop them half way
            for key, value in state.saved():
                io.put(key, value)  # type: ignore[attr-defined]
            state.evict()
            self._unsaved[run_id] = 0
            self._resave.discard(run_id)
        if ending:
            del self._cache[run_id]
            self._unsaved.pop(run_id, None)

    def _caught_up(self, io: object, run_id: str, prior: int) -> IndexState:
        get: Callable[[bytes], bytes | None] = io.get  # type: ignore[attr-defined]
        text = _blob_text(io)
        found = IndexState.stored(run_id, get, text) if prior else None
        state = found[0] if found is not None and found[0].seq <= prior else None
        if state is None:
            state = IndexState(run_id, get, text)
        if state.seq < prior:
            for seq, data in io.events(run_id, state.seq + 1, TAGS):  # type: ignore[attr-defined]
                state.fold(seq, data)
        state.seq = prior
        return state


def _blob_text(io: object) -> Callable[[str], str]:
    blob = getattr(io, "blob", None)
    if blob is None:  # a store that cannot read blobs in its transaction: no index (readers fold the log)
        raise NotImplementedError("the trial index reads outputs in the write transaction")

    def text(key: str) -> str:
        stored = blob(key)
        return "" if stored is None else unpack_blob(stored).decode("utf-8", errors="replace")

    return text


def rebuild_index(log: EventStore, run_id: str, last: int) -> list[tuple[bytes, bytes]]:
    """The run's index folded from the log up to its `last` event: the records to put (into
    snapshots cleared before)."""

    def text(key: str) -> str:
        stored = log.get_blob(key)
        return "" if stored is None else unpack_blob(stored).decode("utf-8", errors="replace")

    state = IndexState(run_id, lambda key: None, text)
    for seq, data in log.read_run(run_id, tags=set(TAGS)):
        state.fold(seq, data)
    state.seq = last
    return state.saved()
