"""Cheap graders run in the executor worker: a trial's grade is written with its output, once."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest

from engine.actors.inline_grading import grades_inline
from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.events import kinds as k
from engine.events.codec import decode
from engine.events.graders import ContainsGraderSpec, JudgeGraderSpec, RegexGraderSpec
from engine.runtime import workers
from engine.store.contract import Row
from engine.store.memory import MemoryStore


class CommitsKept(MemoryStore):
    """A memory store that remembers which events each append (one transaction) carried."""

    def __init__(self) -> None:
        super().__init__()
        self.commits: list[list[k.Event]] = []

    def append(self, batch: Sequence[Row], blobs: Iterable[tuple[str, bytes]] = ()) -> int:
        self.commits.append([decode(row[2]) for row in batch])
        return super().append(batch, blobs)


async def echo(request: TargetRequest) -> str:
    return "yes" if int(request.case.id[1:]) % 2 else "no"


async def test_a_cheap_graders_result_is_committed_with_the_output_it_grades() -> None:
    store = CommitsKept()
    spec = spec_from_dict({
        "name": "inline", "target": {"kind": "python", "callable": "echo"},
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(40)],
        "graders": [{"kind": "contains"}, {"kind": "regex", "pattern": "^(yes|no)$"}],
        "execution": {"concurrency": 8}, "repeat": {"count": 2}, "scoring": {"pass_threshold": 0.75},
    })  # fmt: skip
    async with open_engine(store, callables={"echo": echo}) as eng:
        report = await eng.run(spec)
    assert report.status == "completed" and report.trials_done == 80
    graded = {}
    for events in store.commits:
        completed = {(e.variant, e.case, e.repeat) for e in events if isinstance(e, k.TrialCompleted)}
        for event in events:
            if isinstance(event, k.TrialGraded):
                key = (event.variant, event.case, event.repeat)
                assert key in completed and key not in graded  # with its output, exactly once
                graded[key] = event.passed
    assert len(graded) == 80
    assert all(passed == (int(case[1:]) % 2 == 1) for (_, case, _), passed in graded.items())


def test_only_in_process_graders_that_call_no_model_run_inline() -> None:
    assert grades_inline([ContainsGraderSpec(), RegexGraderSpec(pattern="a")])
    assert grades_inline([])  # the default check: contains
    assert not grades_inline([ContainsGraderSpec(), JudgeGraderSpec()])


async def huge(request: TargetRequest) -> str:
    """Outputs Python's json will not build: an integer past its digit limit, nesting past recursion."""
    return "1" * 5000 if request.case.id == "c0" else "[" * 3000


async def test_an_output_a_grader_cannot_take_is_graded_not_lost() -> None:
    """A json grader meeting an output Python refuses to build says it found no JSON; a grader that
    raises (a bug, a plugin's) makes a grading error of that trial: the output is kept, the run goes on."""
    from engine.actors.graders.grader_protocol import Submission
    from engine.actors.grading_pool import grade_safely
    from engine.events.spec import CaseSpec

    store = CommitsKept()
    spec = spec_from_dict({
        "name": "huge", "target": {"kind": "python", "callable": "huge"},
        "cases": [{"id": "c0", "prompt": "p"}, {"id": "c1", "prompt": "p"}], "graders": [{"kind": "json"}],
    })  # fmt: skip
    async with open_engine(store, callables={"huge": huge}) as eng:
        report = await eng.run(spec)
    assert report.status == "completed" and report.trials_done == 2
    graded = [e for events in store.commits for e in events if isinstance(e, k.TrialGraded)]
    assert len(graded) == 2 and not any(e.passed for e in graded)

    class Broken:
        spec = ContainsGraderSpec(name="broken")

        async def grade(self, submission: Submission) -> k.GraderResult:
            raise RuntimeError("a bug")

    found = await grade_safely(Broken(), Submission(case=CaseSpec(id="c", prompt="p"), output="x"))  # type: ignore[arg-type]
    assert found.error == "RuntimeError: a bug" and found.score is None and not found.passed


def grades_of(store: MemoryStore) -> dict[tuple[str, str, int], tuple[bool, float | None, object]]:
    graded = [e for e in (decode(data) for _, data in store.read()) if isinstance(e, k.TrialGraded)]
    return {(e.variant, e.case, e.repeat): (e.passed, e.score, e.grades) for e in graded}


async def test_inline_grades_are_the_grading_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path and its twin: the same outputs graded in the executor and by the grading pool
    give the same grades, trial by trial."""
    spec = spec_from_dict({
        "name": "twins", "target": {"kind": "python", "callable": "echo"},
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(12)],
        "graders": [{"kind": "contains"}, {"kind": "regex", "pattern": "^y"}], "repeat": {"count": 2},
    })  # fmt: skip
    found = []
    for inline in (True, False):
        monkeypatch.setattr(workers, "grades_inline", lambda specs, inline=inline: inline)
        store = CommitsKept()
        async with open_engine(store, callables={"echo": echo}) as eng:
            await eng.run(spec)
        found.append(grades_of(store))
        with_output = [any(isinstance(e, k.TrialCompleted) for e in c) for c in store.commits
                       if any(isinstance(e, k.TrialGraded) for e in c)]  # fmt: skip
        assert all(with_output) == inline  # the path taken: graded with the output, or by the pool
    assert len(found[0]) == 24 and found[0] == found[1]
