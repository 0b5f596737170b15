"""`engine export RUN_ID --format jsonl|junit|rundir`: the real CLI on a real run."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from engine.views.export.junit import xml_attr, xml_text
from engine.views.export.rundir import safe_name
from tests.conftest import run_engine
from tests.test_cli_run import experiment

BROKEN = "broken | <b>"
EXTRA = (
    f'[[variants]]\nname = "{BROKEN}"\n'
    'target = { callable = "tests.fixtures.agent:always_fail", max_retries = 0 }\n'
)
FIELDS = {
    "run_id", "variant", "case", "repeat", "status", "score", "passed", "latency_ms", "tokens_in",
    "tokens_out", "cost_usd", "output", "grades", "error", "error_kind", "skip_reason",
}  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, list[dict]]:
    """One run with passes, failures, errors and (pass_at_k early exit) skipped trials."""
    cwd = tmp_path_factory.mktemp("export")
    text = experiment(cases=5, repeats=3, extra=EXTRA).replace(
        "[repeat]\n", '[repeat]\nstrategy = "pass_at_k"\n'
    )
    (cwd / "exp.toml").write_text(text)
    ran = run_engine("run", "exp.toml", "--json", "--run-id", "r1", "--store", "st", cwd=cwd)
    # the broken variant errors on every trial: above execution.max_error_rate, so the run exits 1
    assert ran.returncode == 1 and json.loads(ran.stdout)["error_rate_exceeded"], ran.stderr.decode()
    exported = run_engine("export", "r1", "--format", "jsonl", "--store", "st", cwd=cwd)
    assert exported.returncode == 0, exported.stderr.decode()
    return cwd, json.loads(ran.stdout), [json.loads(line) for line in exported.stdout.splitlines()]


def test_jsonl_one_line_per_trial(store: tuple[Path, dict, list[dict]]) -> None:
    cwd, report, lines = store
    assert len(lines) == 3 * 5 * 3
    assert len(lines) == sum(v["trials"] + v["skipped"] for v in report["variants"])
    assert all(set(line) >= FIELDS for line in lines)
    by_variant = {v["name"]: v for v in report["variants"]}
    for name, v in by_variant.items():
        statuses = Counter(line["status"] for line in lines if line["variant"] == name)
        assert statuses["pass"] == v["passed"] and statuses["error"] == v["errors"]
        assert statuses["skipped"] == v["skipped"]
    order = {"baseline": 0, "cold": 1, BROKEN: 2}
    keys = [(order[x["variant"]], x["case"], x["repeat"]) for x in lines]
    assert keys == sorted(keys)
    for line in lines:
        if line["status"] == "pass":
            assert line["output"] == f"City{int(line['case'][1:])}" and line["score"] == 1.0
            assert line["grades"] and line["grades"][0]["passed"]
        if line["variant"] == BROKEN:
            assert line["status"] == "error" and "subject crashed" in line["error"]
            assert line["output"] is None and line["error_kind"] == "model"
        if line["status"] == "skipped":
            assert line["skip_reason"] and line["output"] is None
    to_file = run_engine("export", "r1", "--format", "jsonl", "--out", "t.jsonl", "--store", "st", cwd=cwd)
    assert to_file.stdout.decode().strip() == "t.jsonl"
    assert [json.loads(x) for x in (cwd / "t.jsonl").read_text().splitlines()] == lines


def test_junit_parses_and_counts(store: tuple[Path, dict, list[dict]]) -> None:
    cwd, _, lines = store
    result = run_engine("export", "r1", "--format", "junit", "--store", "st", cwd=cwd)
    assert result.returncode == 0, result.stderr.decode()
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites" and root.get("name") == "capitals"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["baseline", "cold", BROKEN]
    statuses = Counter(line["status"] for line in lines)
    assert int(root.get("tests", "0")) == len(lines)
    assert int(root.get("failures", "0")) == statuses["fail"]
    assert int(root.get("errors", "0")) == statuses["error"] == 15
    assert int(root.get("skipped", "0")) == statuses["skipped"]
    for suite in suites:
        cases = suite.findall("testcase")
        assert int(suite.get("tests", "0")) == len(cases)
        assert int(suite.get("failures", "0")) == sum(c.find("failure") is not None for c in cases)
        assert int(suite.get("errors", "0")) == sum(c.find("error") is not None for c in cases)
        assert int(suite.get("skipped", "0")) == sum(c.find("skipped") is not None for c in cases)
    broken = suites[2].find("testcase")
    assert broken is not None and broken.get("name") == "c000 #1"
    error = broken.find("error")
    assert error is not None and "subject crashed" in (error.get("message") or "")


def test_rundir_layout_and_contents(store: tuple[Path, dict, list[dict]]) -> None:
    cwd, report, lines = store
    result = run_engine("export", "r1", "--format", "rundir", "--out", "rd", "--store", "st", cwd=cwd)
    assert result.returncode == 0, result.stderr.decode()
    out = cwd / "rd"
    stored = run_engine("report", "r1", "--json", "--store", "st", cwd=cwd)
    assert (out / "summary.json").read_bytes() == stored.stdout
    index = [json.loads(x) for x in (out / "index.jsonl").read_text().splitlines()]
    assert len(index) == len(lines) and "output" not in index[0]
    broken_dir = safe_name(BROKEN)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(["baseline", "cold", broken_dir])
    assert "|" not in broken_dir and "<" not in broken_dir
    for entry, line in zip(index, lines, strict=True):
        if line["status"] == "skipped":  # early exit: never attempted, so no run-N folder
            assert entry["result_path"] is None
            assert not (out / line["variant"] / line["case"] / f"run-{line['repeat']}").exists()
            continue
        run_dir = out / Path(entry["result_path"]).parent
        assert run_dir.name == f"run-{line['repeat']}"
        result_json = json.loads((run_dir / "result.json").read_text())
        assert result_json["status"] == line["status"] and result_json["grading_path"] == "grading.json"
        for name in ("grading.json", "metrics.json", "timing.json"):
            assert (run_dir / name).is_file()
        grading = json.loads((run_dir / "grading.json").read_text())
        assert grading["score"] == line["score"]
        metrics = json.loads((run_dir / "metrics.json").read_text())
        assert metrics["tokens_in"] == line["tokens_in"]
        answer = run_dir / "outputs" / "answer.md"
        assert (answer.read_text() if answer.exists() else None) == line["output"]
    summary = json.loads((out / "baseline" / "c000" / "summary.json").read_text())
    mine = [x for x in lines if x["variant"] == "baseline" and x["case"] == "c000"]
    graded = [x for x in mine if x["status"] in ("pass", "fail")]
    assert summary["run_count"] == sum(x["status"] != "skipped" for x in mine)
    assert summary["pass_rate"] == sum(x["status"] == "pass" for x in graded) / len(graded)
    assert summary["mean_score"] == pytest.approx(sum(x["score"] for x in graded) / len(graded))
    assert summary["mean_duration_ms"] > 0
    again = run_engine("export", "r1", "--format", "rundir", "--out", "rd", "--store", "st", cwd=cwd)
    assert again.returncode == 2 and b"empty directory" in again.stderr


def test_bad_format_and_missing_out_exit_2(store: tuple[Path, dict, list[dict]]) -> None:
    cwd, _, _ = store
    bad = run_engine("export", "r1", "--format", "csv", "--store", "st", cwd=cwd)
    assert bad.returncode == 2 and b"jsonl, junit, rundir" in bad.stderr and b"Traceback" not in bad.stderr
    no_out = run_engine("export", "r1", "--format", "rundir", "--store", "st", cwd=cwd)
    assert no_out.returncode == 2 and b"--out" in no_out.stderr


def test_export_follows_a_regrade(store: tuple[Path, dict, list[dict]], tmp_path: Path) -> None:
    shutil.copytree(store[0] / "st", tmp_path / "st")  # regrade a copy: the other tests keep theirs
    cwd = tmp_path
    graders = tmp_path / "graders.toml"
    graders.write_text('[[graders]]\nkind = "regex"\npattern = "sure"\n')
    regraded = run_engine("regrade", "r1", "--graders", str(graders), "--json", "--store", "st", cwd=cwd)
    assert regraded.returncode == 0, regraded.stderr.decode()
    report = json.loads(regraded.stdout)
    exported = run_engine("export", "r1", "--store", "st", cwd=cwd)
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    for v in report["variants"]:
        assert sum(x["status"] == "pass" for x in lines if x["variant"] == v["name"]) == v["passed"]
    for line in lines:
        if line["status"] in ("pass", "fail"):
            assert (line["status"] == "pass") == ("sure" in line["output"])
            assert [g["name"] for g in line["grades"]] == ["regex"]


def test_path_and_xml_helpers() -> None:
    assert safe_name("c001") == "c001" and safe_name("a.b-c_d") == "a.b-c_d"
    for name in ("..", ".", "", "a/b", "a\\b", "x" * 300, "café"):
        clean = safe_name(name)
        assert clean not in ("", ".", "..") and "/" not in clean and "\\" not in clean and len(clean) < 100
    assert safe_name("a/b") != safe_name("a_b") and safe_name("a/b") != safe_name("a:b")
    attr, text = xml_attr('q"<&\n\x01'), xml_text("x\x00<y>&")
    doc = f"<r a={attr}>{text}</r>"
    parsed = ET.fromstring(doc)
    assert parsed.get("a") == 'q"<&\n\ufffd' and parsed.text == "x\ufffd<y>&"
