"""Other tools' file shapes, rewritten into engine's own before validation: one module per source tool.

Each `normalize_*` takes the parsed file (a fresh copy) and returns it with that tool's spellings
replaced by engine's; engine's own fields pass through. The order matters only where shapes overlap:
a tool whose vocabulary is recognised by a top-level key it alone uses goes first. A file in another
tool's vocabulary must name its subject (see subject): it never runs engine's embedded local model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.input.compat.agentv import normalize_agentv
from engine.input.compat.agentv_project import normalize_agentv_project
from engine.input.compat.case_records import case_record, with_stable_ids
from engine.input.compat.fleet import normalize_fleet
from engine.input.compat.keystone import normalize_keystone
from engine.input.compat.sandbox import normalize_sandbox
from engine.input.compat.subject import require_subject, source_tool
from engine.input.compat.weakincentives import normalize_weakincentives
from engine.input.compat.zeph import normalize_zeph


def normalize(raw: dict[str, Any], file: str, base_dir: Path | None = None) -> dict[str, Any]:
    """A copy of `raw` in engine's own vocabulary; base_dir is the file's folder (paths are checked
    against it)."""
    out = dict(raw)
    tool = source_tool(raw)
    out = normalize_zeph(out, file, base_dir)
    out = normalize_weakincentives(out, file, base_dir)
    out = normalize_fleet(out, file, base_dir)
    out = normalize_agentv_project(out, file, base_dir)
    out = normalize_keystone(out, file)
    out = normalize_agentv(out, file, base_dir, agentv=tool == "AgentV")
    out = normalize_sandbox(out, file)  # last: onto the target and verifiers the others made
    require_subject(out, tool, file, base_dir)
    if isinstance(out.get("cases"), list):  # inline cases without ids, as in a Zeph benchmark
        out["cases"] = with_stable_ids([case_record(case) for case in out["cases"]])
    return out
