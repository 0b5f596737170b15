"""People's labels: `engine label` one trial or a file of them, the latest label of an output wins,
and each judge is measured against them (agreement, Cohen's kappa, confusion counts, disagreements)."""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np
import trio
from scipy.special import stdtrit

from tests.conftest import run_engine
from tests.label_runs import judged_run


def report(tmp_path: Path, run_id: str = "lab") -> dict:
    done = run_engine("report", run_id, "--json", "--store", "st", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


async def test_labels_measure_the_judge_and_the_latest_label_wins(tmp_path: Path) -> None:
    await judged_run(tmp_path / "st")
    before = report(tmp_path)
    assert before["label_agreement"] is None
    # people agree on c0 (pass) and c6 (fail), and say c1 fails where the judge passed it
    for case, verdict in (("c0", "pass"), ("c6", "fail"), ("c1", "pass")):
        done = run_engine("label", "lab", case, "baseline", "1", verdict, "--store", "st", cwd=tmp_path)
        assert done.returncode == 0, done.stderr.decode()
    changed = run_engine(
        "label", "lab", "c1", "baseline", "1", "fail", "--note", "off by one", "--by", "ana",
        "--store", "st", cwd=tmp_path,
    )  # fmt: skip
    assert changed.returncode == 0 and b"1 label recorded for run lab" in changed.stdout
    after = report(tmp_path)
    section = after["label_agreement"]
    assert section["labels"] == 3 and section["stale"] == 0
    (judge,) = section["judges"]
    assert (judge["grader"], judge["labelled"]) == ("judge", 3)
    assert (judge["tp"], judge["fp"], judge["fn"], judge["tn"]) == (1, 1, 0, 1)
    assert judge["agreement"] == round(2 / 3, 6)
    (wrong,) = judge["disagreements"]
    assert (wrong["variant"], wrong["case"], wrong["repeat"]) == ("baseline", "c1", 1)
    assert (wrong["judge"], wrong["label"], wrong["note"]) == ("pass", "fail", "off by one")
    assert judge["needs_more"] > 0  # three labels give no useful interval
    # labels never change the run's figures
    after.pop("label_agreement"), before.pop("label_agreement")
    assert after == before


async def test_labels_from_files_all_or_nothing(tmp_path: Path) -> None:
    await judged_run(tmp_path / "st")
    good = tmp_path / "labels.csv"
    good.write_text(
        "case,variant,repeat,verdict,note,score\nc0,baseline,1,pass,,0.9\nc7,baseline,1,pass,too strict,\n"
    )
    done = run_engine("label", "lab", "--from", str(good), "--store", "st", cwd=tmp_path)
    assert done.returncode == 0 and b"2 labels recorded" in done.stdout, done.stderr.decode()
    lines = tmp_path / "labels.jsonl"
    ok = {"case": "c3", "variant": "baseline", "repeat": 1, "verdict": "pass"}
    bad_rows = [
        ({**ok, "verdict": "maybe"}, "row 2: verdict: expected pass or fail"),
        ({**ok, "variant": "nope"}, "row 2: variant: expected one of baseline"),
        ({**ok, "repeat": 5}, "row 2: repeat: no output of repeat 5"),
        ({**ok, "repeat": 0}, "row 2: repeat: expected a whole number"),
        ({k: v for k, v in ok.items() if k != "repeat"}, "row 2: repeat: missing"),
        ({**ok, "score": "high"}, "row 2: score: expected a number"),
        ({**ok, "score": 3}, "row 2: score: expected a number from 0 to 1"),
        ({**ok, "case": "zz"}, "row 2: case: no output"),
        ({**ok, "grade": "A"}, "row 2: grade: unknown column"),
    ]  # fmt: skip
    first = {**ok, "case": "c2"}
    for row, message in bad_rows:
        lines.write_text("\n".join(json.dumps(r) for r in (first, row)) + "\n")
        failed = run_engine("label", "lab", "--from", str(lines), "--store", "st", cwd=tmp_path)
        assert failed.returncode == 2 and b"Traceback" not in failed.stderr
        assert f"{lines}: {message}".encode() in failed.stderr, failed.stderr.decode()
    section = report(tmp_path)["label_agreement"]
    assert section["labels"] == 2  # nothing of a bad file was appended, not even its good first row
    (judge,) = section["judges"]
    assert (judge["tp"], judge["fp"], judge["fn"], judge["tn"]) == (1, 0, 1, 0)
    bad = run_engine("label", "lab", "c0", "baseline", "1", "good", "--store", "st", cwd=tmp_path)
    assert bad.returncode == 2 and b"engine label: verdict: expected pass or fail, got 'good'" in bad.stderr


def test_a_spreadsheet_csv_with_a_byte_order_mark_reads(tmp_path: Path) -> None:
    from engine.input.labels_file import read_label_rows

    exported = tmp_path / "excel.csv"  # Excel's "CSV UTF-8": a BOM, then CRLF lines
    exported.write_bytes(b"\xef\xbb\xbfcase,variant,repeat,verdict\r\nc1,baseline,1,fail\r\n")
    ((where, row),) = read_label_rows(exported)
    assert where.endswith("row 1") and (row.case, row.variant, row.repeat, row.verdict) == (
        "c1", "baseline", 1, "fail",
    )  # fmt: skip


def kappa_of(cells: np.ndarray) -> float:
    p = cells / cells.sum()
    rows, cols = p.reshape(2, 2).sum(axis=1), p.reshape(2, 2).sum(axis=0)
    pe = rows @ cols
    return float((p[0] + p[3] - pe) / (1 - pe))


def delta_method_se(table: list[int]) -> float:
    """Kappa's large-sample SE another way: its numeric gradient in the cell proportions against the
    multinomial covariance (diag(p) - p p^T) / n; Fleiss, Cohen & Everitt's closed form is this."""
    n, p = sum(table), np.array(table, dtype=float) / sum(table)
    step = 1e-7
    gradient = np.array([(kappa_of(p + step * e) - kappa_of(p - step * e)) / (2 * step) for e in np.eye(4)])
    covariance = (np.diag(p) - np.outer(p, p)) / n
    return math.sqrt(gradient @ covariance @ gradient)


def test_kappa_and_its_interval_match_an_independent_computation() -> None:
    from engine.stats.kappa import cohen_kappa

    for tp, fp, fn, tn in ((20, 5, 10, 15), (40, 3, 7, 50), (9, 1, 0, 2), (30, 10, 10, 30)):
        got = cohen_kappa(tp, fp, fn, tn)
        # another path: the 2x2 identity kappa = 2 (ad - bc) / ((a+b)(b+d) + (a+c)(c+d)) over the table
        a, b, c, d = tp, fp, fn, tn
        kappa = 2 * (a * d - b * c) / ((a + b) * (b + d) + (a + c) * (c + d))
        smoothed = delta_method_se([a + 1, b + 1, c + 1, d + 1])  # one label added to each cell
        n = a + b + c + d
        po, pe = (a + d) / n, ((a + b) * (a + c) + (c + d) * (b + d)) / n**2
        se = max(smoothed, math.sqrt(po * (1 - po) / n) / (1 - pe))  # or Cohen's (1960), if larger
        t = float(stdtrit(n - 1, 0.975))
        assert got.kappa is not None and got.low is not None and got.high is not None
        assert math.isclose(got.kappa, kappa, abs_tol=1e-12)
        assert math.isclose(got.low, max(-1.0, kappa - t * se), abs_tol=1e-6)
        assert math.isclose(got.high, min(1.0, kappa + t * se), abs_tol=1e-6)
    # a hand-worked table: po = 0.7, pe = 0.5 (both pass half the time): kappa 0.4
    assert math.isclose(cohen_kappa(35, 15, 15, 35).kappa or 0, 0.4)
    assert cohen_kappa(5, 0, 0, 0).kappa is None  # one verdict only: kappa is undefined
    assert cohen_kappa(5, 0, 0, 0).needs_more > 0 and cohen_kappa(900, 30, 30, 900).needs_more == 0


async def test_every_report_format_and_the_judge_audit_show_the_labels(tmp_path: Path) -> None:
    from engine.api import open_engine
    from engine.input.labels_file import LabelRow
    from engine.runtime.judge_audit import judge_audit
    from engine.runtime.label_record import record_labels
    from tests.fakes.openai_server import open_fake_openai
    from tests.label_runs import judge_by_case, judged_spec

    async with open_fake_openai(answer=judge_by_case) as server:
        async with open_engine(tmp_path / "st") as eng:
            await eng.run(judged_spec(server.base_url), run_id="lab")
            rows = [("r1", LabelRow(case="c8", variant="baseline", repeat=1, verdict="pass", note="fine"))]
            record_labels(eng.log, "lab", rows)
            audit = await judge_audit(eng.log, "lab", sample=2)
            terminal_audit = await trio.to_thread.run_sync(
                lambda: run_engine("judge-audit", "lab", "--sample", "2", "--store", "st", cwd=tmp_path)
            )
    assert audit.people is not None and audit.people.judges[0].fn == 1
    expected = (
        "Judges against people's labels",
        "judge vs label: baseline / c8 repeat 1: judge fail, label pass",
    )
    for fmt in ("markdown", "html"):
        done = run_engine("report", "lab", "--format", fmt, "--store", "st", cwd=tmp_path)
        assert done.returncode == 0, done.stderr.decode()
        shown = html.unescape(done.stdout.decode()) if fmt == "html" else done.stdout.decode()
        assert all(text in shown for text in expected)
    terminal = run_engine("report", "lab", "--store", "st", cwd=tmp_path, COLUMNS="200")
    assert all(text in terminal.stdout.decode() for text in expected), terminal.stdout.decode()
    assert "needs" in terminal.stdout.decode()  # one label: the judge needs more for its interval
    # in a 100-column terminal no column of the table is cut to an ellipsis (the sentence folds)
    shown = terminal.stdout.decode().split("Judges against people's labels")[1].split("labelled outputs")[0]
    assert "…" not in shown and "kappa 95% CI" in shown and " judge " in shown, shown
    audited = terminal_audit.stdout.decode().split("Judges against people's labels")[1]
    assert terminal_audit.returncode == 0 and "…" not in audited and "kappa 95% CI" in audited, audited


async def test_labels_survive_a_regrade_and_make_a_ground_truth_round(tmp_path: Path) -> None:
    from engine.api import open_engine
    from engine.events.graders import JudgeGraderSpec
    from engine.input.labels_file import LabelRow
    from engine.runtime.label_record import record_labels
    from engine.runtime.regrade import regrade_run
    from engine.views.current_report import current_report_json
    from tests.fakes.openai_server import open_fake_openai
    from tests.label_runs import judge_by_case, judged_spec

    async with open_fake_openai(answer=judge_by_case) as server:
        async with open_engine(tmp_path / "st") as eng:
            await eng.run(judged_spec(server.base_url), run_id="lab")
            rows = [
                ("r1", LabelRow(case="c1", variant="baseline", repeat=1, verdict="fail")),
                ("r2", LabelRow(case="c8", variant="baseline", repeat=1, verdict="pass", score=0.7)),
            ]
            record_labels(eng.log, "lab", rows)
            await regrade_run(eng.log, "lab", [JudgeGraderSpec(name="judge")], name="again")
            again = json.loads(current_report_json(eng.log, "lab"))
    assert again["grading"] == 1 and again["label_agreement"]["judges"][0]["labelled"] == 2
    done = run_engine("regrade", "lab", "--labels", "--json", "--store", "st", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    truth = json.loads(done.stdout)
    assert truth["ground_truth"] == {"from_labels": 2, "from_judges": 8}
    assert (truth["grading"], truth["grading_name"]) == (2, "labels")
    # c1 now fails and c8 passes: six passes still, and the mean moves by the label's scores
    (variant,) = truth["variants"]
    assert variant["passed"] == 6
    assert variant["mean_score"] == round((5 * 8 / 9 + 0.7 + 0 + 3 * 1 / 9) / 10, 6)  # 9 is 8/9, 2 is 1/9
    # the judges are still measured against the judges' own round, not the labels round
    assert truth["label_agreement"]["judges"][0]["labelled"] == 2
    replayed = run_engine("replay", "lab", "--json", "--store", "st", cwd=tmp_path)
    assert replayed.stdout == run_engine("report", "lab", "--json", "--store", "st", cwd=tmp_path).stdout
    text = run_engine("report", "lab", "--store", "st", cwd=tmp_path, COLUMNS="200").stdout.decode()
    assert "grading round from labels: 2 trials took people's verdict, 8 kept the judges'" in text
    both = run_engine("regrade", "lab", "--labels", "--graders", "g.toml", "--store", "st", cwd=tmp_path)
    assert both.returncode == 2 and b"give a graders file or --labels" in both.stderr


async def test_the_label_figures_name_the_runs_judge_before_any_label(tmp_path: Path) -> None:
    """A run graded by a judge named "judge", not labelled yet: the label panel of a trial page and
    the queue list that judge (over 0 labels), never "no judge grader in this run"."""
    import httpx

    from tests.serve_helpers import serving

    await judged_run(tmp_path / "st")
    with serving(tmp_path / "st") as url:
        for path in ("/runs/lab/trial?case=c0&variant=baseline", "/runs/lab/labels"):
            page = await trio.to_thread.run_sync(lambda path=path: httpx.get(f"{url}{path}").text)
            assert 'id="label-figures"' in page and "no judge grader" not in page, path
            assert 'data-judge="judge"' in page and '<span data-field="label-labelled">0</span>' in page, path
