"""The web view's server-drawn charts: the tuning chart names its x axis and numbers its points; the
race chart keeps a score's axis inside [0, 1] and its variants' names apart."""

from __future__ import annotations

import re

from engine.web.race_chart import race_chart
from engine.web.svg import Point, series


def test_the_tuning_chart_labels_its_x_axis() -> None:
    points = [Point(f"temperature={t}", s, "accepted") for t, s in ((0.1, 0.4), (0.5, 0.6), (0.9, 0.5))]
    svg = series(points, "score by variation", x_label="variation (in the order tried)")
    assert 'class="axis-name">variation (in the order tried)</text>' in svg
    assert [int(n) for n in re.findall(r'text-anchor="middle">(\d+)</text>', svg)] == [1, 2, 3]
    assert "axis-name" not in series(points, "no axis")  # the history and others, unchanged unless asked


def test_the_race_chart_clamps_a_score_and_keeps_names_apart() -> None:
    def standing(variant: str, mean: float) -> dict:
        return {"variant": variant, "mean": mean, "lo": mean - 0.4, "hi": mean + 0.4, "cases": 10}

    rounds = [{"round": 1, "standings": [standing("a", 0.9), standing("b", 0.9), standing("c", 0.2)]}]
    svg = race_chart(rounds, [], "score")
    axis = [float(v) for v in re.findall(r'<text x="4" y="[\d.]+">([\d.-]+)</text>', svg)]
    assert min(axis) == 0.0 and max(axis) == 1.0  # intervals past 0 and 1 stop at the axis's ends
    ys = sorted(float(y) for y in re.findall(r'<text x="[\d.]+" y="([\d.-]+)" class="name v\d">', svg))
    assert len(ys) == 3 and all(b - a >= 14 for a, b in zip(ys, ys[1:], strict=False))
    assert len(set(re.findall(r'class="name (v\d)"', svg))) == 3  # one colour each
    assert "race-legend" in svg
