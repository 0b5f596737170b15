"""Races ([stopping] rule = "race"): rounds over cases, the clearly worse variants dropped after each,
every drop an event; a resumed race makes the same decisions as an uninterrupted one."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.errors import InputError
from engine.events import kinds as k
from engine.stats.racing import CaseCost, decide_round, race_threshold
from engine.store.projection import run_events

QUALITY = {"best": 0.9, "close": 0.75, "weak": 0.45, "bad": 0.2}


def subject(request: TargetRequest) -> str:
    """Right with the variant's known probability, decided by the trial's own seed."""
    return "yes" if (request.seed % 1000) / 1000 < QUALITY[request.variant.name] else "no"


def race_spec(cases: int = 60, **stopping: Any) -> Any:
    return spec_from_dict({
        "name": "race", "seed": 9,
        "target": {"kind": "python", "callable": "subject"},
        "variants": [{"name": n} for n in ("close", "best", "weak", "bad")],
        "cases": [{"id": f"c{i:02d}", "prompt": "p", "expected": "yes"} for i in range(cases)],
        "repeat": {"count": 3},
        "graders": [{"kind": "exact"}],
        "stopping": {"rule": "race", "rounds": 6, **stopping},
    })  # fmt: skip


def race_events(log: Any, run_id: str) -> list[Any]:
    tags = {"variant.eliminated", "race.round_decided"}
    return [msg_without_ts(e) for e in run_events(log, run_id, tags)]


def msg_without_ts(event: Any) -> Any:
    import msgspec

    return msgspec.structs.replace(event, ts=0.0)


async def test_the_weak_are_dropped_and_the_best_wins_with_fewer_trials(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"subject": subject}) as eng:
        report = await eng.run(race_spec(), run_id="r")
        events = race_events(eng.log, "r")
    stopping = report.stopping
    assert stopping is not None and stopping.rule == "race" and stopping.objective == "score"
    dropped = {e.variant: e for e in stopping.eliminations}
    assert {"weak", "bad"} <= set(dropped) and "best" not in dropped
    assert all(e.lost_to == "best" and e.p_value < e.threshold for e in stopping.eliminations)
    threshold = race_threshold(0.05, 6, 4)
    assert stopping.level == pytest.approx(threshold)
    # each drop is an event logged with its round, and the round's decision follows it
    eliminated = [e for e in events if isinstance(e, k.VariantEliminated)]
    assert {e.variant for e in eliminated} == set(dropped)
    rounds = [e for e in events if isinstance(e, k.RaceRoundDecided)]
    assert [r.round for r in rounds] == list(range(1, len(rounds) + 1)) and rounds[-1].stop
    for e in eliminated:  # the dropped variant is out of every later round
        assert all(e.variant not in r.survivors for r in rounds if r.round >= e.round)
    # the dropped ran fewer trials; the race saved trials against running everything
    trials = {v.name: v.trials for v in report.variants}
    assert trials["bad"] < trials["best"] and report.trials_done < report.trials_total
    assert stopping.trials_saved == report.trials_total - report.trials_done
    assert report.winner == "best" and not report.is_partial
    assert report.winner_significant == (stopping.stopped == "one_left")
    # the comparisons' "significant" uses the race's level, as a sequential run's uses its last look's:
    # a p that a race looking after every round would not act on is not called significant
    assert report.comparisons and all(
        c.significant == (c.p_value_adjusted is not None and c.p_value_adjusted < stopping.level)
        for c in report.comparisons
    )
    # "tied best" is the race's verdict: the survivors, never a variant it dropped
    assert report.tied_best == []  # one left: nothing is tied with it


async def test_an_undecided_race_ties_its_survivors_never_the_dropped(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"subject": subject}) as eng:
        report = await eng.run(race_spec(min_improvement=0.3), run_id="r")
    stopping = report.stopping
    assert stopping is not None and len(stopping.survivors) > 1 and stopping.eliminations
    assert report.tied_best[0] == report.winner and set(report.tied_best) == set(stopping.survivors)
    assert not report.winner_significant
    level = stopping.level  # "significant" is the race's verdict, as for a sequential run's last look
    assert all(c.significant == (c.p_value_adjusted is not None and c.p_value_adjusted < level)
               for c in report.comparisons)  # fmt: skip


async def test_a_resumed_race_makes_the_same_decisions(tmp_path: Path) -> None:
    async with open_engine(tmp_path / "whole", callables={"subject": subject}) as eng:
        whole = await eng.run(race_spec(), run_id="r")
        expected = race_events(eng.log, "r")
    assert len([e for e in expected if isinstance(e, k.RaceRoundDecided)]) >= 2
    async with open_engine(tmp_path / "cut", callables={"subject": subject}) as eng:
        handle = eng.start(race_spec(), run_id="r", events=True)
        async for event in handle.events():
            if isinstance(event, k.RaceRoundDecided) and event.round == 1:
                handle.cancel("restart in the middle of the race")
        stopped = await handle.result()
        assert stopped.status == "cancelled"
        resumed = await eng.run(None, run_id="r", resume=True)
        got = race_events(eng.log, "r")
    assert got == expected
    assert resumed.winner == whole.winner and resumed.trials_done == whole.trials_done
    assert resumed.stopping == whole.stopping


def test_within_the_margin_the_race_ends_as_equivalent() -> None:
    same = {f"c{i}": Fraction(i % 2) for i in range(40)}
    nearly = {**same, "c0": Fraction(1)}
    outcome = decide_round({"a": same, "b": nearly}, ["a", "b"], 0.01, margin=0.2)
    assert outcome.equivalent and not outcome.drops and outcome.leader == "b"
    assert not decide_round({"a": same, "b": nearly}, ["a", "b"], 0.01, margin=0.0).equivalent


def test_a_variant_whose_every_trial_errored_does_not_hold_the_others_back() -> None:
    """Its cases have no value; the pairs are over the cases each two share, so the rest still race."""
    strong = {f"c{i}": Fraction(1) for i in range(30)}
    weak = {f"c{i}": Fraction(0) for i in range(30)}
    broken: dict[str, Fraction] = {}
    outcome = decide_round({"broken": broken, "weak": weak, "strong": strong}, ["broken", "weak", "strong"],
                           0.001, 0.0)  # fmt: skip
    assert outcome.leader == "strong" and [d.variant for d in outcome.drops] == ["weak"]
    assert [s.cases for s in outcome.standings] == [0, 30, 30]


def test_cost_per_pass_prefers_the_cheaper_answer_per_pass() -> None:
    rng = np.random.default_rng(3)
    cheap = {f"c{i}": CaseCost(0.01 + rng.uniform(0, 0.002), 1.0) for i in range(60)}
    dear = {f"c{i}": CaseCost(0.03 + rng.uniform(0, 0.002), 1.0) for i in range(60)}
    outcome = decide_round({"dear": dear, "cheap": cheap}, ["dear", "cheap"], 0.001, 0.0)
    assert outcome.leader == "cheap" and [d.variant for d in outcome.drops] == ["dear"]
    assert outcome.drops[0].delta == pytest.approx(0.02, abs=0.002)


def test_the_true_best_is_rarely_dropped_when_all_are_equal() -> None:
    """A/A: 4 equal variants, 6 rounds; a drop of variant 0 at any round is a false drop (<= alpha)."""
    rng = np.random.default_rng(11)
    threshold = race_threshold(0.05, 6, 4)
    false_drops = 0
    for _ in range(150):
        difficulty = rng.beta(2, 2, size=60)
        passes = rng.binomial(3, np.tile(difficulty, (4, 1)))
        survivors = ["0", "1", "2", "3"]
        for round_no in range(1, 7):
            n = 10 * round_no
            values = {v: {str(c): Fraction(int(passes[int(v), c]), 3) for c in range(n)} for v in survivors}
            drops = {d.variant for d in decide_round(values, survivors, threshold, 0.0).drops}
            survivors = [v for v in survivors if v not in drops]
        false_drops += "0" not in survivors
    assert false_drops / 150 <= 0.05


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"variants": [{"name": "best"}]}, "stopping.rule"),
        ({"cases": [{"id": "a", "prompt": "p", "expected": "yes"}]}, "stopping.rounds"),
        ({"repeat": {"count": 2, "strategy": "pass_at_k"}}, "stopping.rule"),
    ],
)
def test_races_that_cannot_run_are_refused(change: dict[str, Any], field: str) -> None:
    base = race_spec()
    raw = {
        "name": "race", "target": {"kind": "python", "callable": "subject"},
        "variants": [{"name": v.name} for v in base.variants],
        "cases": [{"id": c.id, "prompt": "p", "expected": "yes"} for c in base.cases],
        "stopping": {"rule": "race", "rounds": 6},
        **change,
    }  # fmt: skip
    with pytest.raises(InputError, match=field):
        spec_from_dict(raw)


def test_the_run_page_draws_the_race(tmp_path: Path, browser: Any) -> None:
    """One colour per variant, a legend, names that do not overlap, an axis inside the score's range."""
    import httpx

    from tests.browser import ARTIFACTS, screenshot
    from tests.conftest import run_engine
    from tests.serve_helpers import serving

    (tmp_path / "racers.py").write_text(
        "QUALITY = {'best': 0.9, 'close': 0.75, 'weak': 0.45, 'bad': 0.2}\n"
        "def subject(request):\n"
        "    return 'yes' if (request.seed % 1000) / 1000 < QUALITY[request.variant.name] else 'no'\n"
    )
    cases = "\n".join(f'[[cases]]\nid = "c{i:02d}"\nprompt = "p"\nexpected = "yes"' for i in range(60))
    variants = "\n".join(f'[[variants]]\nname = "{n}"' for n in ("close", "best", "weak", "bad"))
    (tmp_path / "race.toml").write_text(
        f'name = "race"\nseed = 9\n[target]\nkind = "python"\ncallable = "racers:subject"\n{variants}\n'
        f'[repeat]\ncount = 3\n[[graders]]\nkind = "exact"\n[stopping]\nrule = "race"\nrounds = 6\n{cases}\n'
    )
    ran = run_engine("run", "race.toml", "--run-id", "r", "--store", "st", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    assert "Race on score" in ran.stdout.decode() and "bad after round" in ran.stdout.decode()
    with serving(tmp_path / "st") as url:
        page = httpx.get(f"{url}/runs/r").text

        def look(p):  # noqa: ANN001, ANN202
            p.set_viewport_size({"width": 1280, "height": 800})
            p.goto(f"{url}/runs/r")
            chart = p.locator('svg[aria-label^="race: "]')
            chart.scroll_into_view_if_needed()
            screenshot(p, "race-page")
            box = p.locator('div.chart-box:has(svg[aria-label^="race: "])')
            box.screenshot(path=str(ARTIFACTS / "race-chart.png"))  # the chart alone, to look at
            names = [(t.text_content(), t.bounding_box()) for t in chart.locator("text.name").all()]
            labels = chart.locator("text.name").all()
            colours = {t.text_content(): t.evaluate("n => getComputedStyle(n).fill") for t in labels}
            axis = [t.text_content() for t in chart.locator("text[x='4']").all()]
            return names, colours, axis, p.locator(".race-legend").inner_text()

        names, colours, axis, legend = browser.call(look)
    assert "<h2>Race</h2>" in page and 'aria-label="race: ' in page
    assert "<td>bad</td>" in page and "p (one-sided)" in page
    assert sorted(n for n, _ in names) == ["bad", "best", "close", "weak"]
    assert len(set(colours.values())) == 4  # one colour per variant
    boxes = sorted((b["y"], b["y"] + b["height"]) for _, b in names)
    assert all(top >= below for (_, below), (top, _) in zip(boxes, boxes[1:], strict=False))  # no overlap
    assert all(0.0 <= float(v) <= 1.0 for v in axis)  # a score's axis stays inside [0, 1]
    assert all(n in legend for n in ("best", "close", "weak", "bad")) and "dropped in round" in legend


async def test_a_race_cut_by_its_budget_saves_nothing_it_did_not_decide(tmp_path: Path) -> None:
    import msgspec

    spec = race_spec()
    spec = msgspec.structs.replace(spec, budget=msgspec.structs.replace(spec.budget, max_trials=100))
    async with open_engine(tmp_path, callables={"subject": subject}) as eng:
        report = await eng.run(spec, run_id="cut")
    stopping = report.stopping
    assert report.budget_exhausted and report.is_partial
    assert stopping is None or (stopping.stopped == "" and stopping.trials_saved == 0)


def test_a_variant_with_no_pass_reads_as_such_in_the_race_lines() -> None:
    from engine.events.report import StoppingReport
    from engine.presentation.report.stopping import race_lines

    stopping = {
        "objective": "cost_per_pass", "looks_done": 1, "max_looks": 4, "stopped": "one_left",
        "survivors": ["cheap"], "trials_saved": 30, "fixed_design_trials": 40,
        "eliminations": [{"variant": "broken", "round": 1, "lost_to": "cheap",
                          "delta": 1.7976931348623157e308, "cases": 10, "p_value": 0.0, "threshold": 0.01}],
    }  # fmt: skip
    lines = race_lines(msgspec.convert({"rule": "race", "level": 0.01, **stopping}, StoppingReport))
    assert "by everything (it passed nothing)" in lines[-1] and "e+308" not in "\n".join(lines)


def test_protect_any_bounds_dropping_any_equal_variant() -> None:
    """"best": alpha over rounds x rivals of the best; "any": over rounds x every ordered pair."""
    assert race_threshold(0.05, 8, 8) == pytest.approx(0.05 / (8 * 7))
    assert race_threshold(0.05, 8, 8, "any") == pytest.approx(0.05 / (8 * 8 * 7))
    assert race_threshold(0.05, 4, 2, "any") == pytest.approx(0.05 / (4 * 2))
    spec = spec_from_dict({
        "name": "r", "stopping": {"rule": "race", "protect": "any", "rounds": 2},
        "variants": [{"name": "a"}, {"name": "b"}],
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "p"} for i in range(2)],
    })  # fmt: skip
    assert spec.stopping is not None and spec.stopping.protect == "any"
    with pytest.raises(InputError, match="stopping.protect"):
        spec_from_dict({"name": "r", "stopping": {"rule": "race", "protect": "all"},
                        "cases": [{"id": "c", "prompt": "p", "expected": "p"}]})  # fmt: skip


def test_rounds_too_small_to_drop_are_not_charged() -> None:
    """20 cases in 8 rounds: rounds of 3, 5 and 8 cases cannot reach the level (the sign-flip test's
    smallest p on n cases is 2^-(n+1)), so alpha is split over the 5 rounds that can act."""
    sizes = [3, 5, 8, 10, 13, 15, 18, 20]
    assert race_threshold(0.05, 8, 8, sizes=sizes) == pytest.approx(0.05 / (5 * 7))
    # a big suite: every round can act, every round is charged
    assert race_threshold(0.05, 8, 8, sizes=[25 * r for r in range(1, 9)]) == pytest.approx(0.05 / (8 * 7))
    # whatever the sizes, no more rounds can reach the level than were charged for it
    for rounds in range(2, 12):
        for total in (4, 10, 20, 40):
            sizes = [-(-total * r // rounds) for r in range(1, rounds + 1)]
            level = race_threshold(0.05, rounds, 4, sizes=sizes)
            charged = round(0.05 / (level * 3))
            assert sum(1 for n in sizes if 2.0 ** -(n + 1) < level) <= charged
