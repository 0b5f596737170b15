"""What every request of one web app shares: the read-only log and the per-run views."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import msgspec

from engine.errors import InputError
from engine.store.contract import EventStore
from engine.views.queries import stored_report
from engine.web.compare_reads import Comparisons
from engine.web.data import RunView, RunViews, round_view
from engine.web.report_cache import Reports

T = TypeVar("T")


class _Counts(msgspec.Struct):
    scored: int = 0
    passed: int = 0


class _Counted(msgspec.Struct):
    """A stored report's variant counts alone: decoding skips its cases (10,000 on a big run)."""

    variants: list[_Counts] = []


MEMO_ENTRIES = 64


@dataclass
class WebContext:
    log: EventStore
    token: str | None = None
    can_label: bool = False  # `engine serve --token` on a writable store: people may label outputs
    views: RunViews = field(init=False)
    reports: Reports = field(init=False)
    comparisons: Comparisons = field(init=False)
    _memo: dict[tuple[object, ...], tuple[int, object]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.views = RunViews(self.log)
        self.reports = Reports(self.log)
        self.comparisons = Comparisons(self.log, self.reports)

    def memo(self, key: tuple[object, ...], compute: Callable[[], T]) -> T:
        """compute() once per state of the log: any append (a live run) computes it again. The runs
        list reads every run; repeated views of a quiet store then cost nothing."""
        seq = getattr(self.log, "commits", self.log.last_seq)()  # any commit: without reading events
        found = self._memo.get(key)
        if found is not None and found[0] == seq:
            return found[1]  # type: ignore[return-value]
        if len(self._memo) >= MEMO_ENTRIES:
            self._memo.clear()
        value = compute()
        self._memo[key] = (seq, value)
        return value

    def at_round(self, run_id: str, grading: int | None, read: Callable[[RunView], T]) -> T:
        """read(view) of the run as grading round `grading` left it (None or the latest: the kept view)."""
        if grading is None:
            return self.views.indexed(run_id, read)
        latest, rounds = self.views.indexed(run_id, lambda v: (v.trials.grading, sorted(v.rounds)))
        if grading not in rounds and grading != latest:
            named = ", ".join(map(str, rounds))
            expected = f"expected one of this run's grading rounds ({named}), got {grading}"
            raise InputError("query", "grading", expected)
        if grading >= latest:
            return self.views.indexed(run_id, read)
        return read(self.memo(("round", run_id, grading), lambda: round_view(self.log, run_id, grading)))

    def report(self, run_id: str, grading: int | None = None) -> bytes:
        """`engine report --json`'s bytes: the stored report while it is current, else the report
        built from the kept run state; kept per (run, round, the run's log position), so live
        viewers share one build (report_cache.py)."""
        return self.reports.report(run_id, grading)

    def pass_rate(self, run_id: str) -> float | None:
        """The run's overall pass rate from its stored report (None while it has none)."""
        data = stored_report(self.log, run_id)
        if data is None:
            return None
        variants = msgspec.json.decode(data, type=_Counted).variants  # the rest of the report skipped
        scored = sum(v.scored for v in variants)
        return round(sum(v.passed for v in variants) / scored, 4) if scored else None
