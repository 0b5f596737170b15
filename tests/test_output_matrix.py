"""The output matrix's cells, filters, search and sort, on a trials projection folded from real events:
an errored cell and an unscorable one read as such (with their class), never as failures."""

from __future__ import annotations

import pytest

from engine.errors import InputError
from engine.events import kinds as k
from engine.events.spec import CaseSpec, ExperimentSpec, VariantSpec
from engine.presentation.matrix import build_rows
from engine.presentation.matrix_query import MatrixQuery, check, select
from engine.store.projections.trials import TRIALS, RunTrials

OUTPUTS = {"h-paris": "Paris is the capital.", "h-lyon": "Lyon, I think.", "h-odd": "Answer: 42 (sure)"}


def fold() -> RunTrials:
    spec = ExperimentSpec(
        name="m", variants=[VariantSpec(name="a"), VariantSpec(name="b")],
        cases=[CaseSpec(id="fr", prompt="Capital of France?", expected="Paris", tags=["geo"]),
               CaseSpec(id="crash", prompt="Say hi"), CaseSpec(id="odd", prompt="Pick a number")],
    )  # fmt: skip
    events: list[k.AnyEvent] = [k.ExperimentDefined(run_id="r", spec=spec, spec_hash="x")]

    def done(variant: str, case: str, output: str, score: float | None, latency: float, **grade: str) -> None:
        ttft = {("a", "fr"): 9.0, ("b", "fr"): 25.0, ("b", "crash"): 5.0}.get((variant, case))  # streamed
        agent = None if ttft is None else k.AgentReport(ttft_ms=ttft, tokens_per_s=40.0)
        events.append(k.TrialCompleted(run_id="r", variant=variant, case=case, repeat=0, output_hash=output,
                                       latency_ms=latency, agent=agent))  # fmt: skip
        result = k.GraderResult(name="judge", score=score, passed=bool(score), **grade)  # type: ignore[arg-type]
        events.append(k.TrialGraded(run_id="r", variant=variant, case=case, repeat=0, score=score,
                                    passed=bool(score), grades=[result]))  # fmt: skip

    done("a", "fr", "h-paris", 1.0, 10.0, reason="names Paris")
    done("b", "fr", "h-lyon", 0.0, 30.0, reason="wrong city")
    events.append(k.TrialFailed(run_id="r", variant="a", case="crash", repeat=0, error_kind="timeout",
                                error_class="timeout", message="no answer in 5 s"))  # fmt: skip
    done("b", "crash", "h-paris", 1.0, 20.0)
    done("a", "odd", "h-odd", None, 5.0, error="judge_unparseable")
    done("b", "odd", "h-odd", 1.0, 5.0)
    run = RunTrials("r")
    for event in events:
        TRIALS.evolve(run, event)
    return run


def query(**fields: object) -> tuple[int, list[str]]:
    run = fold()
    variants, rows = build_rows(run)
    total, page = select(variants, rows, check(MatrixQuery(**fields)), lambda r: OUTPUTS[r.output_hash],
                         run.case_order)  # fmt: skip
    return total, [r.case for r in page]


def test_cells_hold_the_output_and_a_verdict_word_errors_named_by_class() -> None:
    run = fold()
    variants, rows = build_rows(run)
    _, page = select(variants, rows, MatrixQuery(), lambda r: OUTPUTS[r.output_hash], run.case_order)
    cells = {(row.case, v): c for row in page for v, c in row.cells.items()}
    assert (cells["fr", "a"].word, cells["fr", "a"].output) == ("pass", "Paris is the capital.")
    assert (cells["fr", "b"].word, cells["fr", "b"].output) == ("fail", "Lyon, I think.")
    assert cells["crash", "a"].verdict == "error" and cells["crash", "a"].word == "error: timeout"
    assert cells["odd", "a"].verdict == "grading_error"
    assert cells["odd", "a"].word == "grading error: judge_unparseable"
    assert [row.case for row in page if row.differs()] == ["fr"]  # odd: both variants said the same


@pytest.mark.parametrize(
    ("fields", "cases"),
    [
        ({"show": "failing"}, ["fr"]),  # the errored and the unscorable cells are not failures
        ({"show": "errors"}, ["crash"]),
        ({"show": "grading_errors"}, ["odd"]),
        ({"show": "differs"}, ["fr"]),
        ({"tag": "geo"}, ["fr"]),
        ({"q": "lyon"}, ["fr"]),  # an output
        ({"q": "wrong city"}, ["fr"]),  # a grader's reason
        ({"q": "5 s"}, ["crash"]),  # an error message
        ({"q": "paris"}, ["fr", "crash"]),  # the expected answer, and b's output for crash
        ({"q": r"\d+ \(sure\)", "regex": True}, ["odd"]),
        ({"sort": "-latency"}, ["fr", "crash", "odd"]),
        ({"sort": "latency"}, ["odd", "crash", "fr"]),
        ({"sort": "ttft"}, ["crash", "fr", "odd"]),  # odd streamed nothing: last either way
        ({"sort": "-ttft"}, ["fr", "crash", "odd"]),
        ({"per_page": 2, "offset": 2}, ["odd"]),
    ],
)
def test_filters_search_sort_and_pages(fields: dict, cases: list[str]) -> None:
    total, shown = query(**fields)
    assert shown == cases
    assert total == (3 if "offset" in fields or "sort" in fields else len(cases))


def test_a_bad_regex_or_filter_is_one_clear_error() -> None:
    with pytest.raises(InputError, match="regular expression"):
        check(MatrixQuery(q="(", regex=True))
    with pytest.raises(InputError, match="one of all, failing"):
        check(MatrixQuery(show="everything"))


def test_links_keep_every_filter_and_name_the_page() -> None:
    q = MatrixQuery(show="flaky", tag="geo", q="x", regex=True, sort="-cost", offset=100, per_page=50)
    assert q.page == 3
    kept = {"show": "flaky", "tag": "geo", "q": "x", "regex": "1", "sort": "-cost"}
    assert q.params(page=4) == kept | {"page": 4} and q.params() == kept | {"page": 3}
    assert MatrixQuery().params() == {}
