"""Neighbourhood search covers every neighbour of the best; integer parameters keep their defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.actors.tuning import Variation, VariationGenerator
from engine.api import open_engine, spec_from_dict
from engine.events.spec import ParameterRange, TuneSpec
from tests.test_tuning import peaked

TEMPERATURE = {"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.1, "default": 0.7}
TOP_P = {"name": "top_p", "min": 0.1, "max": 1.0, "step": 0.05, "default": 0.9}
PENALTIES = [
    {"name": name, "min": -2.0, "max": 2.0, "step": 0.2, "default": 0.0}
    for name in ("frequency_penalty", "presence_penalty")
]


def space(*ranges: dict[str, Any], radius: float = 1.0) -> TuneSpec:
    return TuneSpec(strategy="neighborhood", radius=radius, parameters=[ParameterRange(**r) for r in ranges])


def propose(gen: VariationGenerator, best: dict[str, float], count: int) -> list[Variation | None]:
    return [gen.next(best) for _ in range(count)]


@pytest.mark.parametrize("radius", [1.0, 2.0])
def test_every_neighbour_both_ways_each_parameter_before_any_second_chance(radius: float) -> None:
    best = {"temperature": 0.4, "top_p": 0.9, "frequency_penalty": 0.0, "presence_penalty": 0.0}
    gen = VariationGenerator(space(TEMPERATURE, TOP_P, *PENALTIES, radius=radius), seed=5)
    gen.mark(best)
    steps = {"temperature": 0.1, "top_p": 0.05, "frequency_penalty": 0.2, "presence_penalty": 0.2}
    reach = int(radius)
    expected = {
        Variation(name, round(best[name] + sign * i * step, 10))
        for name, step in steps.items() for i in range(1, reach + 1) for sign in (-1, 1)
    }  # fmt: skip
    first = propose(gen, best, len(expected))
    assert set(first) == expected and len(first) == 8 * reach  # each once, 0.3 among them
    again = propose(gen, best, len(expected) + 1)
    assert set(again[:-1]) == expected and again[-1] is None  # then each a second chance, then done


def test_after_the_best_moves_its_new_neighbours_are_all_tried() -> None:
    """top_p 0.85 and 0.95 were rejected next to temperature 0.5; next to 0.4 they are new
    configurations, tried once the never-tried value (0.3) had its turn among them."""
    gen = VariationGenerator(space(TEMPERATURE, TOP_P), seed=1)
    start = {"temperature": 0.5, "top_p": 0.9}
    gen.mark(start)
    assert set(propose(gen, start, 4)) == {
        Variation("temperature", 0.4),
        Variation("temperature", 0.6),
        Variation("top_p", 0.85),
        Variation("top_p", 0.95),
    }
    moved = {"temperature": 0.4, "top_p": 0.9}  # 0.4 accepted
    after = propose(gen, moved, 3)
    assert after[0] == Variation("temperature", 0.3)  # the value no configuration tried yet comes first
    assert set(after[1:]) == {Variation("top_p", 0.85), Variation("top_p", 0.95)}


def neighbourhood(start: float, tries: int, parameters: list[dict[str, Any]] | None, seed: int = 11) -> Any:
    """A neighbourhood session from `temperature = start` (no `parameters`: the default space)."""
    body: dict[str, Any] = {"strategy": "neighborhood", "max_experiments": tries, "min_improvement": 0.05}
    if parameters is not None:
        body["parameters"] = parameters
    return spec_from_dict(
        {
            "name": "search",
            "kind": "tune",
            "seed": seed,
            "target": {"kind": "python", "callable": "peaked"},
            "params": {"temperature": start},
            "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(40)],
            "repeat": {"count": 2},
            "tune": body,
        }
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
async def test_neighbourhood_session_tries_the_optimum_within_its_tries(tmp_path: Path, seed: int) -> None:
    """From temperature 0.5 (two steps from the peak at 0.3) with two parameters: 0.4 is among the
    first four tries, and once accepted 0.3 comes before the other parameter's values again."""
    async with open_engine(tmp_path, callables={"peaked": peaked}) as eng:
        report = await eng.run(neighbourhood(0.5, 7, [TEMPERATURE, TOP_P], seed=seed))
    tried = [(v.parameter, v.value, v.accepted) for v in report.variations]
    assert ("temperature", 0.3, True) in tried, tried


async def test_integer_top_k_keeps_its_default_in_a_session(tmp_path: Path) -> None:
    """The default search space (top_k 1-100, step 5, default 40): the baseline runs with top_k 40 and
    its neighbours are 35 and 45, whole numbers; ten tries cover all ten neighbours of the best."""
    async with open_engine(tmp_path, callables={"peaked": peaked}) as eng:
        report = await eng.run(neighbourhood(0.3, 10, None))
    assert report.variants[0].params["top_k"] == 40 and isinstance(report.variants[0].params["top_k"], int)
    top_k = sorted(v.value for v in report.variations if v.parameter == "top_k")
    assert top_k == [35, 45] and all(isinstance(v, int) for v in top_k)
    neighbours = {(v.parameter, float(v.value)) for v in report.variations}  # type: ignore[arg-type]
    assert len(neighbours) == 10 and ("temperature", 0.2) in neighbours and ("temperature", 0.4) in neighbours
