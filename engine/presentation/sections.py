"""The report's sections, in order, each a table or lines of plain text: every surface (terminal,
Markdown, the HTML file, the run page) walks this one list, so a section added here reaches them all.

`SECTION_KEYS` names every section a report can have; a section with nothing to say is left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.events.report import RunReport
from engine.presentation import labels_view
from engine.presentation.report import lines as text
from engine.presentation.report import tables as tables
from engine.presentation.report.stopping import stopping_lines

SECTION_KEYS = (
    "variants", "spend", "streaming", "comparisons", "pairwise", "labels", "tuning", "errors",
    "grading_errors", "judge_agreement", "stopping", "scenarios", "flaky", "identical", "tags", "tools",
    "sandbox", "params",
    "decidability",
)  # fmt: skip
# the sections the winner is decided on: every surface says the winner line after them
DECIDING = frozenset({"variants", "spend", "comparisons", "pairwise", "labels", "tuning"})
PARAMS_TITLE = "Parameters each variant's target received (the experiment's, the variant's own over them)"
IDENTICAL_TITLE = "Identical outputs across repeats (caching or temperature 0?)"


@dataclass(frozen=True, slots=True)
class Table:
    header: list[str]
    rows: list[list[str]]
    left: frozenset[int] = frozenset({0})  # text columns (left-aligned); the rest are figures
    marks: list[str] = field(default_factory=list)  # a role per row (winner, baseline...) or none
    total: int = 0  # rows the list has in all (0: these rows): a surface showing fewer says how many more

    def more(self, shown: int | None = None) -> str:
        """One line for the rows a surface leaves out of the list (it shows `shown`, default all)."""
        hidden = max(self.total, len(self.rows)) - (len(self.rows) if shown is None else shown)
        return f"...and {hidden} more (engine report --json lists them)" if hidden > 0 else ""


@dataclass(frozen=True, slots=True)
class Section:
    key: str  # one of SECTION_KEYS: the HTML id, and what the structure test looks for
    title: str
    table: Table | None = None
    lines: list[str] = field(default_factory=list)
    note: str = ""  # one line under the table (e.g. "...and 12 more")


def _left(n: int) -> frozenset[int]:
    return frozenset(range(n))


def sections(r: RunReport) -> list[Section]:
    """Every section with something to say, in reading order."""
    found = [
        *_results(r),
        *_decisions(r),
        Section("errors", "Errors by class", lines=text.error_lines(r, "trial")),
        Section("grading_errors", "Grading errors (an output no grader could score)",
                lines=text.error_lines(r, "grading")),
        _judges(r),
        Section("stopping", "Stopping", lines=stopping_lines(r)),
        Section("scenarios", "Scenarios not passing, and how to rerun them", lines=text.scenario_lines(r)),
        _flaky(r),
        Section("identical", IDENTICAL_TITLE, lines=text.identical_lines(r)),
        _tags(r),
        Section("tools", "Agents' tools", lines=text.tool_lines(r)),
        Section("sandbox", "Sandboxes (where each variant's agent ran)", lines=text.sandbox_lines(r)),
        Section("params", PARAMS_TITLE, lines=text.params_lines(r)),
        Section("decidability", "What this plan can decide", lines=text.decidability_lines(r)),
    ]  # fmt: skip
    return [s for s in found if s.lines or (s.table is not None and s.table.rows)]


def _marks(r: RunReport) -> list[str]:
    return [tables.role(r, v.name) for v in r.variants]


def _results(r: RunReport) -> list[Section]:
    return [
        Section("variants", "Variants (pass: the pass rate; p/f/fl/e: cases passed, failed, flaky, errored)",
                Table(tables.RESULT_HEADER, tables.result_rows(r), marks=_marks(r)),
                note=text.score_basis_note(r) or ""),
        Section("spend", "Latency and spend",
                Table(tables.SPEND_HEADER, tables.spend_rows(r), marks=_marks(r))),
        Section("streaming", "Streamed answers: time to first token, tokens per second after it",
                Table(tables.STREAM_HEADER, tables.stream_rows(r),
                      marks=[tables.role(r, v.name) for v in tables.streamed(r)])),
        Section("comparisons", tables.comparison_title(r), Table(
            tables.COMPARISON_HEADER, tables.comparison_rows(r),
            marks=["winner" if c.candidate == r.winner else "" for c in r.comparisons])),
    ]  # fmt: skip


def _decisions(r: RunReport) -> list[Section]:
    base = r.pairwise[0].baseline if r.pairwise else ""
    tuning = "Tuning decisions: variations tried, in order"
    if r.session_error_bound is not None:
        tuning += f" (chance that some accepted change does nothing: at most {r.session_error_bound:.0%})"
    return [
        Section("pairwise", f"Pairwise judge: side by side against {base}",
                Table(tables.PAIRWISE_HEADER, tables.pairwise_rows(r), _left(2))),
        Section("labels", labels_view.TITLE, Table(labels_view.LABELS_HEADER,
                labels_view.label_rows(r.label_agreement), labels_view.TEXT_COLUMNS),
                lines=labels_view.label_lines(r.label_agreement, r.ground_truth)),
        Section("tuning", tuning, Table(tables.VARIATION_HEADER, tables.variation_rows(r), _left(3),
                                          ["winner" if v.accepted else "" for v in r.variations])),
    ]  # fmt: skip


def _judges(r: RunReport) -> Section:
    return Section("judge_agreement", "Judge agreement (unreadable answers; spread of repeated scores)",
                   Table(tables.JUDGE_HEADER, tables.judge_rows(r)))  # fmt: skip


def _flaky(r: RunReport) -> Section:
    table = Table(tables.FLAKY_HEADER, tables.flaky_rows(r), _left(2), total=len(r.flaky_cases))
    return Section("flaky", f"Flaky cases ({len(r.flaky_cases)})", table)


def _tags(r: RunReport) -> Section:
    header, rows = tables.tag_rows(r)
    text = _left(2 if "variant" in header else 1)  # the long form names the variant in a column
    return Section("tags", "By tag (score / pass rate)", Table(header, rows, text))
