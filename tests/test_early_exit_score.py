"""pass_at_k with early exit stops a case's attempts at its first pass, so the attempts that ran
are not a fair sample of attempts (a case that passed at once has one, a pass; one that kept
failing has k). The report's `mean_score` and `ci95` then take each case's first scored attempt,
which always runs: unbiased for the per-attempt mean score, and `mean_score_basis` says so."""

from __future__ import annotations

import json

import numpy as np

from engine.events import kinds as k
from engine.events.codec import to_json
from engine.events.spec import CaseSpec, ExperimentSpec, RepeatSpec, VariantSpec
from engine.presentation.html_file import report_html
from engine.presentation.markdown import report_markdown
from engine.presentation.model import as_report
from engine.presentation.report.lines import score_basis_note
from engine.presentation.terminal import report_renderables
from engine.store.projections.cases import case_values
from engine.store.projections.report_builder import build_report
from engine.store.projections.run_state import RunState, evolve


def _fold(case_pass: list[float], k_value: int, early_exit: bool, seed: int) -> RunState:
    """Every case's attempts pass with its own probability; with early exit, the attempts after a
    pass are skipped, as the scheduler does."""
    rng = np.random.default_rng(seed)
    spec = ExperimentSpec(
        name="sim", seed=1, cases=[CaseSpec(id=f"c{i:03d}", prompt="p") for i in range(len(case_pass))],
        variants=[VariantSpec(name="v")],
        repeat=RepeatSpec(count=k_value, strategy="pass_at_k", early_exit=early_exit),
    )  # fmt: skip
    state = RunState("r")
    total = len(case_pass) * k_value
    for event in (k.ExperimentDefined(run_id="r", spec=spec, spec_hash="h"),
                  k.VariantProposed(run_id="r", variant=spec.variants[0], index=0),
                  k.RunStarted(run_id="r", experiment="sim", trials_total=total)):  # fmt: skip
        state = evolve(state, event)
    for i, p in enumerate(case_pass):
        passed_once = False
        for repeat in range(k_value):
            ident = {"run_id": "r", "variant": "v", "case": f"c{i:03d}", "repeat": repeat}
            if passed_once and early_exit:
                state = evolve(state, k.TrialSkipped(**ident, reason="early exit"))
                continue
            passed = bool(rng.random() < p)
            state = evolve(state, k.TrialCompleted(**ident, output_hash=str(repeat), latency_ms=1.0))
            state = evolve(state, k.TrialGraded(**ident, score=float(passed), passed=passed))
            passed_once |= passed
    return state


def test_a_case_counts_its_first_attempt_not_the_ones_run_after_a_miss() -> None:
    state = _fold([0.5], 3, early_exit=True, seed=4)
    cell = state.cells[("v", "c000")]
    first = case_values(state, "v", ["c000"], "first_attempt")["c000"]
    assert cell.first_repeat == 0 and first == int(cell.passed & 1)


def test_early_exit_mean_score_is_unbiased_and_marked() -> None:
    # 400 cases whose per-attempt pass rates average 0.2; three attempts each, stopped at a pass
    case_pass = list(np.linspace(0.0, 0.4, 400))
    state = _fold(case_pass, 3, early_exit=True, seed=7)
    report = build_report(state)
    v = report.variants[0]
    ran = case_values(state, "v", [f"c{i:03d}" for i in range(400)], "mean")  # the naive figure
    old = float(sum(ran.values())) / len(ran)
    assert v.mean_score is not None and v.ci95 is not None
    assert abs(v.mean_score - 0.2) < 0.06 and v.ci95[0] < 0.2 < v.ci95[1]
    assert old > 0.28  # averaging the attempts that ran overstates it (0.342 for 0.199 in the issue)
    assert report.mean_score_basis == "first_attempt"
    # without early exit every attempt runs, and the score is their mean
    assert build_report(_fold(case_pass, 3, early_exit=False, seed=7)).mean_score_basis == "all_attempts"


def test_the_basis_is_shown_in_every_format() -> None:
    report = json.loads(to_json(build_report(_fold([0.3] * 20, 3, early_exit=True, seed=1))))
    note = score_basis_note(as_report(report))
    assert note is not None and "first attempt" in note
    phrase = "first attempt (pass"
    terminal = " ".join(str(getattr(x, "plain", "")) for x in report_renderables(report))
    assert phrase in terminal and phrase in report_markdown(report) and phrase in report_html(report)
    plain = json.loads(to_json(build_report(_fold([0.3] * 20, 3, early_exit=False, seed=1))))
    assert score_basis_note(as_report(plain)) is None
