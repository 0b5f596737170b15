"""strategy = "optuna": Optuna's TPE sampler proposes the configurations, learning only from the scores
the session's log holds; engine's accept rule and the log decide. Without Optuna installed, the
strategy is refused in one line that says what to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from engine.actors.tuning import Variation, VariationGenerator
from engine.api import open_engine, spec_from_dict
from engine.events import kinds as k
from engine.events.spec import ParameterRange, TuneSpec
from engine.store.projection import run_events
from tests.conftest import engine_env, run_engine
from tests.test_tune_race import peaked

TEMPERATURE = {"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.05, "default": 0.7}
TOP_P = {"name": "top_p", "min": 0.5, "max": 1.0, "step": 0.1, "default": 1.0}


def optuna_spec(max_experiments: int = 10) -> Any:
    return spec_from_dict({
        "name": "tune-optuna", "kind": "tune", "seed": 5,
        "target": {"kind": "python", "callable": "peaked"},
        "params": {"temperature": 0.7},
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(30)],
        "repeat": {"count": 2},
        "tune": {"strategy": "optuna", "max_experiments": max_experiments,
                 "parameters": [TEMPERATURE, TOP_P]},
    })  # fmt: skip


def decided(log: Any, run_id: str) -> list[Any]:
    tags = {"variation.accepted", "variation.rejected"}
    return [msgspec.structs.replace(e, ts=0.0, latency_ms=0.0) for e in run_events(log, run_id, tags)]


def test_tpe_learns_from_the_scores_it_is_given() -> None:
    pytest.importorskip("optuna")
    spec = TuneSpec(strategy="optuna", parameters=[ParameterRange(**TEMPERATURE)])
    far = 0.0
    for seed in range(8):
        gen = VariationGenerator(spec, seed=seed)
        for i in range(0, 21, 2):  # every other grid point scored: best near 0.3, worse with distance
            t = round(i * 0.05, 10)
            gen.observe({"temperature": 0.7}, Variation("temperature", t), 0.4, 1 - abs(t - 0.3))
        proposal = gen.next({"temperature": 0.7})
        assert proposal is not None and proposal.parameter == "temperature"
        far += abs(proposal.value - 0.3)
    assert far / 8 < 0.15  # uniform proposals would average about 0.29 from 0.3


def test_the_same_scores_give_the_same_proposals() -> None:
    pytest.importorskip("optuna")
    spec = TuneSpec(strategy="optuna", parameters=[ParameterRange(**TEMPERATURE), ParameterRange(**TOP_P)])
    runs = []
    for _ in range(2):
        gen, best, seen = VariationGenerator(spec, seed=3), {"temperature": 0.7, "top_p": 1.0}, []
        gen.mark(best)
        for _ in range(12):
            v = gen.next(best)
            assert v is not None
            gen.observe(best, v, 0.5, 1 - abs(v.value - 0.3))
            seen.append(v)
        runs.append(seen)
    assert runs[0] == runs[1]
    configs = [(v.parameter, v.value) for v in runs[0]]
    assert len(set(configs)) == len(configs)  # one parameter changed each time, never a tried one twice


async def test_an_optuna_session_improves_and_resumes_to_the_same_decisions(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    pytest.importorskip("optuna")
    async with open_engine(tmp_path, callables={"peaked": peaked}) as eng:
        whole = await eng.run(optuna_spec(), run_id="whole")
        expected = decided(eng.log, "whole")
        handle = eng.start(optuna_spec(), run_id="cut", events=True)
        async for event in handle.events():
            if isinstance(event, k.VariationAccepted | k.VariationRejected):
                handle.cancel("restart")  # after the first decision: the sampler must learn it back
        assert (await handle.result()).status == "cancelled"
        resumed = await eng.run(None, run_id="cut", resume=True)
        got = decided(eng.log, "cut")
    assert whole.status == resumed.status == "completed" and len(expected) == 10
    assert [msgspec.structs.replace(e, run_id="") for e in got] == [
        msgspec.structs.replace(e, run_id="") for e in expected
    ]
    accepted = [d for d in expected if isinstance(d, k.VariationAccepted)]
    assert accepted and all(d.delta >= 0.05 for d in accepted)  # the session's own rule accepted them
    final = {d.parameter: float(d.value) for d in accepted}
    assert abs(final.get("temperature", 0.7) - 0.3) < 0.15  # started 0.4 from the peak; ten tries


def test_optuna_missing_is_refused_with_the_extra_to_install(tmp_path: Path) -> None:
    (tmp_path / "exp.toml").write_text(
        'name = "t"\nkind = "tune"\n[target]\nkind = "command"\ncommand = ["python3", "-c", "print(1)"]\n'
        '[[cases]]\nid = "c"\nprompt = "p"\nexpected = "1"\n'
        '[tune]\nstrategy = "optuna"\n'
        '[[tune.parameters]]\nname = "temperature"\nmin = 0.0\nmax = 1.0\ndefault = 0.7\n'
    )
    # `import optuna` fails in this process as it does where Optuna is not installed
    main = "import sys; sys.modules['optuna'] = None; from engine.cli.main import main; sys.exit(main())"
    argv = [sys.executable, "-c", main, "run", "exp.toml", "--store", "st"]
    done = subprocess.run(argv, cwd=tmp_path, env=engine_env(), capture_output=True, timeout=300)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert err.strip() == (
        "error: exp.toml: tune.strategy: expected Optuna installed for 'optuna': pip install 'engine[optuna]'"
    ), err
    listed = run_engine("list", "--json", "--store", "st", cwd=tmp_path)
    assert listed.stdout.strip() in (b"", b"[]"), listed.stdout  # nothing logged
