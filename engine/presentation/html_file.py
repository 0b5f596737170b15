"""The report as one self-contained HTML file (`engine report --html FILE`): inline CSS, SVG and
script, no network (it opens from file://); with the run's trials, the output matrix (each cell's
output, expandable), its search and filters, and a drill-down to each cell's trials with the graders'
reasons, a word diff against the baseline and the agent's transcript as a conversation."""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from engine.presentation.chart import score_chart
from engine.presentation.file_trials import drill_data, script_json
from engine.presentation.matrix import LEGEND, MatrixRow, build_rows
from engine.presentation.matrix_query import MatrixQuery, select
from engine.presentation.model import ReportInput, as_report
from engine.presentation.report.status import status_lines, winner_line
from engine.presentation.sections import DECIDING, sections
from engine.presentation.status_words import report_word
from engine.presentation.templates import TEMPLATES, render, stylesheet
from engine.store.contract import EventStore
from engine.store.projections.trials import load_trials
from engine.views.export import output_of, transcript_of

MAX_FILE_CASES = 500  # the file stays small enough to mail; engine serve pages through every case


@dataclass(frozen=True, slots=True)
class FileMatrix:
    variants: list[str]
    rows: list[MatrixRow]  # their cells' outputs read
    total: int  # cases in the run (rows holds the first MAX_FILE_CASES)
    data: str = ""  # the drill-down's JSON (file_trials): each cell's trials and diff
    script: str = field(default="", repr=False)  # the file's own script, inlined (no network)

    @property
    def shown(self) -> int:
        return len(self.rows)

    @property
    def legend(self) -> dict[str, str]:
        return LEGEND


def report_html(report: ReportInput, matrix: FileMatrix | None = None) -> str:
    r = as_report(report)
    return render(
        "report_file.html", r=r, word=report_word(r), css=stylesheet(), status=status_lines(r),
        chart=score_chart(r), sections=sections(r), winner_line=winner_line(r), deciding=DECIDING,
        matrix=matrix,
        data=Markup(matrix.data if matrix else ""), script=Markup(matrix.script if matrix else ""),
    )  # fmt: skip


def file_matrix(log: EventStore, run_id: str, report: ReportInput) -> FileMatrix:
    """The run's output matrix for the file: the report's verdicts, the first MAX_FILE_CASES cases."""
    r = as_report(report)
    trials = load_trials(log, run_id)
    variants, rows = build_rows(trials, verdicts={(s.variant, s.case): s.verdict for s in r.scenarios})
    query = MatrixQuery(per_page=MAX_FILE_CASES)
    total, page = select(variants, rows, query, lambda rec: output_of(log, rec), trials.case_order)
    data = script_json(
        drill_data(page, r.baseline, lambda rec: output_of(log, rec), lambda rec: transcript_of(log, rec))
    )
    return FileMatrix(variants, page, total, data, (TEMPLATES / "report_file.js").read_text(encoding="utf-8"))
