"""`engine run`'s live display on a terminal: done/total, rate, time left, and the trials passed,
failed and in error so far, for the run and (a few variants) per variant. Fed the events a run
emits; rendered by rich as a 100-column terminal would show it."""

from __future__ import annotations

import io
import re

from rich.console import Console

from engine.cli.run.bar import RunProgress, progress_bar
from engine.events import kinds as k
from engine.events.spec import VariantSpec


def graded(variant: str, repeat: int, passed: bool) -> k.TrialGraded:
    return k.TrialGraded(run_id="r", ts=0, variant=variant, case="c", repeat=repeat, score=1.0 * passed,
                         passed=passed)  # fmt: skip


def shown(variants: list[str], total: int, events: list[k.Event]) -> list[str]:
    bar = progress_bar(console=Console(file=io.StringIO(), width=100))
    progress = RunProgress(bar)
    for i, name in enumerate(variants):
        progress.on(k.VariantProposed(run_id="r", ts=0, variant=VariantSpec(name=name), index=i))
    progress.on(k.RunStarted(run_id="r", ts=0, experiment="exp", trials_total=total))
    for event in events:
        progress.on(event)
    out = io.StringIO()
    Console(file=out, width=100).print(bar.make_tasks_table(bar.tasks))
    return out.getvalue().splitlines()


def test_the_display_counts_passes_failures_and_errors_with_rate_and_eta() -> None:
    failed = k.TrialFailed(run_id="r", ts=0, variant="a", case="c", repeat=9, error_kind="timeout",
                           message="x")  # fmt: skip
    events: list[k.Event] = [graded("a", 0, True), graded("b", 0, True), graded("a", 1, False), failed]
    run, a, b = shown(["a", "b"], 10, events)
    assert run.startswith("exp") and "4/10" in run and "/s" in run and "eta" in run
    assert "passed 2 · failed 1 · errors 1" in run
    assert "1/5" in b and "passed 1 · failed 0 · errors 0" in b
    assert "3/5" in a and "passed 1 · failed 1 · errors 1" in a
    assert all(len(line.rstrip()) <= 100 for line in (run, a, b))


def test_a_tuning_session_or_many_variants_get_one_line() -> None:
    (session,) = shown([], 0, [graded("baseline", 0, True), graded("temperature=0.2", 0, False)])
    assert "2/?" in session and "passed 1 · failed 1 · errors 0" in session
    many = shown([f"v{i}" for i in range(6)], 60, [graded("v0", 0, True)])
    assert len(many) == 1 and "1/60" in many[0]


def test_at_100_columns_a_long_name_gives_way_and_no_figure_is_cut() -> None:
    names = ["baseline-with-a-long-name", "candidate-with-a-longer-name"]
    events: list[k.Event] = [graded(names[0], r, r % 3 > 0) for r in range(3000)]
    events += [k.TrialFailed(run_id="r", ts=0, variant=names[1], case="c", repeat=r, error_kind="timeout",
                             message="x") for r in range(1234)]  # fmt: skip
    bar = progress_bar(console=Console(file=io.StringIO(), width=100))
    progress = RunProgress(bar)
    for i, name in enumerate(names):
        progress.on(k.VariantProposed(run_id="r", ts=0, variant=VariantSpec(name=name), index=i))
    long_name = "an-experiment-with-a-long-name"
    progress.on(k.RunStarted(run_id="r", ts=0, experiment=long_name, trials_total=20000))
    for event in events:
        progress.on(event)
    out = io.StringIO()
    Console(file=out, width=100).print(bar.make_tasks_table(bar.tasks))
    run, first, second = out.getvalue().splitlines()
    assert all(len(line.rstrip()) <= 100 for line in (run, first, second))
    assert "4234/20000" in run and "passed 2000 · failed 1000 · errors 1234" in run
    assert re.search(r" \d+(\.\d)?k?/s eta ", run), run  # the rate whole, never "178147.…"
    assert "errors 1234" in second and "…" not in run.split("/s")[1]
