"""Report formats: one line each, a function from the report (a dict) to its text.

A new format is a module with such a function plus its line here; `engine report --format NAME`
picks it (--json, --markdown and --html are shorthands).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from engine.events.registry import Registry

REPORT_FORMATS: Registry[Callable[[dict[str, Any]], str]] = Registry(
    "report format",
    {
        "markdown": "engine.cli.render_md:report_markdown",
        "html": "engine.cli.render_html:report_html",
        "json": "engine.cli.formats:report_json",  # (the CLI prints the stored bytes themselves)
    },
)


def report_json(report: dict[str, Any]) -> str:
    return json.dumps(report, separators=(",", ":")) + "\n"
