"""Grader kinds: one line each. A new kind is a module with a class that has
`from_spec(spec, context)`, `grade(submission)` and `aclose()`, plus its line here and its spec
Struct in engine.events.graders."""

from __future__ import annotations

from engine.events.registry import Registry

GRADERS: Registry[type] = Registry(
    "grader kind",
    {
        "exact": "engine.actors.graders.deterministic:ExactGrader",
        "contains": "engine.actors.graders.deterministic:ContainsGrader",
        "regex": "engine.actors.graders.deterministic:RegexGrader",
        "json": "engine.actors.graders.deterministic:JsonGrader",
        "forbidden": "engine.actors.graders.deterministic:ForbiddenGrader",
        "exit_code": "engine.actors.graders.deterministic:ExitCodeGrader",
        "command": "engine.actors.graders.command:CommandGrader",
        "judge": "engine.actors.graders.judge:JudgeGrader",
        "python": "engine.actors.graders.python:PythonGrader",
        "case": "engine.actors.graders.case:CaseGrader",
    },
)
