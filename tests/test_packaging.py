"""engine installs as one namespace: only `engine` is a top-level name, so a host application with its
own `store` or `cli` package embeds it without a clash."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from tests.conftest import ROOT

LAYER_FOLDERS = {"engine": "engine", "events": "engine.events", "stats": "engine.stats",
                 "store": "engine.store", "actors": "engine.actors", "cli": "engine.cli"}  # fmt: skip


def test_the_declared_packages_are_exactly_the_folders() -> None:
    """Code folders (an __init__.py) and data folders (package-data) alike: a folder of data left out
    of `packages` makes setuptools warn through every install."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = set(config["package-data"])
    for folder, name in LAYER_FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            folders.add(".".join([name, *relative]))
    assert set(config["packages"]) == folders
    assert config["package-dir"] == {name: folder for folder, name in LAYER_FOLDERS.items()}


def test_the_installed_distribution_has_one_top_level_name() -> None:
    assert importlib.metadata.distribution("engine").read_text("top_level.txt").split() == ["engine"]


def test_a_built_wheel_holds_every_layer_under_engine(tmp_path: Path) -> None:
    source = tmp_path / "src"  # a copy: an in-tree build would leave build/ in the checkout
    for folder in LAYER_FOLDERS:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", str(source),
         "-w", str(tmp_path)],
        check=True, capture_output=True, timeout=600, text=True,
    )  # fmt: skip
    # a quiet install: nothing in the package's own configuration makes setuptools warn
    assert "Warning" not in built.stdout + built.stderr and "absent from" not in built.stdout + built.stderr
    (wheel,) = tmp_path.glob("engine-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"engine"}
    layers = ["events/kinds.py", "stats/inference.py", "store/log/event_log.py", "actors/scheduler.py",
              "cli/main.py", "api.py"]  # fmt: skip
    assert {f"engine/{path}" for path in layers} <= set(names)
    # the web view works offline: its assets ship inside the package
    assert {"engine/web/static/app.js", "engine/web/static/style.css"} <= set(names)
    # and so do the report's templates (the HTML file and the pages render them)
    assert {"engine/presentation/templates/report_file.html", "engine/presentation/templates/matrix.html",
            "engine/presentation/templates/report.css"} <= set(names)  # fmt: skip
    top_level = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
    assert zipfile.ZipFile(wheel).read(top_level).split() == [b"engine"]


HOST_APP = '''
import store, cli                      # the host application's own packages
import trio
from engine import open_engine, spec_from_dict

SPEC = spec_from_dict({
    "name": "quickstart", "target": {"kind": "local"},
    "cases": [{"id": "fr", "prompt": "What is the capital of France?", "expected": "Paris"}],
    "variants": [{"name": "cold", "params": {"temperature": 0.0}}], "repeat": {"count": 2},
})

async def main():
    async with open_engine("engine-store") as eng:
        report = await eng.run(SPEC)
    assert store.OWNER == cli.OWNER == "host", "engine replaced the host's packages"
    print(report.status, report.trials_done, report.variants[0].pass_rate)

trio.run(main)
'''


def test_engine_embeds_beside_a_host_package_named_store(tmp_path: Path) -> None:
    for name in ("store", "cli"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text('OWNER = "host"\n')
    (tmp_path / "app.py").write_text(HOST_APP)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # engine as installed, not the checkout
    done = subprocess.run(
        [sys.executable, "app.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["completed", "2", "1.0"]


def test_the_embedding_example_needs_no_deep_import() -> None:
    source = (ROOT / "examples" / "embed.py").read_text()
    imports = [line for line in source.splitlines() if line.startswith(("from engine", "import engine"))]
    assert imports == ["from engine import TargetRequest, TrialGraded, open_engine, spec_from_dict"]


CHECKOUT_IMPORTS = """
import importlib, sys
import engine.api, engine.events.kinds, engine.store.log.event_log, engine.actors.scheduler, engine.cli.main
print(engine.__file__, engine.events.__file__, engine.cli.__file__)
for name in ("engine.engine", "engine.engine.api", "engine.tests", "engine.tests.conftest"):
    try:
        importlib.import_module(name)
    except ModuleNotFoundError:
        continue
    sys.exit(f"{name} imports")
"""


def test_from_the_checkout_each_layer_imports_once_and_nothing_else_joins_the_namespace() -> None:
    """Run from the repository root (its `engine/` folder first on sys.path), the editable install maps
    each layer's folder: `engine.engine` (a second copy of every module) and `engine.tests` do not exist."""
    done = subprocess.run(
        [sys.executable, "-c", CHECKOUT_IMPORTS], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    where = [Path(p).parent for p in done.stdout.split()]
    assert where == [ROOT / "engine", ROOT / "events", ROOT / "cli"]
