"""docs/architecture.md is the map of the fast paths: every module under a fast path's folder is named
on it, and every module and test it names exists (a test named with `::` too), so the map cannot fall
behind the code without this failing."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "docs" / "architecture.md"
FAST_PATH_FOLDERS = ["store/kept", "store/trial_index", "actors/targets/http", "actors/ray"]
NAMED = re.compile(r"`([\w/]+\.py)(?:::(\w+))?`")  # `folder/module.py` or `tests/test_x.py::test_name`


def unmapped_modules(text: str) -> list[str]:
    """The modules of the fast paths' folders the map does not name."""
    named = {path for path, _ in NAMED.findall(text)}
    modules = [p for folder in FAST_PATH_FOLDERS for p in sorted((ROOT / folder).glob("*.py"))]
    paths = [str(p.relative_to(ROOT)) for p in modules if p.name != "__init__.py"]
    return [path for path in paths if path not in named]


def missing_names(text: str) -> list[str]:
    """What the map names (a path with its folder, or a test function) that is not there."""
    missing = []
    for path, test in NAMED.findall(text):
        if "/" not in path:
            continue  # a bare module name in prose, its folder given beside it
        if not (ROOT / path).is_file():
            missing.append(path)
        elif test:
            tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
            functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
            if test not in functions:
                missing.append(f"{path}::{test}")
    return missing


def test_every_module_of_a_fast_path_folder_is_on_the_map() -> None:
    assert unmapped_modules(MAP.read_text(encoding="utf-8")) == []


def test_every_module_and_test_on_the_map_exists() -> None:
    text = MAP.read_text(encoding="utf-8")
    assert len([path for path, _ in NAMED.findall(text) if path.startswith("tests/")]) > 10
    assert missing_names(text) == []


def test_the_checks_see_an_unmapped_module_and_a_missing_test() -> None:
    text = MAP.read_text(encoding="utf-8")
    assert unmapped_modules(text.replace("`actors/ray/wire.py`", "the wire")) == ["actors/ray/wire.py"]
    named = text + "`tests/test_snapshots.py::test_no_such_thing` `store/kept/gone.py`"
    assert missing_names(named) == ["tests/test_snapshots.py::test_no_such_thing", "store/kept/gone.py"]
