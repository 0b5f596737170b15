"""Reuse: a trial whose request an earlier run already sent takes that run's output instead of a call.

The scheduler asks `Reuse.find(job)` before it sends a job: one key read in the store's reuse index
(store.kept.reuse_index) and one event read per trial. Repeat i matches an earlier repeat i only (the
repeat index is in the fingerprint), so k repeats reuse k distinct samples; a repeat with no match is
sent. Only outputs are indexed: an error or a timeout is never reused.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import msgspec

from engine.actors.messages import TrialJob
from engine.errors import InputError
from engine.events import kinds as k
from engine.events.codec import decode
from engine.events.spec import ExperimentSpec, ReuseSpec, age_seconds
from engine.store.blobs import read_text
from engine.store.contract import EventStore
from engine.store.kept import reuse_index
from engine.store.kept.read import SUMMARIES, load, run_ids


@dataclass
class Reuse:
    """Where a run may take its outputs from: `runs` (None: any run of the store but its own), none
    made before `oldest_ts` (0: any age)."""

    log: EventStore
    run_id: str
    runs: frozenset[str] | None
    oldest_ts: float = 0.0

    def find(self, job: TrialJob) -> tuple[k.TrialReused, str] | None:
        """The reuse of the newest matching output and the output's text, or None (the job is sent)."""
        found = self.match(job)
        if found is None:
            return None
        source, event = found
        output = read_text(self.log, event.output_hash)  # checked against its hash; missing: damage
        variant, case, repeat = job.key
        reused = k.TrialReused(
            run_id=self.run_id, ts=time.time(), variant=variant, case=case, repeat=repeat,
            output_hash=event.output_hash, latency_ms=event.latency_ms, tokens_in=event.tokens_in,
            tokens_out=event.tokens_out, cost_usd=event.cost_usd, exit_code=event.exit_code,
            attempts=event.attempts, agent=event.agent, fingerprint=job.fingerprint,
            source_run=source.run_id, source_variant=event.variant, source_case=event.case,
            source_ts=source.made_ts,
        )  # fmt: skip
        return reused, output

    def match(self, job: TrialJob) -> tuple[reuse_index.Source, k.TrialCompleted] | None:
        """The newest output this job may take (where it is, and its event), or None: no call, no write."""
        for source, event in self._candidates(job.fingerprint):
            if not isinstance(event, k.TrialCompleted) or event.fingerprint != job.fingerprint:
                continue  # an index record the log does not back is never trusted
            if event.exit_code and not job.request.accept_nonzero_exit:
                continue  # an agent's failed exit, graded there: an error in this run, so it is sent
            return source, event
        return None

    def find_grade(self, fingerprint: str) -> k.GraderResult | None:
        """An earlier grade of the same judge call (graders.judge), named as reused; None: ask the judge."""
        for source, event in self._candidates(fingerprint):
            grades = event.grades if isinstance(event, k.TrialGraded) else []
            for grade in grades:
                if grade.fingerprint == fingerprint and not grade.error:
                    return msgspec.structs.replace(grade, reused_from=grade.reused_from or source.run_id)
        return None

    def find_verdict(self, fingerprint: str) -> k.PairwiseJudged | None:
        """An earlier pairwise verdict on the same call (graders.pairwise); None: ask the judge."""
        for source, event in self._candidates(fingerprint):
            if isinstance(event, k.PairwiseJudged) and event.fingerprint == fingerprint and not event.error:
                return msgspec.structs.replace(event, reused_from=event.reused_from or source.run_id)
        return None

    def _candidates(self, fingerprint: str) -> Iterator[tuple[reuse_index.Source, k.AnyEvent | None]]:
        """The indexed events of this fingerprint that this run may take, newest first (read lazily:
        the first that serves ends the reads)."""
        for source in reversed(reuse_index.sources(self.log, fingerprint)):
            if self._allowed(source):
                yield source, self._event(source.seq)

    def _allowed(self, source: reuse_index.Source) -> bool:
        if source.run_id == self.run_id or source.made_ts < self.oldest_ts:
            return False
        return self.runs is None or source.run_id in self.runs

    def _event(self, seq: int) -> k.AnyEvent | None:
        get_many = getattr(self.log, "get_many", None)  # one read, where the store has it
        rows = get_many([seq]) if get_many is not None else list(self.log.read(seq, seq))
        return decode(rows[0][1]) if rows else None


def reuse_for(log: EventStore, spec: ExperimentSpec, run_id: str, label: str) -> Reuse | None:
    """The run's reuse as its [reuse] table says (None: off). A named run the store does not hold is
    bad input (exit 2); "last" with no earlier run of this experiment reuses nothing."""
    table = spec.reuse
    if table is None or not table.enabled:
        return None
    try:
        oldest = time.time() - age_seconds(table.max_age) if table.max_age else 0.0
    except ValueError as exc:
        raise InputError(label, "reuse.max_age", f"{exc}, got {table.max_age!r}") from None
    return Reuse(log, run_id, _runs(log, table, spec.name, run_id, label), oldest)


def _runs(
    log: EventStore, table: ReuseSpec, experiment: str, run_id: str, label: str
) -> frozenset[str] | None:
    if table.from_ == "store":
        return None
    known = run_ids(log)
    if table.from_ == "last":
        earlier = (
            r for r in reversed(known) if r != run_id and load(log, SUMMARIES, r).experiment == experiment
        )
        last = next(earlier, None)
        return frozenset() if last is None else frozenset({last})
    missing = [r for r in table.from_ if r not in known]
    if missing:
        raise InputError(label, "reuse.from", f"no run {missing[0]!r} in this store to reuse from")
    return frozenset(table.from_)
