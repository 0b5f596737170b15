"""An AgentV project's `.agentv/` folder: named targets (`targets.yaml`) and the default experiment
(`config.yaml`). Found in the experiment file's folder or the nearest parent that has one, as
experiments conventionally live under experiments/ beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.actors.targets.command_target import anchor_command
from engine.errors import InputError
from engine.input.compat.common import list_of, table_of
from engine.input.parsing import parse_file

PROVIDERS = {"cli": "command"}  # AgentV provider names engine spells otherwise


def project_dir(start: Path) -> Path | None:
    """The nearest folder, start or a parent, holding `.agentv/`."""
    for folder in (start.resolve(), *start.resolve().parents):
        if (folder / ".agentv").is_dir():
            return folder
    return None


def default_experiment(start: Path) -> Path | None:
    """`.agentv/config.yaml`'s `experiments.default`, relative to the project folder."""
    root = project_dir(start)
    config = root / ".agentv" / "config.yaml" if root is not None else None
    if root is None or config is None or not config.is_file():
        return None
    experiments = table_of(parse_file(config, "AgentV's config.yaml").get("experiments", {}), str(config),
                           "experiments")  # fmt: skip
    default = experiments.get("default")
    if not isinstance(default, str):
        raise InputError(str(config), "experiments.default", "expected the default experiment's path")
    return root / default


def normalize_agentv_project(out: dict[str, Any], file: str, base_dir: Path | None = None) -> dict[str, Any]:
    root = project_dir(base_dir) if base_dir is not None else None
    if root is not None and base_dir is not None and isinstance(out.get("suites"), list):
        out["suites"] = [s for suite in out["suites"] for s in _from_root(suite, base_dir, root)]
    named = isinstance(out.get("target"), str)
    if not named and "targets" not in out:
        return out
    targets = _named_targets(base_dir or Path("."), file)
    if named:
        out["target"] = _lookup(targets, out["target"], file, "target")
    if "targets" in out:
        if "variants" in out or "matrix" in out:
            raise InputError(file, "targets", "not together with `variants` or `matrix`: use one of them")
        entries = list_of(out.pop("targets"), file, "targets")
        variants = [_variant(entry, targets, file, f"targets[{i}]") for i, entry in enumerate(entries)]
        out.setdefault("target", variants[0]["target"] if variants else {"kind": "local"})
        out["variants"] = variants
    return out


def _from_root(suite: Any, base_dir: Path, root: Path) -> list[Any]:
    """An AgentV suite ref is relative to the project (experiments/x.yaml says `evals/a.eval.yaml`):
    when it names nothing beside the experiment file but does under the project folder, it is read
    there (a glob becomes its matches)."""
    ref = suite.get("ref", suite.get("path")) if isinstance(suite, dict) else None
    if not isinstance(ref, str) or Path(ref).is_absolute():
        return [suite]
    if any(char in ref for char in "*?["):
        if any(base_dir.glob(ref)):
            return [suite]
        matches = sorted(p for p in root.glob(ref) if p.is_file())
    else:
        matches = [] if (base_dir / ref).exists() else [root / ref] if (root / ref).is_file() else []
    if not matches:
        return [suite]  # the suite loader names what is missing
    rest = {k: v for k, v in suite.items() if k not in ("ref", "path")}
    return [{**rest, "path": str(path)} for path in matches]


def target_names(base_dir: Path) -> list[str]:
    """The names .agentv/targets.yaml defines ([] when there is none or it cannot be read)."""
    try:
        return list(_named_targets(base_dir, ""))
    except InputError:
        return []


def _named_targets(base_dir: Path, file: str) -> dict[str, dict[str, Any]]:
    root = project_dir(base_dir)
    path = root / ".agentv" / "targets.yaml" if root is not None else None
    if path is None or not path.is_file():
        raise InputError(
            file, "target", f"expected .agentv/targets.yaml in {base_dir} or a parent (named targets)"
        )
    entries = list_of(parse_file(path, "AgentV's targets.yaml").get("targets", []), str(path), "targets")
    found: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(entries):
        item = dict(table_of(entry, str(path), f"targets[{i}]"))
        name = item.pop("name", None)
        if not isinstance(name, str):
            raise InputError(str(path), f"targets[{i}].name", "expected the target's name")
        if "provider" in item:
            provider = item.pop("provider")
            item.setdefault("kind", _kind_of(provider, str(path), f"targets[{i}].provider"))
        found[name] = _from_project(item, root or base_dir)
    return found


def _kind_of(provider: Any, file: str, field: str) -> Any:
    from engine.events.targets import TARGET_KINDS

    kind = PROVIDERS.get(provider, provider)
    if kind not in TARGET_KINDS:
        known = ", ".join(["cli", *(k for k in TARGET_KINDS if k != "command")])
        raise InputError(file, field, f"expected one of {known} (an agent CLI such as {provider!r} is "
                         f"`provider: cli` with its `command`), got {provider!r}")  # fmt: skip
    return kind


def _from_project(item: dict[str, Any], root: Path) -> dict[str, Any]:
    """targets.yaml sits in the project: its relative agent paths are the project's, wherever the
    experiment file is."""
    if item.get("kind") != "command":
        return item
    if isinstance(item.get("command"), list | str):
        item["command"] = anchor_command(item["command"], root)
    if isinstance(item.get("workdir"), str) and not Path(item["workdir"]).is_absolute():
        item["workdir"] = str(root / item["workdir"])
    return item


def _lookup(targets: dict[str, dict[str, Any]], name: Any, file: str, field: str) -> dict[str, Any]:
    if name not in targets:
        known = ", ".join(targets) or "none"
        raise InputError(
            file, field, f"expected a target named in .agentv/targets.yaml ({known}), got {name!r}"
        )
    return dict(targets[name])


def _variant(entry: Any, targets: dict[str, dict[str, Any]], file: str, field: str) -> dict[str, Any]:
    """`copilot`, or `{name: gemini-with-hooks, use_target: gemini, ...target fields over it}`."""
    if isinstance(entry, str):
        return {"name": entry, "target": _lookup(targets, entry, file, field)}
    item = dict(table_of(entry, file, field))
    name = item.pop("name", None)
    if not isinstance(name, str):
        raise InputError(file, f"{field}.name", "expected the variant's name")
    base = _lookup(targets, item.pop("use_target", name), file, f"{field}.use_target")
    return {"name": name, "target": {**base, **item}}
