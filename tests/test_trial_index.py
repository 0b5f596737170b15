"""The kept trial index: index + tail folds to what a full fold of the log gives (whatever the
batches, grades arriving in later batches, regrades), under kill -9 of a real writing process; an
index of another version is rebuilt, never read; `engine rebuild` writes the bytes the writer kept;
and the matrix, its search and the trials API read from it answer exactly as from the full fold."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.events import kinds as k
from engine.events.codec import encode
from engine.events.kinds import TAG_BY_TYPE
from engine.events.spec import CaseSpec, ExperimentSpec, VariantSpec
from engine.store.blobs import pack_blob
from engine.store.kept.snapshots import rebuild
from engine.store.log.event_log import EventLog
from engine.store.open import open_event_log
from engine.store.projections.trials import load_trials
from engine.store.trial_index import codec as trial_index_codec
from engine.store.trial_index import index as trial_index
from engine.store.trial_index.codec import head_key
from engine.store.trial_index.read import load_index
from engine.web.data import RunViews, indexed_view, new_view
from engine.web.matrix_view import matrix, query_of
from engine.web.trials_api import TrialFilter, trials_page
from tests.killed_writers import killed_writers

RUN = "r"
OUTPUTS = ["Paris is the capital.", "Straße in München", "İstanbul", "ΣΟΦΙΑΣ ΟΔΟΣ", "naïve café",
           "東京タワー", "", "line one\nline two", "error 42 (sure)", "PARIS?"]  # fmt: skip
BLOBS = [pack_blob(text.encode()) for text in OUTPUTS]
REASONS = ["names Paris", "wrong city", "", "unparseable ß"]
QUERIES = [
    {}, {"show": "failing"}, {"show": "errors"}, {"show": "grading_errors"}, {"show": "differs"},
    {"show": "flaky"}, {"show": "regressed"}, {"tag": "geo"}, {"sort": "-score"}, {"sort": "latency"},
    {"sort": "-cost"}, {"per_page": "2", "page": "2"}, {"q": "paris"}, {"q": "ß"}, {"q": "σοφιας"},
    {"q": "i̇stanbul"}, {"q": "wrong"}, {"q": "timeout"}, {"q": "東京"}, {"q": "^pa", "regex": "1"},
    {"q": "s$", "regex": "1"}, {"q": "one.line", "regex": "1"}, {"q": "(?s)one.line", "regex": "1"},
    {"q": r"\d+ \(sure\)", "regex": "1"}, {"q": "x*", "regex": "1"}, {"q": "capital", "show": "failing"},
    {"repeats": "1"}, {"q": "wrong", "repeats": "1"}, {"sort": "ttft"}, {"sort": "-ttft"},
]  # fmt: skip
FILTERS = [TrialFilter(), TrialFilter(variant="b"), TrialFilter(status="fail"), TrialFilter(status="error"),
           TrialFilter(case="c1", variant="a"), TrialFilter(tag="geo"), TrialFilter(q="paris"),
           TrialFilter(q="straße"), TrialFilter(q="no answer"), TrialFilter(limit=3, offset=2),
           TrialFilter(status="grading_error")]  # fmt: skip


def header(variants: int, cases: int) -> list[k.Event]:
    spec = ExperimentSpec(
        name="ix", variants=[VariantSpec(name=n) for n in "abc"[:variants]],
        cases=[CaseSpec(id=f"c{i}", prompt=f"question {i} ¿Paris?" if i % 2 else f"q{i}",
                        expected="Paris" if i % 3 == 0 else None, tags=["geo"] if i % 2 else [])
               for i in range(cases)],
    )  # fmt: skip
    return [k.ExperimentDefined(run_id=RUN, spec=spec, spec_hash="h")]


@st.composite
def event_runs(draw: st.DrawFn) -> list[k.Event]:
    variants, cases = draw(st.integers(1, 3)), draw(st.integers(1, 5))
    events = header(variants, cases)
    grading = 0
    for _ in range(draw(st.integers(0, 40))):
        variant, case = "abcd"[draw(st.integers(0, variants))], f"c{draw(st.integers(0, cases))}"
        ident = {"run_id": RUN, "variant": variant, "case": case, "repeat": draw(st.integers(0, 2))}
        kind = draw(st.integers(0, 9))
        score = draw(st.sampled_from([None, 0.0, 0.5, 1.0]))
        if kind <= 1:
            events.append(k.TrialStarted(**ident, ts=1.0))
        elif kind <= 4:
            latency, blob = draw(st.sampled_from([1.0, 2.5, 0.1])), draw(st.sampled_from(BLOBS))[0]
            ttft = draw(st.sampled_from([None, 0.4, 0.9]))  # streamed answers and whole ones
            agent = None if ttft is None else k.AgentReport(ttft_ms=ttft, tokens_per_s=50.0)
            events.append(
                k.TrialCompleted(**ident, output_hash=blob, latency_ms=latency, cost_usd=0.1, agent=agent)
            )
        elif kind == 5:
            events.append(
                k.TrialFailed(**ident, error_kind="timeout", error_class="timeout", message="no answer")
            )
        elif kind == 6:
            events.append(k.TrialSkipped(**ident, reason="budget"))
        elif kind == 7:
            grade = k.GraderResult(name="judge", score=score, passed=bool(score),
                                   reason=draw(st.sampled_from(REASONS)),
                                   error="judge_unparseable" if score is None else "")  # fmt: skip
            # a second judge that could not judge a trial the first scored: a grading error all the same
            failed = k.GraderResult(name="second", score=None, passed=False, error="judge_failed")
            grades = [grade, failed] if draw(st.booleans()) else [grade]
            events.append(
                k.TrialGraded(**ident, score=score, passed=bool(score), grades=grades, grading=grading)
            )
        elif kind == 8 and draw(st.booleans()):
            grading += 1
            events.append(k.RegradeStarted(run_id=RUN, grading=grading, name=f"round {grading}"))
        else:
            name = f"p{draw(st.integers(0, 2))}"
            events.append(k.VariantProposed(run_id=RUN, variant=VariantSpec(name=name), index=len(events)))
    return events


def append(log: EventLog, events: list[k.Event], cuts: list[int]) -> None:
    start = 0
    for cut in [*sorted(set(cuts)), len(events)]:
        if start < cut:
            log.append([(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in events[start:cut]], blobs=BLOBS)
            start = cut


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 3 rows, saved every 4 events: a small run has many chunks and a tail."""
    monkeypatch.setattr(trial_index_codec, "CHUNK", 3)
    monkeypatch.setattr(trial_index, "EVERY", 4)


def assert_index_is_the_fold(log: EventLog, context: object = "") -> None:
    index = load_index(log, RUN)
    assert index is not None, context
    full = load_trials(log, RUN)
    kept = [r for c in range(len(index.columns)) for r in index.records(c)]
    assert kept == list(full.records.values()), context
    cat = index.catalogue
    assert (cat.grading, cat.variant_order, cat.proposed) == (full.grading, full.variant_order, full.variants)


def assert_pages_are_the_fold(log: EventLog) -> None:
    views = RunViews(log)
    index = load_index(log, RUN)
    assert index is not None
    folded = views.use(RUN, lambda v: v)
    fresh = indexed_view(index)
    assert fresh.rounds == folded.rounds and fresh.variants == folded.variants
    assert fresh.baseline == folded.baseline
    for params in QUERIES:
        query = query_of(params)
        assert matrix(log, fresh, query) == matrix(log, folded, query), params
    for f in FILTERS:
        assert trials_page(log, fresh, f) == trials_page(log, folded, f), f


@settings(max_examples=40, deadline=None)
@given(event_runs(), st.lists(st.integers(0, 60), max_size=10), st.booleans())
@example(header(1, 1), [], False)
def test_index_and_tail_fold_to_the_full_fold_and_pages_read_the_same(
    tmp_path_factory: pytest.TempPathFactory, events: list[k.Event], cuts: list[int], ended: bool,
) -> None:  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trial_index_codec, "CHUNK", 3)
        patch.setattr(trial_index, "EVERY", 4)
        tail = [k.RunCompleted(run_id=RUN, status="completed")] if ended else []
        with open_event_log(tmp_path_factory.mktemp("ix")) as log:
            append(log, events + tail, cuts)
            assert_index_is_the_fold(log, (cuts, ended))
            assert_pages_are_the_fold(log)
            kept = _index_records(log)
            rebuild(log)
            rebuilt = _index_records(log)
            if ended:  # the writer saved at the run's end: the bytes a rebuild writes
                assert rebuilt == kept
            rebuild(log)
            assert _index_records(log) == rebuilt  # the same bytes every time
            assert_index_is_the_fold(log, "rebuilt")


def _index_records(log: EventLog) -> dict[bytes, bytes]:
    with log._env.begin(db=log._snaps) as txn:  # type: ignore[union-attr]  # noqa: SLF001
        return {bytes(key): bytes(value) for key, value in txn.cursor() if bytes(key).startswith(b"tix\x00")}


def test_an_index_of_another_version_is_rebuilt_never_read(tmp_path: Path, small: None) -> None:
    done = [{"variant": "a", "case": "c0", "repeat": r, "output_hash": BLOBS[1][0]} for r in range(5)]
    events = header(2, 3) + [k.TrialCompleted(run_id=RUN, latency_ms=1.0, **d) for d in done]  # type: ignore[arg-type]
    with open_event_log(tmp_path) as log:
        append(log, events, [2, 4])
        assert load_index(log, RUN) is not None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trial_index_codec, "VERSION", "0.other")
        with open_event_log(tmp_path) as log:
            assert load_index(log, RUN) is None  # read as none: the pages fold the log
            folded = RunViews(log).indexed(RUN, lambda v: matrix(log, v, query_of({})))
            assert folded == RunViews(log).use(RUN, lambda v: matrix(log, v, query_of({})))
            graded = k.TrialGraded(run_id=RUN, variant="a", case="c0", repeat=0, score=1.0, passed=True)
            append(log, [graded], [])  # the writer folds the run again from the log, in this version
            assert_index_is_the_fold(log)


WRITER = """
import sys
from engine.events import kinds as k
from engine.events.codec import encode
from engine.events.kinds import TAG_BY_TYPE
from engine.store.trial_index import codec as trial_index_codec
from engine.store.trial_index import index as trial_index
from engine.store.blobs import pack_blob
from engine.store.open import open_event_log
trial_index_codec.CHUNK, trial_index.EVERY = 4, int(sys.argv[2])
blobs = [pack_blob(f"output {i} ß".encode()) for i in range(5)]
with open_event_log(sys.argv[1], map_size=1 << 22) as log:
    n = log.last_seq()
    while True:
        ident = {"run_id": "w", "variant": f"v{n % 2}", "case": f"c{n % 7}", "repeat": n // 14}
        m = n - 9
        late = {"run_id": "w", "variant": f"v{m % 2}", "case": f"c{m % 7}", "repeat": m // 14}
        done = k.TrialCompleted(**ident, output_hash=blobs[n % 5][0], latency_ms=n % 50)
        events = [k.TrialStarted(**ident), done]
        if n >= 9:  # a grade arriving batches later, for a trial in an older chunk
            events.append(k.TrialGraded(**late, score=(n % 3) / 2, passed=n % 3 == 2))
        if n % 37 == 36:
            events.append(k.RegradeStarted(run_id="w", grading=n // 37 + 1))
        log.append([(e.run_id, TAG_BY_TYPE[type(e)], encode(e)) for e in events], blobs=blobs)
        print(n, flush=True)  # after each durable batch: the test kills after a seeded one
        n += 1
"""


def test_kill_9_of_a_writing_process_leaves_an_index_that_folds_to_the_full_fold(tmp_path: Path) -> None:
    for context in killed_writers(tmp_path, WRITER, max_every=30, max_batches=100):
        with open_event_log(tmp_path) as log:
            index = load_index(log, "w")
            assert index is not None, context
            kept = [r for c in range(len(index.columns)) for r in index.records(c)]
            assert kept == list(load_trials(log, "w").records.values()), context
            assert log.get_snapshot(head_key("w")) is not None
            assert not log.check().problems, context


def test_a_page_reads_the_index_not_a_fold(tmp_path: Path, small: None) -> None:
    """The matrix and the trials API of a run with an index never fold its trials (RunViews.use)."""
    done = [
        {"variant": "ab"[r % 2], "case": f"c{r % 3}", "repeat": r, "output_hash": BLOBS[r % 9][0]}
        for r in range(12)
    ]
    events = header(2, 3) + [k.TrialCompleted(run_id=RUN, latency_ms=1.0, **d) for d in done]  # type: ignore[arg-type]
    with open_event_log(tmp_path) as log:
        append(log, events, [3, 7])
        views = RunViews(log)

        def refuse(run_id: str, read: object) -> None:
            raise AssertionError("folded the run")

        views.use = refuse  # type: ignore[method-assign]
        assert views.indexed(RUN, lambda v: matrix(log, v, query_of({"q": "paris"})))["total"] == 2
        assert views.indexed(RUN, lambda v: trials_page(log, v, TrialFilter(variant="a")))["total"] == 6
        assert new_view(RUN).trials.run_id == RUN


def test_the_index_has_a_database_of_its_own_that_list_never_walks(tmp_path: Path, small: None) -> None:
    """A few hundred bytes a trial: kept beside the snapshots, `list` and `status` would walk them all."""
    from engine.runtime.run_status import list_runs

    done = [k.TrialCompleted(run_id=RUN, latency_ms=1.0, variant="a", case=f"c{r % 3}", repeat=r,
                             output_hash=BLOBS[r % 9][0]) for r in range(6)]  # fmt: skip
    with open_event_log(tmp_path) as log:
        append(log, header(1, 3) + done, [4])
    (tmp_path / "validated").unlink()  # unmarked: the walk is done per database, as each is first read
    with open_event_log(tmp_path, readonly=True) as log:
        assert [s.run_id for s in list_runs(log)] == [RUN]
        assert "index" not in log._walked and load_index(log, RUN) is not None
        assert "index" in log._walked  # walked when first read
        assert log.get_snapshot(b"tix\x00" + RUN.encode()) is not None


def test_an_index_the_writer_cannot_keep_never_fails_an_append(tmp_path: Path, small: None) -> None:
    done = [{"variant": "a", "case": f"c{r % 3}", "repeat": r, "output_hash": BLOBS[0][0]} for r in range(6)]
    events = header(2, 3) + [k.TrialCompleted(run_id=RUN, latency_ms=1.0, **d) for d in done]  # type: ignore[arg-type]
    with open_event_log(tmp_path) as log:
        append(log, events[:4], [])
        with pytest.MonkeyPatch.context() as patch:

            def broken(self: object, seq: int, data: bytes) -> None:
                raise KeyError("a bug in the index")

            patch.setattr(trial_index.IndexState, "fold", broken)
            append(log, events[4:], [])  # appended all the same; the index stays at its last save
        assert len(load_trials(log, RUN).records) == 6
        assert_index_is_the_fold(log)  # its last save, folded forward over the log's tail
        assert_pages_are_the_fold(log)


def test_a_batch_retried_after_the_map_grows_keeps_the_index_it_folded(tmp_path: Path) -> None:
    """A full map abandons the transaction, grows, and appends the same batch again: the writer's index
    already holds it, unless it was saved in the abandoned transaction (catching up from the store
    decoded the whole index, its case names and the spec again, at each growth of the map)."""
    caught_up: list[str] = []
    real = trial_index.IndexState.stored

    def counting(run_id: str, get: object, text: object) -> object:
        caught_up.append(run_id)
        return real(run_id, get, text)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch, open_event_log(tmp_path / "st", map_size=64 << 10) as log:
        patch.setattr(trial_index.IndexState, "stored", staticmethod(counting))
        patch.setattr(trial_index_codec, "CHUNK", 3)  # many chunks, saved at the run's end only
        append(log, header(2, 3), [])
        start = log.map_size()
        for n in range(60):
            skipped = [k.TrialSkipped(run_id=RUN, variant="ab"[i % 2], case=f"c{n}-{i // 2}", repeat=0,
                                      reason="x" * 200) for i in range(40)]  # fmt: skip
            append(log, skipped, [])
        assert log.map_size() >= 4 * start  # it grew, more than once
        assert caught_up == []
        append(log, [k.RunCompleted(run_id=RUN, status="completed")], [])
        assert_index_is_the_fold(log)


def test_an_index_saved_in_an_abandoned_transaction_is_caught_up_again(tmp_path: Path, small: None) -> None:
    """Saved every 4 events, each abandoned batch was saved in its transaction (and its chunks evicted):
    the retried batch folds from the store, and the index is still the fold."""
    with open_event_log(tmp_path / "st", map_size=64 << 10) as log:
        append(log, header(2, 3), [])
        start = log.map_size()
        for n in range(60):
            append(log, [k.TrialSkipped(run_id=RUN, variant="ab"[i % 2], case=f"c{n}-{i // 2}", repeat=0,
                                        reason="x" * 200) for i in range(40)], [])  # fmt: skip
        assert log.map_size() >= 4 * start
        assert_index_is_the_fold(log)


class _Kept:
    """The keeper's view of a store in a transaction: records, the run's logged events, no blobs."""

    def __init__(self) -> None:
        self.records: dict[bytes, bytes] = {}
        self.log: list[tuple[int, str, bytes]] = []

    def get(self, key: bytes) -> bytes | None:
        return self.records.get(key)

    def put(self, key: bytes, value: bytes) -> None:
        self.records[key] = value

    def blob(self, key: str) -> bytes | None:
        return None

    def events(self, run_id: str, from_seq: int, tags: object) -> list[tuple[int, bytes]]:
        return [(seq, data) for seq, tag, data in self.log if seq >= from_seq and tag in tags]  # type: ignore[operator]


def test_an_index_saved_in_an_ending_batch_that_did_not_commit_is_saved_at_the_retry() -> None:
    """The batch that ends a run saves the run's index and drops it from memory; when its transaction
    does not commit, the retried batch (no trial event in it) saves the index again, not nothing."""
    from engine.store.trial_index.keeper import IndexKeeper

    keeper, io = IndexKeeper(), _Kept()
    events = [*header(1, 2), k.TrialStarted(run_id=RUN, variant="a", case="c0", repeat=0)]
    rows = [(seq, TAG_BY_TYPE[type(e)], encode(e)) for seq, e in enumerate(events, start=1)]
    keeper.begin(False)
    keeper.advance(io, RUN, 0, rows, False)
    io.log += rows
    committed = dict(io.records)  # what the store holds before the ending batch
    ending = [(3, TAG_BY_TYPE[k.RunCompleted], encode(k.RunCompleted(run_id=RUN, status="completed")))]
    keeper.begin(False)
    keeper.advance(io, RUN, 2, ending, True)
    assert trial_index.IndexState.stored(RUN, io.get, str)[0].seq == 3  # type: ignore[index]
    io.records = committed  # the transaction did not commit: its puts are gone
    keeper.forget()
    keeper.begin(True)
    keeper.advance(io, RUN, 2, ending, True)  # the same batch, retried
    assert trial_index.IndexState.stored(RUN, io.get, str)[0].seq == 3  # type: ignore[index]
