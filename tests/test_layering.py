"""The layering is one way: events <- store <- actors <- engine <- cli."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["events", "store", "actors", "engine", "cli"]
NO_IO_IN_EVENTS = {"lmdb", "trio", "httpx", "os", "socket", "subprocess"}


def imported_top_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_each_package_imports_only_itself_and_layers_below() -> None:
    problems = []
    for rank, package in enumerate(LAYERS):
        forbidden = set(LAYERS[rank + 1 :])
        for path in sorted((ROOT / package).rglob("*.py")):
            bad = imported_top_modules(path) & forbidden
            if bad:
                problems.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not problems, "\n".join(problems)


def test_the_vocabulary_does_no_io() -> None:
    problems = []
    for path in sorted((ROOT / "events").rglob("*.py")):
        bad = imported_top_modules(path) & NO_IO_IN_EVENTS
        if bad:
            problems.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not problems, "\n".join(problems)


def test_layers_exist() -> None:
    assert all((ROOT / package / "__init__.py").is_file() for package in LAYERS)
