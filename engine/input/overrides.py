"""Prompt overrides by tag: a variant's `overrides_tag` picks a file of prompt settings.

With `overrides_dir = "prompts/overrides"` in the experiment, a variant whose `overrides_tag` is
"v2" takes `system`, `prompt_template`, `model`, `params` and `flags` from `prompts/overrides/v2.json`
(or .toml / .yaml); what the variant sets itself wins. The weakincentives layout
`{namespace}/{key}/{tag}.json` under the folder works too (one prompt: point `overrides_dir` at the
`{namespace}/{key}` folder when there are several). A tag with no file falls back to the source prompt
with a warning, as weakincentives does; `overrides_strict = true` refuses it (exit 2) instead. The tag
"latest" (the default) applies its file only if there is one. Resolved at load time, so the log
records the prompt that actually ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from engine.actors.variants import expand_variants
from engine.errors import InputError, warn_input
from engine.events.spec import ExperimentSpec, Spec, VariantSpec
from engine.input.parsing import parse_file, split_validation_error

SUFFIXES = (".json", ".toml", ".yaml", ".yml")


class PromptOverride(Spec):
    system: str | None = None
    prompt_template: str | None = None
    model: str | None = None
    params: dict[str, Any] = {}
    flags: dict[str, Any] = {}


def apply_overrides(spec: ExperimentSpec, base_dir: Path, name: str) -> ExperimentSpec:
    if spec.overrides_dir is None:
        return spec
    folder = base_dir / spec.overrides_dir
    strict = spec.overrides_strict
    variants = [_resolve(v, folder, name, f"variants[{i}]", strict) for i, v in enumerate(spec.variants)]
    if spec.matrix is None:
        return msgspec.structs.replace(spec, variants=variants)
    # matrix variants take their overrides too: the matrix is expanded here, so the spec the log
    # records lists each variant with the prompt it ran
    matrix = expand_variants(msgspec.structs.replace(spec, variants=[]))
    resolved = [_resolve(v, folder, name, f"matrix[{i}]", strict) for i, v in enumerate(matrix)]
    return msgspec.structs.replace(spec, variants=variants + resolved, matrix=None)


def _resolve(variant: VariantSpec, folder: Path, name: str, field: str, strict: bool) -> VariantSpec:
    tag = variant.overrides_tag
    path = _tag_file(folder, tag, name, f"{field}.overrides_tag")
    if path is None:
        if tag == "latest":
            return variant
        missing = f"no override file {tag}.json/.toml/.yaml in {folder}"
        if strict:
            raise InputError(name, f"{field}.overrides_tag", missing)
        warn_input(name, f"{field}.overrides_tag", f"{missing}: the source prompt is used")
        return variant
    override = _read(path)
    return msgspec.structs.replace(
        variant,
        system=variant.system if variant.system is not None else override.system,
        prompt_template=variant.prompt_template
        if variant.prompt_template is not None
        else override.prompt_template,
        model=variant.model if variant.model is not None else override.model,
        params={**override.params, **variant.params},
        flags={**override.flags, **variant.flags},
    )


def _tag_file(folder: Path, tag: str, name: str, field: str) -> Path | None:
    """`{folder}/{tag}.json`, else the one `{folder}/{namespace}/{key}/{tag}.json`."""
    flat = [folder / f"{tag}{suffix}" for suffix in SUFFIXES]
    found = [path for path in flat if path.is_file()]
    if not found:
        nested = (path for suffix in SUFFIXES for path in folder.glob(f"*/*/{tag}{suffix}"))
        found = sorted(path for path in nested if path.is_file())
        prompts = {path.parent for path in found}
        if len(prompts) > 1:
            listed = ", ".join(str(p.relative_to(folder)) for p in sorted(prompts))
            expected = f"one prompt's {tag} override; found several ({listed}): point overrides_dir at one"
            raise InputError(name, field, f"expected {expected}")
    return found[0] if found else None


def _read(path: Path) -> PromptOverride:
    raw = parse_file(path) if path.suffix != ".json" else _json(path)
    try:
        return msgspec.convert(raw, PromptOverride, strict=True)
    except msgspec.ValidationError as exc:
        field, expected = split_validation_error(str(exc))
        raise InputError(str(path), field, expected) from None


def _json(path: Path) -> Any:
    try:
        return msgspec.json.decode(path.read_bytes())
    except msgspec.DecodeError as exc:
        raise InputError(str(path), "", f"invalid JSON: {exc}") from None
