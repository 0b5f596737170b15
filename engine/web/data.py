"""What the web view reads from the log, folded incrementally and kept per run.

A page or an API call on a live run must not replay the whole run each time: each run's trials
projection is kept with the last sequence number it has seen, and a request folds only the events
appended since. Only the few most recently viewed runs are kept, so the server's memory stays flat
however many runs the store holds.

The matrix, the trial page, the trials API and the matrix's downloads read the run's kept trial
index instead (`RunViews.indexed`: its rows' columns and the events after its last save, read per
request and let go after it), and fold the log only for a run that has no index of this version.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from engine.events import kinds as k
from engine.events.codec import decode
from engine.events.spec import ExperimentSpec, VariantSpec
from engine.store.contract import EventStore
from engine.store.projections.run_state import RUN_STATE, RunState
from engine.store.projections.summary import SUMMARY, RunSummary
from engine.store.projections.trials import TRIALS, RunTrials, TrialRecord
from engine.store.trial_index.read import RunIndex, load_index
from engine.store.trial_index.rows import index_trials
from engine.store.trial_index.search import search_rows
from engine.store.trial_index.table import Table, table_of
from engine.views.export import output_of

T = TypeVar("T")
KEPT_RUNS = 4  # runs whose folded trials stay in memory
VIEW_TAGS = set(TRIALS.tags) | set(SUMMARY.tags) | set(RUN_STATE.tags) | {"variant.proposed"}


@dataclass(slots=True)
class RunView:
    """A run's trials and catalogue (its spec and every variant, proposed ones too)."""

    trials: RunTrials
    summary: RunSummary
    state: RunState  # what the report and compare fold: kept, so a comparison folds nothing twice
    spec: ExperimentSpec | None = None
    variants: dict[str, VariantSpec] = field(default_factory=dict)
    seen_seq: int = 0
    rounds: dict[int, str] = field(default_factory=lambda: {0: "original"})  # grading rounds: their names

    @property
    def baseline(self) -> str | None:
        return next(iter(self.state.variants), None)

    def full(self, rec: TrialRecord) -> TrialRecord:
        return rec

    def output(self, log: EventStore, rec: TrialRecord) -> str | None:
        return output_of(log, rec)

    def with_transcript(self) -> list[tuple[int, TrialRecord]]:
        return rows_with_transcript(self.index, self.transcripts_kept)

    def searched(self, needle: str = "", pattern: re.Pattern[str] | None = None,
                 reasons: bool = False) -> Callable[[TrialRecord], bool] | None:  # fmt: skip
        return None  # each trial's output is read from its blob

    def evolve(self, event: k.AnyEvent) -> None:
        if isinstance(event, k.ExperimentDefined):
            self.spec = event.spec
            for variant in event.spec.variants:
                self.variants.setdefault(variant.name, variant)
        elif isinstance(event, k.VariantProposed):
            self.variants.setdefault(event.variant.name, event.variant)
        elif isinstance(event, k.RegradeStarted):
            self.rounds[event.grading] = event.name or f"round {event.grading}"
        TRIALS.evolve(self.trials, event)
        SUMMARY.evolve(self.summary, event)
        RUN_STATE.evolve(self.state, event)


@dataclass(slots=True)
class IndexedView:
    """A run as its kept trial index has it, for one request: what the matrix and trials read of a
    RunView (trials, spec, variants, rounds), the full record of a trial read when it is described."""

    trials: RunTrials  # the catalogue only: no records (the table has them)
    spec: ExperimentSpec | None
    variants: dict[str, VariantSpec]
    rounds: dict[int, str]
    index: RunIndex
    table: Table
    texts: dict[int, list[str]] = field(default_factory=dict)  # chunks' outputs read for this request
    # the rows with a transcript, per (run, index state): shared by a server's requests (RunViews)
    transcripts_kept: dict[tuple[str, int], list[tuple[int, TrialRecord]]] | None = None

    @property
    def baseline(self) -> str | None:
        return next(iter(self.index.catalogue.proposed), None)

    def full(self, rec: TrialRecord) -> TrialRecord:
        row = rec.row  # type: ignore[attr-defined]
        return self.index.records(row // self.index.size)[row % self.index.size]

    def output(self, log: EventStore, rec: TrialRecord) -> str | None:
        """output_of(log, rec), from the index's kept texts (no walk of the store's blobs)."""
        if not (rec.completed and rec.output_hash):
            return None
        c, i = divmod(rec.row, self.index.size)  # type: ignore[attr-defined]
        if c not in self.texts:
            self.texts[c] = self.index.texts(c).split()
        return self.texts[c][i]

    def with_transcript(self) -> list[tuple[int, TrialRecord]]:
        return rows_with_transcript(self.index, self.transcripts_kept)

    def searched(self, needle: str = "", pattern: re.Pattern[str] | None = None,
                 reasons: bool = False) -> Callable[[TrialRecord], bool] | None:  # fmt: skip
        """Whether a trial's output (or a grader's reason) holds the text: one scan of the kept texts."""
        hits = search_rows(self.index, needle, pattern, reasons)
        return lambda rec: rec.row in hits  # type: ignore[attr-defined]


def indexed_view(index: RunIndex) -> IndexedView:
    cat = index.catalogue
    trials = index_trials(index, [])
    return IndexedView(trials, cat.spec, dict(cat.variants), dict(cat.rounds), index, table_of(index))


def new_view(run_id: str) -> RunView:
    return RunView(RunTrials(run_id), RunSummary(run_id), RunState(run_id))


class RunViews:
    """Per-run views, folded from the log on demand, the most recently used few kept."""

    def __init__(self, log: EventStore, kept: int = KEPT_RUNS) -> None:
        self.log = log
        self.kept = kept
        self._views: OrderedDict[str, RunView] = OrderedDict()
        # requests fold from worker threads; re-entrant so a comparison can hold two runs' views
        self._lock = threading.RLock()
        self._transcripts: dict[tuple[str, int], list[tuple[int, TrialRecord]]] = {}

    def use(self, run_id: str, read: Callable[[RunView], T]) -> T:
        """read(view) with the run's view caught up with the log; one reader at a time (a view is
        folded in place). Nested calls (two runs at once) keep both views: `kept` is at least 2."""
        with self._lock:
            view = self._views.pop(run_id, None) or new_view(run_id)
            self._views[run_id] = view
            while len(self._views) > self.kept:
                self._views.popitem(last=False)
            self._catch_up(view)
            return read(view)

    def indexed(self, run_id: str, read: Callable[[RunView | IndexedView], T]) -> T:
        """read(view) of the run from its kept trial index (read for this call only: memory does not
        grow with the run); from the folded view when the run has no index of this version."""
        index = load_index(self.log, run_id)
        if index is None:
            return self.use(run_id, read)
        view = indexed_view(index)
        view.transcripts_kept = self._transcripts
        return read(view)

    def _catch_up(self, view: RunView) -> None:
        for seq, data in self.log.read_run(view.trials.run_id, from_seq=view.seen_seq + 1, tags=VIEW_TAGS):
            view.evolve(decode(data))
            view.seen_seq = seq


def round_view(log: EventStore, run_id: str, grading: int) -> RunView:
    """The run as an earlier grading round left it: later rounds' regrades and grades are skipped."""
    view = RunView(RunTrials(run_id), RunSummary(run_id), RunState(run_id, target_grading=grading))
    for seq, data in log.read_run(run_id, tags=VIEW_TAGS):
        event = decode(data)
        if not (isinstance(event, (k.RegradeStarted, k.TrialGraded)) and event.grading > grading):
            view.evolve(event)
        view.seen_seq = seq
    return view


def rows_with_transcript(index: Any, kept: dict[Any, Any] | None) -> list[tuple[int, TrialRecord]]:
    """(row, record) of each trial with a transcript: the index keeps no transcript column, so
    the records are read once per state of the run (a finished run's: once), then kept."""
    key = (index.run_id, index.seq)
    kept = kept if kept is not None else {}
    if key not in kept:
        if len(kept) >= KEPT_RUNS:
            kept.pop(next(iter(kept)))
        kept[key] = [(c * index.size + i, rec) for c in range(len(index.columns))
                     for i, rec in enumerate(index.records(c)) if rec.transcript_hash]  # fmt: skip
    return kept[key]
