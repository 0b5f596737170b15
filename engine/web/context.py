"""What every request of one web app shares: the read-only log and the per-run views."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from engine.errors import NotFoundError
from engine.events.codec import to_json
from engine.presentation.matrix import build_rows
from engine.store.contract import EventStore
from engine.store.projections.report_builder import build_report
from engine.views.queries import replay_json, stored_report, stored_report_and_labels
from engine.views.report_labels import with_labels
from engine.web.data import RunView, RunViews, round_view

T = TypeVar("T")
MEMO_ENTRIES = 64


def defined(view: RunView) -> RunView:
    if view.state.spec is None:
        raise NotFoundError(f"run {view.trials.run_id!r} has no experiment definition")
    return view


@dataclass
class WebContext:
    log: EventStore
    token: str | None = None
    can_label: bool = False  # `engine serve --token` on a writable store: people may label outputs
    views: RunViews = field(init=False)
    _memo: dict[tuple[object, ...], tuple[int, object]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.views = RunViews(self.log)

    def memo(self, key: tuple[object, ...], compute: Callable[[], T]) -> T:
        """compute() once per state of the log: any append (a live run) computes it again. The runs
        list and comparisons scan whole runs; repeated views of a quiet store then cost nothing."""
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
        latest = self.views.indexed(run_id, lambda v: v.trials.grading)
        if grading >= latest:
            return self.views.indexed(run_id, read)
        return read(self.memo(("round", run_id, grading), lambda: round_view(self.log, run_id, grading)))

    def report(self, run_id: str, grading: int | None = None) -> bytes:
        """`engine report --json`'s bytes: the stored report, else (a live or killed run) the report
        built from the kept run state, the same fold `engine replay` runs from scratch."""
        stored, labelled = stored_report_and_labels(self.log, run_id, grading)
        if stored is not None:
            return with_labels(self.log, run_id, stored, labelled)
        if grading is not None:
            return replay_json(self.log, run_id, grading)
        live = self.views.use(run_id, lambda v: to_json(build_report(defined(v).state)))
        return with_labels(self.log, run_id, live, labelled)

    def pass_rate(self, run_id: str) -> float | None:
        """The run's overall pass rate from its stored report (None while it has none)."""
        data = stored_report(self.log, run_id)
        if data is None:
            return None
        variants = json.loads(data).get("variants", [])
        scored = sum(v.get("scored", 0) for v in variants)
        return round(sum(v.get("passed", 0) for v in variants) / scored, 4) if scored else None

    def verdicts(self, run_id: str) -> dict[tuple[str, str], str]:
        def read(view: RunView) -> dict[tuple[str, str], str]:
            aggregation = view.spec.scoring.replica_aggregation if view.spec else None
            _, rows = build_rows(view.trials, aggregation)
            return {(v, r.case): c.verdict for r in rows for v, c in r.cells.items()}

        return self.views.use(run_id, read)

    def verdict_changes(self, base_id: str, cand_id: str) -> dict[str, dict[str, list[dict[str, str]]]]:
        """Cases whose verdict went from pass to fail/flaky (or back) in the candidate, variant by
        variant (matched by name; two single-variant runs are matched whatever their names): what
        changed, significant or not. `newly_failing` holds the ones significant on their replicas."""
        base, cand = self.verdicts(base_id), self.verdicts(cand_id)
        base_vs, cand_vs = {v for v, _ in base}, {v for v, _ in cand}
        rename = {} if base_vs & cand_vs or len(base_vs) != 1 or len(cand_vs) != 1 else {
            next(iter(cand_vs)): next(iter(base_vs))}  # fmt: skip
        failing, passing = [], []
        for (variant, case), now in sorted(cand.items()):
            before = base.get((rename.get(variant, variant), case))
            row = {"variant": variant, "case": case, "base": before or "", "cand": now}
            if before == "pass" and now in ("fail", "flaky"):
                failing.append(row)
            elif before in ("fail", "flaky") and now == "pass":
                passing.append(row)
        return {"verdict_changes": {"failing": failing, "passing": passing}}
