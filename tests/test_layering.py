"""The layering is one way: events <- stats <- store <- actors <- engine <- cli, in one namespace.

The repository's top-level folders install as `engine.events`, `engine.stats`, `engine.store`,
`engine.actors`, `engine.cli` and `engine` itself. A layer may import itself and the layers to its
left only; `events` (the vocabulary) imports none of the others and does no I/O; `stats` (pure
statistics) imports only the vocabulary and does no I/O either; nothing imports the folders by their
bare names (`store`, `cli`...), which a host application may use for packages of its own.

Inside `engine/` the parts are layered the same way (ENGINE_PARTS):
errors <- input <- runtime <- views <- presentation <- web <- embedding.
- errors: engine/errors.py, the user errors every part raises (their root, EngineError, is in the
  vocabulary, engine.events.errors, so that the layers below engine derive theirs from it too);
- input: experiment files and flags in, a checked spec out;
- runtime: a run's lifetime, and the commands that write to a stored run (cancel, regrade, label
  rounds, labels, marks) or call its judge again (judge-audit);
- views: read the log and answer (queries, compare, history, export, promote), writing no events;
- presentation: reports rendered for people;
- web: the served view;
- embedding: engine/__init__.py, engine/api.py and engine/hosts.py, the surface a host application
  calls (open_engine and its hosts), which ties loading, running and reading together.

No module takes part in an import cycle, anywhere in the tree.

Imports are read with `ast`, so imports inside functions, `if TYPE_CHECKING:` blocks, relative
imports and `importlib.import_module("...")` with a literal name all count, for the layers and for
cycles alike: an import deferred into a function still means each module needs the other, and only
moves the failure of a broken arrow from import time to run time.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["events", "stats", "store", "actors", "engine", "cli"]
# modules that mean I/O (storage, network, processes, concurrency runtimes): not in the vocabulary
IO_MODULES = {
    "lmdb",
    "trio",
    "httpx",
    "httpcore",
    "anyio",
    "asyncio",
    "socket",
    "ssl",
    "subprocess",
    "sqlite3",
    "requests",
    "urllib3",
    "aiohttp",
    "os",
    "shutil",
}
EVENTS_THIRD_PARTY = {"msgspec"}  # besides the standard library, the vocabulary needs msgspec only
# the statistics compute with numpy/scipy and read latency histograms (hdrh), on top of the vocabulary
STATS_THIRD_PARTY = EVENTS_THIRD_PARTY | {"numpy", "scipy", "hdrh"}
ENGINE_PARTS = ["errors", "input", "runtime", "views", "presentation", "web", "embedding"]
EMBEDDING = {"engine", "engine.api", "engine.hosts"}


def module_name(path: Path) -> str:
    """The installed name: events/kinds.py is engine.events.kinds, engine/api.py is engine.api."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join(parts if parts[0] == "engine" else ["engine", *parts])


def layer(name: str) -> str | None:
    """The layer an absolute module name belongs to (None: not engine's)."""
    parts = name.split(".")
    if parts[0] != "engine":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS[:-2] + ["cli"] else "engine"


def engine_part(name: str) -> str:
    """The part of the engine layer that one of its modules belongs to (see ENGINE_PARTS)."""
    if name in EMBEDDING:
        return "embedding"
    part = name.split(".")[1]
    assert part in ENGINE_PARTS, f"{name}: a new part of engine: give it its place in ENGINE_PARTS"
    return part


def imported_modules(
    source: str, module: str, is_package: bool = False, modules: set[str] | None = None
) -> set[str]:
    """Absolute dotted names of everything `source` (the text of `module`) imports. Given the names of
    the `modules` that exist, `from a import b` is a.b when that is one of them (b is a module), else a."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                assert base, f"relative import above the top-level package in {module}"
                prefix = ".".join(base)
                name = f"{prefix}.{node.module}" if node.module else prefix
            else:
                name = node.module or ""
            if modules is None:
                found.add(name)
            else:
                named = (f"{name}.{alias.name}" for alias in node.names)
                found.update(n if n in modules else name for n in named)
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
            )
        ):
            found.add(node.args[0].value)
    return found


def package_files(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if ".venv" not in p.parts)


def imports_of(path: Path) -> set[str]:
    return imported_modules(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")


def top(name: str) -> str:
    return name.split(".")[0]


BARE = {"events", "stats", "store", "actors", "cli"}  # the folders' own names: never imported as such


def test_the_import_reader_sees_every_form() -> None:
    source = """
import trio, json as j
import engine.store.log
from engine import api
from . import sibling
from .kinds import Event
from ..cli import main
def later():
    from engine.actors.scheduler import run
    importlib.import_module("cli.main")
    __import__("lmdb")
if TYPE_CHECKING:
    from engine.runtime.plan import Plan
"""
    found = imported_modules(source, "engine.store.projections.fold")
    assert found == {
        "trio",
        "json",
        "engine.store.log",
        "engine",
        "engine.store.projections",
        "engine.store.projections.kinds",
        "engine.store.cli",
        "engine.actors.scheduler",
        "cli.main",
        "lmdb",
        "engine.runtime.plan",
    }
    assert imported_modules("from . import x", "engine.events", is_package=True) == {"engine.events"}
    assert [layer(n) for n in ("engine.store.log", "engine.api", "engine.cli.main", "trio")] == [
        "store",
        "engine",
        "cli",
        None,
    ]


@pytest.mark.parametrize("package", LAYERS)
def test_each_package_imports_only_itself_and_packages_to_its_left(package: str) -> None:
    files = package_files(package)
    assert files and (ROOT / package / "__init__.py").is_file()
    allowed = set(LAYERS[: LAYERS.index(package) + 1])
    problems = []
    for path in files:
        names = imports_of(path)
        bad = sorted(n for n in names if layer(n) is not None and layer(n) not in allowed)
        bad += sorted(n for n in names if top(n) in BARE | {"tests", "benchmarks"})
        if bad:
            problems.append(f"{path.relative_to(ROOT)} imports {bad}")
    assert not problems, "\n".join(problems)


def import_problems(names: set[str], package: str, third_party: set[str]) -> list[str]:
    """Of `names` (a module's imports): I/O modules, and anything beyond the standard library,
    `third_party` and the layers up to `package`'s own."""
    stdlib = set(sys.stdlib_module_names)
    allowed = set(LAYERS[: LAYERS.index(package) + 1])
    problems = []
    for name in sorted(names):
        root = top(name)
        if root in IO_MODULES:
            problems.append(f"{name} (I/O)")
        elif root not in stdlib and root not in third_party and layer(name) not in allowed:
            problems.append(f"{name} (not stdlib, {', '.join(sorted(third_party))} or a layer to the left)")
    return problems


def no_io_problems(package: str, third_party: set[str]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)} imports {problem}"
        for path in package_files(package)
        for problem in import_problems(imports_of(path), package, third_party)
    ]


def test_the_vocabulary_does_no_io_and_needs_only_msgspec() -> None:
    problems = no_io_problems("events", EVENTS_THIRD_PARTY)
    assert not problems, "\n".join(problems)


def test_the_statistics_do_no_io_and_need_only_the_vocabulary() -> None:
    problems = no_io_problems("stats", STATS_THIRD_PARTY)
    assert not problems, "\n".join(problems)
    names = {"math", "numpy", "engine.events.spec", "engine.stats.signflip", "trio", "lmdb", "httpx",
             "engine.store.log", "pandas"}  # fmt: skip
    assert [p.split()[0] for p in import_problems(names, "stats", STATS_THIRD_PARTY)] == [
        "engine.store.log",
        "httpx",
        "lmdb",
        "pandas",
        "trio",
    ]


# the caches kept beside the log: the log is handed their keepers (store.log.keepers), never imports them
KEPT_PACKAGES = ("engine.store.kept", "engine.store.trial_index", "engine.store.projections")


def test_the_log_imports_no_kept_record_nor_projection() -> None:
    files = package_files("store/log")
    assert len(files) > 5
    problems = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in files
        for name in sorted(imports_of(path))
        if name.startswith(KEPT_PACKAGES)
    ]
    assert not problems, "\n".join(problems)


def test_every_layer_has_modules_checked() -> None:
    counts = {package: len(package_files(package)) for package in LAYERS}
    assert all(counts.values()), counts
    # the layers are the whole installable code: no other top-level package escapes the check
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "benchmarks"}
    assert packages == set(LAYERS)


STATS_IMPORT = """
import importlib, pkgutil, sys
import engine.stats
for found in pkgutil.iter_modules(engine.stats.__path__):
    importlib.import_module("engine.stats." + found.name)
print(" ".join(sorted({n.split(".")[0] if n.split(".")[0] != "engine" else ".".join(n.split(".")[:2])
                       for n in sys.modules})))
"""


def test_the_statistics_import_without_the_store_and_load_numpy_only_when_computing() -> None:
    """Every statistics module, imported in a fresh interpreter: no LMDB, Trio or store, and
    numpy/scipy not yet (they cost ~100 ms; `engine --help` and `engine list` compute nothing)."""
    done = subprocess.run([sys.executable, "-c", STATS_IMPORT], capture_output=True, text=True, timeout=60,
                          check=True, cwd=ROOT.parent)  # fmt: skip
    loaded = set(done.stdout.split())
    assert {"engine.stats", "engine.events", "hdrh"} <= loaded
    assert not loaded & {"lmdb", "trio", "httpx", "numpy", "scipy", "engine.store", "engine.actors"}


def test_inside_engine_each_part_imports_only_itself_and_parts_to_its_left() -> None:
    problems = []
    for path in package_files("engine"):
        part = engine_part(module_name(path))
        allowed = set(ENGINE_PARTS[: ENGINE_PARTS.index(part) + 1])
        names = {n for n in imports_of(path) if layer(n) == "engine"}
        bad = sorted(n for n in names if engine_part(n) not in allowed)
        if bad:
            problems.append(f"{path.relative_to(ROOT)} ({part}) imports {bad}")
    assert not problems, "\n".join(problems)


def module_graph() -> dict[str, set[str]]:
    """Each of engine's modules -> the modules of engine it imports. `from a import b` is an arrow to
    a.b when b is a module, else to a; the parent packages Python runs first are not arrows (a
    package's __init__ that imports its own modules is not a cycle)."""
    paths = {module_name(p): p for package in LAYERS for p in package_files(package)}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        source = path.read_text(encoding="utf-8")
        found = imported_modules(source, module, path.name == "__init__.py", set(paths))
        graph[module] = {n for n in found if n in paths and n != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_cycle_finder_finds_a_cycle_and_only_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"a", "f"}, "f": {"e"}}
    assert cycles(graph) == [["a", "b", "c"], ["e", "f"]]
    source = "from engine.web import app, serve_app\nfrom . import log\nimport engine.store.blobs\n"
    modules = {"engine.web", "engine.web.app", "engine.store", "engine.store.log", "engine.store.blobs"}
    assert imported_modules(source, "engine.store.x", modules=modules) == {
        "engine.web.app",
        "engine.web",  # serve_app is a name in engine/web/__init__.py
        "engine.store.log",
        "engine.store.blobs",
    }


def test_no_module_takes_part_in_an_import_cycle() -> None:
    graph = module_graph()
    assert len(graph) > 200 and graph["engine.cli.main"]  # the whole tree, with its arrows
    found = cycles(graph)
    shown = ["; ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found]
    assert not found, "\n".join(shown)
