"""Zeph users bring their config.toml's `[experiments]` block and their benchmark file as they are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import trio

from engine.actors.targets.target_protocol import TargetRequest, TargetResponse
from engine.api import open_engine
from engine.errors import InputError, InputWarning
from engine.events.report import RunReport
from engine.input.loader import load_experiment
from engine.runtime.run_status import list_runs
from engine.runtime.schedule import ScheduleControl, from_current_best, run_on_schedule
from engine.store.memory import MemoryStore
from tests.compat.helpers import run_file

EPOCH = 1_800_000_000.0
SUBJECT_TOKENS = 40_000  # a long context per call: far more than the judge ever reads

# a Zeph config's agent and self-tuning table, before its budget keys (tests/compat/test_tune_direction.py
# runs it with Zeph's defaults)
CONFIG_HEAD = """
name = "zeph-self-tuning"

[target]
kind = "python"
callable = "zeph_agent:answer"

[experiments]
enabled = true
eval_model = "claude-sonnet-4-20250514"
benchmark_file = "benchmarks/eval.toml"
"""
CONFIG = CONFIG_HEAD + """max_experiments = 3
max_wall_time_secs = 3600
min_improvement = 0.5
eval_budget_tokens = 100000
auto_apply = false

[experiments.schedule]
enabled = true
cron = "* * * * *"
max_experiments_per_run = 2
max_wall_time_secs = 1800
"""

TOPICS = [
    "TCP and UDP",
    "palindromes",
    "transformers",
    "B-trees",
    "CRDTs",
    "Raft",
    "bloom filters",
    "LSM trees",
]
BENCHMARK = (
    "\n".join(
        f'[[cases]]\nprompt = "Explain {topic}"\nreference = "a careful explanation"\ntags = ["knowledge"]\n'
        for topic in TOPICS
    )
    + '[[cases]]\nid = "named"\nprompt = "Explain paxos"\n'
)


async def answer(request: TargetRequest) -> TargetResponse:
    """The subject answers at its temperature; as the judge (eval_model), it prefers cool answers."""
    if request.variant.name == "judge":
        hot = float(re.search(r"temperature (\d\.\d+)", request.prompt).group(1)) > 0.6  # type: ignore[union-attr]
        score = 3 if hot else 9
        names = ("accuracy", "completeness", "clarity", "relevance")
        text = '{"scores": {' + ", ".join(f'"{n}": {score}' for n in names) + '}, "reason": "ok"}'
        return TargetResponse(text=text, tokens_in=60, tokens_out=20)
    temperature = float(request.params.get("temperature", 0.7))
    return TargetResponse(text=f"answered at temperature {temperature:.2f}", tokens_in=SUBJECT_TOKENS)


def write_config(folder: Path, config: str = CONFIG) -> Path:
    (folder / "benchmarks").mkdir(parents=True, exist_ok=True)
    (folder / "benchmarks" / "eval.toml").write_text(BENCHMARK)
    (folder / "zeph_agent.py").write_text("from tests.compat.test_zeph import answer  # noqa: F401\n")
    (folder / "config.toml").write_text(config)
    return folder / "config.toml"


def test_the_experiments_block_maps_to_a_tuning_session(tmp_path: Path) -> None:
    spec = load_experiment(write_config(tmp_path))
    assert spec.kind == "tune" and spec.tune is not None and spec.schedule is not None
    assert (spec.tune.max_experiments, spec.tune.eval_budget_tokens) == (3, 100_000)
    assert spec.tune.min_improvement == pytest.approx(0.05)  # 0.5 on the judge's 1-10 scale
    assert spec.budget.max_wall_time_s == 3600
    assert (spec.schedule.cron, spec.schedule.max_experiments_per_run, spec.schedule.max_wall_time_s) == (
        "* * * * *", 2, 1800,
    )  # fmt: skip
    (judge,) = spec.graders
    assert judge.kind == "judge" and judge.judge == {"model": "claude-sonnet-4-20250514"}
    assert [c.name for c in judge.rubric] == ["accuracy", "completeness", "clarity", "relevance"]
    ids = [c.id for c in spec.cases]
    assert len(set(ids)) == 9 and ids[-1] == "named" and all(i.startswith("case-") for i in ids[:-1])
    # stable: a case keeps its id when the benchmark gains a case in front of it
    (tmp_path / "benchmarks" / "eval.toml").write_text('[[cases]]\nprompt = "Explain gossip"\n' + BENCHMARK)
    again = [c.id for c in load_experiment(tmp_path / "config.toml").cases]
    assert again[1:] == ids


def test_a_benchmark_outside_the_config_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "secrets.toml"
    outside.write_text('[[cases]]\nprompt = "p"\n')
    folder = tmp_path / "zeph"
    folder.mkdir()
    for path in ("../secrets.toml", str(outside)):
        file = write_config(folder, CONFIG.replace("benchmarks/eval.toml", path))
        with pytest.raises(InputError, match="experiments.benchmark_file.*expected a path inside"):
            load_experiment(file)


async def test_eval_budget_tokens_counts_judge_tokens_only(tmp_path: Path) -> None:
    report = await run_file(write_config(tmp_path))
    # the subject spent millions of tokens; the judge far less than the 100k budget: every decision ran
    assert sum(v.tokens.in_ for v in report.variants) > 100_000
    assert len(report.variations) == 3 and report.status == "completed", report.stop_reason
    first = report.variations[0]
    # the grid sweeps outward from the default 0.7, the lower neighbour first
    assert (first.parameter, first.value, first.accepted) == ("temperature", 0.6, True)
    tight = await run_file(write_config(tmp_path, CONFIG.replace("100000", "2000")))
    assert tight.status == "partial" and len(tight.variations) < 3


NEIGHBORHOOD = """
[tune]
strategy = "neighborhood"
radius = 2.0
[[tune.parameters]]
name = "temperature"
min = 0.0
max = 1.0
step = 0.1
default = 0.7
"""


async def two_nights(spec: object) -> tuple[RunReport, RunReport, dict[str, object]]:
    """Two scheduled sessions on the virtual clock (async callables: nothing waits on a thread)."""
    control, lines = ScheduleControl(), []

    def log(line: str) -> None:
        lines.append(line)
        if sum(line.startswith("session ") for line in lines) == 2:
            control.stop("two nights are enough")

    async with open_engine(MemoryStore(), callables={"zeph_agent:answer": answer}, cancel_poll_s=30) as eng:
        wall = lambda: EPOCH + trio.current_time()  # noqa: E731
        await run_on_schedule(eng, spec, "* * * * *", control, log=log, wall=wall)  # type: ignore[arg-type]
        runs = sorted(list_runs(eng.log), key=lambda r: r.started_ts)
        first, second = (eng.replay(r.run_id) for r in runs)
        return first, second, from_current_best(spec, eng.log).params  # type: ignore[arg-type]


async def test_scheduled_sessions_start_from_the_current_best(tmp_path: Path, autojump_clock: object) -> None:
    first, second, start = await two_nights(load_experiment(write_config(tmp_path)))
    assert first.variations[0].accepted and first.variations[0].value == 0.6
    assert start["temperature"] == 0.6
    # the second night starts at temperature 0.6 (the best so far): it never tests a temperature the
    # first night tested, and its baseline already scores as the first night's winner did
    tested = {v.value for v in first.variations if v.parameter == "temperature"} | {0.7}
    assert all(v.value not in tested or v.parameter != "temperature" for v in second.variations)
    assert second.variants[0].mean_score > first.variants[0].mean_score


async def test_scheduled_neighbourhood_search_centres_on_the_last_best(
    tmp_path: Path, autojump_clock: object
) -> None:
    spec = load_experiment(write_config(tmp_path, CONFIG + NEIGHBORHOOD))
    first, second, _ = await two_nights(spec)
    best = [v.value for v in first.variations if v.accepted][-1]
    assert best != 0.7, first.variations  # the first night moved away from the file's default
    tried = [float(v.value) for v in second.variations]  # type: ignore[arg-type]
    assert tried and all(abs(value - float(best)) <= 0.2 + 1e-9 for value in tried), (best, tried)  # type: ignore[arg-type]


def test_the_agents_own_sections_of_a_real_config_are_skipped_and_named(tmp_path: Path) -> None:
    whole = CONFIG + '\n[llm]\nprovider = "ollama"\nmodel = "qwen3:8b"\n\n[memory]\nsqlite_path = "zeph.db"\n'
    with pytest.warns(InputWarning, match=r"not read: \[llm\], \[memory\]"):
        spec = load_experiment(write_config(tmp_path, whole))
    assert spec.kind == "tune" and spec.target.kind == "python"
