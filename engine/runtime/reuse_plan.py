"""`engine plan FILE [--reuse]`: what a run would send and what it would reuse, without calling anything.

Every planned trial (variants x cases x repeats: for a race or a sequential run, the most it may
run) is fingerprinted as the run would and looked up in the store's reuse index. The estimate of
what the trials to send will cost comes from the earlier runs' figures: the mean tokens and dollars
of the outputs found (per variant where it has some, else over all of them).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from engine.events.spec import VariantSpec
from engine.input.experiment_plan import ExperimentPlan
from engine.runtime.plan import build_plan
from engine.runtime.reuse import reuse_for
from engine.store.contract import EventStore

PLAN_RUN = "(planned)"  # the run id the plan's trials are fingerprinted under: none of the store's


@dataclass
class Figures:
    trials: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def add(self, tokens: int, cost_usd: float) -> None:
        self.trials, self.tokens, self.cost_usd = (
            self.trials + 1,
            self.tokens + tokens,
            self.cost_usd + cost_usd,
        )


@dataclass
class VariantPlan:
    name: str
    reused: Figures = field(default_factory=Figures)
    sent: int = 0


@dataclass
class ReusePlan:
    variants: list[VariantPlan]
    sources: Counter[str]  # run -> trials it would give
    reuse_on: bool

    @property
    def reused(self) -> int:
        return sum(v.reused.trials for v in self.variants)

    @property
    def sent(self) -> int:
        return sum(v.sent for v in self.variants)

    def estimate(self) -> tuple[int, float] | None:
        """Tokens and dollars the trials to send would cost, from the earlier outputs' means (None:
        no earlier figures to go by)."""
        found = [v.reused for v in self.variants if v.reused.trials]
        if not found:
            return None
        overall = Figures(
            sum(f.trials for f in found), sum(f.tokens for f in found), sum(f.cost_usd for f in found)
        )
        tokens, cost = 0.0, 0.0
        for v in self.variants:
            basis = v.reused if v.reused.trials else overall
            tokens += v.sent * basis.tokens / basis.trials
            cost += v.sent * basis.cost_usd / basis.trials
        return round(tokens), cost


def plan_reuse(log: EventStore, plan: ExperimentPlan) -> ReusePlan:
    spec = plan.spec
    variants: list[VariantSpec] = list(plan.contestants) or list(plan.variants[:1])
    planned = build_plan(spec, PLAN_RUN, variants, lambda key: "", base_dir=plan.base_dir)
    reuse = reuse_for(log, spec, PLAN_RUN, plan.file)
    sources: Counter[str] = Counter()
    rows = []
    for variant in variants:
        row = VariantPlan(variant.name)
        for case in spec.cases:
            for repeat in range(planned.repeats):
                found = reuse.match(planned.make_job(variant, case, repeat)) if reuse is not None else None
                if found is None:
                    row.sent += 1
                    continue
                source, event = found
                row.reused.add(event.tokens_in + event.tokens_out, event.cost_usd)
                sources[source.run_id] += 1
        rows.append(row)
    return ReusePlan(rows, sources, reuse is not None)
