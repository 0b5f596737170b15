"""`engine promote RUN_ID [VARIANT] --to FILE`: write a variant's settings into a config file.

The variant defaults to the run's winner, which must be significant unless forced. Its effective
parameters (the experiment's [params] under the variant's own) go to `[params]`, its flags to
`[flags]`, and a model or system prompt it sets to `[variant]`; the rest of the file is kept. A
Markdown file (an agents-fleet skill, `skills/coder.md`) gets the variant's text (its system prompt:
the patched skill) as its body, front matter kept; what Markdown cannot hold is named, not written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.errors import InputError
from engine.input.config_edit import MARKDOWN, apply_params, write_body
from engine.runtime.run_status import run_state
from engine.store.contract import EventStore
from engine.store.projections.report_builder import build_report

WHERE = "engine promote"


def promote(log: EventStore, run_id: str, variant: str | None, path: Path, force: bool) -> dict[str, Any]:
    """Write the variant's settings; returns what was written, by table."""
    state = run_state(log, run_id)
    name = variant or _winner(state, run_id, force)
    chosen = state.variants.get(name)
    if chosen is None:
        have = ", ".join(state.variants)
        raise InputError(WHERE, "VARIANT", f"run {run_id} has no variant {name!r} (have {have})")
    base_params = state.spec.params if state.spec is not None else {}
    tables: dict[str, dict[str, Any]] = {
        "params": {**base_params, **chosen.params},
        "flags": dict(chosen.flags),
        "variant": {k: v for k, v in (("model", chosen.model), ("system", chosen.system)) if v is not None},
    }
    written = {table: values for table, values in tables.items() if values}
    if path.suffix.lower() in MARKDOWN:
        return _promote_text(run_id, name, chosen.system, path, written)
    if not written:
        raise InputError(WHERE, "VARIANT", f"variant {name!r} sets no params, flags, model or system")
    for table, values in written.items():
        apply_params(path, values, table)
    # the [variant] table's settings go under their own key: "variant" is the promoted variant's name
    settings = {("variant_settings" if t == "variant" else t): values for t, values in written.items()}
    return {"run_id": run_id, "variant": name, "file": str(path), **settings}


def _promote_text(
    run_id: str, name: str, system: str | None, path: Path, tables: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    if system is None:
        expected = f"variant {name!r} sets no skill text (system) to write into a Markdown file"
        raise InputError(str(path), "", expected + "; promote to a .toml or .json config instead")
    write_body(path, system)
    not_written = [f"[{table}]" for table in tables if table != "variant"]
    not_written += ["[variant] model"] if "model" in tables.get("variant", {}) else []
    return {"run_id": run_id, "variant": name, "file": str(path), "body": system, "not_written": not_written}


def describe_promotion(written: dict[str, Any]) -> str:
    """'promoted variant cold of run r1 to agent.toml' and one line per table written."""
    lines = [f"promoted variant {written['variant']} of run {written['run_id']} to {written['file']}"]
    if "body" in written:
        lines.append(f"  body: the variant's text ({len(written['body'].splitlines())} lines)")
        if written["not_written"]:
            skipped = ", ".join(written["not_written"])
            lines.append(f"  not written (a Markdown file holds the text only): {skipped}")
    for table, key in (("params", "params"), ("flags", "flags"), ("variant", "variant_settings")):
        if key in written:
            values = ", ".join(f"{name} = {value!r}" for name, value in written[key].items())
            lines.append(f"  [{table}] {values}")
    return "\n".join(lines)


def _winner(state: Any, run_id: str, force: bool) -> str:
    report = build_report(state)
    if report.winner is None:
        raise InputError(WHERE, "VARIANT", f"run {run_id} has no winner: name the variant to promote")
    if not report.winner_significant and not force:
        raise InputError(
            WHERE, "--force", f"winner {report.winner!r} is not significant: name it, or pass --force"
        )
    return report.winner
