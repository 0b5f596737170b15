"""One variant's part of the report: scores, pass rates, verdicts, latency, spend, errors by class.

Pass rates, pass@k and verdicts count scored repeats only: a repeat no grader could score (an
unparseable judge answer) is a grading error, reported as such, never a failure of the subject.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from numbers import Real

import msgspec

from engine.events.report import FlakyCase, Latency, SandboxReport, Tokens, VariantReport
from engine.events.spec import CommandTargetSpec, ReplicaAggregation, variant_target
from engine.stats import inference as stats
from engine.stats.comparisons import DIGITS, rnd, rnd_pair
from engine.stats.histograms import nearest_ranks
from engine.store.projections.cases import tag_summaries
from engine.store.projections.reuse_report import reuse_report
from engine.store.projections.run_state import SCALE, Cell, RunState, VariantTotals
from engine.store.projections.stream_pace import pace_reports
from engine.store.projections.verdicts import case_verdict, count_verdicts

_ALL = ReplicaAggregation()


def variant_report(
    state: RunState, name: str, case_ids: list[str], case_means: Mapping[str, Real], strategy: str
) -> VariantReport:
    cells = [state.cells[(name, c)] for c in case_ids if (name, c) in state.cells]
    means = list(case_means.values())
    scored = sum(c.scored().bit_count() for c in cells)
    passed = sum((c.passed & c.scored()).bit_count() for c in cells)
    k_value = state.spec.repeat.count if state.spec else 1
    mean_score = stats.mean(means)
    ci = within_unit(stats.mean_ci95(means))
    pass_k = _mean_over_cells(cells, lambda n, c: stats.pass_at_k(n, c, k_value))
    pass_hat = (
        None
        if stops_at_first_pass(state)
        else _mean_over_cells(cells, lambda n, c: stats.pass_hat_k(n, c, k_value))
    )
    strategy_score = {"mean": mean_score, "pass_at_k": pass_k, "confidence_interval": ci[0] if ci else None}
    totals = state.totals.get(name) or VariantTotals()
    ttft, rate = pace_reports(totals.pace)
    return VariantReport(
        name=name,
        # finished trials, as `trials_done` counts them: a completed one waiting for its grade is not yet in
        trials=sum((c.graded | c.failed).bit_count() for c in cells),
        scored=scored,
        errors=sum(c.failed.bit_count() for c in cells),
        skipped=sum(c.skipped.bit_count() for c in cells),
        passed=passed,
        mean_score=rnd(mean_score),
        ci95=rnd_pair(ci),
        pass_rate=rnd(passed / scored) if scored else None,
        pass_rate_ci95=rnd_pair(_pass_rate_ci95(cells, passed, scored)),
        pass_rate_trial_ci95=rnd_pair(stats.wilson_ci95(passed, scored)),
        pass_at_k=rnd(pass_k),
        pass_hat_k=rnd(pass_hat),
        strategy_score=rnd(strategy_score[strategy]),
        latency_ms=latency(totals),
        tokens=Tokens(in_=totals.tokens_in, out=totals.tokens_out),
        judge_tokens=totals.judge_tokens,
        cost_usd=round(totals.cost / SCALE, DIGITS),
        params=dict(state.variants[name].params),
        sent_params=sent_params(state, name),
        unscored=sum((c.graded & c.unscored).bit_count() for c in cells),
        by_tag=tag_summaries(state, name, case_means),
        cases=count_verdicts(cells, state.spec.scoring.replica_aggregation if state.spec else _ALL),
        errors_by_class=errors_by_class(state, name),
        mean_tool_calls=rnd(totals.tool_calls / SCALE / totals.tool_trials) if totals.tool_trials else None,
        tool_success_rate=rnd(totals.tool_ok / totals.tool_known) if totals.tool_known else None,
        unscored_cases=sum(1 for c in cells if _unscored_by_errors(c)),
        tool_calls_by_tool=dict(sorted(totals.tools.items())) or msgspec.UNSET,
        sandbox=sandbox_report(state, name),
        reuse=reuse_report(state, name),
        ttft_ms=msgspec.UNSET if ttft is None else ttft,
        tokens_per_s=msgspec.UNSET if rate is None else rate,
    )


def _unscored_by_errors(cell: Cell) -> bool:
    """No repeat scored, and errors (not a planned stop such as an exhausted judge budget) are why."""
    return not cell.scored() and bool(cell.failed | (cell.graded & cell.ungradable))


def within_unit(pair: tuple[float, float] | None) -> tuple[float, float] | None:
    """Scores live in [0, 1]; a t-interval near an end would otherwise claim 1.17."""
    return None if pair is None else (max(0.0, pair[0]), min(1.0, pair[1]))


def _mean_over_cells(cells: list[Cell], per_cell: Callable[[int, int], float]) -> float | None:
    """The mean over cells with scored repeats of per_cell(attempts, passes)."""
    counts = [(done.bit_count(), (c.passed & done).bit_count()) for c in cells if (done := c.scored())]
    # a few distinct (attempts, passes) over thousands of cells: each one's figure computed once
    figure = {pair: per_cell(*pair) for pair in set(counts)}
    return stats.mean([figure[pair] for pair in counts])


def _pass_rate_ci95(cells: list[Cell], passed: int, scored: int) -> tuple[float, float] | None:
    """Over cases, since a case's repeats are not independent; one case has only its repeats: Wilson."""
    runs = [c.scored().bit_count() for c in cells]
    passes = [(c.passed & c.scored()).bit_count() for c in cells]
    if sum(1 for n in runs if n) < 2:
        return stats.wilson_ci95(passed, scored)
    return stats.cluster_rate_ci95(passes, runs)


def stops_at_first_pass(state: RunState) -> bool:
    """pass_at_k with early exit skips a case's attempts after its first pass: pass^k would count
    the skipped attempts as if they had never failed."""
    repeat = state.spec.repeat if state.spec else None
    return repeat is not None and repeat.strategy == "pass_at_k" and repeat.early_exit and repeat.count > 1


def errors_by_class(state: RunState, name: str) -> dict[str, int]:
    counts = {cls: tally.by_variant.get(name, 0) for (_, cls), tally in sorted(state.errors.items())}
    return {cls: n for cls, n in counts.items() if n}


def latency(totals: VariantTotals) -> Latency:
    """Nearest-rank percentiles (the value at rank ceil(q * n)): with few trials the histogram's own
    rounded rank can land one below, so p99 of 60 trials missed the slowest one."""
    ranks = nearest_ranks(totals.latency_us, [50, 95, 99])
    if ranks is None:
        return Latency()
    p50, p95, p99 = (rnd(us / 1000) for us in ranks)
    mean = totals.latency_sum_us / totals.latency_us.get_total_count() / 1000
    return Latency(p50=p50, p95=p95, p99=p99, mean=rnd(mean))


def flaky_cases(state: RunState, names: list[str], case_ids: list[str]) -> list[FlakyCase]:
    """The cells whose verdict is flaky, by the run's replica_aggregation: the rule the verdict
    counts use too (under "any", a case with one pass passes: it is not flaky)."""
    aggregation = state.spec.scoring.replica_aggregation if state.spec else _ALL
    out = []
    for name in names:
        for case in case_ids:
            cell = state.cells.get((name, case))
            if cell is None or case_verdict(cell, aggregation) != "flaky":
                continue
            scored = cell.scored()
            passes = (cell.passed & scored).bit_count()
            out.append(FlakyCase(variant=name, case=case, passes=passes, runs=scored.bit_count()))
    return out


def sent_params(state: RunState, name: str) -> dict[str, object] | msgspec.UnsetType:
    """The params the variant's target received (runtime.plan merges them so); UNSET when they are
    the variant's own."""
    own = state.variants[name].params
    merged = {**(state.spec.params if state.spec else {}), **own}
    return merged if merged != own else msgspec.UNSET


def sandbox_report(state: RunState, name: str) -> SandboxReport | msgspec.UnsetType:
    """The variant's sandbox policy, when its agent runs in one."""
    variant = state.variants.get(name)
    if state.spec is None or variant is None:
        return msgspec.UNSET
    kind = variant.target.get("kind", state.spec.target.kind)
    if kind != "command":  # and so nothing to resolve (a plugin's kind may not be installed on replay)
        return msgspec.UNSET
    target = variant_target(state.spec.target, variant)
    if not isinstance(target, CommandTargetSpec) or not target.policy.sandboxed:
        return msgspec.UNSET
    policy = target.policy
    return SandboxReport(
        kind=policy.kind, network=policy.network, host_ports=list(policy.host_ports),
        limits={k: v for k, v in sorted(msgspec.structs.asdict(policy.limits).items()) if v is not None},
        services=[s.name for s in policy.services],
    )  # fmt: skip
