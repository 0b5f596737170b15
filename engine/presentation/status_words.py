"""The status words' colours, defined once for every surface: a tone per word (events.outcome says
which word a run gets), its badge colours for the HTML file and the web pages (the report's
stylesheet carries `status_css()`), and its style on a terminal. A run with errors is never green."""

from __future__ import annotations

from engine.events import outcome as o
from engine.events.report import RunReport

# tone: (background, text colour, rich style)
TONES = {
    "ok": ("#ddf4e4", "#116329", "green"),
    "warn": ("#fff1d6", "#7d4e00", "yellow"),
    "bad": ("#ffebe9", "#a40e26", "red"),
    "live": ("#ddf0ff", "#0550ae", "blue"),
    "neutral": ("#eaeef2", "#1f2328", ""),
}
TONE_OF = {
    o.COMPLETED: "ok",
    o.COMPLETED_WITH_ERRORS: "warn",
    o.PARTIAL: "warn",
    o.FAILED: "bad",
    o.CANCELLED: "bad",
    "interrupted": "bad",  # a killed run's summary: resumable, not finished
    o.RUNNING: "live",
    o.PENDING: "neutral",
}


def report_word(r: RunReport) -> str:
    """The report's status word, from its status and its trials' errors (as events.outcome says)."""
    return o.outcome_word(r.status, r.trials_done, sum(v.errors for v in r.variants))


def tone(word: str) -> str:
    return TONE_OF.get(word, "neutral")


def badge_class(word: str) -> str:
    """The CSS class of a status badge (a word may have spaces: the class is its tone)."""
    return f"status-{tone(word)}"


def term_style(word: str) -> str:
    return TONES[tone(word)][2]


def status_css() -> str:
    """The badges' colours as CSS rules, for the stylesheet every HTML surface uses."""
    return "".join(
        f".badge.status-{name}{{background:{bg};color:{fg}}}" for name, (bg, fg, _) in TONES.items()
    ) + "\n"


def counts_line(passed: int, failed: int, errors: int) -> str:
    """Finished trials by verdict, failed ones included, as the progress strip and `engine status` say it."""
    return f"passed {passed} · failed {failed} · errors {errors}"
