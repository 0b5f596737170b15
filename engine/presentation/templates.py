"""The Jinja2 environment every HTML surface renders through (the HTML file and the web pages share
its templates). Autoescaping is on for every template: model outputs and names are untrusted."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).parent / "templates"


@functools.cache
def environment() -> Any:
    import jinja2  # on first render: the CLI's other commands never pay for it

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True, lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )  # fmt: skip
    return env


def render(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)


def stylesheet() -> str:
    """The report's own CSS (sections, chart, matrix): inlined in the HTML file, linked by the pages."""
    return (TEMPLATES / "report.css").read_text(encoding="utf-8")
