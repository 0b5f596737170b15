"""The kept trial index of a run: its trials' records in chunks, folded by the same handlers as
`RunTrials` (store/projections/trials.py), so the index and a fold of the log cannot disagree.

The writer keeps it in its own transaction (`IndexKeeper`, called by the snapshot keeper): rows are
folded as batches commit, and the chunks that changed are saved every `EVERY` events of the run and
at the batch that ends it, with a head naming the last event folded. Only a few chunks stay in the
writer's memory (the newest, where trials start and end; an older one is read back when a late
event touches it). A reader takes the head and chunks and folds the run's events after the head's
sequence number (`store.trial_index_read`). Codec and keys: `store.trial_index_codec`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engine.events import kinds as k
from engine.events.codec import decode
from engine.store.projection import UNUSABLE
from engine.store.projections.trials import ON_RECORD, TRIALS, TrialRecord, regraded
from engine.store.trial_index import codec
from engine.store.trial_index.codec import (
    Catalogue,
    Columns,
    Head,
    Texts,
    columns_of,
    head_key,
    pack,
    part_key,
    texts_of,
    unpack,
)  # fmt: skip
from engine.store.trial_index.row_positions import TrialRows, cell_of

EVERY = 4096  # run events between two saves of its changed chunks (a reader folds at most these)
KEPT_CHUNKS = 4  # chunks a writer keeps in memory per run after a save: the newest ones
TAGS = TRIALS.tags
Get = Callable[[bytes], bytes | None]
Text = Callable[[str], str]  # an output's text by its blob key


class IndexState:
    """A run's index being folded: the catalogue, where each trial's row is, the chunks in memory."""

    def __init__(self, run_id: str, get: Get, text: Text) -> None:
        self.run_id, self.get, self.text = run_id, get, text
        self.seq = 0
        self.size = codec.CHUNK  # rows per chunk
        self.catalogue = Catalogue()
        self.meta_dirty = True  # a new index saves its catalogue
        self.variants: dict[str, int] = {}
        self.cases: dict[str, int] = {}
        self._pos: TrialRows | None = TrialRows()
        self._stored_columns: list[Columns] = []
        self.chunks: dict[int, list[TrialRecord]] = {}
        self.outputs: dict[int, list[str]] = {}
        self.dirty: set[int] = set()
        self.stored_rows = 0  # rows the stored chunks hold

    @classmethod
    def stored(cls, run_id: str, get: Get, text: Text) -> tuple[IndexState, list[Columns]] | None:
        """The index as saved, with its chunks' columns; None when there is none of this version."""
        head = unpack(get(head_key(run_id)), Head)
        if head is None or head.version != codec.VERSION:
            return None
        state = cls(run_id, get, text)
        state.seq, state.stored_rows, state.meta_dirty, state.size = head.seq, head.rows, False, head.chunk
        state.variants = {name: i for i, name in enumerate(head.variants)}
        state.cases = {name: i for i, name in enumerate(head.cases)}
        catalogue = unpack(get(part_key(run_id, b"m")), Catalogue)
        columns = [
            unpack(get(part_key(run_id, b"c", c)), Columns) for c in range(-(-head.rows // head.chunk))
        ]
        if catalogue is None or any(c is None for c in columns):
            return None
        state.catalogue = catalogue
        state._pos, state._stored_columns = None, columns  # type: ignore[assignment]
        return state, columns  # type: ignore[return-value]

    @property
    def pos(self) -> TrialRows:
        """Each trial's row: made from the stored columns when first needed (a reader whose tail holds
        no trial's event never needs it). Their rows are dense and in order: added again in order,
        each gets the row it had."""
        if self._pos is None:
            self._pos = TrialRows()
            for cols in self._stored_columns:
                for variant, case, repeat in _numbers(cols):
                    self._pos.add(cell_of(variant, case), repeat)
            self._stored_columns = []
        return self._pos

    def chunk(self, c: int) -> list[TrialRecord]:
        found = self.chunks.get(c)
        if found is None:
            found, outputs = [], []
            if c * self.size < self.stored_rows:
                found = unpack(self.get(part_key(self.run_id, b"r", c)), list[TrialRecord])
                texts = unpack(self.get(part_key(self.run_id, b"t", c)), Texts)
                if found is None or texts is None:
                    raise ValueError(f"trial index chunk {c} of run {self.run_id!r} is unreadable")
                outputs = texts.split()
            self.chunks[c], self.outputs[c] = found, outputs
        return found

    def fold(self, seq: int, data: bytes) -> None:
        self.fold_event(seq, decode(data))

    def fold_event(self, seq: int, event: k.AnyEvent) -> None:
        self.seq = seq
        handler = ON_RECORD.get(type(event))
        if handler is None:
            if isinstance(event, (k.ExperimentDefined, k.VariantProposed, k.RegradeStarted)):
                self._catalogued(event)
            return
        variant, case, repeat = event.variant, event.case, event.repeat  # type: ignore[union-attr]
        pos = self._pos if self._pos is not None else self.pos
        v, c = self.variants.get(variant), self.cases.get(case)
        at = None if v is None or c is None else pos.get(cell_of(v, c), repeat)
        size = self.size
        if at is None:
            v = self.variants.setdefault(variant, len(self.variants))
            c = self.cases.setdefault(case, len(self.cases))
            at = pos.add(cell_of(v, c), repeat)
            self.chunk(at // size).append(TrialRecord(variant, case, repeat))
            self.outputs[at // size].append("")
        c = at // size
        rec = (self.chunks.get(c) or self.chunk(c))[at % size]
        done = rec.completed
        try:
            handler(rec, event, self.catalogue.grading)
        except UNUSABLE:  # as Projection.evolve: an event that cannot be folded is skipped
            return
        if rec.completed and not done and rec.output_hash:
            self.outputs[c][at % size] = self.text(rec.output_hash)
        self.dirty.add(c)

    def _catalogued(self, event: k.AnyEvent) -> None:
        cat, self.meta_dirty = self.catalogue, True
        if isinstance(event, k.ExperimentDefined):
            cat.experiment, cat.source, cat.seed, cat.spec = (
                event.spec.name,
                event.source,
                event.spec.seed,
                event.spec,
            )
            for variant in event.spec.variants:
                cat.variants.setdefault(variant.name, variant)
        elif isinstance(event, k.VariantProposed):
            cat.variant_order.setdefault(event.variant.name, len(cat.variant_order))
            cat.proposed[event.variant.name] = event.variant
            cat.variants.setdefault(event.variant.name, event.variant)
        elif isinstance(event, k.RegradeStarted):
            cat.grading = event.grading
            cat.rounds[event.grading] = event.name or f"round {event.grading}"
            for c in range(-(-len(self.pos) // self.size)):
                for r in self.chunk(c):
                    regraded(r)
                self.dirty.add(c)

    def saved(self) -> list[tuple[bytes, bytes]]:
        """The records to put for what changed since the last save (then it counts as saved)."""
        items = []
        for c in sorted(self.dirty):
            records = self.chunks[c]
            items.append(
                (part_key(self.run_id, b"c", c), pack(columns_of(records, self.variants, self.cases), False))
            )
            items.append((part_key(self.run_id, b"r", c), pack(records, False)))
            texts, lowered = texts_of(records, self.outputs[c])
            items.append((part_key(self.run_id, b"t", c), pack(texts, False)))
            items.append((part_key(self.run_id, b"l", c), pack(lowered, False)))
        if self.meta_dirty:
            items.append((part_key(self.run_id, b"m"), pack(self.catalogue)))
        head = Head(codec.VERSION, self.seq, len(self.pos), self.size, list(self.variants), list(self.cases))
        items.append((head_key(self.run_id), pack(head)))
        self.dirty.clear()
        self.meta_dirty = False
        self.stored_rows = len(self.pos)
        return items

    def evict(self) -> None:
        """Drop the chunks saved and not among the newest: a late event reads one back."""
        newest = (len(self.pos) - 1) // self.size
        for c in [c for c in self.chunks if c <= newest - KEPT_CHUNKS and c not in self.dirty]:
            del self.chunks[c], self.outputs[c]


def _numbers(cols: Columns) -> Iterable[tuple[int, int, int]]:
    """(variant, case, repeat) of a stored chunk's rows, as the index numbers them."""
    from array import array

    vs, cs, rs = array("H", cols.variant), array("I", cols.case), array("I", cols.repeat)
    return zip(vs, cs, rs, strict=True)
