"""Decisions a plan cannot reach are said before the run: `engine validate`, `engine run` and the
report give the smallest p-value the planned cases and repeats allow, for acceptance (the paired
sign-flip test over cases) and for the per-case gate (Fisher's exact test over a case's repeats,
Holm across cases x variants), and warn when it cannot go below the level needed."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from engine.api import spec_from_dict
from engine.presentation.html_file import report_html
from engine.presentation.markdown import report_markdown
from engine.stats import inference as stats
from engine.stats.decidability import Plan, decide, min_p_accept, min_p_case, plan_of, warnings
from engine.stats.gates import fisher_exact
from engine.stats.signflip import sign_flip_test
from tests.conftest import run_engine
from tests.test_cli_run import experiment


def single(cases: int, repeats: int) -> Plan:
    return Plan(cases=cases, repeats=repeats, variants=1, alpha=0.05, accept_level=0.05, comparisons=1)


def test_three_cases_can_never_accept_and_five_can() -> None:
    d = decide(single(3, 3))
    assert d.min_p_accept == 0.125 and not d.can_accept and d.cases_needed == 5
    # the figure is the test's own: every case moving one way is its most extreme outcome
    assert d.min_p_accept == sign_flip_test([Fraction(1)] * 3).p_value
    assert min_p_accept(4) == 0.0625 and min_p_accept(5) == 0.03125
    # at the number it names, a run whose every case improves is accepted by the real comparison
    result = stats.paired_comparison([0.0] * 5, [1.0] * 5, seed=1)
    assert result.p_value is not None and result.p_value < 0.05
    assert min_p_accept(25) == pytest.approx(2.0**-25)  # the studentized form's floor, all equal
    assert all(min_p_accept(n) == pytest.approx(2.0**-n) for n in range(1, 40))  # the closed form


@pytest.mark.parametrize(("cases", "needed"), [(1, 4), (3, 5), (20, 6), (100, 8)])
def test_the_per_case_gate_needs_more_repeats_over_more_cases(cases: int, needed: int) -> None:
    d = decide(single(cases, 3))
    assert d.min_p_case_gate == pytest.approx(0.1) and d.case_gate_tests == cases
    assert d.repeats_needed == needed and d.can_gate_cases == (needed <= 3)
    # the named number is the first at which one case going from all-pass to all-fail, with every
    # other case unchanged, survives Holm's correction: one fewer does not
    for repeats, flagged in ((needed, True), (needed - 1, False)):
        p = fisher_exact(repeats, repeats, 0, repeats)
        adjusted = stats.holm([p] + [1.0] * (cases - 1))[0]
        assert adjusted is not None and (adjusted < 0.05) == flagged
    assert min_p_case(3) == fisher_exact(3, 3, 0, 3)


def test_warnings_name_the_count_needed() -> None:
    plan = single(3, 3)
    found = warnings(plan, decide(plan))
    assert found == [
        "3 cases: no change can be accepted at alpha 0.05 (smallest p 0.125); "
        "add cases: at least 5 are needed",
        "3 repeats: compare --gate cannot flag a single case at alpha 0.05 (smallest p 0.1, needed below "
        "0.0167 after Holm over 3 cases x variants); add repeats: at least 5 are needed",
    ]
    assert warnings(single(20, 6), decide(single(20, 6))) == []
    # one repeat asks for no per-case evidence: no warning about the gate (the report states it)
    assert len(warnings(single(20, 1), decide(single(20, 1)))) == 0


def spec(**extra: object) -> object:
    cases = [{"id": f"c{i}", "prompt": "p", "expected": "x"} for i in range(5)]
    target = {"kind": "python", "callable": "x:y"}
    return spec_from_dict({"name": "d", "target": target, "cases": cases, **extra})


def test_the_level_follows_what_decides_acceptance() -> None:
    # three variants: Holm over two candidates, so the first step needs alpha / 2
    three = plan_of(spec(variants=[{"name": "a"}, {"name": "b"}, {"name": "c"}]), 3)  # type: ignore[arg-type]
    assert (three.accept_level, three.comparisons, three.variants) == (0.025, 2, 3)
    assert warnings(three, decide(three))[0].endswith("(smallest p 0.0312, needed below 0.025); add cases: "
                                                      "at least 6 are needed")  # fmt: skip
    # a tuning session's decision at its last look's level; without significance, no p needed
    space = [{"name": "temperature", "min": 0, "max": 1, "default": 0.5}]
    tune = {"kind": "tune", "tune": {"parameters": space}}
    looked = plan_of(spec(**tune), 1)  # type: ignore[arg-type]
    assert looked.accept_level == pytest.approx(0.05 * (1 - (2 / 3) ** 2))
    free = dict(tune, tune={**tune["tune"], "require_significance": False})  # type: ignore[dict-item]
    unneeded = plan_of(spec(**free), 1)  # type: ignore[arg-type]
    assert unneeded.accept_level is None and decide(unneeded).can_accept


def test_validate_states_the_smallest_p_and_warns(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=3, repeats=3))
    done = run_engine("validate", str(file), cwd=tmp_path)
    # prose is folded to 100 columns: read it as one line of words
    out, err = unfolded(done.stdout), unfolded(done.stderr)
    assert done.returncode == 0, err
    assert f"{file}: ok" in out and "smallest p: acceptance 0.125 over 3 cases (needs < 0.05)" in out
    assert f"warning: {file}: 3 cases: no change can be accepted at alpha 0.05 (smallest p 0.125)" in err
    assert "add repeats: at least 5 are needed" in err  # 2 variants x 3 cases = 6 tests
    enough = write_experiment(experiment(cases=8, repeats=6), "enough.toml")
    quiet = run_engine("validate", str(enough), cwd=tmp_path)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr.decode()
    assert "per-case gate 0.00216 at 6 repeats (needs < 0.00313)" in unfolded(quiet.stdout)


def unfolded(output: bytes) -> str:
    return " ".join(output.decode().split())


def test_run_warns_before_it_starts_and_the_report_carries_it(tmp_path: Path, write_experiment) -> None:
    file = write_experiment(experiment(cases=3, repeats=2))
    ran = run_engine("run", str(file), "--json", "--run-id", "r1", "--store", "st", cwd=tmp_path)
    err = unfolded(ran.stderr)
    assert ran.returncode == 0, err
    assert "3 cases: no change can be accepted" in err and "add repeats: at least 5" in err
    d = json.loads(ran.stdout)["decidability"]
    assert (d["cases"], d["repeats"], d["min_p_accept"]) == (3, 2, 0.125)
    assert not d["can_accept"] and d["cases_needed"] == 5
    assert d["min_p_case_gate"] == pytest.approx(1 / 3, rel=1e-5) and d["repeats_needed"] == 5
    assert len(d["warnings"]) == 2
    report = json.loads(ran.stdout)
    for text in (report_markdown(report), report_html(report)):
        assert "What this plan can decide" in text and "smallest p 0.125 over 3 cases" in text
        assert "add cases: at least 5 are needed" in text
    shown = run_engine("report", "r1", "--store", "st", cwd=tmp_path).stdout.decode()
    assert "what this plan can decide:" in shown and "smallest p 0.125" in shown


def test_a_rerun_of_one_case_is_not_warned_about(tmp_path: Path, write_experiment) -> None:
    # the reports' reproducer commands rerun one trial: it decides nothing, so nothing to warn about
    file = write_experiment(experiment(cases=3, repeats=2))
    ran = run_engine("run", str(file), "--case", "c000", "--store", "st", "-q", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    assert "no change can be accepted" not in ran.stderr.decode()
    assert "smallest p" not in ran.stderr.decode()
