"""A run's status in the words every surface shows (terminal, Markdown, the HTML file, the web pages,
the JSON report, `engine status`): the lifecycle status, told apart by what its trials did. A run
that completed with every trial in error did not complete anything: it failed.

Low in the layers so the report and the status view carry the word themselves; the colours of each
word are the presentation's (engine.presentation.status_words).
"""

import msgspec

COMPLETED = "completed"
COMPLETED_WITH_ERRORS = "completed with errors"
FAILED = "failed"
PARTIAL = "partial"
CANCELLED = "cancelled"
RUNNING = "running"
PENDING = "pending"
WORDS = (COMPLETED, COMPLETED_WITH_ERRORS, FAILED, PARTIAL, CANCELLED, RUNNING, PENDING)


def failed_outcome(status: str, done: int, errored: int) -> str | msgspec.UnsetType:
    """The report's `outcome` field: set only when the word says more than the status (a completed
    run that failed), so a report without it keeps its bytes."""
    word = outcome_word(status, done, errored)
    return word if word == FAILED and status != FAILED else msgspec.UNSET


def outcome_word(status: str, done: int, errored: int) -> str:
    """The word for a run of lifecycle `status` with `done` finished trials, `errored` of them in error."""
    if status == COMPLETED and done > 0 and errored >= done:
        return FAILED
    if status == COMPLETED and errored > 0:
        return COMPLETED_WITH_ERRORS
    return status
