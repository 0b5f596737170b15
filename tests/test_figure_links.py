"""The code's comments link benchmarks/README.md for the figures behind a fast path: every such link
names a section that exists (GitHub's anchor of a heading)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"benchmarks/README\.md#([a-z0-9-]+)")


def anchor(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_link_to_a_benchmarks_section_names_one() -> None:
    readme = (ROOT / "benchmarks" / "README.md").read_text()
    sections = {anchor(line.lstrip("#")) for line in readme.splitlines() if line.startswith("#")}
    sources = [p for p in ROOT.rglob("*") if p.suffix in (".py", ".md", ".toml") and ".venv" not in p.parts]
    linked = {(str(p.relative_to(ROOT)), m) for p in sources for m in LINK.findall(p.read_text())}
    assert linked, "no comment links benchmarks/README.md"
    assert [(path, name) for path, name in sorted(linked) if name not in sections] == []
