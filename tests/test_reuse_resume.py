"""A reusing run cut after any event (what a kill -9 leaves) and resumed: no reuse lost or doubled,
no trial sent that the clean run reused, and the report the clean run gave."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from engine.api import open_engine, spec_from_dict
from engine.events import kinds as k
from engine.events.codec import decode, to_json
from engine.store.projection import run_events
from tests.test_resume_exactly_once import CALLABLES, RUN, RecordingStore, base, cut_copy, outcomes, strip


def timeless(report: Any) -> Any:
    """The report without its clock readings: ages are from the run's start (a cut before it: later)."""
    report = strip(report)
    for variant in report["variants"]:
        for age in ("oldest_age_s", "newest_age_s"):
            variant.get("reuse", {}).pop(age, None)
    return report


def reuses(log: RecordingStore) -> Counter[tuple[str, str, int]]:
    return Counter(
        (e.variant, e.case, e.repeat) for e in run_events(log, RUN) if isinstance(e, k.TrialReused)
    )


async def test_a_reusing_run_cut_anywhere_resumes_exactly_once() -> None:
    store = RecordingStore()
    earlier = base(repeat={"count": 2})
    earlier["variants"] = earlier["variants"][:1]
    reusing = base(repeat={"count": 2}, reuse={"from": "store"})
    async with open_engine(store, callables=CALLABLES) as eng:
        await eng.run(spec_from_dict(earlier), run_id="earlier")
        report = await eng.run(spec_from_dict(reusing), run_id=RUN)
    expected = strip(json.loads(to_json(report)))
    clean_results, _, _ = outcomes(store)
    clean_reuses = reuses(store)
    assert len(clean_reuses) == 8 and max(clean_results.values()) == 1  # variant a reused, b sent
    events, blobs = store.events(), store.blobs()
    first = next(i for i, data in enumerate(events) if decode(data).run_id == RUN)
    last = next(i for i, data in enumerate(events) if isinstance(decode(data), k.RunCompleted) and i > first)
    for cut in range(first + 1, last + 1):
        copy = cut_copy(events, blobs, cut)
        async with open_engine(copy, callables=CALLABLES) as eng:
            resumed = await eng.run(None, run_id=RUN, resume=True)
        results, _, _ = outcomes(copy)
        assert results == clean_results, cut
        assert reuses(copy) == clean_reuses, (cut, "a reuse lost, doubled, or sent instead")
        assert timeless(json.loads(to_json(resumed))) == timeless(expected), cut
