"""The server's search of agent transcripts, as the HTML file's search covers them: a trial matches
when a message's text, a tool call's name or its arguments hold the searched text. Transcripts stay
blobs (the kept index holds outputs and reasons only), so a search reads the transcripts of the
trials that have one: agent runs, whose trials are few and slow. Which trials have one is read from
the index's records once per state of the run and kept (IndexedView.with_transcript)."""

from __future__ import annotations

from collections.abc import Callable

from engine.presentation.transcript import conversation
from engine.store.contract import EventStore
from engine.store.projections.trials import TrialRecord
from engine.views.export import transcript_of
from engine.web.data import IndexedView, RunView

Hit = Callable[[str], bool]


def transcript_holds(log: EventStore, rec: TrialRecord, hit: Hit) -> bool:
    if not rec.transcript_hash:
        return False
    for m in conversation(transcript_of(log, rec)):
        if hit(m.content) or any(hit(c.name) or hit(c.arguments) for c in m.tool_calls):
            return True
    return False


def transcript_rows(log: EventStore, view: IndexedView, hit: Hit) -> set[int]:
    """The index rows whose transcript holds the text (the rows with one are found once per state
    of the run: a run without transcripts costs a search nothing after its first)."""
    return {row for row, rec in view.with_transcript() if transcript_holds(log, rec, hit)}


def folded_search(log: EventStore, view: RunView, hit: Hit) -> Callable[[TrialRecord], bool]:
    """A folded view's `searched`: a trial's grader reasons, output or transcript hold the text."""

    def holds(rec: TrialRecord) -> bool:
        if any(hit(g.reason) for g in rec.grades if g.reason):
            return True
        if rec.completed and hit(view.output(log, rec) or ""):
            return True
        return transcript_holds(log, rec, hit)

    return holds
