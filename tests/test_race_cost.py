"""A race on cost per pass needs costs: variants whose trials cost nothing are named, before the run
(a model with no price) and in the report (no trial had a cost)."""

from __future__ import annotations

from pathlib import Path

from engine.actors.targets.target_protocol import TargetRequest, TargetResponse
from engine.api import open_engine
from tests.conftest import run_engine
from tests.test_race import race_spec, subject

PRICED = {"best": 0.002, "close": 0.001}  # what each of these variants' trials cost; the rest report none


def costed(request: TargetRequest) -> str | TargetResponse:
    text = subject(request)
    price = PRICED.get(request.variant.name)
    return text if price is None else TargetResponse(text=text, cost_usd=price)


async def test_the_report_names_the_raced_variants_that_cost_nothing(tmp_path: Path) -> None:
    async with open_engine(tmp_path, callables={"subject": costed}) as eng:
        report = await eng.run(race_spec(objective="cost_per_pass"), run_id="r")
        free = await eng.run(race_spec(), run_id="on-score")
    [warning] = [w for w in report.warnings if w.startswith("stopping.objective: cost_per_pass")]
    assert "of weak, bad had a cost" in warning and "ranked them as free" in warning
    assert not any(w.startswith("stopping.objective") for w in free.warnings)  # on score: costs unused


def test_a_race_on_cost_with_an_unpriced_model_is_warned_before_it_runs(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(
        'name = "race-cost"\n[target]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m1"\n'
        "[pricing]\nm2 = { input_per_mtok = 1.0, output_per_mtok = 2.0 }\n"
        '[[variants]]\nname = "cheap"\nmodel = "m2"\n[[variants]]\nname = "unpriced"\n'
        '[[cases]]\nid = "a"\nprompt = "p"\nexpected = "x"\n'
        '[[cases]]\nid = "b"\nprompt = "p"\nexpected = "x"\n'
        '[stopping]\nrule = "race"\nrounds = 2\nobjective = "cost_per_pass"\n'
    )
    done = run_engine("validate", "exp.toml", cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "exp.toml: stopping.objective: cost_per_pass, but unpriced run a model with no price" in err, err
    assert "cheap" not in err, err
