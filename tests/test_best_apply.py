"""auto_apply (off by default, edits TOML in place) and the best-variation projection."""

from __future__ import annotations

import tomllib
from pathlib import Path

from engine.api import open_engine
from engine.input.config_edit import apply_params
from engine.store.projections.best import best_variations
from tests.test_tuning import peaked, tune_spec


def test_apply_params_keeps_comments_and_layout(tmp_path: Path) -> None:
    config = tmp_path / "agent.toml"
    config.write_text("# my agent\n[params]\ntemperature = 0.7  # old\nmax_tokens = 64\n\n[other]\nx = 1\n")
    apply_params(config, {"temperature": 0.3, "top_k": 40})
    text = config.read_text()
    assert text.startswith("# my agent\n[params]\n") and "[other]\nx = 1" in text
    assert tomllib.loads(text)["params"] == {"temperature": 0.3, "top_k": 40, "max_tokens": 64}
    fresh = tmp_path / "new.toml"
    apply_params(fresh, {"temperature": 0.1})
    assert tomllib.loads(fresh.read_text()) == {"params": {"temperature": 0.1}}


async def test_auto_apply_writes_only_when_enabled(tmp_path: Path) -> None:
    target = tmp_path / "tuned.toml"
    async with open_engine(tmp_path / "st", callables={"peaked": peaked}) as eng:
        await eng.run(tune_spec("grid", max_experiments=4, apply_to=str(target)))
        assert not target.exists()  # auto_apply defaults to off
        await eng.run(tune_spec("grid", max_experiments=4, apply_to=str(target), auto_apply=True))
    applied = tomllib.loads(target.read_text())["params"]["temperature"]
    assert applied in (0.0, 0.1, 0.2, 0.3)


async def test_best_variation_per_parameter_across_sessions(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"peaked": peaked}) as eng:
        await eng.run(tune_spec("grid", max_experiments=2))
        await eng.run(tune_spec("grid"))
        best = best_variations(eng.log)
    assert [b.parameter for b in best] == ["temperature"]
    assert best[0].value == 0.3 and best[0].candidate_score > best[0].baseline_score
