"""Export as JUnit XML for CI: one <testsuite> per variant, one <testcase> per case x repeat."""

from __future__ import annotations

import re
from itertools import groupby

from engine.store.contract import EventStore
from engine.store.projections.trials import RunTrials, TrialRecord
from engine.views.export import Write, output_of, reproducer_of

_XML_BAD = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
SYSTEM_OUT_MAX = 20_000


def xml_text(value: object) -> str:
    text = _XML_BAD.sub("\ufffd", str(value))
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_attr(value: object) -> str:
    return '"' + xml_text(value).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;") + '"'


def write(log: EventStore, run: RunTrials, write: Write) -> int:
    trials = run.finished()
    suites = [(name, list(group)) for name, group in groupby(trials, key=lambda r: r.variant)]
    total = _counts(trials)
    write('<?xml version="1.0" encoding="UTF-8"?>\n')
    write(f"<testsuites name={xml_attr(run.experiment)}{total}>\n")
    for name, recs in suites:
        write(f"  <testsuite name={xml_attr(name)}{_counts(recs)}>\n")
        write(f'    <properties><property name="run_id" value={xml_attr(run.run_id)}/></properties>\n')
        for rec in recs:
            write(_testcase(log, run, rec))
        write("  </testsuite>\n")
    write("</testsuites>\n")
    return len(trials)


def _counts(recs: list[TrialRecord]) -> str:
    statuses = [r.status for r in recs]
    seconds = sum(r.latency_ms for r in recs) / 1000
    return (
        f' tests="{len(recs)}" failures="{statuses.count("fail")}" errors="{statuses.count("error")}"'
        f' skipped="{statuses.count("skipped") + statuses.count("ungraded")}" time="{seconds:.6f}"'
    )


def _testcase(log: EventStore, run: RunTrials, rec: TrialRecord) -> str:
    head = (
        f"    <testcase classname={xml_attr(f'{run.experiment}.{rec.variant}')}"
        f' name={xml_attr(f"{rec.case} #{rec.repeat + 1}")} time="{rec.latency_ms / 1000:.6f}"'
    )
    status = rec.status
    if status == "pass":
        return head + "/>\n"
    rerun = reproducer_of(run, rec)
    if status == "error":
        text = f">rerun: {xml_text(rerun)}</error>" if rerun else "/>"
        kind = rec.error_class or rec.error_kind  # "agent_exit", "agent_start", "timeout": what CI groups by
        body = f"<error type={xml_attr(kind)} message={xml_attr(rec.message)}{text}"
    elif status in ("skipped", "ungraded"):
        reason = rec.message if status == "skipped" else "output not graded (interrupted run)"
        body = f"<skipped message={xml_attr(reason)}/>"
    else:
        score = "-" if rec.score is None else f"{rec.score:.3f}"
        details = "\n".join(f"{g.name}: score={g.score} passed={g.passed} {g.reason}" for g in rec.grades)
        details += f"\nrerun: {rerun}" if rerun else ""
        output = (output_of(log, rec) or "")[:SYSTEM_OUT_MAX]
        body = (
            f'<failure type="fail" message={xml_attr(f"score {score}")}>{xml_text(details)}</failure>'
            f"<system-out>{xml_text(output)}</system-out>"
        )
    return f"{head}>{body}</testcase>\n"
