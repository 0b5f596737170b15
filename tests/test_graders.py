"""Deterministic graders and the composite verdict."""

from __future__ import annotations

from engine.actors.graders.factory import make_graders
from engine.actors.graders.grader_protocol import Submission, composite
from engine.events.kinds import GraderResult
from engine.events.spec import CaseSpec, GraderSpec, grader_spec


def sub(case, output: str) -> Submission:
    return Submission(case=case, output=output)


def case(expected: object = "Paris") -> CaseSpec:
    return CaseSpec(id="c", prompt="p", expected=expected)


async def grade(spec: GraderSpec, output: str, expected: object = "Paris") -> GraderResult:
    (grader,) = make_graders([spec])
    return await grader.grade(sub(case(expected), output))


async def test_exact_strips_and_respects_case_setting() -> None:
    assert (await grade(grader_spec(kind="exact"), " Paris\n")).passed
    assert not (await grade(grader_spec(kind="exact"), "paris")).passed
    assert (await grade(grader_spec(kind="exact", case_sensitive=False), "paris")).passed


async def test_contains_scores_the_share_of_expected_strings_found() -> None:
    result = await grade(grader_spec(kind="contains"), "Paris and Rome", expected=["Paris", "Rome", "Oslo"])
    assert result.score is not None and abs(result.score - 2 / 3) < 1e-9 and not result.passed
    assert "Oslo" in result.reason
    assert (await grade(grader_spec(kind="contains", value="rome", case_sensitive=False), "ROME!")).passed


async def test_regex() -> None:
    spec = grader_spec(kind="regex", pattern=r"\b\d{3}\b")
    assert (await grade(spec, "it is 100 degrees")).passed
    assert not (await grade(spec, "it is hot")).passed


async def test_json_fields_and_schema() -> None:
    schema = {"type": "object", "required": ["city"], "properties": {"pop": {"type": "integer"}}}
    spec = grader_spec(kind="json", fields={"city": "Paris", "meta.country": "FR"}, schema=schema)
    good = 'Sure: {"city": "Paris", "pop": 2100000, "meta": {"country": "FR"}} done'
    assert (await grade(spec, good)).passed
    bad = await grade(spec, '{"city": "Lyon", "pop": "many", "meta": {"country": "FR"}}')
    assert not bad.passed and "city" in bad.reason and "pop" in bad.reason
    assert (await grade(spec, "no json here")).score == 0.0


async def test_default_grader_is_case_insensitive_contains() -> None:
    (grader,) = make_graders([])
    assert (await grader.grade(sub(case("Paris"), "the answer is PARIS"))).passed


def test_composite_weights_gates_and_threshold() -> None:
    def r(score: float | None, passed: bool, weight: float = 1.0, gate: bool = False) -> GraderResult:
        return GraderResult(name="g", score=score, passed=passed, weight=weight, gate=gate)

    assert composite([r(1.0, True, 3), r(0.0, False, 1)], 0.5) == (0.75, True)
    assert composite([r(1.0, True, 3), r(0.0, False, 1, gate=True)], 0.5) == (0.75, False)
    assert composite([r(None, False), r(0.4, False)], 0.5) == (0.4, False)
    assert composite([r(None, False)], 0.5) == (None, False)
