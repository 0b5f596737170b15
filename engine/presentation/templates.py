"""The Jinja2 environment every HTML surface renders through (the HTML file and the web pages share
its templates). Autoescaping is on for every template: model outputs and names are untrusted."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from engine.presentation.status_words import badge_class, status_css

TEMPLATES = Path(__file__).parent / "templates"


@functools.cache
def environment() -> Any:
    import jinja2  # on first render: the CLI's other commands never pay for it

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True, lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )  # fmt: skip
    env.globals["status_class"] = badge_class  # every badge of a status gets its colour from one place
    return env


def compile_all() -> None:
    """Every page template compiled (and Jinja imported) ahead of its first request: a server does
    it once at start, in a worker thread, so a person's first page does not pay for it
    (benchmarks/README.md#in-code-web)."""
    env = environment()
    for template in sorted(TEMPLATES.glob("*.html")):
        env.get_template(template.name)


def render(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)


def stylesheet() -> str:
    """The report's own CSS (sections, chart, matrix): inlined in the HTML file, linked by the pages."""
    return (TEMPLATES / "report.css").read_text(encoding="utf-8") + status_css()
