"""`kind = "word_limit"`: passes an output of at most `max_words` words; a longer one scores
max_words / words."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from engine.actors.graders.grader_protocol import SpecGrader, Submission, result
from engine.events.graders import BaseGrader, GraderKind
from engine.events.kinds import GraderResult


class WordLimitGraderSpec(BaseGrader, tag="word_limit"):
    max_words: Annotated[int, Meta(ge=1)] = 50


class WordLimitGrader(SpecGrader):
    async def grade(self, submission: Submission) -> GraderResult:
        words = len(submission.output.split())
        limit = self.spec.max_words
        if words <= limit:
            return result(self.spec, 1.0, True)
        return result(self.spec, limit / words, False, f"{words} words, over the limit of {limit}")


KIND = GraderKind(WordLimitGraderSpec, "engine_plugin_example.word_limit:WordLimitGrader", {"max_words": 3})
