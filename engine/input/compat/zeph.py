"""Zeph's `[experiments]` config block (and `[experiments.schedule]`): a tuning session.

Zeph keeps its self-tuning settings in the agent's config.toml; that block maps to `kind = "tune"`:
`benchmark_file` is the suite (inside the config's folder only), `eval_model` the judge's model,
`min_improvement` a delta on the judge's 1-10 scale (engine's scores run 0-1: divided by 10),
`eval_budget_tokens` the judge-token budget (Zeph's default, 100000, when absent), `auto_apply` writes
back into the same config file.
Without graders the judge uses Zeph's four weighted criteria. The agent's `[llm]` provider is the
model under test (see zeph_llm) unless a `[target]` table names another; the judge is that same
endpoint, with `eval_model` as its model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.errors import InputError, warn_input
from engine.events.spec import ExperimentSpec
from engine.input.compat.common import move, table_of
from engine.input.compat.zeph_llm import llm_target

ZEPH_RUBRIC = [
    {"name": "accuracy", "weight": 0.30, "description": "factually correct"},
    {"name": "completeness", "weight": 0.25, "description": "covers what the question asks"},
    {"name": "clarity", "weight": 0.25, "description": "clear and well organised"},
    {"name": "relevance", "weight": 0.20, "description": "stays on the question"},
]
# Zeph's key -> engine's field
_SESSION = {
    "max_experiments": ("tune", "max_experiments"),
    "max_wall_time_secs": ("budget", "max_wall_time_s"),
    "eval_budget_tokens": ("tune", "eval_budget_tokens"),
    "auto_apply": ("tune", "auto_apply"),
}
_SCHEDULE = {
    "enabled": "enabled",
    "cron": "cron",
    "max_experiments_per_run": "max_experiments_per_run",
    "max_wall_time_secs": "max_wall_time_s",
}
DEFAULT_EVAL_BUDGET_TOKENS = 100_000  # Zeph's eval_budget_tokens default
JUDGE_SCALE = 10.0  # Zeph's judge scores 1-10; engine's scores run 0-1


def normalize_zeph(out: dict[str, Any], file: str, base_dir: Path | None = None) -> dict[str, Any]:
    if not isinstance(out.get("experiments"), dict):  # a list is weakincentives' experiments
        return out
    block = dict(table_of(out.pop("experiments"), file, "experiments"))
    subject = "[target]"
    if "target" not in out and "llm" in out:
        _target_from_llm(out, file)
        subject = "[llm]"
    _drop_agent_sections(out, file, subject)
    block.pop("enabled", None)  # `engine run` is the explicit ask: no master switch
    out.setdefault("kind", "tune")
    out.setdefault("name", Path(file).stem)
    if "schedule" in block:
        out["schedule"] = _schedule(block.pop("schedule"), file)
    for key, path in _SESSION.items():
        if key in block:
            move(out, path, block.pop(key), file, f"experiments.{key}")
    if "min_improvement" in block:
        move(out, ("tune", "min_improvement"), _delta(block.pop("min_improvement"), file), file,
             "experiments.min_improvement")  # fmt: skip
    tune = out.setdefault("tune", {})
    if isinstance(tune, dict):  # Zeph's own default judge-token budget, when the block names none
        tune.setdefault("eval_budget_tokens", DEFAULT_EVAL_BUDGET_TOKENS)
    if isinstance(tune, dict) and tune.get("auto_apply") and "apply_to" not in tune:
        tune["apply_to"] = Path(file).name  # Zeph writes accepted values back into its live config
    if "benchmark_file" in block:
        path = _inside(block.pop("benchmark_file"), file, base_dir)
        move(out, ("suite",), {"path": path}, file, "experiments.benchmark_file")
    judge = {"model": block.pop("eval_model")} if "eval_model" in block else {}
    if block:
        raise InputError(file, f"experiments.{next(iter(block))}", f"expected one of {_known()}")
    if "graders" not in out:
        out["graders"] = [{"kind": "judge", "name": "zeph_judge", "rubric": ZEPH_RUBRIC, "judge": judge}]
    return out


def _target_from_llm(out: dict[str, Any], file: str) -> None:
    """The agent's own provider is the model under test; a judge without its own settings is the
    same endpoint (with `eval_model` as its model)."""
    target = llm_target(out.pop("llm"), file)
    params = target.pop("params", {})
    out["target"] = target
    if params:
        out["params"] = {**params, **table_of(out.get("params", {}), file, "params")}


def _drop_agent_sections(out: dict[str, Any], file: str, subject: str) -> None:
    """Zeph's config.toml also configures the agent itself ([memory], [tools]...): the tuning block and
    the model under test are what engine runs, so the other tables are skipped, and named, not refused."""
    known = set(ExperimentSpec.__struct_fields__)
    skipped = [key for key in out if key not in known]
    for key in skipped:
        del out[key]
    if skipped:
        names = ", ".join(f"[{key}]" for key in skipped)
        warn_input(file, "", f"not read: {names} (Zeph's agent settings; the model under test is {subject})")


def _schedule(value: Any, file: str) -> dict[str, Any]:
    given = table_of(value, file, "experiments.schedule")
    unknown = [key for key in given if key not in _SCHEDULE]
    if unknown:
        raise InputError(
            file, f"experiments.schedule.{unknown[0]}", f"expected one of {', '.join(_SCHEDULE)}"
        )
    return {_SCHEDULE[key]: item for key, item in given.items()}


def _delta(value: Any, file: str) -> Any:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return value  # the spec's validation names the type expected
    if not 0 <= value < JUDGE_SCALE:
        raise InputError(file, "experiments.min_improvement", "expected a score delta from 0 to below 10")
    return value / JUDGE_SCALE


def _inside(value: Any, file: str, base_dir: Path | None) -> Any:
    """Zeph's PathTraversal rule: a benchmark file must sit inside the config's folder."""
    if not isinstance(value, str) or base_dir is None:
        return value
    folder = base_dir.resolve()
    if not (folder / value).resolve().is_relative_to(folder):
        raise InputError(
            file, "experiments.benchmark_file", f"expected a path inside {folder}, got {value!r}"
        )
    return value


def _known() -> str:
    return ", ".join([*_SESSION, "min_improvement", "benchmark_file", "eval_model", "enabled", "schedule"])
