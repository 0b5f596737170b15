"""1,000 A/A experiments through the whole engine: a noisy target, two identical variants.

Each experiment is a real run (scheduler, executor pool, graders, the LMDB log, the report
projection) on one engine. The target's answer per trial is random (seeded by the trial), with
a per-case difficulty shared by both variants, so the variants differ only by noise: the report
may name a better-looking variant, but it must call it significant in at most 5% of experiments.
test_aa_simulation.py checks the same decision path faster and with more shapes of data.
"""

from __future__ import annotations

import os
import random
import tempfile

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.events.spec import ExperimentSpec

EXPERIMENTS = int(os.environ.get("AA_EXPERIMENTS", "1000"))  # fewer for a quick local look
CASES = 20
WORDS = ("alpha", "beta", "gamma")


async def noisy(request: TargetRequest) -> str:
    # the seed differs by variant, case and repeat; the difficulty only by case
    rng = random.Random(f"{request.run_id}/{request.variant.name}/{request.case.id}/{request.repeat}")
    chance = float(request.case.prompt)
    return " ".join(word for word in WORDS if rng.random() < chance)


def aa_spec(number: int) -> ExperimentSpec:
    difficulty = random.Random(number)
    return spec_from_dict(
        {
            "name": f"aa-{number}",
            "seed": number,
            "target": {"kind": "python", "callable": "noisy"},
            "variants": [{"name": "a"}, {"name": "b"}],
            # three weighted checks: a score in quarter-steps, pass when at least half is right
            "cases": [{"id": f"c{i}", "prompt": f"{difficulty.uniform(0.1, 0.9):.3f}"} for i in range(CASES)],
            "graders": [{"kind": "contains", "value": word} for word in WORDS],
            "scoring": {"pass_threshold": 0.5},
            "repeat": {"count": 2},
        }
    )


async def test_aa_false_winner_rate_through_the_engine() -> None:
    significant = 0
    named = 0
    async with open_engine(tempfile.mkdtemp(), callables={"noisy": noisy}) as eng:
        for number in range(EXPERIMENTS):
            report = await eng.run(aa_spec(number))
            assert report.status == "completed" and report.trials_done == 2 * CASES * 2
            named += report.winner is not None
            significant += report.winner_significant
    assert significant / EXPERIMENTS <= 0.05
    # not vacuous: the noise does make one variant look better, often
    assert named / EXPERIMENTS >= 0.5
