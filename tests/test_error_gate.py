"""Errors are never neutral in `engine compare --gate`: a significant rise of errors per trial (paired
by case) regresses, and the report counts the cases errors left without any score."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import numpy as np
import trio

from engine.api import open_engine, spec_from_dict
from engine.events.spec import GateSpec
from engine.presentation.model import as_report
from engine.presentation.report.status import more_error_lines, status_lines
from engine.store.projections.report_builder import build_report
from engine.store.projections.run_state import RunState
from engine.views.compare.comparison import compare_runs, compare_states
from engine.views.compare.gates import MetricDelta
from tests.conftest import run_engine
from tests.fakes.openai_server import open_fake_openai
from tests.gate_runs import simulated_run


def _run(run_id: str, seed: int, error_chance: dict[str, float], variants: int = 1) -> RunState:
    """20 cases x 5 repeats; a trial errors with its case's chance, else passes 70% of the time."""
    rng = np.random.default_rng(seed)

    def trial(variant: str, case: str, repeat: int) -> tuple[float, float, bool | None]:
        if rng.random() < error_chance.get(case, 0.0):
            return 100.0, 0.0, None
        return 100.0, 0.001, bool(rng.random() < 0.7)

    return simulated_run(run_id, [f"v{i}" for i in range(variants)], 20, 5, trial)


def _row(metrics: list[MetricDelta], name: str, variant: str = "v0") -> MetricDelta:
    return next(m for m in metrics if m.metric == name and m.variant == variant)


def test_a_rise_of_errors_regresses_while_pass_rate_looks_unchanged() -> None:
    # the candidate errors on 12 of 20 cases 80% of the time; the trials that ran still pass 70%
    broken = {f"c{i:02d}": 0.8 for i in range(12)}
    result = compare_states(_run("base", 1, {}), _run("cand", 2, broken))
    errors = _row(result.metrics, "error_rate")
    assert errors.baseline == 0.0 and errors.candidate is not None and errors.candidate > 0.4
    assert errors.direction == "worse" and errors.p_value is not None and errors.p_value < 0.01
    assert errors.regressed and result.regressed
    assert any(r.startswith("v0: error_rate went from 0.0 to") for r in result.regressions)
    assert not _row(result.metrics, "pass_rate").regressed  # errors are out of the pass rate


def test_errors_at_the_same_rate_in_both_runs_do_not_regress() -> None:
    flaky_infra = {f"c{i:02d}": 0.2 for i in range(20)}
    base, cand = _run("base", 3, flaky_infra, variants=3), _run("cand", 4, flaky_infra, variants=3)
    result = compare_states(base, cand)
    rows = [m for m in result.metrics if m.metric == "error_rate"]
    assert len(rows) == 3 and all(m.p_value_adjusted is not None for m in rows)
    assert not any(m.regressed for m in rows)


def test_a_fall_of_errors_is_better_and_the_threshold_is_the_gates() -> None:
    broken = {f"c{i:02d}": 0.8 for i in range(12)}
    fewer = compare_states(_run("base", 5, broken), _run("cand", 6, {}))
    fell = _row(fewer.metrics, "error_rate")
    assert fell.direction == "better" and fell.p_value is not None and fell.p_value < 0.01
    assert not fell.regressed
    lenient = GateSpec(max_error_rate_increase=0.9)
    result = compare_states(_run("base", 1, {}), _run("cand", 2, broken), lenient)
    assert not _row(result.metrics, "error_rate").regressed


def test_the_report_counts_the_cases_errors_left_unscored() -> None:
    # c00-c02 error on every repeat: out of the pass rate and score, counted here
    state = _run("r", 7, {"c00": 1.0, "c01": 1.0, "c02": 1.0, "c03": 0.5})
    (variant,) = build_report(state).variants
    assert variant.unscored_cases == 3 and variant.cases.errors == 3


CASES = [{"id": f"c{i:02d}", "prompt": f"question {i:02d}", "expected": "42"} for i in range(20)]


def _spec(base_url: str) -> dict[str, object]:
    return {
        "name": "errors",
        "target": {"kind": "openai", "base_url": base_url, "timeout_s": 2, "max_retries": 0},
        "cases": CASES,
        "graders": [{"kind": "contains"}],
        "repeat": {"count": 3},
        "execution": {"concurrency": 4, "max_error_rate": 1.0},
    }


def _hang_on(cases: set[str]):  # noqa: ANN202 - the fake server's fault function
    def fault(_: int, body: dict[str, object]) -> str | None:
        prompt = str(body.get("messages"))
        return "hang" if any(f"question {c[1:]}" in prompt for c in cases) else None

    return fault


async def test_timeouts_from_the_server_rising_fail_the_gate_in_every_format(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    store = tmp_path / "st"
    async with open_fake_openai(answer=lambda body: "42") as server:
        async with open_engine(store) as eng:
            await eng.run(spec_from_dict(_spec(server.base_url)), run_id="base")
            server.faults = _hang_on({f"c{i:02d}" for i in range(10)})  # half the cases now time out
            report = await eng.run(spec_from_dict(_spec(server.base_url)), run_id="cand")
    (variant,) = report.variants
    assert variant.errors == 30 and variant.errors_by_class == {"timeout": 30}
    assert variant.unscored_cases == 10 and variant.pass_rate == 1.0  # the rest still pass
    from engine.store.open import open_event_log

    with open_event_log(store) as log:
        compared = compare_runs(log, "base", "cand")
    errors = _row(compared.metrics, "error_rate", "baseline")
    assert errors.regressed and errors.baseline == 0.0 and errors.candidate == 0.5
    gated = run_engine("compare", "base", "cand", "--gate", "--store", str(store), cwd=tmp_path)
    assert gated.returncode == 1, gated.stderr.decode()
    text = " ".join(gated.stdout.decode().split())
    assert "error_rate" in text and "REGRESSED: baseline: error_rate went from 0.0 to 0.5" in text
    lenient = ("--max-error-rate-increase", "0.9")
    assert (
        run_engine(
            "compare", "base", "cand", "--gate", *lenient, "--store", str(store), cwd=tmp_path
        ).returncode
        == 0
    )
    as_json = run_engine("compare", "base", "cand", "--gate", "--json", "--store", str(store), cwd=tmp_path)
    found = json.loads(as_json.stdout)
    assert as_json.returncode == 1
    assert [m["regressed"] for m in found["metrics"] if m["metric"] == "error_rate"] == [True]
    for fmt in ("markdown", "html"):
        shown = run_engine("report", "cand", "--format", fmt, "--store", str(store), cwd=tmp_path)
        out = shown.stdout.decode()
        assert "Cases errors left unscored" in out and "baseline 10" in out, fmt
    terminal = run_engine("report", "cand", "--store", str(store), cwd=tmp_path)
    assert "Cases errors left unscored (not in pass rate or score): baseline 10." in " ".join(
        terminal.stdout.decode().split()
    )


def test_inside_a_run_a_candidate_that_errors_more_cannot_win_significantly() -> None:
    # "crashy" errors on the 12 hardest cases and aces the 8 it finishes; the baseline passes 70%
    hard = {f"c{i:02d}" for i in range(12)}
    rng = np.random.default_rng(11)

    def trial(variant: str, case: str, repeat: int) -> tuple[float, float, bool | None]:
        if variant == "crashy":
            return (100.0, 0.0, None) if case in hard else (100.0, 0.001, True)
        return 100.0, 0.001, bool(rng.random() < 0.7)

    report = build_report(simulated_run("r", ["base", "crashy"], 20, 5, trial))
    (compared,) = report.comparisons
    assert compared.error_rate_delta == 0.6 and compared.more_errors
    assert compared.error_rate_p_value is not None and compared.error_rate_p_value < 0.001
    assert report.winner == "crashy" and not report.winner_significant  # its score: 8 easy cases only
    data = as_report(json.loads(msgspec.json.encode(report)))  # as the JSON report reads
    assert more_error_lines(data) == [
        "More errors than base: crashy errors per trial +0.600 (p (Holm) <0.001); "
        "its score counts only the cases it finished."
    ]
    assert "Cases errors left unscored (not in pass rate or score): crashy 12." in status_lines(data)
