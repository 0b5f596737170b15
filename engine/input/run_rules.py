"""The run's own rules beyond its fields: the budget's caps on variants and trials, sequential looks and
races (what a tuning session may race on), and Optuna installed when the search asks for it."""

from __future__ import annotations

from collections.abc import Callable

from engine.events.spec import ExperimentSpec

Fail = Callable[[str, str], None]


def check_caps(spec: ExperimentSpec, variants: int, fail: Fail) -> None:
    """maxVariants / maxTrialsPerRun: a plan beyond them is refused before launch, with its count."""
    budget = spec.budget
    if budget.max_variants is not None and variants > budget.max_variants:
        expected = f"expected at most {budget.max_variants} variants; the run has {variants}"
        fail("budget.max_variants", expected)
    cases, repeats = max(1, len(spec.cases)), spec.repeat.count
    trials = variants * cases * repeats
    if budget.max_trials_per_run is not None and trials > budget.max_trials_per_run:
        counted = f"{variants} variants x {cases} cases x {repeats} repeats = {trials}"
        fail("budget.max_trials_per_run", f"expected at most {budget.max_trials_per_run} trials; {counted}")


def check_stopping(spec: ExperimentSpec, fail: Fail) -> None:
    stopping = spec.stopping
    if stopping is None or stopping.rule == "fixed":
        return
    if spec.kind == "tune":
        _check_tune_race(spec, fail)
    if stopping.rule == "race":
        _check_race(spec, fail)
        return
    if spec.repeat.strategy == "pass_at_k":
        fail("stopping.rule", "expected repeat.strategy 'mean' or 'confidence_interval' for sequential looks")
    if spec.repeat.count < stopping.looks:
        fail("stopping.looks", f"expected at most repeat.count ({spec.repeat.count}) looks: one round each")


def _check_tune_race(spec: ExperimentSpec, fail: Fail) -> None:
    """A tuning session races each candidate against the best on the mean score, the measure its
    accept rule uses; the margin that counts is the session's own min_improvement."""
    assert spec.stopping is not None
    if spec.stopping.rule != "race":
        fail("stopping.rule", "expected 'race' or 'fixed' in a tuning session (it spends alpha per decision)")
    if spec.stopping.objective != "score":
        fail("stopping.objective", "expected 'score' in a tuning session (its accept rule compares scores)")
    if spec.stopping.min_improvement:
        expected = "expected none in a tuning session (tune.min_improvement is its margin)"
        fail("stopping.min_improvement", expected)


def _check_race(spec: ExperimentSpec, fail: Fail) -> None:
    assert spec.stopping is not None
    if spec.repeat.strategy == "pass_at_k":
        fail("stopping.rule", "expected repeat.strategy 'mean' or 'confidence_interval' for a race")
    if len(spec.cases) < spec.stopping.rounds:
        fail("stopping.rounds", f"expected at most one round per case ({len(spec.cases)} cases)")


def check_optuna(fail: Fail) -> None:
    try:
        import optuna  # noqa: F401 - importable, with its dependencies (find_spec would not say)
    except ImportError:
        fail("tune.strategy", "expected Optuna installed for 'optuna': pip install 'engine[optuna]'")
