"""The server's warm-up compares two tiny runs in memory on the real code paths: it must keep working
as events and statistics change (the server swallows its errors, so a broken one would only make
first pages slow again, unseen)."""

from __future__ import annotations

from engine.web.warm import warm_statistics


def test_the_warm_up_comparison_runs_every_gate_on_its_two_tiny_runs() -> None:
    compared = warm_statistics()
    assert compared.shared_cases == 3 and not compared.nothing_to_compare
    metrics = {(m.variant, m.metric) for m in compared.metrics}
    for variant in ("a", "b"):
        for metric in ("pass_rate", "mean_score", "error_rate", "p95_latency_ms", "cost_usd"):
            assert (variant, metric) in metrics
    assert all(m.baseline is not None for m in compared.metrics if m.metric == "pass_rate")
