"""The web view's kept reports and comparisons: one build per (run, position), never a stale one.
An append to a run moves its position: the next view builds again and shows the new events."""

from __future__ import annotations

import json
import time
from pathlib import Path

import msgspec

from engine.events import kinds as k
from engine.events.codec import encode
from engine.runtime.run_status import run_state
from engine.store.log.event_log import EventLog
from engine.store.open import open_event_log
from engine.views.compare.comparison import compare_states
from engine.views.current_report import current_report_json
from engine.web.context import WebContext
from engine.web.run_page import run_body, run_fragment
from tests.serve_helpers import make_store
from tests.verdict_oracle import kept_verdicts, verdict_changes


def append(log: EventLog, *events: k.Event) -> None:
    log.append([(e.run_id, k.TAG_BY_TYPE[type(e)], encode(e)) for e in events])


def test_viewers_share_one_report_until_the_run_moves(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    with open_event_log(store) as log:
        ctx = WebContext(log)
        first = [ctx.report("r1") for _ in range(3)]
        run_body(ctx, "r1", "")
        run_fragment(ctx, "r1", "")
        assert ctx.reports.builds == 1 and first[0] == first[1] == first[2]
        append(log, k.RunCancelled(run_id="r1", ts=time.time(), reason="stop"))
        moved = ctx.report("r1")
        assert ctx.reports.builds == 2 and moved != first[0]
        assert json.loads(moved)["status"] == "cancelled"
        assert moved == current_report_json(log, "r1")  # what `engine report --json` prints now
        assert ctx.report("r2") == current_report_json(log, "r2")  # another run: its own entry


def test_a_comparison_is_kept_per_position_of_both_runs(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    with open_event_log(store) as log:
        ctx = WebContext(log)
        kept, _ = ctx.comparisons.get("r1", "r2")
        again, _ = ctx.comparisons.get("r1", "r2")
        assert ctx.comparisons.builds == 1 and again is kept
        base, cand = run_state(log, "r1"), run_state(log, "r2")
        expected = json.loads(msgspec.json.encode(compare_states(base, cand)))
        expected.update(verdict_changes(kept_verdicts(base), kept_verdicts(cand)))
        assert kept == expected  # from the stored reports: the figures compare_states builds itself
        append(log, k.RunMarked(run_id="r2", ts=time.time(), mark="red"))  # the candidate moved
        ctx.comparisons.get("r1", "r2")
        assert ctx.comparisons.builds == 2
