"""Per-case views of a run: the value each case contributes, and summaries by case tag."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from numbers import Real

from engine.events.report import TagSummary
from engine.stats import inference as stats
from engine.stats.comparisons import rnd
from engine.store.projections.run_state import SCALE, RunState


def case_values(state: RunState, variant: str, case_ids: list[str], strategy: str) -> dict[str, Fraction]:
    """The per-case value used to pair variants: the mean score over repeats ("mean" and
    "confidence_interval"), any pass ("pass_at_k"), the share of repeats that passed ("pass_rate"),
    or the score of the first scored repeat ("first_attempt"). Exact fractions (2 of 3 is 2/3, not
    0.666...6): equal values compare equal in every test."""
    out: dict[str, Fraction] = {}
    ratio = _ratios()
    for case in case_ids:
        cell = state.cells.get((variant, case))
        if cell is None:
            continue
        if strategy == "first_attempt":
            if cell.first_repeat >= 0:
                out[case] = ratio(cell.first_score, SCALE)
            continue
        if strategy in ("pass_at_k", "pass_rate"):
            scored = cell.scored()
            if scored:
                passes = (cell.passed & scored).bit_count()
                runs = scored.bit_count() if strategy == "pass_rate" else 1
                out[case] = ratio(passes if strategy == "pass_rate" else int(passes > 0), runs)
            continue
        scored = cell.scored().bit_count()
        if scored:
            out[case] = ratio(cell.score_sum, scored * SCALE)
    return out


def _ratios() -> Callable[[int, int], Fraction]:
    """Fraction(n, d), each value made once: thousands of cases share a few (a Fraction costs a gcd)."""
    made: dict[tuple[int, int], Fraction] = {}

    def ratio(numerator: int, denominator: int) -> Fraction:
        found = made.get((numerator, denominator))
        if found is None:
            found = made[(numerator, denominator)] = Fraction(numerator, denominator)
        return found

    return ratio


def case_error_counts(state: RunState, variant: str, case_ids: list[str]) -> dict[str, tuple[int, int]]:
    """Per case, (finished trials without a usable result, finished trials): the trial errored, or a
    grader failed to score its output. Cases with no finished trial are left out."""
    out: dict[str, tuple[int, int]] = {}
    for case in case_ids:
        cell = state.cells.get((variant, case))
        finished = 0 if cell is None else (cell.graded | cell.failed).bit_count()
        if cell is not None and finished:
            out[case] = ((cell.failed | (cell.graded & cell.ungradable)).bit_count(), finished)
    return out


def case_error_rates(state: RunState, variant: str, case_ids: list[str]) -> dict[str, Fraction]:
    """case_error_counts as shares: the run's error_rate, case by case, so two runs pair by case."""
    return error_shares(case_error_counts(state, variant, case_ids))


def error_shares(counts: dict[str, tuple[int, int]]) -> dict[str, Fraction]:
    ratio = _ratios()
    return {case: ratio(bad, finished) for case, (bad, finished) in counts.items()}


def tag_summaries(state: RunState, variant: str, case_means: Mapping[str, Real]) -> dict[str, TagSummary]:
    """Per tag, in tag order: the mean of per-case means and the pass rate over graded repeats."""
    tagged: dict[str, list[str]] = {}
    for case in state.spec.cases if state.spec else []:
        for tag in case.tags:
            tagged.setdefault(tag, []).append(case.id)
    out = {}
    for tag in sorted(tagged):
        cells = [state.cells[(variant, c)] for c in tagged[tag] if (variant, c) in state.cells]
        graded = sum(c.scored().bit_count() for c in cells)
        passed = sum((c.passed & c.scored()).bit_count() for c in cells)
        means = [case_means[c] for c in tagged[tag] if c in case_means]
        out[tag] = TagSummary(
            cases=len(tagged[tag]),
            mean_score=rnd(stats.mean(means)),
            pass_rate=rnd(passed / graded) if graded else None,
        )
    return out
