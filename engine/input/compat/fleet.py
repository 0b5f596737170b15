"""The agents-fleet `*.experiment.md` front matter: `kind: skill|role|crew`, `suite` as a name,
`grader` as one word, `config: {repeats, maxVariants, maxTrialsPerRun, perTrialTimeoutMs}`, and
`variants: [{id, label, patch}]` (a patch file applied to the skill text `skill` names). Repeats
default to 3 in this shape, as the fleet's defaultRepeats does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.errors import InputError
from engine.input.compat.common import list_of, move, table_of
from engine.input.compat.patch import apply_patch, is_diff, looks_like_diff
from engine.input.parsing import read_text

KINDS = ("skill", "role", "crew")
DEFAULT_REPEATS = 3
SUITE_SUFFIXES = (".jsonl", ".yaml", ".yml", ".toml", ".csv")
GRADERS = {
    "heuristic": {"kind": "contains"},
    "exact": {"kind": "exact"},
    "contains": {"kind": "contains"},
    # runs each case's criteria.commands; a gate, as the fleet's verifier: passed = every command exits 0
    "verifier": {"kind": "command", "name": "verifier", "gate": True},
    "judge": {"kind": "judge"},
}
_CONFIG = {
    "repeats": ("repeat", "count"),
    "defaultRepeats": ("repeat", "count"),
    "maxVariants": ("budget", "max_variants"),
    "maxTrialsPerRun": ("budget", "max_trials_per_run"),
}


def normalize_fleet(out: dict[str, Any], file: str, base_dir: Path | None = None) -> dict[str, Any]:
    if out.get("kind") not in KINDS:
        return out
    folder = base_dir or Path(".")
    out["kind"] = "experiment"
    if "suiteId" in out:
        move(out, ("suite",), out.pop("suiteId"), file, "suiteId")
    if isinstance(out.get("suite"), str):
        out["suite"] = {"path": _suite_path(out["suite"], folder, file)}
    if isinstance(out.get("grader"), str):
        move(out, ("graders",), [_grader(out.pop("grader"), file)], file, "grader")
    if "repeats" in out:
        move(out, ("repeat", "count"), out.pop("repeats"), file, "repeats")
    if "config" in out:
        _config(out, table_of(out.pop("config"), file, "config"), file)
    repeat = out.setdefault("repeat", {})
    if isinstance(repeat, dict):
        repeat.setdefault("count", DEFAULT_REPEATS)
    skill = _skill_text(out.pop("skill", None), folder, file)
    if "variants" in out:
        variants = list_of(out["variants"], file, "variants")
        out["variants"] = [_variant(v, i, skill, folder, file) for i, v in enumerate(variants)]
        _baseline_first(out, file)
    return out


def _suite_path(name: str, folder: Path, file: str) -> str:
    """`suite: core-coding-cases` names a suite: the file itself, or NAME.jsonl/.yaml/... here or
    under suites/."""
    candidates = [name] + [f"{where}{name}{suffix}" for where in ("", "suites/") for suffix in SUITE_SUFFIXES]
    found = next((c for c in candidates if (folder / c).is_file()), None)
    if found is None:
        raise InputError(file, "suite", f"expected a suite file {name}(.jsonl/.yaml/.toml/.csv) in {folder}")
    return found


def _grader(name: str, file: str) -> dict[str, Any]:
    if name not in GRADERS:
        raise InputError(file, "grader", f"expected one of {', '.join(GRADERS)}, got {name!r}")
    return dict(GRADERS[name])


def _config(out: dict[str, Any], config: dict[str, Any], file: str) -> None:
    for key, value in config.items():
        if key in _CONFIG:
            move(out, _CONFIG[key], value, file, f"config.{key}")
        elif key == "perTrialTimeoutMs":
            seconds = (
                value / 1000 if isinstance(value, int | float) and not isinstance(value, bool) else value
            )
            move(out, ("execution", "trial_timeout_s"), seconds, file, "config.perTrialTimeoutMs")
        elif key != "enabled":  # `engine run` is the explicit ask: no master switch
            known = ", ".join([*_CONFIG, "perTrialTimeoutMs", "enabled"])
            raise InputError(file, f"config.{key}", f"expected one of {known}")


def _skill_text(path: Any, folder: Path, file: str) -> str | None:
    if path is None:
        return None
    if not isinstance(path, str) or not (folder / path).is_file():
        raise InputError(file, "skill", f"expected the path of the skill/role text, got {path!r}")
    return read_text(folder / path)


def _variant(item: Any, index: int, skill: str | None, folder: Path, file: str) -> Any:
    if not isinstance(item, dict):
        return item  # the spec's validation names what was expected
    variant = dict(item)
    field = f"variants[{index}]"
    if "id" in variant:
        move(variant, ("name",), variant.pop("id"), file, f"{field}.id")
    if "label" in variant:
        variant.setdefault("description", variant.pop("label"))
    for key in ("roleName", "skills"):  # which role / skills the variant runs: the agent reads flags
        if key in variant:
            variant["flags"] = {**variant.get("flags", {}), key: variant.pop(key)}
    patch = variant.pop("patch", None)
    if patch is not None:
        variant.setdefault("system", _patched(patch, skill, folder, file, f"{field}.patch"))
    elif skill is not None:
        variant.setdefault("system", skill)
    return variant


def _patched(path: Any, skill: str | None, folder: Path, file: str, field: str) -> str:
    if not isinstance(path, str) or not (folder / path).is_file():
        raise InputError(file, field, f"expected a patch file beside the experiment, got {path!r}")
    text = read_text(folder / path)
    if not is_diff(text):
        if looks_like_diff(text):  # a broken diff must not become the variant's whole prompt
            raise InputError(str(folder / path), "patch", "expected unified diff hunks (`@@ -1,3 +1,3 @@`)")
        return text  # a whole skill/role text
    if skill is None:
        raise InputError(file, field, "expected `skill: FILE` (the text a diff patch applies to)")
    return apply_patch(skill, text, str(folder / path), "patch")


def _baseline_first(out: dict[str, Any], file: str) -> None:
    """`baselineVariantId` moves that variant first: engine's baseline is the first variant."""
    wanted = out.pop("baselineVariantId", None)
    if wanted is None:
        return
    variants = out["variants"]
    index = next((i for i, v in enumerate(variants) if isinstance(v, dict) and v.get("name") == wanted), None)
    if index is None:
        raise InputError(file, "baselineVariantId", f"expected the id of one of the variants, got {wanted!r}")
    variants.insert(0, variants.pop(index))
