"""What a planned run can decide at all, before it runs: the smallest p-values its cases and repeats
allow, against the level each decision needs.

Acceptance (the report's winner, a tuning session's accepted variation, `compare --gate` on pass rate
and mean score) is the paired sign-flip test over cases: its smallest two-sided p comes when every
case moves the same way, 1 / 2^N for N cases (the mid-p of the two extreme sign patterns), whatever
the repeats (they refine each case's value, not the number of cases). The per-case gate of
`compare --gate` is Fisher's exact test over one case's repeats, Holm-corrected across cases x
variants: its smallest p is all-pass against all-fail, and Holm's first step needs it below
alpha / tests. A plan whose smallest p cannot go below the
level can never accept a change or flag a case, however large the change: the user hears it first.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

from engine.events.report import Decidability
from engine.events.spec import ExperimentSpec
from engine.stats.gates import fisher_exact
from engine.stats.sequential_looks import look_level
from engine.stats.signflip import sign_flip_test

# the search for "how many would do" stops here: beyond it the answer is "more than this" (200
# repeats reach a Fisher p of 1e-119, 1000 cases a sign-flip p of 1e-301)
MAX_SEARCH = 1000
MAX_REPEATS_SEARCH = 200


class Plan(NamedTuple):
    cases: int
    repeats: int
    variants: int
    alpha: float
    # the level the acceptance test's p must go below (alpha / candidates, or a tuning session's or
    # sequential run's most generous look); None when acceptance needs no p-value
    accept_level: float | None
    comparisons: int  # the candidates acceptance is Holm-corrected over


class Decision(NamedTuple):
    min_p_accept: float
    can_accept: bool
    cases_needed: int | None  # None: more than MAX_SEARCH, or no p-value needed
    min_p_case_gate: float
    case_gate_tests: int
    case_gate_level: float
    can_gate_cases: bool
    repeats_needed: int | None


def plan_of(spec: ExperimentSpec, variants: int) -> Plan:
    """The decisions `spec` plans with `variants` variants (matrix expanded). A tuning session tests
    one candidate at a time, up to its last look's level; a run with several candidates is Holm-
    corrected across them (its first step: alpha / candidates), sequential stopping at its last
    look's level; a single variant's decision is `compare --gate` against another run."""
    alpha = spec.gate.alpha
    comparisons = max(1, variants - 1)
    level: float | None = alpha / comparisons
    if spec.kind == "tune" and spec.tune is not None:
        looks = spec.tune.max_extra_repeats + 1
        comparisons, level = 1, look_level(alpha, looks, looks) if spec.tune.require_significance else None
        variants = 1  # the per-case gate compares a session's baseline with another session's
    elif spec.stopping is not None and spec.stopping.rule == "sequential":
        looks = spec.stopping.looks
        level = look_level(spec.stopping.alpha, looks, looks) / comparisons
    return Plan(len(spec.cases), spec.repeat.count, max(1, variants), alpha, level, comparisons)


def min_p_accept(cases: int) -> float:
    """The paired sign-flip test's smallest two-sided p over this many cases (every case moved one way)."""
    if cases < 1:
        return 1.0
    return sign_flip_test([Fraction(1)] * cases).p_value


def min_p_case(repeats: int) -> float:
    """Fisher's exact p of all repeats passing in one run and all failing in the other."""
    return fisher_exact(repeats, repeats, 0, repeats) if repeats >= 1 else 1.0


def _first(test: object, start: int, stop: int = MAX_SEARCH) -> int | None:
    return next((n for n in range(start, stop + 1) if test(n)), None)  # type: ignore[operator]


@lru_cache(maxsize=64)  # every report build asks again for the same plan
def decide(plan: Plan) -> Decision:
    level = plan.accept_level
    p_accept = min_p_accept(plan.cases)
    tests = max(1, plan.cases * plan.variants)
    case_level = plan.alpha / tests
    p_case = min_p_case(plan.repeats)
    return Decision(
        min_p_accept=p_accept,
        can_accept=level is None or p_accept < level,
        # 1 / 2^n is min_p_accept(n) in closed form (a test holds them equal): quick for any level
        cases_needed=None if level is None else _first(lambda n: 2.0**-n < level, 1),
        min_p_case_gate=p_case,
        case_gate_tests=tests,
        case_gate_level=case_level,
        can_gate_cases=p_case < case_level,
        repeats_needed=_first(lambda r: min_p_case(r) < case_level, 1, MAX_REPEATS_SEARCH),
    )


def warnings(plan: Plan, d: Decision) -> list[str]:
    """One sentence per decision the plan cannot reach. The per-case gate is named only from two
    repeats on: a single repeat asks for no per-case evidence (the report still states what it needs)."""
    out = []
    if not d.can_accept and plan.accept_level is not None:
        needed = f"at least {d.cases_needed}" if d.cases_needed else f"more than {MAX_SEARCH}"
        against = "" if plan.accept_level == plan.alpha else f", needed below {plan.accept_level:.3g}"
        out.append(
            f"{_count(plan.cases, 'case')}: no change can be accepted at alpha {plan.alpha:g} "
            f"(smallest p {d.min_p_accept:.3g}{against}); add cases: {needed} are needed"
        )
    if not d.can_gate_cases and plan.repeats >= 2:
        needed = f"at least {d.repeats_needed}" if d.repeats_needed else f"more than {MAX_REPEATS_SEARCH}"
        out.append(
            f"{_count(plan.repeats, 'repeat')}: compare --gate cannot flag a single case "
            f"at alpha {plan.alpha:g} "
            f"(smallest p {d.min_p_case_gate:.3g}, needed below {d.case_gate_level:.3g} after Holm over "
            f"{d.case_gate_tests} cases x variants); add repeats: {needed} are needed"
        )
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def summary(plan: Plan, d: Decision) -> str:
    """One line for `engine validate` / `engine run`: the smallest p each decision can reach."""
    accept = f"acceptance {d.min_p_accept:.3g} over {_count(plan.cases, 'case')}"
    if plan.accept_level is not None:
        accept += f" (needs < {plan.accept_level:.3g})"
    gate = f"per-case gate {d.min_p_case_gate:.3g} at {_count(plan.repeats, 'repeat')}"
    gate += f" (needs < {d.case_gate_level:.3g})"
    return f"smallest p: {accept}; {gate}"


def _sig(x: float) -> float:
    return float(f"{x:.6g}")


def decidability(spec: ExperimentSpec, variants: int) -> Decidability:
    """The report's `decidability`: `decide` and `warnings` for the plan of `spec`."""
    plan = plan_of(spec, variants)
    d = decide(plan)
    return Decidability(
        cases=plan.cases, repeats=plan.repeats, alpha=plan.alpha,
        accept_level=None if plan.accept_level is None else _sig(plan.accept_level),
        comparisons=plan.comparisons, min_p_accept=_sig(d.min_p_accept), can_accept=d.can_accept,
        cases_needed=d.cases_needed, min_p_case_gate=_sig(d.min_p_case_gate),
        case_gate_level=_sig(d.case_gate_level), case_gate_tests=d.case_gate_tests,
        can_gate_cases=d.can_gate_cases, repeats_needed=d.repeats_needed, warnings=warnings(plan, d),
    )  # fmt: skip
